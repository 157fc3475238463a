//! The request report: one row per `/fragment` request, inserted in batches by a writer
//! thread. When the writer falls behind (or the database is down) rows are dropped and
//! counted; a request never waits for the report. Once behind, the writer also paces itself
//! (`rest_after`), so that on a saturated machine the database's work for the report does
//! not take the cores serving needs.
//!
//! A row costs its request no allocation and no write to memory that another core writes
//! too: its texts are copied into a block of the recording thread's own slot, and only full
//! blocks of `BLOCK_ROWS` rows cross to the writer, through a bounded channel. The writer
//! also takes partly filled blocks at every flush, so that a quiet thread's rows still reach
//! the database within about `FLUSH_EVERY`.

use crate::agents;
use crate::db;
pub use crate::db::reports::ReportRow;
use crossbeam::channel::{self, Receiver, RecvTimeoutError, Sender};
use crossbeam::utils::CachePadded;
use parking_lot::Mutex;
use std::cell::Cell;
use std::collections::HashMap;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

/// Rows waiting for the writer at most (in full blocks); more are dropped.
const QUEUE: usize = 65_536;
/// Rows per block handed to the writer.
const BLOCK_ROWS: usize = 128;
/// Slots for partly filled blocks; threads share them round robin, one each in practice.
const SLOTS: usize = 16;
/// Rows per insert at most. Postgres works through a batch in one burst at normal priority,
/// and on a busy machine that burst holds a core the worker threads want: larger batches
/// stretch `/fragment`'s p99.
const BATCH: usize = 1_000;
/// How long a partial batch may wait.
const FLUSH_EVERY: Duration = Duration::from_millis(250);
/// How long one batch may take in the database before it is given up.
const STATEMENT_TIMEOUT: Duration = Duration::from_secs(60);
/// The writer's niceness: the lowest priority, so it runs on what serving leaves.
const WRITER_NICE: i32 = 19;
/// Once rows are being dropped, the writer rests this many times as long as its last batch
/// took before it writes the next: the writer and the database's work for it then hold at
/// most a fifth of the time. Its niceness does not reach the database, whose insert of a row
/// costs several times the writer's encoding of it.
const REST_PER_BATCH_TIME: u32 = 4;
/// The longest rest, so that a batch slowed by a stalled database delays the next by no more.
const MAX_REST: Duration = Duration::from_secs(1);

/// Recorded rows: their texts appended to one string, so a row allocates nothing.
#[derive(Debug, Default)]
pub struct RowBlock {
    texts: String,
    rows: Vec<StoredRow>,
}

/// A row of a block: its texts as ranges of the block's string, in `ReportRow` field order
/// (organisation, key, requested and resolved fragment, site, page URL, card, agent).
#[derive(Debug)]
struct StoredRow {
    at: SystemTime,
    texts: [Option<Range<u32>>; 8],
    lang: Option<&'static str>,
    format: Option<&'static str>,
    status: u16,
    outcome: &'static str,
    reason: &'static str,
}

impl RowBlock {
    fn with_capacity(rows: usize) -> RowBlock {
        RowBlock {
            texts: String::with_capacity(rows * 256),
            rows: Vec::with_capacity(rows),
        }
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    fn clear(&mut self) {
        self.texts.clear();
        self.rows.clear();
    }

    fn push(&mut self, row: &ReportRow<'_>) {
        let texts = [
            row.org_id,
            row.key_id,
            row.requested_fragment_id,
            row.resolved_fragment_id,
            row.site_domain,
            row.page_url,
            row.card_id,
            row.agent_ua,
        ]
        .map(|text| text.map(|text| self.append(text)));
        self.rows.push(StoredRow {
            at: row.at,
            texts,
            lang: row.lang,
            format: row.format,
            status: row.status,
            outcome: row.outcome,
            reason: row.reason,
        });
    }

    fn append(&mut self, text: &str) -> Range<u32> {
        // A block holds BLOCK_ROWS rows of texts bounded by the request size: far below 4 GiB.
        let start = self.texts.len() as u32;
        self.texts.push_str(text);
        start..self.texts.len() as u32
    }

    pub fn rows(&self) -> impl Iterator<Item = ReportRow<'_>> + Clone {
        self.rows.iter().map(|stored| {
            let [org_id, key_id, requested_fragment_id, resolved_fragment_id, site_domain, page_url, card_id, agent_ua] =
                stored
                    .texts
                    .clone()
                    .map(|range| range.map(|r| &self.texts[r.start as usize..r.end as usize]));
            ReportRow {
                at: stored.at,
                org_id,
                key_id,
                requested_fragment_id,
                resolved_fragment_id,
                site_domain,
                page_url,
                lang: stored.lang,
                format: stored.format,
                status: stored.status,
                outcome: stored.outcome,
                reason: stored.reason,
                card_id,
                agent_ua,
            }
        })
    }
}

