//! The request report: one row per `/fragment` request, handed to a writer thread through a
//! bounded channel and inserted in batches. When the writer falls behind (or the database is
//! down) rows are dropped and counted; a request never waits for the report.

use crate::db;
use crate::fragment::markers;
use crossbeam::channel::{self, Receiver, RecvTimeoutError, Sender, TrySendError};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

/// Rows waiting for the writer at most; more are dropped.
const QUEUE: usize = 65_536;
/// Rows per insert at most.
const BATCH: usize = 5_000;
/// How long a partial batch may wait.
const FLUSH_EVERY: Duration = Duration::from_millis(250);
/// How long one batch may take in the database before it is given up.
const STATEMENT_TIMEOUT: Duration = Duration::from_secs(60);
/// The writer's niceness: the lowest priority, so it runs on what serving leaves.
const WRITER_NICE: i32 = 19;

/// One `/fragment` request, as decisions.md lists the report fields. Identifiers are shared
/// with the snapshot (`Arc<str>`), so a row costs few allocations on the request path.
#[derive(Debug, Clone)]
pub struct ReportRow {
    pub at: SystemTime,
    pub org_id: Option<Arc<str>>,
    pub key_id: Option<Arc<str>>,
    pub requested_fragment_id: Option<Arc<str>>,
    pub resolved_fragment_id: Option<Arc<str>>,
    pub site_domain: Option<Arc<str>>,
    pub page_url: Option<String>,
    pub lang: Option<&'static str>,
    pub format: Option<&'static str>,
    pub status: u16,
    /// `served`, `no_fill` or `refused`.
    pub outcome: &'static str,
    /// `served`, `no_eligible_card`, `fragment_paused`, `serving_error`, or the error code.
    pub reason: &'static str,
    pub card_id: Option<Arc<str>>,
    pub agent_ua: Option<String>,
}

/// The sending side, shared by every request.
pub struct Reporter {
    rows: Sender<ReportRow>,
    dropped: Arc<AtomicU64>,
}

impl Reporter {
    /// Starts the writer thread, with a database connection of its own.
    pub fn start(database_url: String) -> Reporter {
        let (rows, pending) = channel::bounded(QUEUE);
        let dropped = Arc::new(AtomicU64::new(0));
        let counter = Arc::clone(&dropped);
        std::thread::Builder::new()
            .name("report-writer".into())
            .spawn(move || write_batches(&database_url, &pending, &counter))
            .expect("cannot start the report writer at startup");
        Reporter { rows, dropped }
    }

    /// Queues a row, or drops and counts it when the queue is full.
    pub fn record(&self, row: ReportRow) {
        if let Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) = self.rows.try_send(row)
        {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Rows dropped since start (queue full, or a batch the database refused).
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

fn write_batches(database_url: &str, pending: &Receiver<ReportRow>, dropped: &AtomicU64) {
    yield_cpu_to_serving();
    let mut writer = Connection::new(database_url);
    let mut batch: Vec<ReportRow> = Vec::with_capacity(BATCH);
    let mut classifier = Classifier::default();
    let mut drops = DropLog::default();
    loop {
        drops.log_increase(dropped);
        let deadline = Instant::now() + FLUSH_EVERY;
        while batch.len() < BATCH {
            match pending.recv_deadline(deadline) {
                Ok(row) => batch.push(row),
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => return,
            }
        }
        if batch.is_empty() {
            continue;
        }
        let written = writer.write(&batch, &mut classifier);
        if let Err(error) = written {
            let lost =
                dropped.fetch_add(batch.len() as u64, Ordering::Relaxed) + batch.len() as u64;
            log::warn!(
                "report batch of {} rows dropped ({lost} in all): {error}",
                batch.len()
            );
        }
        batch.clear();
    }
}

/// Lowers the calling thread to `WRITER_NICE`. Encoding a row and Postgres's work on it cost
/// a third to a half of the CPU that serving its request took (about 3 to 5 µs against 9, in
/// the load benchmark); at normal priority the writer takes that
/// from the worker threads whenever the machine is busy. At the lowest priority it writes
/// with the CPU serving leaves: on a saturated machine it falls behind and rows are dropped
/// and counted, the order decisions.md sets (serving never waits for the report); with any
/// headroom it writes them all.
fn yield_cpu_to_serving() {
    // SAFETY: setpriority takes plain integers and touches no memory of ours; on Linux,
    // PRIO_PROCESS with `who` 0 is the calling thread alone.
    let refused = unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, WRITER_NICE) } != 0;
    if refused {
        log::warn!(
            "report writer keeps its priority: {}",
            std::io::Error::last_os_error()
        );
    }
}

