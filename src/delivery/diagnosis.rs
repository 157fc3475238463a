//! "Why this card?": what `/fragment` would do for a page now, step by step, computed by the
//! serving code itself. `select::resolve` and `select::serve` run with a recorder that keeps
//! each step (the serving path runs them with `NoRecord`), and the answer is made by the
//! endpoint's own `respond`: there is no second copy of the rules.
//!
//! The question is an organisation's snapshot and the parameters an edge would send but the
//! key (`page_url`, `lang`, `format`, `ctx.*`, optionally `fragment_id`), read by the same
//! `Params::parse`, and optionally the visiting agent's User-Agent.

use super::endpoint::respond;
use super::page::Page;
use super::params::{non_empty, Params};
use super::select::{resolve, serve, Decision, Outcome, Recorder, Resolution, Score, Trace};
use super::snapshot::{Candidate, Card, Fragment, OrgSnapshot};
use crate::agents::{self, Marker};
use crate::domain::{Ending, Format, Lang, Purpose};
use crate::http::Response;
use std::cmp::Reverse;

/// The longest `page_url` the question takes, in bytes.
pub const PAGE_URL_MAX: usize = 2048;

/// A question refused, on the field it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refused {
    pub field: &'static str,
    pub message: &'static str,
}

/// How the page resolved, its texts owned by the diagnosis.
#[derive(Debug, Clone)]
pub enum Step<'s> {
    /// The page's host is not a site of the organisation.
    NotASite,
    /// A rule of the site: its canonical path and match mode.
    Rule {
        path: String,
        exact: bool,
        fragment: &'s Fragment,
    },
    /// No rule for the page: the site default.
    SiteDefault(&'s Fragment),
    /// No rule for the page (or its path is refused by the canonical steps) and no default.
    Nothing,
}

/// A card the pick looked at, and what became of it.
#[derive(Debug, Clone, Copy)]
pub struct Considered<'s> {
    pub candidate: &'s Candidate,
    pub verdict: Verdict,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Left out: its language is not the request's.
    OtherLanguage,
    /// Kept, at `rank` in the order (0: served).
    Kept { score: Score, rank: usize },
}

/// Every step of the decision for one page.
#[derive(Debug)]
pub struct Diagnosis<'s> {
    /// The page as resolution sees it: host and canonical path.
    pub page: Page,
    /// The page's site, when it is one of the organisation's.
    pub site: Option<&'s str>,
    pub step: Step<'s>,
    /// The fragment named by `fragment_id`, when one was given.
    pub requested: Option<&'s Fragment>,
    /// The fragment that serves: the one resolved, else the requested one; `None` when the
    /// page resolves to nothing and no `fragment_id` was given (an edge always sends one).
    pub fragment: Option<&'s Fragment>,
    /// In the order the pick scans them: the fragment's listed cards, then the organisation's
    /// cards eligible everywhere. Empty when the fragment is paused (no card is looked at).
    pub considered: Vec<Considered<'s>>,
    /// How it ends (`None` without a fragment).
    pub ending: Option<Ending>,
    pub served: Option<&'s Card>,
    /// The answer `/fragment` would send (`None` without a fragment).
    pub answer: Option<Response>,
    /// With a User-Agent: the marker it matches (if any) and the purpose it is counted under.
    pub agent: Option<(Option<&'static Marker>, Purpose)>,
}

/// Keeps every step `select` reports.
#[derive(Default)]
struct Steps<'s> {
    step: Option<Step<'s>>,
    considered: Vec<Considered<'s>>,
}

impl<'s> Recorder<'s> for Steps<'s> {
    fn resolution(&mut self, step: Resolution<'s, '_>) {
        self.step = match step {
            // A page is always given here.
            Resolution::NoPage => None,
            Resolution::NotASite => Some(Step::NotASite),
            Resolution::Rule {
                path,
                exact,
                fragment,
            } => Some(Step::Rule {
                path: path.to_string(),
                exact,
                fragment,
            }),
            Resolution::SiteDefault(fragment) => Some(Step::SiteDefault(fragment)),
            Resolution::Nothing => Some(Step::Nothing),
        };
    }

    fn dropped_for_language(&mut self, candidate: &'s Candidate) {
        self.considered.push(Considered {
            candidate,
            verdict: Verdict::OtherLanguage,
        });
    }

    fn kept(&mut self, candidate: &'s Candidate, score: Score) {
        self.considered.push(Considered {
            candidate,
            verdict: Verdict::Kept { score, rank: 0 },
        });
    }
}