type Slots = Arc<[CachePadded<Mutex<RowBlock>>]>;

/// The recording side, shared by every request.
pub struct Reporter {
    blocks: Sender<RowBlock>,
    slots: Slots,
    dropped: Arc<AtomicU64>,
}

/// Slots handed out so far, round robin over the threads that record.
static NEXT_SLOT: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// This thread's slot index, taken at its first row.
    static SLOT: Cell<Option<usize>> = const { Cell::new(None) };
}

fn this_threads_slot() -> usize {
    SLOT.with(|slot| {
        *slot.get().get_or_insert_with(|| {
            let index = NEXT_SLOT.fetch_add(1, Ordering::Relaxed) % SLOTS;
            slot.set(Some(index));
            index
        })
    })
}

impl Reporter {
    /// Starts the writer thread, with a database connection of its own.
    pub fn start(database_url: String) -> Reporter {
        let (blocks, pending) = channel::bounded(QUEUE / BLOCK_ROWS);
        let slots: Slots = (0..SLOTS)
            .map(|_| CachePadded::new(Mutex::new(RowBlock::default())))
            .collect();
        let dropped = Arc::new(AtomicU64::new(0));
        let writer = Writer {
            pending,
            slots: Arc::clone(&slots),
            dropped: Arc::clone(&dropped),
        };
        std::thread::Builder::new()
            .name("report-writer".into())
            .spawn(move || writer.run(&database_url))
            .expect("cannot start the report writer at startup");
        Reporter {
            blocks,
            slots,
            dropped,
        }
    }

    /// Copies the row into this thread's block; hands the block to the writer when it is
    /// full, or, when the writer's queue is full, drops and counts its rows and keeps the
    /// block for the next ones: on a saturated machine most blocks are dropped, and a new
    /// block for each would be fresh memory to pull through the cache.
    pub fn record(&self, row: &ReportRow<'_>) {
        let mut block = self.slots[this_threads_slot()].lock();
        if block.rows.capacity() == 0 {
            *block = RowBlock::with_capacity(BLOCK_ROWS);
        }
        block.push(row);
        if block.len() < BLOCK_ROWS {
            return;
        }
        let full = std::mem::take(&mut *block);
        let rows = full.len() as u64;
        if let Err(refused) = self.blocks.try_send(full) {
            self.dropped.fetch_add(rows, Ordering::Relaxed);
            let mut kept = refused.into_inner();
            kept.clear();
            *block = kept;
        }
    }

    /// Rows dropped since start (queue full, or a batch the database refused).
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

/// The writer thread's side.
struct Writer {
    pending: Receiver<RowBlock>,
    slots: Slots,
    dropped: Arc<AtomicU64>,
}

impl Writer {
    fn run(self, database_url: &str) {
        yield_cpu_to_serving();
        let mut connection = Connection::new(database_url);
        let mut classifier = Classifier::default();
        let mut drops = DropLog::default();
        let mut dropped_seen = 0;
        loop {
            drops.log_increase(&self.dropped);
            let (batch, open) = self.next_batch();
            if batch.iter().any(|block| !block.is_empty()) {
                let behind = self.dropped.load(Ordering::Relaxed) > dropped_seen;
                let started = Instant::now();
                let written = self.write(&mut connection, &batch, &mut classifier);
                dropped_seen = self.dropped.load(Ordering::Relaxed);
                if open && written {
                    std::thread::sleep(rest_after(started.elapsed(), behind));
                }
            }
            if !open {
                return;
            }
        }
    }

    /// Full blocks until `BATCH` rows or `FLUSH_EVERY`, then, when short of `BATCH`, the
    /// partly filled ones. `false` once the reporter is gone (what is left is in the batch).
    fn next_batch(&self) -> (Vec<RowBlock>, bool) {
        let deadline = Instant::now() + FLUSH_EVERY;
        let mut batch = Vec::new();
        let mut rows = 0;
        let mut open = true;
        while rows < BATCH {
            match self.pending.recv_deadline(deadline) {
                Ok(block) => {
                    rows += block.len();
                    batch.push(block);
                }
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => {
                    open = false;
                    break;
                }
            }
        }
        if rows < BATCH {
            let partial = self
                .slots
                .iter()
                .map(|slot| std::mem::take(&mut *slot.lock()));
            batch.extend(partial.filter(|block| !block.is_empty()));
        }
        (batch, open)
    }

