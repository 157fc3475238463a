//! The flusher thread: merges the slots' counters about once a flush period and adds them to
//! PostgreSQL, exactly once; keeps them while the database is down; rolls old minutes up.
//!
//! Exactly once: each flush carries the instance's id and a sequence number, recorded in the
//! same transaction as its counts. A flush whose outcome is unknown (the connection dropped
//! during the commit) is retried as it was, with its number: applied already, it adds nothing.
//! Counts that arrive meanwhile wait in a second set, never mixed into the one being retried.

use super::counters::{Counts, MemoryBounds};
use super::{ReportSettings, Slots};
use crate::background::{Background, Stop, Woken};
use crate::db::counting::{self, Applied, Flush};
use crate::failure_log::FailureLog;
use crate::{db, ids};
use crossbeam::channel::{self, Receiver, Sender};
use parking_lot::Mutex;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

/// Page and User-Agent counters are added every this many flush periods (50 s by default): they
/// are kept per hour and per day, so such a delay shows little, while each of their flushes
/// upserts every page requested since the last one (flushed every period, with the minute
/// counters, they were most of PostgreSQL's work for the report).
const PAGES_FLUSH_PERIODS: u32 = 10;
/// How often old minutes are rolled into hours and expired rows deleted.
const ROLL_UP_EVERY: Duration = Duration::from_secs(600);
/// How often counts that PostgreSQL refused are tried again.
const REFUSED_RETRY_EVERY: Duration = Duration::from_secs(60);
/// How long one flush may take in the database before it is given up (and retried).
const STATEMENT_TIMEOUT: Duration = Duration::from_secs(60);
/// Between the attempts of the final flush at shutdown.
const FINAL_RETRY_EVERY: Duration = Duration::from_millis(200);

/// What the flusher has done, for `/metrics` and `/ready`.
#[derive(Debug, Clone, Default)]
pub struct FlushStatus {
    /// Distinct counters waiting to be written.
    pub pending_keys: usize,
    /// When a flush last reached the database.
    pub last_flush: Option<SystemTime>,
    /// Flush attempts that failed since start.
    pub failures: u64,
    /// Whether the last attempt failed (the database is unavailable).
    pub database_down: bool,
}

/// The service's side of the flusher; dropping it stops the thread (what waits is lost).
pub struct FlusherHandle {
    status: Arc<Mutex<FlushStatus>>,
    finish: Sender<Sender<()>>,
    thread: Background,
}

impl FlusherHandle {
    pub fn status(&self) -> FlushStatus {
        self.status.lock().clone()
    }

    /// Asks for a last flush of everything and waits for it at most `within`.
    pub fn finish(&self, within: Duration) -> bool {
        let (done, finished) = channel::bounded(1);
        self.finish.send(done).is_ok() && finished.recv_timeout(within).is_ok()
    }

    /// Stops the thread, and waits until it has stopped.
    pub fn stop(&self) {
        self.thread.stop();
    }
}

/// A flush sent, whose outcome is not known yet.
struct Attempt {
    seq: i64,
    flush: Flush,
}

pub struct Flusher {
    settings: ReportSettings,
    slots: Slots,
    bounds: MemoryBounds,
    instance_id: String,
    next_seq: i64,
    /// Counts harvested and not yet sent.
    waiting: Counts,
    attempt: Option<Attempt>,
    /// Counts PostgreSQL refused, kept and tried again now and then.
    refused: Flush,
    refused_tried: Instant,
    /// When page and User-Agent counters were last taken into a flush.
    pages_taken: Instant,
    /// Set once a stop has asked for the last flush: everything goes out.
    finishing: bool,
    client: Option<postgres::Client>,
    outage: FailureLog,
    status: Arc<Mutex<FlushStatus>>,
}

impl Flusher {
    pub fn start(settings: ReportSettings, slots: Slots, bounds: MemoryBounds) -> FlusherHandle {
        let status = Arc::new(Mutex::new(FlushStatus::default()));
        let (finish, finish_requests) = channel::bounded(1);
        let flusher = Flusher {
            settings,
            slots,
            bounds,
            instance_id: ids::new_id(ids::INSTANCE),
            next_seq: 1,
            waiting: Counts::default(),
            attempt: None,
            refused: Flush::default(),
            refused_tried: Instant::now(),
            pages_taken: Instant::now(),
            finishing: false,
            client: None,
            outage: FailureLog::new("the report's flush"),
            status: Arc::clone(&status),
        };
        let thread = Background::spawn("report-flusher", move |stop| {
            flusher.run(&stop, &finish_requests);
        });
        FlusherHandle {
            status,
            finish,
            thread,
        }
    }

    fn run(mut self, stop: &Stop, finish_requests: &Receiver<Sender<()>>) {
        let mut rolled_up: Option<Instant> = None;
        loop {
            let finish = match stop.next_within(finish_requests, self.settings.flush_every) {
                Woken::Message(done) => Some(done),
                Woken::Period => None,
                Woken::Stop => return,
            };
            self.harvest();
            self.flush();
            if let Some(done) = finish {
                return self.finish(stop, &done);
            }
            if self.client.is_some() && rolled_up.is_none_or(|at| at.elapsed() >= ROLL_UP_EVERY) {
                self.roll_up();
                rolled_up = Some(Instant::now());
            }
        }
    }

