//! agentcard: cards for AI agents reading publishers' pages.
//!
//! One library, thin binary: `main.rs` parses the command line and calls [`start`] (serve),
//! [`db::migrate`] or [`admin`]. Tests start the same server in-process on port 0.
//! ARCHITECTURE.md maps the modules.

pub mod abc_txt;
pub mod admin;
mod agents;
mod api;
pub mod app;
pub mod auth;
mod background;
mod blocking;
pub mod clock;
pub mod config;
pub mod console;
mod contact;
mod csv;
pub mod db;
pub mod delivery;
mod dispatch;
pub mod domain;
pub mod edge;
pub mod error;
mod failure_log;
// The fuzz targets' properties: compiled for `fuzz/` (its feature) and for the replay of the
// kept inputs (`cargo test`), never into the service.
pub mod counting;
#[cfg(any(test, feature = "fuzzing"))]
#[doc(hidden)]
pub mod fuzzing;
mod health;
mod html;
pub mod http;
pub mod icon;
pub mod ids;
mod limits;
pub mod mail;
mod metrics;
pub mod ops;
pub mod password;
mod pool;
pub mod proof_of_work;
pub mod recipes;
mod router;
mod schedule;
pub mod startup;
mod token_use;
mod wire;

use app::App;
use config::Config;
use dispatch::Dispatch;
use std::sync::Arc;
use std::time::Instant;

/// `openapi.json`, the description of `/v1`, made from its route table (`agentcard openapi`).
pub use api::description as openapi_description;
pub use startup::StartError;

/// A started service: its state and its listeners. Dropping it stops everything it started
/// ([`Running::stop`]).
pub struct Running {
    pub app: Arc<App>,
    /// The public listener.
    pub server: Arc<http::Server>,
    /// The operator metrics' listener (`AGENTCARD_METRICS_LISTEN`), when configured. Not part
    /// of the graceful stop: it answers scrapes until the process ends.
    pub metrics: Option<http::Server>,
    /// The scheduled work (alerts, scheduled reports).
    schedule: background::Background,
}

impl Running {
    /// The graceful stop (decisions.md, "Fleet"): `/ready` answers `503` at once while the
    /// instance keeps serving for the drain time, each answer closing its connection, so that
    /// a load balancer sees it and takes the instance out; then the listener closes, requests
    /// in flight are answered, and the report's counters are flushed, within the configured
    /// shutdown timeout. `false` when something was cut short.
    pub fn shut_down(&self) -> bool {
        self.app.begin_stopping();
        self.server.close_after_answers();
        std::thread::sleep(self.app.config.drain);
        let deadline = Instant::now() + self.app.config.shutdown_timeout;
        let drained = self.server.shut_down(deadline);
        if !drained {
            log::warn!("shutdown: connections still open at the timeout are closed");
        }
        let left = deadline.saturating_duration_since(Instant::now());
        let flushed = self.app.delivery.reporter.finish(left);
        if !flushed {
            log::error!("shutdown: the report's last counts could not be written in time");
        }
        drained && flushed
    }

