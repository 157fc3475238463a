//! Work every instance does on a period (a minute; `AGENTCARD_SCHEDULE_MS` for tests): the
//! alerts' evaluation and the scheduled reports. Every instance of a fleet runs each job; a job
//! claims what it does in PostgreSQL (a row whose insert succeeds once), so that a start, an
//! end or a report is mailed exactly once however many instances run, and an instance that was
//! down does what became due on its next turn. A job sees the time of the configured
//! [`crate::clock::Clock`].

use crate::app::App;
use crate::background::Background;
use crate::error::ApiError;
use jiff::Timestamp;
use std::sync::Arc;

/// One piece of the scheduled work: `run` does what is due at `now`.
pub struct Job {
    pub name: &'static str,
    pub run: fn(&App, Timestamp) -> Result<(), ApiError>,
}

/// The jobs, in the order they run each period.
const JOBS: &[Job] = &[
    Job {
        name: "alerts",
        run: alerts,
    },
    Job {
        name: "report mail",
        run: crate::console::mail_reports,
    },
];

/// The alerts of the minute that holds `now`, evaluated by the one instance that claims it.
fn alerts(app: &App, now: Timestamp) -> Result<(), ApiError> {
    let mut db = app.pool.get()?;
    let (mailer, console) = (app.mailer.as_ref(), app.config.console_url.as_ref());
    crate::ops::alerts::evaluate(&mut *db, mailer, console, now)
}

/// Starts the period's thread; it holds the service weakly, and ends with its handle.
pub fn start(app: &Arc<App>) -> Background {
    let app = Arc::downgrade(app);
    Background::spawn("schedule", move |stop| loop {
        let Some(period) = app.upgrade().map(|app| app.config.schedule_period) else {
            return;
        };
        if stop.wait(period) {
            return;
        }
        match app.upgrade() {
            Some(app) => run_due(&app),
            None => return,
        }
    })
}

/// Runs every job once, each whatever the others gave: a failure is logged and retried the
/// next period.
fn run_due(app: &App) {
    let now = app.config.clock.now();
    for job in JOBS {
        if let Err(error) = (job.run)(app, now) {
            log::error!("scheduled {}: {error}", job.name);
        }
    }
}