/// `page_url` read as `/fragment` reads it (`Page::parse`), refused when it would resolve
/// nothing: not `http`/`https`, no host, or longer than [`PAGE_URL_MAX`].
pub fn page(page_url: Option<&str>) -> Result<Page, Refused> {
    let refused = |message| Refused {
        field: "page_url",
        message,
    };
    let page_url = non_empty(page_url).ok_or(refused("a page URL is required"))?;
    if page_url.len() > PAGE_URL_MAX {
        return Err(refused("the page URL is over 2048 bytes"));
    }
    Page::parse(page_url).ok_or(refused(
        "the page URL must be an http or https URL with a host",
    ))
}

/// How `page` resolves in `org` (the console's "test a page" box): the page's site, when it is
/// one of the organisation's, and the step that decided.
pub fn resolution<'s>(org: &'s OrgSnapshot, page: &Page) -> (Option<&'s str>, Step<'s>) {
    let mut steps = Steps::default();
    let (site, _) = resolve(org, Some(page), &mut steps);
    (site, steps.step.unwrap_or(Step::Nothing))
}

/// What `/fragment` would do for `params` (without a key) in `org`, step by step.
pub fn diagnose<'s>(
    org: &'s OrgSnapshot,
    params: &Params,
    user_agent: Option<&str>,
) -> Result<Diagnosis<'s>, Refused> {
    let page = page(params.page_url.as_deref())?;
    let lang = params
        .lang
        .as_deref()
        .and_then(|l| Lang::parse(l, "lang").ok());
    let lang = lang.ok_or(Refused {
        field: "lang",
        message: "lang must be one of fr, en, de, es, it",
    })?;
    let format = params
        .format
        .as_deref()
        .map_or(Some(Format::Html), Format::named);
    let format = format.ok_or(Refused {
        field: "format",
        message: "format must be html, json or both",
    })?;
    let requested = match params.requested_fragment() {
        None => None,
        Some(id) => Some(org.fragments.get(id).ok_or(Refused {
            field: "fragment_id",
            message: "fragment_id is not a fragment of this organisation",
        })?),
    };
    let mut steps = Steps::default();
    let (site, resolved) = resolve(org, Some(&page), &mut steps);
    let fragment = resolved.or(requested);
    let outcome =
        fragment.map(|fragment| serve(org, fragment, lang, Some(&page), params, &mut steps));
    let served = match outcome {
        Some(Outcome::Served(card)) => Some(card),
        _ => None,
    };
    let ending = outcome.as_ref().map(Outcome::ending);
    let answer = outcome.map(|outcome| {
        let trace = Trace {
            format: Some(format),
            ..Trace::default()
        };
        respond(&Decision { outcome, trace })
    });
    rank(&mut steps.considered);
    let agent = user_agent.map(|user_agent| {
        let marker = agents::matching_marker(user_agent);
        (marker, agents::purpose_of(marker))
    });
    Ok(Diagnosis {
        step: steps.step.unwrap_or(Step::Nothing),
        page,
        site,
        requested,
        fragment,
        considered: steps.considered,
        ending,
        served,
        answer,
        agent,
    })
}

/// Numbers the kept cards in the pick's order: highest score first, then the smaller id.
fn rank(considered: &mut [Considered]) {
    let mut kept: Vec<(Score, Reverse<&str>, usize)> = considered
        .iter()
        .enumerate()
        .filter_map(|(at, c)| match c.verdict {
            Verdict::Kept { score, .. } => Some((score, Reverse(&*c.candidate.card.id), at)),
            Verdict::OtherLanguage => None,
        })
        .collect();
    kept.sort_by(|a, b| b.cmp(a));
    for (rank, (_, _, at)) in kept.into_iter().enumerate() {
        if let Verdict::Kept { rank: place, .. } = &mut considered[at].verdict {
            *place = rank;
        }
    }
}

#[cfg(test)]
#[path = "diagnosis_tests.rs"]
mod tests;
