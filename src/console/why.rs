//! "Why this card?" on a site's page: a page URL, a language, `ctx` key-values and optionally
//! a User-Agent, answered step by step by the code that serves `/fragment`
//! (`ops::why`, `delivery::diagnosis`): the rule or default that resolved the fragment, its
//! status, each card considered and what became of it, the order of those kept, the card
//! served and the exact answer; the organisation's cards never looked at, and why.

use super::context::{Answer, PageContext};
use super::inputs::{Input, InputKind, Inputs};
use super::pages::{self, Layout};
use super::refusal::PageRefusal;
use crate::db::cards::CardRow;
use crate::delivery::diagnosis::{Diagnosis, Step, Verdict};
use crate::domain::{DomainName, Invalid, Lang};
use crate::error::ApiError;
use crate::ops::why::{self, LeftOut, Question};
use crate::ops::{self, site_map::SiteMap};
use askama::Template;

/// An object of the answer: its name, its id, its console page.
#[derive(Debug, Clone)]
pub struct Named {
    pub name: String,
    pub id: String,
    pub link: String,
}

/// A card looked at, or left out, and what became of it.
#[derive(Debug, Clone)]
pub struct CardLine {
    pub card: Named,
    pub verdict: String,
}

/// What the form found.
pub struct Found {
    /// How the page resolved, in words.
    pub resolution: String,
    pub fragment: Option<Named>,
    /// The fragment's status, in words.
    pub fragment_status: String,
    /// In the order the pick scans them.
    pub considered: Vec<CardLine>,
    /// Those kept, in the order of the pick (first: served).
    pub order: Vec<CardLine>,
    pub left_out: Vec<CardLine>,
    pub served: Option<Named>,
    /// How it ends: `outcome` / `reason`.
    pub ending: String,
    pub status: Option<u16>,
    pub headers: Vec<(String, String)>,
    pub body: String,
    pub agent: Option<String>,
}

#[derive(Template)]
#[template(path = "console/why.html")]
pub struct WhyPage {
    pub layout: Layout,
    pub domain: String,
    pub form: Inputs,
    pub found: Option<Found>,
}

fn form() -> Inputs {
    let languages = (Lang::ALL.iter())
        .map(|lang| (lang.as_str().to_string(), lang.as_str().to_string()))
        .collect();
    Inputs(vec![
        Input::new("why", "page_url", "Page URL")
            .required()
            .hint("An address of a page, such as https://news.example/sport/today."),
        Input::new("why", "lang", "Language")
            .required()
            .kind(InputKind::Choice(languages))
            .value("fr"),
        Input::new("why", "ctx", "Key-values of ctx")
            .kind(InputKind::Lines)
            .hint("One key=value a line, as the page's ctx.<key> parameters."),
        Input::new("why", "fragment_id", "fragment_id")
            .hint("The fragment the edge names, when the page resolves to none."),
        Input::new("why", "user_agent", "User-Agent")
            .hint("The agent's, to see the marker and purpose it is counted under."),
    ])
}

/// `GET /sites/{domain}/why`: the form; with `page_url`, what `/fragment` would do now.
pub fn page(ctx: &mut PageContext) -> Answer {
    let domain: DomainName = ctx.captures.get()?;
    let caller = ctx.caller()?;
    let map = ops::site_map::site_map(ctx.db, &caller, &domain)?;
    let mut page = WhyPage {
        layout: ctx.layout(),
        domain: domain.as_str().to_string(),
        form: form(),
        found: None,
    };
    if ctx.query.all("page_url").next().is_none() {
        return Ok(pages::html(200, &page));
    }
    page.form = std::mem::take(&mut page.form).sent(&ctx.query);
    let question = match question(ctx) {
        Ok(question) => question,
        Err(invalid) => return Ok(refused(page, invalid)),
    };
    let cards = ops::cards::list_cards(ctx.db, &caller)?;
    let served = why::served(&ctx.app.delivery.cache, &caller)?;
    match served.diagnose(&question) {
        Ok(diagnosis) => {
            page.found = Some(found(&diagnosis, &cards, &map));
            Ok(pages::html(200, &page))
        }
        Err(ApiError::Validation { field, message }) => {
            Ok(refused(page, Invalid::new(field, message)))
        }
        Err(other) => Err(PageRefusal::from(other)),
    }
}

fn refused(mut page: WhyPage, invalid: Invalid) -> crate::http::Response {
    if let Some(alert) = page.form.refuse_all(vec![invalid]) {
        page.form.refuse("page_url", alert);
    }
    pages::html(422, &page)
}

/// The form's values as `ops::why` takes them; a `ctx` line without `=` refused.
fn question(ctx: &PageContext) -> Result<Question, Invalid> {
    let query = &ctx.query;
    let optional = |name: &str| Some(query.get(name).trim()).filter(|v| !v.is_empty());
    let mut pairs = Vec::new();
    for line in query
        .get("ctx")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
    {
        let (key, value) = line
            .split_once('=')
            .ok_or_else(|| Invalid::new("ctx", format!("{line}: expected key=value")))?;
        pairs.push((key.trim().to_string(), value.trim().to_string()));
    }
    Ok(Question {
        page_url: query.get("page_url").trim().to_string(),
        lang: query.get("lang").to_string(),
        ctx: pairs,
        format: None,
        fragment_id: optional("fragment_id").map(str::to_string),
        user_agent: optional("user_agent").map(str::to_string),
    })
}

