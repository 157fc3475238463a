//! "Why this card?" on a site's page: a page URL, a language, the `fragment_id` the edge sends
//! (the site default's unless changed), `ctx` key-values and optionally a User-Agent, answered step by step by the code that serves `/fragment`
//! (`ops::why`, `delivery::diagnosis`): the rule or default that resolved the fragment, its
//! status, each card considered and what became of it, the order of those kept, the card
//! served and the exact answer; the organisation's cards never looked at, and why.

use super::answers;
use super::context::{Answer, PageContext};
use super::form::Form;
use super::inputs::{cut, language_choice, Input, InputKind, Inputs};
use super::layout::Layout;
use super::refusal::PageRefusal;
use crate::db::cards::CardRow;
use crate::delivery::diagnosis::{Diagnosis, Step, Verdict};
use crate::delivery::select::Score;
use crate::domain::{DomainName, Ending, Invalid, Lang, Purpose};
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

/// How the page resolved (`delivery::diagnosis::Step`).
pub enum Resolution {
    /// The page's host is not a site of this organisation.
    NotASite,
    /// A rule of the site: its path, its match mode, its fragment.
    Rule {
        rule: String,
        exact: bool,
        fragment: Named,
    },
    SiteDefault(Named),
    /// No rule matches and the site has no default.
    Nothing,
}

impl Resolution {
    /// Whether the page resolved to a fragment (else the request's `fragment_id` serves).
    pub fn resolved(&self) -> bool {
        matches!(self, Resolution::Rule { .. } | Resolution::SiteDefault(_))
    }
}

/// The fragment that serves, and whether its cards are looked at.
pub struct Serving {
    pub fragment: Named,
    pub active: bool,
}

/// A card the pick looked at: dropped for its language, or kept at a place in the order.
pub enum Looked {
    OtherLanguage(Lang),
    /// Its place in the order, from 1.
    Kept(usize),
}

/// A card and what became of it.
pub struct CardLine<V> {
    pub card: Named,
    pub verdict: V,
}

/// A kept card's place in the order (from 1) and the score that put it there.
pub struct Ranked {
    pub place: usize,
    pub score: Score,
}

/// The agent of the User-Agent given: the marker it matches, the purpose it is counted under.
pub struct Agent {
    pub marker: Option<&'static str>,
    pub purpose: Purpose,
}

/// What the form found: the facts of each step, which the template words.
pub struct Found {
    pub host: String,
    /// The page's canonical path (`None`: a path the canonical steps refuse).
    pub path: Option<String>,
    pub resolution: Resolution,
    /// The fragment the request's `fragment_id` names.
    pub requested: Option<Named>,
    pub serving: Option<Serving>,
    /// In the order the pick scans them.
    pub considered: Vec<CardLine<Looked>>,
    /// Those kept, in the order of the pick (first: served).
    pub order: Vec<CardLine<Ranked>>,
    pub left_out: Vec<CardLine<LeftOut>>,
    pub served: Option<Named>,
    /// How it ends (`None`: no answer).
    pub ending: Option<Ending>,
    pub status: Option<u16>,
    pub headers: Vec<(String, String)>,
    pub body: String,
    pub agent: Option<Agent>,
}

#[derive(Template)]
#[template(path = "console/why.html")]
pub struct WhyPage {
    pub layout: Layout,
    pub domain: String,
    pub form: Inputs,
    pub found: Option<Found>,
}

/// The "why this card?" form: a page and what an edge would send with it.
struct WhyForm;

impl WhyForm {
    /// The form, its `fragment_id` the site default's (what the connect page tells the edge
    /// to send).
    fn inputs(default: Option<String>) -> Inputs {
        Inputs(vec![
            Input::new("why", "page_url", "Page URL")
                .required()
                .hint("An address of a page, such as https://news.example/sport/today."),
            Input::new("why", "lang", "Language")
                .required()
                .kind(language_choice())
                .value("fr"),
            Input::new("why", "ctx", "Key-values of ctx")
                .kind(InputKind::Lines(3))
                .hint("One key=value a line, as the page's ctx.<key> parameters."),
            Input::new("why", "fragment_id", "fragment_id")
                .required()
                .value(default.unwrap_or_default())
                .hint(
                    "The fragment the edge sends (/fragment refuses a request without one): it \
                     serves when the page resolves to none.",
                ),
            Input::new("why", "user_agent", "User-Agent")
                .hint("The agent's, to see the marker and purpose it is counted under."),
        ])
    }

