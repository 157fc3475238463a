//! Operator metrics: `GET /metrics` on a listener of its own (`AGENTCARD_METRICS_LISTEN`,
//! decisions.md "Reporting"), never on the public one.
//!
//! - `slots`: counting on the request path, each worker thread in a slot of its own.
//! - `exposition`: the text a scrape gets, written by the `prometheus-client` crate.
//!
//! This module knows none of the places it reads: the modules that count keep their own
//! `PerThread` counters, and the service's start (`lib.rs`) hands the endpoint a function
//! that gathers every value into [`Readings`] at each scrape. `agentcard edge` has families
//! of its own (`edge::metrics`): it hands [`Endpoint::of`] a collector of them, written with
//! the same helpers.

mod exposition;
mod slots;

pub use exposition::{counter, family, gauge, histogram};
pub use slots::{Bounds, Counter, Histogram, HistogramReading, PerThread};

use crate::http::{error_response, require_get_or_head, Request, Response, Service};
use prometheus_client::collector::Collector;
use prometheus_client::registry::Registry;
use std::time::{Duration, SystemTime};

/// The one path the metrics listener serves.
pub const PATH: &str = "/metrics";

/// The OpenMetrics text format, which `prometheus-client` writes and Prometheus asks for.
const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Every value of one scrape.
#[derive(Debug, Clone, Default)]
pub struct Readings {
    /// Requests the public listener answered, by area and status; only pairs that occurred.
    pub http_requests: Vec<((&'static str, u16), u64)>,
    /// How long the public listener's areas took to answer, from routing to the response.
    pub http_durations: Vec<(&'static str, HistogramReading)>,
    /// `/fragment` requests by outcome and reason, every pair listed.
    pub fragment_requests: Vec<((&'static str, &'static str), u64)>,
    /// `/fragment` requests by the purpose of the visiting agent, every purpose listed.
    pub fragment_purposes: Vec<(&'static str, u64)>,
    /// `None` until the first snapshot is loaded.
    pub snapshot: Option<SnapshotReading>,
    pub report: ReportReading,
    pub db_pool: PoolReading,
    /// Whether the database answered the pool's last question (`/ready` says it too).
    pub database_up: bool,
    /// Answers `429`, management API and contact form.
    pub rate_limited: u64,
    /// Connections open on the public listener.
    pub open_connections: usize,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SnapshotReading {
    pub generation: u64,
    /// Since the snapshot served was last known to match the database.
    pub age: Duration,
    /// How long the last build took (loading the rows included).
    pub last_build: Duration,
}

#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ReportReading {
    pub pending_counters: usize,
    pub last_flush: Option<SystemTime>,
    pub flush_failures: u64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PoolReading {
    pub in_use: u32,
    pub idle: u32,
}

/// The metrics listener's service: `GET`/`HEAD /metrics`, `404` elsewhere.
pub struct Endpoint {
    registry: Registry,
}

impl Endpoint {
    /// `read` is called once per scrape.
    pub fn new(read: impl Fn() -> Readings + Send + Sync + 'static) -> Endpoint {
        Endpoint::of(exposition::Scrape::new(read))
    }

    /// An endpoint of other families than the service's: `collector` writes them at each
    /// scrape.
    pub fn of(collector: impl Collector) -> Endpoint {
        let mut registry = Registry::default();
        registry.register_collector(Box::new(collector));
        Endpoint { registry }
    }

    fn scrape(&self) -> Response {
        let mut text = String::new();
        if let Err(error) = prometheus_client::encoding::text::encode(&mut text, &self.registry) {
            log::error!("metrics: the exposition could not be written: {error}");
            return error_response(500, "internal", "internal error");
        }
        Response::new(200)
            .header("Content-Type", CONTENT_TYPE)
            .header("Cache-Control", "no-store")
            .body(text.into_bytes())
    }
}

impl Service for Endpoint {
    fn call(&self, request: Request) -> Response {
        if request.path() != PATH {
            return error_response(404, "not_found", "not found");
        }
        match require_get_or_head(&request) {
            Ok(()) => self.scrape(),
            Err(refused) => refused,
        }
    }
}