    /// `false` when the batch was dropped (and counted).
    fn write(
        &self,
        connection: &mut Connection,
        batch: &[RowBlock],
        classifier: &mut Classifier,
    ) -> bool {
        let Err(error) = connection.write(batch, classifier) else {
            return true;
        };
        let rows: usize = batch.iter().map(RowBlock::len).sum();
        let lost = self.dropped.fetch_add(rows as u64, Ordering::Relaxed) + rows as u64;
        log::warn!("report batch of {rows} rows dropped ({lost} in all): {error}");
        false
    }
}

/// The rest after a batch written in `took`: none while the writer keeps up; once rows have
/// been dropped since the previous batch (the machine is saturated), `REST_PER_BATCH_TIME`
/// times as long, at most `MAX_REST`. When the load falls, the queue stops overflowing and
/// the writer drains it without rest.
fn rest_after(took: Duration, behind: bool) -> Duration {
    if behind {
        (took * REST_PER_BATCH_TIME).min(MAX_REST)
    } else {
        Duration::ZERO
    }
}

/// Lowers the calling thread to `WRITER_NICE`. Encoding a row and Postgres's work on it cost
/// a large share of the CPU that serving its request took; at normal priority the writer
/// takes that from the worker threads whenever the machine is busy. At the lowest priority it writes
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
    fn write(&mut self, batch: &[RowBlock], classifier: &mut Classifier) -> Result<(), String> {
        let outcome = self.client().and_then(|client| {
            let mut tx = client.transaction()?;
            let rows = batch.iter().flat_map(RowBlock::rows);
            db::reports::insert(&mut tx, rows, |ua| classifier.purpose(ua))?;
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
            return agents::Purpose::None.as_str();
        };
        if let Some(purpose) = self.known.get(agent_ua) {
            return purpose;
        }
        if self.known.len() >= CLASSIFIER_MEMORY {
            self.known.clear();
        }
        let purpose = agents::classify(agent_ua).as_str();
        self.known.insert(agent_ua.to_string(), purpose);
        purpose
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_gives_back_the_rows_recorded_in_it() {
        let served = ReportRow {
            at: SystemTime::UNIX_EPOCH + Duration::from_micros(1_700_000_000_123_456),
            org_id: Some("acc_1"),
            key_id: Some("key_1"),
            requested_fragment_id: Some("frg_requested"),
            resolved_fragment_id: Some("frg_resolved"),
            site_domain: Some("example.com"),
            page_url: Some("https://example.com/é?q=1"),
            lang: Some("fr"),
            format: Some("html"),
            status: 200,
            outcome: "served",
            reason: "served",
            card_id: Some("crd_1"),
            agent_ua: Some("GPTBot/1.2"),
        };
        let refused = ReportRow {
            org_id: None,
            key_id: None,
            requested_fragment_id: Some(""),
            resolved_fragment_id: None,
            site_domain: None,
            page_url: None,
            lang: None,
            format: None,
            status: 401,
            outcome: "refused",
            reason: "invalid_key",
            card_id: None,
            agent_ua: None,
            ..served
        };
        let mut block = RowBlock::default();
        for row in [served, refused, served] {
            block.push(&row);
        }
        assert_eq!(block.rows().collect::<Vec<_>>(), [served, refused, served]);
    }

    #[test]
    fn rows_the_database_cannot_take_are_dropped_and_counted_full_blocks_and_partial_alike() {
        // Nothing listens on port 1: every batch fails at connect.
        let reporter = Reporter::start("postgres://postgres@127.0.0.1:1/none".to_string());
        let row = ReportRow {
            at: SystemTime::now(),
            org_id: Some("acc_1"),
            key_id: None,
            requested_fragment_id: Some("frg_1"),
            resolved_fragment_id: None,
            site_domain: None,
            page_url: Some("https://example.com/"),
            lang: Some("fr"),
            format: None,
            status: 204,
            outcome: "no_fill",
            reason: "no_eligible_card",
            card_id: None,
            agent_ua: None,
        };
        let recorded = 2 * BLOCK_ROWS as u64 + 7;
        for _ in 0..recorded {
            reporter.record(&row);
        }
        let started = Instant::now();
        while reporter.dropped() < recorded && started.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(reporter.dropped(), recorded);
    }

    #[test]
    fn the_writer_rests_only_when_rows_are_being_dropped() {
        let took = Duration::from_millis(7);
        assert_eq!(rest_after(took, false), Duration::ZERO);
        assert_eq!(rest_after(took, true), took * REST_PER_BATCH_TIME);
        assert_eq!(rest_after(Duration::from_secs(30), true), MAX_REST);
    }

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