/// Says in the log, at most every `DROP_LOG_EVERY`, how many rows were dropped meanwhile.
#[derive(Default)]
struct DropLog {
    reported: u64,
    at: Option<Instant>,
}

const DROP_LOG_EVERY: Duration = Duration::from_secs(10);

impl DropLog {
    fn log_increase(&mut self, dropped: &AtomicU64) {
        if self.at.is_some_and(|at| at.elapsed() < DROP_LOG_EVERY) {
            return;
        }
        let total = dropped.load(Ordering::Relaxed);
        if total > self.reported {
            log::warn!(
                "{} report rows dropped ({total} since start): the writer fell behind",
                total - self.reported
            );
            self.reported = total;
        }
        self.at = Some(Instant::now());
    }
}

/// The writer's own connection, made when needed and dropped after an error (the next batch
/// reconnects). It commits without waiting for the disk flush: a crash may lose the last
/// fraction of a second of report rows, never the data the service serves, and the writer
/// keeps up with far more requests. Its statements may run for `STATEMENT_TIMEOUT` rather than
/// the management API's few seconds: on a busy machine a batch can take longer, and cancelling
/// it would lose every row of it.
struct Connection<'a> {
    database_url: &'a str,
    client: Option<postgres::Client>,
}

impl<'a> Connection<'a> {
    fn new(database_url: &'a str) -> Connection<'a> {
        Connection {
            database_url,
            client: None,
        }
    }

    /// The rows and their keys' last use, in one transaction.
    fn write(&mut self, batch: &[ReportRow], classifier: &mut Classifier) -> Result<(), String> {
        let outcome = self.client().and_then(|client| {
            let mut tx = client.transaction()?;
            db::reports::insert(&mut tx, batch, |ua| classifier.purpose(ua))?;
            tx.commit()
        });
        if outcome.is_err() {
            self.client = None;
        }
        outcome.map_err(|e| e.to_string())
    }

    fn client(&mut self) -> Result<&mut postgres::Client, postgres::Error> {
        let client = match self.client.take() {
            Some(client) if !client.is_closed() => client,
            _ => {
                let mut client = db::connect(self.database_url)?;
                client.batch_execute(&format!(
                    "SET synchronous_commit = off; SET statement_timeout = {}",
                    STATEMENT_TIMEOUT.as_millis()
                ))?;
                client
            }
        };
        Ok(self.client.insert(client))
    }
}

/// The agent's purpose, from the marker list; computed here, off the request path, and
/// remembered per User-Agent string, since agents send the same few strings over and over.
#[derive(Default)]
struct Classifier {
    known: HashMap<String, &'static str>,
}

/// Distinct User-Agents remembered at most; past that the memory starts afresh.
const CLASSIFIER_MEMORY: usize = 10_000;

impl Classifier {
    fn purpose(&mut self, agent_ua: Option<&str>) -> &'static str {
        let Some(agent_ua) = agent_ua else {
            return markers::Purpose::None.as_str();
        };
        if let Some(purpose) = self.known.get(agent_ua) {
            return purpose;
        }
        if self.known.len() >= CLASSIFIER_MEMORY {
            self.known.clear();
        }
        let purpose = markers::classify(agent_ua).as_str();
        self.known.insert(agent_ua.to_string(), purpose);
        purpose
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_classifier_remembers_within_its_bound() {
        let mut classifier = Classifier::default();
        for _ in 0..2 {
            assert_eq!(
                classifier.purpose(Some("Mozilla/5.0 (compatible; GPTBot/1.1)")),
                "training"
            );
            assert_eq!(classifier.purpose(Some("Claude-User/1.0")), "query");
            assert_eq!(
                classifier.purpose(Some("Mozilla/5.0 Firefox/128.0")),
                "none"
            );
            assert_eq!(classifier.purpose(None), "none");
        }
        for n in 0..CLASSIFIER_MEMORY + 10 {
            classifier.purpose(Some(&format!("agent {n}")));
        }
        assert!(classifier.known.len() <= CLASSIFIER_MEMORY);
        assert_eq!(classifier.purpose(Some("OAI-SearchBot/1.0")), "search");
    }
}
