//! The edge's operator metrics: `GET /metrics` on a listener of its own
//! (`AGENTCARD_EDGE_METRICS_LISTEN`, off by default), never on the proxy's port.
//!
//! Counted as the service counts (`crate::metrics`): each worker thread adds to a slot of its
//! own, so the proxy's path makes no write another core reads, and a scrape sums the slots.
//! The proxy, the card call and the fail-open log line each make one call here; the
//! exposition is the service's writer, given the edge's families.

use super::FailOpen;
use crate::metrics::{
    counter, family, gauge, histogram, Bounds, Counter, Endpoint, Histogram, PerThread,
};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::DescriptorEncoder;
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::MetricType;
use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// What the edge did with a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Not gated: passed through as the origin answered.
    Human,
    /// Gated (rule 1), whether or not its page got a card.
    Agent,
    /// `/abc.txt`, served by the edge itself (rule 7).
    AbcTxt,
    /// The edge's own `400`, `431` or `502`.
    Refused,
}

impl Kind {
    const ALL: [Kind; 4] = [Kind::Human, Kind::Agent, Kind::AbcTxt, Kind::Refused];

    /// The kind of a request the origin answered: `Agent` when the gate let it through.
    pub fn gated(gated: bool) -> Kind {
        match gated {
            true => Kind::Agent,
            false => Kind::Human,
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            Kind::Human => "human",
            Kind::Agent => "agent",
            Kind::AbcTxt => "abc_txt",
            Kind::Refused => "refused",
        }
    }
}

/// Every cause, at the index of its counter.
const CAUSES: [FailOpen; 6] = [
    FailOpen::NoFill,
    FailOpen::CardError,
    FailOpen::Timeout,
    FailOpen::Unreachable,
    FailOpen::NotHtml,
    FailOpen::NoArticle,
];

/// The index of a cause's counter; a cause added to `FailOpen` stops the build here.
fn cause_index(cause: FailOpen) -> usize {
    match cause {
        FailOpen::NoFill => 0,
        FailOpen::CardError => 1,
        FailOpen::Timeout => 2,
        FailOpen::Unreachable => 3,
        FailOpen::NotHtml => 4,
        FailOpen::NoArticle => 5,
    }
}

/// Bounds around the card budget (800 ms by default): whether calls and agents' pages keep
/// to it, and by how much they miss it.
#[derive(Debug)]
struct BudgetBounds;

impl Bounds for BudgetBounds {
    const NANOS: &'static [u64] = &[
        5_000_000,
        10_000_000,
        25_000_000,
        50_000_000,
        100_000_000,
        200_000_000,
        300_000_000,
        500_000_000,
        800_000_000,
        1_000_000_000,
        2_000_000_000,
        5_000_000_000,
    ];
}

/// One worker thread's counts.
#[derive(Default)]
struct Counts {
    requests: [Counter; Kind::ALL.len()],
    fail_opens: [Counter; CAUSES.len()],
    cards_placed: Counter,
    card_calls: Histogram<BudgetBounds>,
    agent_pages: Histogram<BudgetBounds>,
    connections_opened: Counter,
    connections_closed: Counter,
}

static COUNTS: OnceLock<PerThread<Counts>> = OnceLock::new();

/// The slots; before [`start`] (the rewriter's own tests) a shared one only.
fn counts() -> &'static PerThread<Counts> {
    COUNTS.get_or_init(|| PerThread::new(0))
}

/// Makes a slot for each of the `workers` threads, and opens the listener when `listen` is
/// set.
pub fn start(listen: Option<SocketAddr>, workers: usize, budget: Duration) -> Result<(), String> {
    let _ = COUNTS.set(PerThread::new(workers));
    let Some(listen) = listen else {
        return Ok(());
    };
    let options = crate::http::ServerOptions {
        limits: crate::http::HttpLimits::default(),
        request_timeout: Duration::from_secs(10),
        idle_timeout: Duration::from_secs(60),
        own_answer_headers: &[],
    };
    let endpoint = Arc::new(Endpoint::of(Families { budget }));
    let server = crate::http::start(listen, options, endpoint)
        .map_err(|e| format!("AGENTCARD_EDGE_METRICS_LISTEN: cannot listen on {listen}: {e}"))?;
    log::info!("edge metrics on {}", server.local_addr());
    Ok(())
}

pub fn count_request(kind: Kind) {
    counts().slot().add(|c| &c.requests[kind as usize], 1);
}

