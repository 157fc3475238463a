//! agentcard: cards for AI agents reading publishers' pages.
//!
//! One library, thin binary: `main.rs` parses the command line and calls [`start`] (serve),
//! [`db::migrate`] or [`admin`]. Tests start the same server in-process on port 0.
//! ARCHITECTURE.md maps the modules.

pub mod admin;
mod agents;
mod api;
pub mod app;
pub mod auth;
mod blocking;
pub mod config;
mod contact;
pub mod db;
pub mod delivery;
mod dispatch;
pub mod domain;
mod error;
mod failure_log;
#[doc(hidden)]
pub mod fuzzing;
mod health;
mod html;
pub mod http;
pub mod ids;
mod limits;
mod report;
mod router;
mod token_use;
mod wire;

use app::App;
use config::Config;
use std::sync::Arc;
use std::time::Instant;

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("database: {0}")]
    Database(#[from] postgres::Error),
    #[error("listen: {0}")]
    Listen(#[from] std::io::Error),
}

/// A started service: its state and the address it listens on.
pub struct Running {
    pub app: Arc<App>,
    pub server: http::Server,
}

impl Running {
    /// The graceful stop (decisions.md, "Reporting"): `/ready` answers `503`, the listener
    /// closes, requests in flight are answered, then the report's counters are flushed; all
    /// within the configured shutdown timeout. `false` when something was cut short.
    pub fn shut_down(&self) -> bool {
        let deadline = Instant::now() + self.app.config.shutdown_timeout;
        self.app.begin_stopping();
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
}

/// Applies migrations, then serves on `config.listen` until the process ends.
pub fn start(config: Config) -> Result<Running, StartError> {
    let mut client = db::connect(&config.database_url)?;
    for name in db::migrate::run(&mut client)? {
        log::info!("applied migration {name}");
    }
    log::info!("agent markers {}", agents::version());
    drop(client);
    serve_without_migrating(config)
}

/// Serves without touching the database first: a database that is down at start makes the
/// service not ready, never unable to start (and tests use it to prove `/ready` says so).
pub fn serve_without_migrating(config: Config) -> Result<Running, StartError> {
    configure_runtime(config.workers);
    let app = App::new(config)?;
    let options = http::ServerOptions {
        limits: http::HttpLimits::default(),
        request_timeout: app.config.request_timeout,
        idle_timeout: app.config.idle_timeout,
    };
    let server = http::start(
        app.config.listen,
        options,
        Arc::new(dispatch::Dispatch(Arc::clone(&app))),
    )?;
    Ok(Running { app, server })
}

/// Coroutine runtime settings, in one place: one worker thread per core, and stacks large
/// enough for a handler's JSON and the panic net's unwinding.
fn configure_runtime(workers: usize) {
    may::config().set_workers(workers).set_stack_size(0x8000);
}
