//! `GET /fragment` over HTTP: reads the request, asks `select::decide`, answers with the
//! contract's statuses and cache headers, and queues the report row. Never touches the
//! database: everything comes from the snapshot in memory.

use super::cache::FragmentCache;
use super::params::Params;
use super::select::{decide, Decision, Outcome};
use crate::background::Background;
use crate::config::Config;
use crate::counting::{ReportSettings, Reporter, RequestFacts};
use crate::domain::{Ending, Format, Purpose};
use crate::http::{error_response, require_get_or_head, Request, Response};
use crate::metrics::{Counter, PerThread};
use std::sync::Arc;

/// The path of a page whose path the canonical steps refuse (a `//`, a dot segment).
pub const UNREADABLE_PATH: &str = "/(unreadable path)";

/// On `200` and `204`: cacheable by URL at the edge; no `Vary: User-Agent`, since the answer
/// never depends on it.
const CACHEABLE: &str = "public, s-maxage=120, stale-while-revalidate=240";

/// What `/fragment` works with: the snapshot and its refresher, the report, the key prefix,
/// the operator metrics' counts.
pub struct Delivery {
    pub cache: Arc<FragmentCache>,
    /// Keeps `cache` fresh; stops with this.
    refresher: Background,
    pub reporter: Reporter,
    prefix: String,
    counts: PerThread<Counts>,
}

/// A worker thread's counts of the requests the report counts, for the operator metrics: by
/// ending (`domain::Ending`) and by the agent's purpose.
struct Counts {
    endings: [Counter; Ending::ALL.len()],
    purposes: [Counter; Purpose::ALL.len()],
}

impl Default for Counts {
    fn default() -> Self {
        Counts {
            endings: [const { Counter::new() }; Ending::ALL.len()],
            purposes: [const { Counter::new() }; Purpose::ALL.len()],
        }
    }
}

impl Delivery {
    /// Starts the cache refresher (which loads the first snapshot) and the report writer.
    pub fn start(config: &Config) -> Delivery {
        let cache = FragmentCache::new();
        let refresher = cache.start_refresher(config.database_url.clone(), config.refresh);
        Delivery {
            cache,
            refresher,
            reporter: Reporter::start(ReportSettings::from(config)),
            prefix: config.prefix.clone(),
            counts: PerThread::new(config.workers),
        }
    }

    /// Stops the refresher and the report's flusher (without a last flush), and waits until
    /// they have stopped: the snapshot is served as it is.
    pub fn stop(&self) {
        self.refresher.stop();
        self.reporter.stop();
    }

    pub fn handle(&self, request: &Request) -> Response {
        if let Err(refused) = require_get_or_head(request) {
            return refused;
        }
        let params = Params::parse(request.query().unwrap_or(""));
        self.cache.with_current(|snapshot| {
            let decision = decide(snapshot, &params, request.header("x-api-key"), &self.prefix);
            let response = respond(&decision);
            let purpose = self
                .reporter
                .record(&request_facts(&decision, &params, request));
            let counts = self.counts.slot();
            counts.add(|c| &c.endings[decision.outcome.ending().index()], 1);
            counts.add(|c| &c.purposes[purpose.index()], 1);
            response
        })
    }

    /// The requests counted so far, by (outcome, reason), every pair listed.
    pub fn counts_by_ending(&self) -> Vec<((&'static str, &'static str), u64)> {
        Ending::ALL
            .iter()
            .map(|ending| {
                let count = self.counts.sum(|c| &c.endings[ending.index()]);
                ((ending.outcome().as_str(), ending.as_str()), count)
            })
            .collect()
    }

    /// The requests counted so far, by the agent's purpose, every purpose listed.
    pub fn counts_by_purpose(&self) -> Vec<(&'static str, u64)> {
        let count = |p: Purpose| self.counts.sum(|c| &c.purposes[p.index()]);
        Purpose::ALL.map(|p| (p.as_str(), count(p))).to_vec()
    }
}

/// The answer to a decision: the card's bytes with the cache header, a `204`, or the error.
pub(crate) fn respond(decision: &Decision) -> Response {
    match &decision.outcome {
        Outcome::Served(card) => {
            let (content_type, body) = match decision.trace.format.unwrap_or(Format::Html) {
                Format::Html => ("text/html; charset=UTF-8", &card.rendered.html),
                Format::Json => ("application/json", &card.rendered.json),
                Format::Both => ("application/json", &card.rendered.both),
            };
            Response::new(200)
                .header("Content-Type", content_type)
                .header("Cache-Control", CACHEABLE)
                // A copy, not a reference: the card's reference count is shared by every
                // worker thread, and a few hundred bytes copy faster than that count moves
                // between cores.
                .body(body.to_vec())
        }
        Outcome::NoFill(_) => Response::new(204).header("Cache-Control", CACHEABLE),
        Outcome::Refused(refusal) => {
            error_response(refusal.status(), refusal.code(), refusal.message())
        }
    }
}

/// The visiting agent for reporting: `X-Agent-UA`, then `agent_ua`, then the `User-Agent`.
fn agent_user_agent<'r>(params: &'r Params, request: &'r Request) -> Option<&'r str> {
    request
        .header("x-agent-ua")
        .or(params.agent_ua.as_deref())
        .or_else(|| request.header("user-agent"))
}

/// What the report counts of this request.
fn request_facts<'r>(
    decision: &'r Decision,
    params: &'r Params,
    request: &'r Request,
) -> RequestFacts<'r> {
    let trace = &decision.trace;
    let card_id = match &decision.outcome {
        Outcome::Served(card) => Some(&*card.id),
        Outcome::NoFill(_) | Outcome::Refused(_) => None,
    };
    let page = trace.page.as_ref().map(|page| {
        let path = page.path.as_deref().unwrap_or(UNREADABLE_PATH);
        (page.host.as_str(), path)
    });
    RequestFacts {
        org_id: trace.org_id,
        key_id: trace.key_id,
        requested_fragment_id: trace.requested_fragment,
        resolved_fragment_id: trace.resolved_fragment,
        site: trace.site,
        card_id,
        lang: trace.lang,
        format: trace.format,
        ending: decision.outcome.ending(),
        refused: decision.outcome.refused(),
        page,
        agent_ua: agent_user_agent(params, request),
    }
}
