//! The report: every `/fragment` request counted exactly once, in memory on the request path,
//! written off it (decisions.md, "Reporting").
//!
//! A request adds one to counters of its recording thread's own slot (`counters`): no I/O, no
//! lock another core takes, except the flusher once a flush interval. The flusher thread
//! (`flusher`) merges the slots about once a second and adds the sums to PostgreSQL with
//! upserts that add, numbered so that a retried flush never counts twice; while the database is
//! down the sums wait in memory, their size following the distinct keys, not the requests.

mod counters;
mod flusher;
#[cfg(feature = "bench-fleet")]
pub mod synthetic;

pub use counters::NO_PAGE;

use crate::agents;
use crate::config::Config;
use crate::domain::{Ending, Format, Lang, Outcome, Purpose, Reason, Refused};
use counters::{Agent, AgentKey, Counts, MemoryBounds, PageKey, PageOf, RequestKey, SampleOf};
use crossbeam::utils::CachePadded;
use flusher::{Flusher, FlusherHandle};
use parking_lot::Mutex;
use std::borrow::Cow;
use std::cell::Cell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

pub use crate::db::counting::{Bounds, Retention};
pub use flusher::FlushStatus;

/// Slots of counters; threads take them round robin, one each in practice (the worker threads).
const SLOTS: usize = 16;
/// Distinct User-Agents a slot remembers the marker of; past that its memory starts afresh.
const CLASSIFIER_MEMORY: usize = 10_000;
/// The longest User-Agent kept (in bytes, cut on a character boundary).
const USER_AGENT_MAX: usize = 256;

/// How the report is kept: the flush period, the bounds, the retention.
#[derive(Debug, Clone)]
pub struct ReportSettings {
    pub database_url: String,
    pub flush_every: Duration,
    pub bounds: Bounds,
    pub retention: Retention,
}

/// User-Agents that matched no marker, kept per organisation and day (decisions.md: the top
/// 100); the others count as `(other user agents)`.
const UNMATCHED_AGENTS_PER_DAY: usize = 100;

impl From<&Config> for ReportSettings {
    fn from(config: &Config) -> Self {
        ReportSettings {
            database_url: config.database_url.clone(),
            flush_every: config.report_flush,
            bounds: Bounds {
                pages_per_hour: config.report_pages_per_hour,
                unmatched_agents_per_day: UNMATCHED_AGENTS_PER_DAY,
            },
            retention: Retention {
                minutes: config.report_minutes_kept,
                hours: config.report_kept,
            },
        }
    }
}

/// What the report counts of one request. Texts borrow from the request and the snapshot;
/// `None` where a dimension does not apply (a refusal before the organisation was known).
#[derive(Debug, Clone, Copy)]
pub struct RequestFacts<'a> {
    pub org_id: Option<&'a str>,
    pub key_id: Option<&'a str>,
    /// The requested fragment, once known to be one of the organisation's: a raw parameter
    /// would let any caller add keys to the report.
    pub requested_fragment_id: Option<&'a str>,
    pub resolved_fragment_id: Option<&'a str>,
    pub site: Option<&'a str>,
    /// The card served: `Some` exactly when the request was served (the page counts read
    /// that, not the outcome's name).
    pub card_id: Option<&'a str>,
    pub lang: Option<Lang>,
    pub format: Option<Format>,
    pub ending: Ending,
    /// The reason of a refusal.
    pub refused: Option<Refused>,
    /// The page's host and canonical path, when `page_url` named one.
    pub page: Option<(&'a str, &'a str)>,
    /// The visiting agent's User-Agent.
    pub agent_ua: Option<&'a str>,
}

/// A slot: its counters and its memory of User-Agents' markers.
#[derive(Default)]
struct Slot {
    counts: Counts,
    agents: HashMap<Box<str>, Option<&'static agents::Marker>>,
}

type Slots = Arc<[CachePadded<Mutex<Slot>>]>;

/// The recording side, shared by every request, and the flusher behind it.
pub struct Reporter {
    slots: Slots,
    bounds: MemoryBounds,
    flusher: FlusherHandle,
}

static NEXT_SLOT: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static SLOT: Cell<Option<usize>> = const { Cell::new(None) };
}

