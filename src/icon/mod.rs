//! A site's icon (service.md: "absent until the site is first opened in the console"): looked
//! for in the background when a site's console page is opened, on OS threads of ours, so that
//! neither a page nor a coroutine worker waits for another server. `address` is the rule of
//! which addresses may be connected to, `fetch` one fetch within its deadline and size, `page`
//! the icon link of a page, `image` what counts as an icon.
//!
//! A site is tried at most once an hour (whichever instance tries: `db::icons::claim_attempt`);
//! a success stores the image and sets the site's `icon` to the URL it came from; a failure
//! leaves `icon` null and is logged.

pub mod address;
mod fetch;
mod image;
mod page;

pub use fetch::{Answers, Client, Failure, Icon, Names, BYTES};

use crate::background::Background;
use crate::config::IconFetch;
use crate::db;
use crate::db::sites::SiteRow;
use crate::failure_log::FailureLog;
use crate::ids::SiteId;
use crate::pool::Pool;
use crossbeam::channel::{self, Sender};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A site whose icon was not found is tried again after this, not before.
pub const RETRY: Duration = Duration::from_secs(3600);
/// Fetches at once: each waits on another server, for at most [`DEADLINE`].
const THREADS: usize = 2;
/// Look-ups waiting for a thread; past this, a look-up is dropped (the next opening retries).
const QUEUE: usize = 64;
/// Sites remembered as queued within the hour; past this, look-ups are dropped.
const REMEMBERED: usize = 10_000;

/// The background fetch: its queue and its threads. Off, it does nothing.
pub struct Fetcher {
    jobs: Option<Sender<Job>>,
    /// When each site was last queued: a site is queued at most once per [`RETRY`].
    queued: Mutex<HashMap<SiteId, Instant>>,
    threads: Vec<Background>,
}

struct Job {
    site: SiteId,
    domain: String,
}

impl Fetcher {
    /// Starts the fetching threads, unless `settings` is `None` (the fetch is off).
    pub fn start(pool: &Pool, settings: Option<&IconFetch>) -> Fetcher {
        let mut fetcher = Fetcher {
            jobs: None,
            queued: Mutex::new(HashMap::new()),
            threads: Vec::new(),
        };
        let Some(settings) = settings else {
            return fetcher;
        };
        let client = Arc::new(client(settings));
        let (jobs, waiting) = channel::bounded::<Job>(QUEUE);
        fetcher.jobs = Some(jobs);
        fetcher.threads = (0..THREADS)
            .map(|n| {
                let (pool, client, waiting) = (pool.clone(), Arc::clone(&client), waiting.clone());
                Background::spawn(&format!("site-icon-{n}"), move |stop| {
                    let outage = FailureLog::new("recording a site icon's fetch");
                    while let Some(job) = stop.next(&waiting) {
                        match look_up_now(&pool, &client, &job) {
                            Ok(()) => outage.succeeded(),
                            Err(cause) => outage.failed(&cause),
                        }
                    }
                })
            })
            .collect();
        fetcher
    }

    /// Looks for the site's icon in the background, unless it has one, the fetch is off, or
    /// the site was queued within the hour. Never waits.
    pub fn look_up(&self, site: &SiteRow) {
        let Some(jobs) = &self.jobs else {
            return;
        };
        if site.icon.is_some() {
            return;
        }
        let now = Instant::now();
        let mut queued = self.queued.lock();
        if queued.len() >= REMEMBERED {
            queued.retain(|_, at| now.duration_since(*at) < RETRY);
        }
        let recent = queued
            .get(&site.id)
            .is_some_and(|at| now.duration_since(*at) < RETRY);
        if recent || queued.len() >= REMEMBERED {
            return;
        }
        let job = Job {
            site: site.id,
            domain: site.domain.clone(),
        };
        if jobs.try_send(job).is_ok() {
            queued.insert(site.id, now);
        }
    }

    /// Stops the threads, each after the fetch it is making, and waits until they have.
    pub fn stop(&self) {
        self.threads.iter().for_each(Background::stop);
    }
}

/// The client the configuration asks for: tests name one loopback address for every name.
fn client(settings: &IconFetch) -> Client {
    let names = match settings.test_connect_to {
        Some(address) => Names::Fixed(Arc::new(move |_: &str| vec![address])),
        None => Names::System,
    };
    Client::new(names, settings.test_connect_to, &settings.test_roots)
}

/// One look-up: claimed (or left to whoever tried within the hour), fetched, stored. A failure
/// of the fetch is the site's, logged; the error returned is the database's.
fn look_up_now(pool: &Pool, client: &Client, job: &Job) -> Result<(), String> {
    let claimed = pool.get().map_err(|e| e.to_string()).and_then(|mut db| {
        db::icons::claim_attempt(&mut *db, job.site, RETRY).map_err(|e| db::describe(&e))
    })?;
    if !claimed {
        return Ok(());
    }
    let icon = match client.fetch(&job.domain) {
        Ok(icon) => icon,
        Err(failure) => {
            log::info!("no icon for the site {}: {failure}", job.domain);
            return Ok(());
        }
    };
    let mut db = pool.get().map_err(|e| e.to_string())?;
    db::icons::store(
        &mut *db,
        job.site,
        &icon.source_url,
        icon.content_type,
        &icon.bytes,
    )
    .map_err(|e| db::describe(&e))
}