    /// Stops everything `start` started, at once (the graceful stop is [`Running::shut_down`]):
    /// the listeners close, idle connections with them (a request in flight is still
    /// answered), and the background threads end; counts the report has not flushed are lost.
    pub fn stop(&self) {
        self.schedule.stop();
        let now = Instant::now();
        self.server.shut_down(now);
        if let Some(metrics) = &self.metrics {
            metrics.shut_down(now);
        }
        self.app.stop();
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The HTTP layer's own answers may be to `/v1` paths: they carry its headers (private to the
/// caller, and the rate-limit policy), harmless elsewhere.
const OWN_ANSWER_HEADERS: &[(&str, &str)] = &[
    ("Cache-Control", "private, no-store"),
    ("RateLimit-Policy", limits::POLICY_HEADER),
];

/// Binds the listeners, applies the migrations, then serves until the process ends. The
/// listeners come first: an address in use stops the start before anything else is done.
pub fn start(config: Config) -> Result<Running, StartError> {
    let listeners = Listeners::bind(&config)?;
    for name in startup::migrate(&config.database_url)? {
        log::info!("applied migration {name}");
    }
    log::info!("agent markers {}", agents::version());
    serve(config, listeners)
}

/// Serves without touching the database first: a database that is down at start makes the
/// service not ready, never unable to start (and tests use it to prove `/ready` says so).
pub fn serve_without_migrating(config: Config) -> Result<Running, StartError> {
    let listeners = Listeners::bind(&config)?;
    serve(config, listeners)
}

/// The public listener and the metrics' one, bound (the coroutine runtime configured first,
/// as `may` wants before its first socket).
struct Listeners {
    public: http::Listener,
    metrics: Option<http::Listener>,
}

impl Listeners {
    fn bind(config: &Config) -> Result<Listeners, StartError> {
        http::configure_runtime(config.workers, STACK_SIZE);
        Ok(Listeners {
            public: startup::bind(startup::LISTEN_SETTING, config.listen)?,
            metrics: config
                .metrics_listen
                .map(|addr| startup::bind(startup::METRICS_LISTEN_SETTING, addr))
                .transpose()?,
        })
    }
}

fn serve(config: Config, listeners: Listeners) -> Result<Running, StartError> {
    let database_url = config.database_url.clone();
    let app = App::new(config).map_err(|e| startup::database_failure(&database_url, &e))?;
    let options = http::ServerOptions {
        limits: http::HttpLimits {
            max_connections_per_address: app.config.max_connections_per_address,
            trusted_proxies: app.config.client_address.trusted_proxies.clone(),
            ..http::HttpLimits::default()
        },
        request_timeout: app.config.request_timeout,
        idle_timeout: app.config.idle_timeout,
        own_answer_headers: OWN_ANSWER_HEADERS,
    };
    let dispatch = Arc::new(Dispatch::new(Arc::clone(&app)));
    let server = Arc::new(
        http::serve(
            listeners.public,
            options.clone(),
            Arc::clone(&dispatch) as Arc<dyn http::Service>,
        )
        .map_err(|e| startup::listen_failure(startup::LISTEN_SETTING, app.config.listen, &e))?,
    );
    let metrics = match listeners.metrics.zip(app.config.metrics_listen) {
        Some((listener, addr)) => {
            let (app, server) = (Arc::clone(&app), Arc::clone(&server));
            let endpoint = metrics::Endpoint::new(move || read_metrics(&app, &dispatch, &server));
            Some(
                http::serve(listener, options, Arc::new(endpoint)).map_err(|e| {
                    startup::listen_failure(startup::METRICS_LISTEN_SETTING, addr, &e)
                })?,
            )
        }
        None => None,
    };
    Ok(Running {
        schedule: schedule::start(&app),
        app,
        server,
        metrics,
    })
}

/// Every value of a scrape of `/metrics`, from where each is kept.
fn read_metrics(app: &App, dispatch: &Dispatch, server: &http::Server) -> metrics::Readings {
    let delivery = &app.delivery;
    let report = delivery.reporter.status();
    let pool = app.pool.state();
    metrics::Readings {
        http_requests: dispatch.counts_by_status(),
        http_durations: dispatch.durations(),
        fragment_requests: delivery.counts_by_ending(),
        fragment_purposes: delivery.counts_by_purpose(),
        snapshot: delivery
            .cache
            .state()
            .map(|state| metrics::SnapshotReading {
                generation: state.generation,
                age: state.age,
                last_build: state.last_build,
            }),
        report: metrics::ReportReading {
            pending_counters: report.pending_keys,
            last_flush: report.last_flush,
            flush_failures: report.failures,
        },
        db_pool: metrics::PoolReading {
            in_use: pool.connections - pool.idle_connections,
            idle: pool.idle_connections,
        },
        database_up: app.pool.database_up(),
        rate_limited: app.limiter.refusals(),
        open_connections: server.open_connections(),
    }
}

/// Coroutine stacks large enough for a handler's JSON and the panic net's unwinding.
const STACK_SIZE: usize = 0x8000;
