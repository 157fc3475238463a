//! The entry of every request: its host and path choose the area that answers it. Each
//! answer is counted by area and status, with its duration, for the operator metrics.

use crate::app::App;
use crate::http::{self, host_without_port, Request, Response, Service};
use crate::metrics::{Counter, Histogram, HistogramReading, PerThread};
use crate::router::{self, Area, CountedArea, HostRole};
use crate::{api, console, contact, health};
use std::sync::Arc;
use std::time::Instant;

/// The status codes counted: 100 to 599, each at `status - FIRST_STATUS`.
const FIRST_STATUS: u16 = 100;
const STATUSES: usize = 500;

/// The service as the HTTP layer calls it.
pub struct Dispatch {
    app: Arc<App>,
    counts: PerThread<[AreaCounts; CountedArea::ALL.len()]>,
}

/// A worker thread's counts of the answers of one area (at its `CountedArea::index`).
struct AreaCounts {
    statuses: [Counter; STATUSES],
    durations: Histogram,
}

impl Default for AreaCounts {
    fn default() -> Self {
        AreaCounts {
            statuses: [const { Counter::new() }; STATUSES],
            durations: Histogram::default(),
        }
    }
}

impl Dispatch {
    pub fn new(app: Arc<App>) -> Dispatch {
        let counts = PerThread::new(app.config.workers);
        Dispatch { app, counts }
    }

    /// The answers so far, by area and status: the pairs that occurred.
    pub fn counts_by_status(&self) -> Vec<((&'static str, u16), u64)> {
        let mut counts = Vec::new();
        for area in CountedArea::ALL {
            for (i, status) in (FIRST_STATUS..).take(STATUSES).enumerate() {
                let n = self.counts.sum(|c| &c[area.index()].statuses[i]);
                if n > 0 {
                    counts.push(((area.as_str(), status), n));
                }
            }
        }
        counts
    }

    /// The answers' durations so far, by area, every area listed.
    pub fn durations(&self) -> Vec<(&'static str, HistogramReading)> {
        let durations = |area: CountedArea| self.counts.histogram(|c| &c[area.index()].durations);
        (CountedArea::ALL.into_iter())
            .map(|area| (area.as_str(), durations(area)))
            .collect()
    }

    fn count(&self, area: Area, status: u16, started: Instant) {
        let area = area.counted().index();
        let status = usize::from(status.saturating_sub(FIRST_STATUS)).min(STATUSES - 1);
        let counts = self.counts.slot();
        counts.add(|c| &c[area].statuses[status], 1);
        counts.observe(|c| &c[area].durations, started.elapsed());
    }
}

impl Service for Dispatch {
    fn answer_without_body(&self, head: &Request) -> Option<Response> {
        let app = &self.app;
        let area = router::area(host_role(app, head), head.path());
        let response = match area {
            Area::Management => api::answer_without_body(app, head)?,
            Area::ManagementNotFound => api::not_served(app),
            _ => return None,
        };
        self.count(area, response.status, Instant::now());
        Some(response)
    }

    fn call(&self, request: Request) -> Response {
        let started = Instant::now();
        let app = &self.app;
        let area = router::area(host_role(app, &request), request.path());
        let response = match area {
            Area::Management => api::handle(app, request),
            Area::ManagementNotFound => api::not_served(app),
            Area::Health => health::health(&request),
            Area::Ready => health::ready(app, &request),
            Area::Contact => contact::handle(app, request),
            Area::Console => console::handle(app, request),
            Area::Fragment => app.delivery.handle(&request),
            Area::NotFound => http::error_response(404, "not_found", "not found"),
        };
        // After the handler: a coroutine that waited (on the blocking pool) may have resumed
        // on another thread, whose slot this is.
        self.count(area, response.status, started);
        response
    }
}

fn host_role(app: &App, request: &Request) -> HostRole {
    // Compared in place, ASCII case aside: the configured hosts are normalized, and this
    // runs on every request.
    let host = host_without_port(request.header("host").unwrap_or(""));
    let is = |configured: &Option<String>| {
        configured
            .as_deref()
            .is_some_and(|configured| configured.eq_ignore_ascii_case(host))
    };
    let config = &app.config;
    if is(&config.console_host) {
        HostRole::Console
    } else if is(&config.legacy_host) {
        HostRole::Legacy
    } else if config.base_host.is_none() || is(&config.base_host) {
        HostRole::Base
    } else {
        HostRole::Other
    }
}