/// Counts a request whose answer has been written to its last byte; an agent's with the
/// time since its head `arrived`.
pub fn count_answered(kind: Kind, arrived: Instant) {
    let slot = counts().slot();
    slot.add(|c| &c.requests[kind as usize], 1);
    if kind == Kind::Agent {
        slot.observe(|c| &c.agent_pages, arrived.elapsed());
    }
}

pub fn count_fail_open(cause: FailOpen) {
    counts()
        .slot()
        .add(|c| &c.fail_opens[cause_index(cause)], 1);
}

/// Passes a composed page's ending on, counting a placed card.
pub fn count_if_placed<E>(ending: Result<(), E>) -> Result<(), E> {
    if ending.is_ok() {
        counts().slot().add(|c| &c.cards_placed, 1);
    }
    ending
}

/// Runs a card call, counting its duration, to its end even past the page's deadline.
pub fn time_card_call<T>(call: impl FnOnce() -> T) -> T {
    let started = Instant::now();
    let answer = call();
    counts()
        .slot()
        .observe(|c| &c.card_calls, started.elapsed());
    answer
}

/// Serves a client connection, counted open until `serve` returns or unwinds.
pub fn while_open(serve: impl FnOnce()) {
    let _open = OpenConnection::new();
    serve();
}

struct OpenConnection;

impl OpenConnection {
    fn new() -> OpenConnection {
        counts().slot().add(|c| &c.connections_opened, 1);
        OpenConnection
    }
}

impl Drop for OpenConnection {
    fn drop(&mut self) {
        // Maybe on another thread than the opening (coroutines move): a slot's counter only
        // grows, and the gauge is their difference.
        counts().slot().add(|c| &c.connections_closed, 1);
    }
}

/// The families a scrape gets.
#[derive(Debug)]
struct Families {
    budget: Duration,
}

impl Collector for Families {
    fn encode(&self, mut out: DescriptorEncoder) -> std::fmt::Result {
        encode(counts(), self.budget, &mut out)
    }
}

fn encode(
    counts: &PerThread<Counts>,
    budget: Duration,
    out: &mut DescriptorEncoder,
) -> std::fmt::Result {
    family(
        out,
        "agentcard_edge_requests",
        "Requests by what the edge did: human (passed through), agent (gated), abc_txt, \
         refused (the edge's own 400, 431 or 502).",
        MetricType::Counter,
        Kind::ALL.map(|kind| {
            let n = counts.sum(|c| &c.requests[kind as usize]);
            ([("kind", kind.as_str())], ConstCounter::new(n))
        }),
    )?;
    family(
        out,
        "agentcard_edge_fail_opens",
        "Agents' pages served without their card, by cause (one log line each).",
        MetricType::Counter,
        CAUSES.map(|cause| {
            let n = counts.sum(|c| &c.fail_opens[cause_index(cause)]);
            ([("cause", cause.as_str())], ConstCounter::new(n))
        }),
    )?;
    counter(
        out,
        "agentcard_edge_cards_placed",
        "Agents' pages composed with their card.",
        counts.sum(|c| &c.cards_placed),
    )?;
    histogram(
        out,
        "agentcard_edge_card_call_duration_seconds",
        "Card calls to the service, from their start to their answer or failure.",
        &counts.histogram(|c| &c.card_calls),
    )?;
    histogram(
        out,
        "agentcard_edge_agent_page_duration_seconds",
        "Agents' pages, from the request's head arrived to the answer's last byte written.",
        &counts.histogram(|c| &c.agent_pages),
    )?;
    gauge(
        out,
        "agentcard_edge_card_budget_seconds",
        "The time a card may take from the request's head (AGENTCARD_EDGE_BUDGET_MS).",
        Some(budget.as_secs_f64()),
    )?;
    // Closings first: an opening read after its closing cannot be missed.
    let closed = counts.sum(|c| &c.connections_closed);
    let opened = counts.sum(|c| &c.connections_opened);
    gauge(
        out,
        "agentcard_edge_open_connections",
        "Client connections open on the proxy's listener.",
        Some(opened.saturating_sub(closed)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_and_cause_is_listed_at_the_index_of_its_counter() {
        for (i, kind) in Kind::ALL.into_iter().enumerate() {
            assert_eq!(kind as usize, i);
        }
        for (i, cause) in CAUSES.into_iter().enumerate() {
            assert_eq!(cause_index(cause), i);
        }
    }
}