fn card_named(cards: &[CardRow], id: &str) -> Named {
    let row = cards.iter().find(|card| card.id.as_str() == id);
    Named {
        name: row.map_or("(a card not listed)".into(), |card| card.name.clone()),
        id: id.to_string(),
        link: format!("/cards/{id}"),
    }
}

fn fragment_named(map: &SiteMap, id: &str) -> Named {
    let row = (map.fragments.iter()).find(|f| f.row.id.as_str() == id);
    let name = row.map_or(String::from("(a fragment of another site)"), |f| {
        match &f.row.fragment_ref {
            Some(reference) => format!("{} ({reference})", f.row.name),
            None => f.row.name.clone(),
        }
    });
    Named {
        name,
        id: id.to_string(),
        link: format!("/fragments/{id}"),
    }
}

fn found(diagnosis: &Diagnosis, cards: &[CardRow], map: &SiteMap) -> Found {
    let host = &diagnosis.page.host;
    let path = diagnosis
        .page
        .path
        .as_deref()
        .unwrap_or("(a path no rule matches)");
    let label = |id: &str| {
        let named = fragment_named(map, id);
        format!("{} ({})", named.name, named.id)
    };
    let resolution = match &diagnosis.step {
        Step::NotASite => format!("{host} is not a site of this organisation: no rule applies."),
        Step::Rule {
            path: rule,
            exact,
            fragment,
        } => {
            let mode = if *exact { "exact" } else { "prefix" };
            format!(
                "The page {path} on {host} matches the {mode} rule {rule}: fragment {}.",
                label(&fragment.id)
            )
        }
        Step::SiteDefault(fragment) => format!(
            "No rule matches {path} on {host}: the site default, fragment {}.",
            label(&fragment.id)
        ),
        Step::Nothing => format!("No rule matches {path} on {host} and the site has no default."),
    };
    let requested = match (&diagnosis.step, diagnosis.requested) {
        (Step::NotASite | Step::Nothing, Some(requested)) => format!(
            " /fragment serves the fragment the request names: {}.",
            label(&requested.id)
        ),
        (Step::NotASite | Step::Nothing, None) => {
            " Without a fragment_id, /fragment has nothing to serve.".to_string()
        }
        _ => String::new(),
    };
    let fragment = diagnosis.fragment.map(|f| fragment_named(map, &f.id));
    let fragment_status = match diagnosis.fragment {
        Some(f) if f.active => "active: its cards are looked at".to_string(),
        Some(_) => "paused: no card is looked at, the answer is a 204 (activate it on its page)"
            .to_string(),
        None => "no fragment".to_string(),
    };
    let line = |id: &str, verdict: String| CardLine {
        card: card_named(cards, id),
        verdict,
    };
    let considered = (diagnosis.considered.iter())
        .map(|c| {
            let verdict = match c.verdict {
                Verdict::OtherLanguage => format!(
                    "dropped: in {}, not the request's language",
                    c.candidate.lang.as_str()
                ),
                Verdict::Kept { rank, .. } => format!("kept, {} in the order", rank + 1),
            };
            line(&c.candidate.card.id, verdict)
        })
        .collect();
    let mut kept: Vec<_> = (diagnosis.considered.iter())
        .filter_map(|c| match c.verdict {
            Verdict::Kept { score, rank } => Some((rank, c, score)),
            Verdict::OtherLanguage => None,
        })
        .collect();
    kept.sort_by_key(|(rank, _, _)| *rank);
    let order = (kept.into_iter())
        .map(|(rank, c, score)| {
            let verdict = format!(
                "{}: brand domain {}, {} matching key-values, {}, tie-break {}",
                rank + 1,
                if score.brand {
                    "matches the page"
                } else {
                    "does not match"
                },
                score.context,
                if score.own {
                    "own card"
                } else {
                    "platform card"
                },
                score.tie_break,
            );
            line(&c.candidate.card.id, verdict)
        })
        .collect();
    let left_out = (why::left_out(cards, diagnosis).into_iter())
        .map(|(card, why)| {
            let verdict = match why {
                LeftOut::Status(status) => format!("{}: only active cards serve", status.as_str()),
                LeftOut::NotEligible => "active, but not eligible on this fragment".to_string(),
            };
            line(card.id.as_str(), verdict)
        })
        .collect();
    let answer = diagnosis.answer.as_ref();
    let agent = diagnosis.agent.map(|(marker, purpose)| match marker {
        Some(marker) => format!("marker {}, purpose {}", marker.name, purpose.as_str()),
        None => format!("no marker (counted as none), purpose {}", purpose.as_str()),
    });
    Found {
        resolution: resolution + &requested,
        fragment,
        fragment_status,
        considered,
        order,
        left_out,
        served: diagnosis.served.map(|card| card_named(cards, &card.id)),
        ending: diagnosis.ending.map_or("no answer".to_string(), |e| {
            match (e.outcome().as_str(), e.as_str()) {
                (outcome, reason) if outcome == reason => outcome.to_string(),
                (outcome, reason) => format!("{outcome} ({reason})"),
            }
        }),
        status: answer.map(|a| a.status),
        headers: answer.map_or(Vec::new(), |a| {
            (a.headers.iter())
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect()
        }),
        body: answer.map_or(String::new(), |a| {
            String::from_utf8_lossy(&a.body).into_owned()
        }),
        agent,
    }
}
