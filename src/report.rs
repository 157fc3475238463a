//! The request report: one row per `/fragment` request, handed to a writer thread through a
//! bounded channel and inserted in batches. When the writer falls behind (or the database is
//! down) rows are dropped and counted; a request never waits for the report.

use crate::db::{self, Pool};
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
    /// Starts the writer thread over `pool`.
    pub fn start(pool: Pool) -> Reporter {
        let (rows, pending) = channel::bounded(QUEUE);
        let dropped = Arc::new(AtomicU64::new(0));
        let counter = Arc::clone(&dropped);
        std::thread::Builder::new()
            .name("report-writer".into())
            .spawn(move || write_batches(&pool, &pending, &counter))
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

fn write_batches(pool: &Pool, pending: &Receiver<ReportRow>, dropped: &AtomicU64) {
    let mut batch: Vec<ReportRow> = Vec::with_capacity(BATCH);
    let mut classifier = Classifier::default();
    loop {
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
        let written = pool.get().map_err(|e| e.to_string()).and_then(|mut conn| {
            write_batch(&mut conn, &batch, &mut classifier).map_err(|e| e.to_string())
        });
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

/// The rows and their keys' last use, in one transaction. It commits without waiting for the
/// disk flush: a crash may lose the last fraction of a second of report rows, never the data the
/// service serves, and the writer keeps up with far more requests.
fn write_batch(
    conn: &mut postgres::Client,
    batch: &[ReportRow],
    classifier: &mut Classifier,
) -> Result<(), postgres::Error> {
    let mut tx = conn.transaction()?;
    tx.batch_execute("SET LOCAL synchronous_commit = off")?;
    db::reports::insert(&mut tx, batch, |ua| classifier.purpose(ua))?;
    tx.commit()
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
