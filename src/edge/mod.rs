//! `agentcard edge`: the reference edge, a reverse proxy in front of a publisher's origin that
//! follows every edge client rule of the contract (decisions.md, "Edge"). Where each rule lives:
//!
//! | rule | where |
//! |---|---|
//! | 1 gate on the markers | `proxy::gate`, with [`crate::agents`], the classifier the report uses |
//! | 2 key server-side | `card` (the key goes only in `X-API-Key` to the service) |
//! | 3 card before the first `<article>`, brand line | `compose` |
//! | 4 `page_url` from the live request | `proxy::gate` |
//! | 5 budget, fail open, one log line per cause | `card::PendingCard::wait`, [`log_fail_open`] |
//! | 6 compose only `200 text/html`, agent headers | `proxy::answer_agent` |
//! | 7 `abc.txt` | `proxy::serve_abc_txt`, checked at start by [`crate::abc_txt`] |
//!
//! Same shape as the service: a coroutine per connection on `may`, blocking code, no runtime.
//! The card call runs on a coroutine of its own while the origin answers.

mod alarm;
pub(crate) mod card;
pub(crate) mod compose;
mod config;
pub(crate) mod message;
mod metrics;
mod proxy;
mod upstream;

pub use config::{EdgeArgs, EdgeConfig, EdgeConfigError, KEY_VAR};

use crate::http::socket;
use crate::http::{Timeouts, Watchdog};
use card::CardService;
use proxy::Edge;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use upstream::Upstream;

/// Coroutine stacks: lol_html's parser and rustls's handshake run on them, deeper than the
/// service's handlers.
const STACK_SIZE: usize = 256 * 1024;

/// A client connection: 60 s to send its next request or to stall a read or write, 10 s for a
/// head once its first byte has come (a slow-loris guard).
const CLIENT_TIMEOUTS: Timeouts = Timeouts {
    idle: Duration::from_secs(60),
    request: Duration::from_secs(10),
};
/// The origin: 10 s to accept a connection, 60 s to stall while answering.
const ORIGIN_TIMEOUTS: Timeouts = Timeouts {
    idle: Duration::from_secs(60),
    request: Duration::from_secs(10),
};

/// Why a page went out without a card (decisions.md, "Edge": one word per cause).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailOpen {
    NoFill,
    CardError,
    Timeout,
    Unreachable,
    NotHtml,
    NoArticle,
}

impl FailOpen {
    pub fn as_str(self) -> &'static str {
        match self {
            FailOpen::NoFill => "no_fill",
            FailOpen::CardError => "card_error",
            FailOpen::Timeout => "timeout",
            FailOpen::Unreachable => "unreachable",
            FailOpen::NotHtml => "not_html",
            FailOpen::NoArticle => "no_article",
        }
    }
}

/// The one log line of a page served without its card.
fn log_fail_open(cause: FailOpen, page_url: &str, detail: &str) {
    metrics::count_fail_open(cause);
    log::info!("fail open: {} {page_url} ({detail})", cause.as_str());
}

/// The edge, listening.
pub struct RunningEdge {
    addr: SocketAddr,
}

impl RunningEdge {
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }
}

/// Resolves the upstreams, binds the listener and serves every connection on a coroutine.
pub fn start(config: EdgeConfig) -> Result<RunningEdge, String> {
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    crate::http::configure_runtime(workers, STACK_SIZE);
    let tls = match config.origin.tls || config.service.tls {
        true => Some(upstream::tls_config(config.ca_file.as_deref())?),
        false => None,
    };
    // A card call may take the budget, to connect and to answer, and no longer.
    let card_timeouts = Timeouts {
        idle: config.budget,
        request: config.budget,
    };
    let watchdog = Watchdog::start(card_timeouts);
    let origin = Upstream::new(
        config.origin,
        tls.clone(),
        Arc::clone(&watchdog),
        ORIGIN_TIMEOUTS,
    )
    .map_err(|e| format!("AGENTCARD_EDGE_ORIGIN: {e}"))?;
    let service = Upstream::new(config.service, tls, Arc::clone(&watchdog), card_timeouts)
        .map_err(|e| format!("AGENTCARD_EDGE_SERVICE: {e}"))?;
    metrics::start(config.metrics_listen, workers, config.budget)?;
    let edge = Arc::new(Edge {
        origin,
        cards: Arc::new(CardService {
            upstream: service,
            key: config.key,
            alarm: alarm::Alarm::start(),
        }),
        sites: config.sites,
        budget: config.budget,
        abc_txt: config.abc_txt,
    });
    let listener = crate::http::exclusive_listener(config.listen).map_err(|e| {
        format!(
            "AGENTCARD_EDGE_LISTEN: cannot listen on {}: {e}",
            config.listen
        )
    })?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    socket::serve_each(listener, watchdog, CLIENT_TIMEOUTS, move |client| {
        metrics::while_open(|| proxy::serve(&edge, client));
    });
    Ok(RunningEdge { addr })
}