    /// Flushes until nothing is left, then says so; the caller stops waiting when it must, and
    /// the stop ends the attempts.
    fn finish(mut self, stop: &Stop, done: &Sender<()>) {
        self.finishing = true;
        self.flush();
        while !self.is_empty() {
            if stop.wait(FINAL_RETRY_EVERY) {
                return;
            }
            self.flush();
        }
        let _ = done.send(());
    }

    fn is_empty(&self) -> bool {
        self.waiting.is_empty() && self.attempt.is_none()
    }

    /// Takes every slot's counters into `waiting`.
    fn harvest(&mut self) {
        for slot in self.slots.iter() {
            let counts = std::mem::take(&mut slot.lock().counts);
            if self.waiting.is_empty() {
                self.waiting = counts;
            } else {
                self.waiting.merge(counts, self.bounds);
            }
        }
    }

    /// Sends the pending flush (or makes one of what is waiting) and, now and then, the
    /// refused counts.
    fn flush(&mut self) {
        let pages_every = self.settings.flush_every * PAGES_FLUSH_PERIODS;
        let pages_due = self.finishing || self.pages_taken.elapsed() >= pages_every;
        let due = self.waiting.has_requests() || (pages_due && !self.waiting.is_empty());
        if self.attempt.is_none() && due {
            let flush = self.waiting.take_flush(pages_due);
            if pages_due {
                self.pages_taken = Instant::now();
            }
            self.attempt = Some(self.next_attempt(flush));
        }
        if self.attempt.is_none()
            && !self.refused.is_empty()
            && self.refused_tried.elapsed() >= REFUSED_RETRY_EVERY
        {
            self.refused_tried = Instant::now();
            let refused = std::mem::take(&mut self.refused);
            self.attempt = Some(self.next_attempt(refused));
        }
        if let Some(attempt) = self.attempt.take() {
            match self.send(&attempt) {
                Ok(refused) => {
                    self.status.lock().last_flush = Some(SystemTime::now());
                    self.keep_refused(refused);
                }
                Err(error) => {
                    let pending = attempt.flush.keys() + self.waiting.keys();
                    self.attempt = Some(attempt);
                    self.status.lock().failures += 1;
                    let cause = db::describe(&error);
                    self.outage
                        .failed(&format!("{cause}; {pending} counters kept in memory"));
                }
            }
        }
        self.update_status();
    }

    fn next_attempt(&mut self, flush: Flush) -> Attempt {
        let seq = self.next_seq;
        self.next_seq += 1;
        Attempt { seq, flush }
    }

    /// The counts PostgreSQL refused, from the flush just applied.
    fn send(&mut self, attempt: &Attempt) -> Result<Flush, postgres::Error> {
        let bounds = self.settings.bounds;
        let instance_id = self.instance_id.clone();
        let outcome = self.client().and_then(|client| {
            counting::apply_flush(client, &instance_id, attempt.seq, &attempt.flush, bounds)
        });
        match outcome {
            Ok(applied) => {
                self.outage.succeeded();
                Ok(match applied {
                    Applied::Before => Flush::default(),
                    Applied::Now { refused } => refused,
                })
            }
            Err(error) => {
                self.client = None;
                Err(error)
            }
        }
    }

    fn keep_refused(&mut self, refused: Flush) {
        if refused.is_empty() {
            return;
        }
        log::error!(
            "report: PostgreSQL refused {} counters; kept in memory and tried again every {}s: {refused:?}",
            refused.keys(),
            REFUSED_RETRY_EVERY.as_secs()
        );
        self.refused.requests.extend(refused.requests);
        self.refused.pages.extend(refused.pages);
        self.refused.card_pages.extend(refused.card_pages);
        self.refused.page_reasons.extend(refused.page_reasons);
        self.refused
            .unmatched_agents
            .extend(refused.unmatched_agents);
        self.refused.samples.extend(refused.samples);
    }

    fn roll_up(&mut self) {
        let retention = self.settings.retention;
        if let Err(error) = self
            .client()
            .and_then(|client| counting::roll_up(client, retention))
        {
            self.client = None;
            log::warn!("report: roll-up not done: {}", db::describe(&error));
        }
    }

    fn update_status(&self) {
        let mut status = self.status.lock();
        status.pending_keys = self.waiting.keys()
            + self.attempt.as_ref().map_or(0, |a| a.flush.keys())
            + self.refused.keys();
        status.database_down = self.outage.is_failing();
    }

    /// The flusher's own connection, made when needed and dropped after an error.
    fn client(&mut self) -> Result<&mut postgres::Client, postgres::Error> {
        let client = match self.client.take() {
            Some(client) if !client.is_closed() => client,
            _ => counting::connect(&self.settings.database_url, STATEMENT_TIMEOUT)?,
        };
        Ok(self.client.insert(client))
    }
}