/// The calling thread's slot, given out round robin at its first request.
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
    /// Starts the flusher thread, with a database connection of its own.
    pub fn start(settings: ReportSettings) -> Reporter {
        let slots: Slots = (0..SLOTS)
            .map(|_| CachePadded::new(Mutex::new(Slot::default())))
            .collect();
        let bounds = MemoryBounds {
            pages_per_hour: settings.bounds.pages_per_hour,
            unmatched_agents_per_day: settings.bounds.unmatched_agents_per_day,
        };
        let flusher = Flusher::start(settings, Arc::clone(&slots), bounds);
        Reporter {
            slots,
            bounds,
            flusher,
        }
    }

    /// Counts one request in the calling thread's slot; returns the purpose of its agent, as
    /// classified for the report (the operator metrics count it too).
    pub fn record(&self, facts: &RequestFacts<'_>) -> Purpose {
        let second = seconds_since_epoch(SystemTime::now());
        let minute = (second / 60) as u32;
        let mut slot = self.slots[this_threads_slot()].lock();
        let marker = slot.marker_of(facts.agent_ua);
        let purpose = agents::purpose_of(marker);
        let counts = &mut slot.counts;
        counts.add_request(
            &RequestKey {
                minute,
                org_id: or_empty(facts.org_id),
                site: or_empty(facts.site),
                requested_fragment_id: or_empty(facts.requested_fragment_id),
                resolved_fragment_id: or_empty(facts.resolved_fragment_id),
                card_id: or_empty(facts.card_id),
                key_id: or_empty(facts.key_id),
                lang: facts.lang,
                format: facts.format,
                ending: facts.ending,
                refused: facts.refused,
                agent: Agent(marker),
                purpose,
            },
            1,
        );
        let Some(org_id) = facts.org_id else {
            return purpose;
        };
        let (host, path) = facts.page.unwrap_or((NO_PAGE, ""));
        let page = PageKey {
            hour: minute / 60,
            org_id,
            host,
            path,
        };
        let reason = Reason {
            ending: facts.ending,
            refused: facts.refused,
        };
        let unserved = (facts.ending.outcome() != Outcome::Served).then_some(reason);
        let of = PageOf {
            purpose,
            card_id: or_empty(facts.card_id),
            unserved,
        };
        counts.add_page(&page, of, 1, self.bounds);
        let sample = SampleOf {
            second,
            agent: Agent(marker),
            page: (host, path),
            status: facts.ending.status(),
            reason: unserved,
        };
        counts.add_sample(org_id, &sample);
        if let (None, Some(user_agent)) = (marker, facts.agent_ua) {
            let user_agent = storable(user_agent);
            let agent = AgentKey {
                day: minute / (24 * 60),
                org_id,
                user_agent: &user_agent,
            };
            counts.add_agent(&agent, 1, self.bounds);
        }
        purpose
    }

    /// What the flusher has done so far: for `/metrics` and `/ready`.
    pub fn status(&self) -> FlushStatus {
        self.flusher.status()
    }

    /// Flushes every count so far and stops the flusher; waits at most `within`. `false` when
    /// the counts could not all be written in time (the database down): they are lost.
    pub fn finish(&self, within: Duration) -> bool {
        self.flusher.finish(within)
    }

    /// Stops the flusher without a last flush, and waits until it has stopped.
    pub fn stop(&self) {
        self.flusher.stop();
    }
}

impl Slot {
    /// The marker of a User-Agent, remembered per distinct string: agents send the same few
    /// strings over and over.
    fn marker_of(&mut self, user_agent: Option<&str>) -> Option<&'static agents::Marker> {
        let user_agent = user_agent?;
        if let Some(marker) = self.agents.get(user_agent) {
            return *marker;
        }
        if self.agents.len() >= CLASSIFIER_MEMORY {
            self.agents.clear();
        }
        let marker = agents::matching_marker(user_agent);
        self.agents.insert(user_agent.into(), marker);
        marker
    }
}

fn or_empty(value: Option<&str>) -> &str {
    value.unwrap_or("")
}

fn seconds_since_epoch(at: SystemTime) -> u64 {
    at.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs()
}

/// Text as PostgreSQL stores it and a reader wants it: control characters (NUL among them,
/// which PostgreSQL refuses in text) replaced by U+FFFD, at most `USER_AGENT_MAX` bytes.
/// Invalid UTF-8 never gets this far: the HTTP layer and the query decoder replace it.
fn storable(text: &str) -> Cow<'_, str> {
    let mut end = text.len().min(USER_AGENT_MAX);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let text = &text[..end];
    if text.chars().any(char::is_control) {
        Cow::Owned(
            text.chars()
                .map(|c| if c.is_control() { '\u{FFFD}' } else { c })
                .collect(),
        )
    } else {
        Cow::Borrowed(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_text_has_no_control_character_and_a_bounded_length() {
        assert_eq!(storable("curl/8"), "curl/8");
        assert_eq!(storable("a\0b\nc"), "a\u{FFFD}b\u{FFFD}c");
        let long = "é".repeat(200);
        let kept = storable(&long);
        assert!(kept.len() <= USER_AGENT_MAX && kept.chars().all(|c| c == 'é'));
    }

    #[test]
    fn seconds_count_from_the_epoch() {
        let at = UNIX_EPOCH + Duration::from_millis(3_999);
        assert_eq!(seconds_since_epoch(at), 3);
    }
}