    /// The form's values as `ops::why` takes them; a `ctx` line without `=` refused. A
    /// `fragment_id` sent empty is the site default's, as the form fills it in, and refused as
    /// `/fragment` refuses it where there is no default; a link that names none (a card's
    /// pages) asks with the default's, else with none.
    fn validate(query: &Form, default: Option<&str>) -> Result<Question, Invalid> {
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
                .ok_or_else(|| Invalid::new("ctx", format!("{}: expected key=value", cut(line))))?;
            pairs.push((key.trim().to_string(), value.trim().to_string()));
        }
        let fragment_id = optional("fragment_id").or(default);
        if fragment_id.is_none() && query.all("fragment_id").next().is_some() {
            let message = "partner_id and fragment_id are required";
            return Err(Invalid::new("fragment_id", message));
        }
        Ok(Question {
            page_url: query.get("page_url").trim().to_string(),
            lang: query.get("lang").to_string(),
            ctx: pairs,
            format: None,
            fragment_id: fragment_id.map(str::to_string),
            user_agent: optional("user_agent").map(str::to_string),
        })
    }
}

/// `GET /sites/{domain}/why`: the form; with `page_url`, what `/fragment` would do now.
pub fn page(ctx: &mut PageContext) -> Answer {
    let domain: DomainName = ctx.captures.get()?;
    let caller = ctx.caller.clone();
    let map = ops::site_map::site_map(ctx.db, &caller, &domain)?;
    let mut page = WhyPage {
        layout: ctx.layout(),
        domain: domain.as_str().to_string(),
        form: WhyForm::inputs(
            map.site
                .default_fragment_id
                .as_ref()
                .map(ToString::to_string),
        ),
        found: None,
    };
    if ctx.query.all("page_url").next().is_none() {
        return Ok(answers::html(200, &page));
    }
    page.form = std::mem::take(&mut page.form).sent(&ctx.query);
    let default = map
        .site
        .default_fragment_id
        .as_ref()
        .map(ToString::to_string);
    let question = match WhyForm::validate(&ctx.query, default.as_deref()) {
        Ok(question) => question,
        Err(invalid) => return Ok(refused(page, invalid)),
    };
    let cards = ops::cards::list_cards(ctx.db, &caller)?;
    let served = why::served(&ctx.app.delivery.cache, &caller)?;
    match served.diagnose(&question) {
        Ok(diagnosis) => {
            page.found = Some(found(&diagnosis, &cards, &map));
            Ok(answers::html(200, &page))
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
    answers::html(422, &page)
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
    let card = |id: &str| card_named(cards, id);
    let answer = diagnosis.answer.as_ref();
    Found {
        host: diagnosis.page.host.clone(),
        path: diagnosis.page.path.clone(),
        resolution: resolution(&diagnosis.step, map),
        requested: diagnosis.requested.map(|f| fragment_named(map, &f.id)),
        serving: diagnosis.fragment.map(|f| Serving {
            fragment: fragment_named(map, &f.id),
            active: f.active,
        }),
        considered: considered(diagnosis, cards),
        order: order(diagnosis, cards),
        left_out: (why::left_out(cards, diagnosis).into_iter())
            .map(|(row, why)| CardLine {
                card: card(row.id.as_str()),
                verdict: why,
            })
            .collect(),
        served: diagnosis.served.map(|served| card(&served.id)),
        ending: diagnosis.ending,
        status: answer.map(|a| a.status),
        headers: answer.map_or(Vec::new(), |a| {
            (a.headers.iter())
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect()
        }),
        body: answer.map_or(String::new(), |a| {
            String::from_utf8_lossy(&a.body).into_owned()
        }),
        agent: diagnosis.agent.map(|(marker, purpose)| Agent {
            marker: marker.map(|marker| marker.name),
            purpose,
        }),
    }
}

fn resolution(step: &Step, map: &SiteMap) -> Resolution {
    match step {
        Step::NotASite => Resolution::NotASite,
        Step::Rule {
            path,
            exact,
            fragment,
        } => Resolution::Rule {
            rule: path.clone(),
            exact: *exact,
            fragment: fragment_named(map, &fragment.id),
        },
        Step::SiteDefault(fragment) => Resolution::SiteDefault(fragment_named(map, &fragment.id)),
        Step::Nothing => Resolution::Nothing,
    }
}

fn considered(diagnosis: &Diagnosis, cards: &[CardRow]) -> Vec<CardLine<Looked>> {
    (diagnosis.considered.iter())
        .map(|c| CardLine {
            card: card_named(cards, &c.candidate.card.id),
            verdict: match c.verdict {
                Verdict::OtherLanguage => Looked::OtherLanguage(c.candidate.lang),
                Verdict::Kept { rank, .. } => Looked::Kept(rank + 1),
            },
        })
        .collect()
}

fn order(diagnosis: &Diagnosis, cards: &[CardRow]) -> Vec<CardLine<Ranked>> {
    let mut kept: Vec<_> = (diagnosis.considered.iter())
        .filter_map(|c| match c.verdict {
            Verdict::Kept { score, rank } => Some(CardLine {
                card: card_named(cards, &c.candidate.card.id),
                verdict: Ranked {
                    place: rank + 1,
                    score,
                },
            }),
            Verdict::OtherLanguage => None,
        })
        .collect();
    kept.sort_by_key(|line| line.verdict.place);
    kept
}
