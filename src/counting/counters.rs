//! The counters of one slot (in practice, one worker thread) between two flushes: requests per
//! minute and dimension, requests per page and hour by agent purpose and card served,
//! unmatched User-Agents per day; and the live check's sample of each organisation's requests,
//! one a second at most.
//!
//! A request looks its keys up borrowed (`Equivalent`), so a key already counted costs no
//! allocation; only a key's first request in a flush interval copies its texts.

use crate::agents::Marker;
use crate::db::counting::{
    CardPageCount, Flush, PageCount, PageReasonCount, RequestCount, Sample, UnmatchedAgentCount,
    OTHER_PAGES, OTHER_USER_AGENTS, SAMPLES_KEPT,
};
use crate::domain::{Ending, Format, Lang, Purpose, Reason, Refused};
use hashbrown::{Equivalent, HashMap};
use std::hash::{Hash, Hasher};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The page of a request without a readable `page_url`.
pub const NO_PAGE: &str = "(no page)";

/// Requests of one minute (minutes since the Unix epoch) with the same dimensions; `S` is
/// `Box<str>` in the map and `&str` for a lookup. `""` or `None` where a dimension does not
/// apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RequestKey<S> {
    pub minute: u32,
    pub org_id: S,
    pub site: S,
    pub requested_fragment_id: S,
    pub resolved_fragment_id: S,
    pub card_id: S,
    pub key_id: S,
    pub lang: Option<Lang>,
    pub format: Option<Format>,
    pub ending: Ending,
    pub refused: Option<Refused>,
    pub agent: Agent,
    pub purpose: Purpose,
}

/// The agent marker a request matched (`None`: none), compared and hashed by its address:
/// each marker is one entry of the marker table, so its address is its identity.
#[derive(Debug, Clone, Copy)]
pub struct Agent(pub Option<&'static Marker>);

impl Agent {
    /// The marker as the report stores it, `none` without one.
    fn name(self) -> &'static str {
        self.0.map_or("none", |marker| marker.name)
    }

    fn address(self) -> usize {
        self.0
            .map_or(0, |marker| std::ptr::from_ref(marker) as usize)
    }
}

impl PartialEq for Agent {
    fn eq(&self, other: &Self) -> bool {
        self.address() == other.address()
    }
}

impl Eq for Agent {}

impl Hash for Agent {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_usize(self.address());
    }
}

/// A page (host and canonical path) of an organisation, in one hour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PageKey<S> {
    pub hour: u32,
    pub org_id: S,
    pub host: S,
    pub path: S,
}

/// A page's requests of one agent purpose, one card served (`""`: none served) and, unless
/// served, one reason. A page holds a few of them (the purposes, the cards its fragments
/// serve, the reasons), scanned in order: the page is the only key hashed, and a page is what
/// the bound counts.
#[derive(Debug)]
struct PageEntry {
    purpose: Purpose,
    card_id: Box<str>,
    unserved: Option<Reason>,
    requests: u64,
}

/// What a page's requests are counted by beside the page: the agents' purpose, the card served
/// (`""`: none) and the reason of those not served (`None`: served).
#[derive(Debug, Clone, Copy)]
pub struct PageOf<'a> {
    pub purpose: Purpose,
    pub card_id: &'a str,
    pub unserved: Option<Reason>,
}

/// A User-Agent that matched no marker, of an organisation, in one day.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AgentKey<S> {
    pub day: u32,
    pub org_id: S,
    pub user_agent: S,
}

impl Equivalent<RequestKey<Box<str>>> for RequestKey<&str> {
    fn equivalent(&self, key: &RequestKey<Box<str>>) -> bool {
        *self == key.map(|text| &**text)
    }
}

impl Equivalent<PageKey<Box<str>>> for PageKey<&str> {
    fn equivalent(&self, key: &PageKey<Box<str>>) -> bool {
        *self == key.map(|text| &**text)
    }
}

impl Equivalent<AgentKey<Box<str>>> for AgentKey<&str> {
    fn equivalent(&self, key: &AgentKey<Box<str>>) -> bool {
        *self == key.map(|text| &**text)
    }
}

impl<S> RequestKey<S> {
    /// The same key with each text passed through `text` (owned to borrowed, or back).
    fn map<'s, T>(&'s self, text: impl Fn(&'s S) -> T) -> RequestKey<T> {
        RequestKey {
            minute: self.minute,
            org_id: text(&self.org_id),
            site: text(&self.site),
            requested_fragment_id: text(&self.requested_fragment_id),
            resolved_fragment_id: text(&self.resolved_fragment_id),
            card_id: text(&self.card_id),
            key_id: text(&self.key_id),
            lang: self.lang,
            format: self.format,
            ending: self.ending,
            refused: self.refused,
            agent: self.agent,
            purpose: self.purpose,
        }
    }
}

impl<S> PageKey<S> {
    fn map<'s, T>(&'s self, text: impl Fn(&'s S) -> T) -> PageKey<T> {
        PageKey {
            hour: self.hour,
            org_id: text(&self.org_id),
            host: text(&self.host),
            path: text(&self.path),
        }
    }
}

impl<S> AgentKey<S> {
    fn map<'s, T>(&'s self, text: impl Fn(&'s S) -> T) -> AgentKey<T> {
        AgentKey {
            day: self.day,
            org_id: text(&self.org_id),
            user_agent: text(&self.user_agent),
        }
    }
}

impl<S> SampleOf<S> {
    fn map<'s, T>(&'s self, text: impl Fn(&'s S) -> T) -> SampleOf<T> {
        SampleOf {
            second: self.second,
            agent: self.agent,
            page: (text(&self.page.0), text(&self.page.1)),
            status: self.status,
            reason: self.reason,
        }
    }
}

/// A key's texts copied from its borrowed form (`|text| &**text` borrows them back).
fn owned(text: &&str) -> Box<str> {
    Box::from(*text)
}

impl PageKey<&str> {
    /// The same organisation and hour, under the page that stands for the others.
    fn other_pages(&self) -> PageKey<&str> {
        PageKey {
            host: OTHER_PAGES,
            path: "",
            ..*self
        }
    }
}

/// A request of an organisation for the live check: its second since the Unix epoch, its
/// agent, its page (host and canonical path, or [`NO_PAGE`]), its status and, unless served,
/// its reason. `S` as in [`RequestKey`].
#[derive(Debug, Clone, Copy)]
pub struct SampleOf<S> {
    pub second: u64,
    pub agent: Agent,
    pub page: (S, S),
    pub status: u16,
    pub reason: Option<Reason>,
}

/// How many distinct pages an organisation's hour holds, and User-Agents its day, in memory:
/// the size of the counters follows the bounds, never the request rate.
#[derive(Debug, Clone, Copy)]
pub struct MemoryBounds {
    pub pages_per_hour: usize,
    pub unmatched_agents_per_day: usize,
}

#[derive(Debug, Default)]
pub struct Counts {
    requests: HashMap<RequestKey<Box<str>>, u64>,
    pages: HashMap<PageKey<Box<str>>, Vec<PageEntry>>,
    agents: HashMap<AgentKey<Box<str>>, u64>,
    /// Distinct pages per (organisation, hour), and User-Agents per (organisation, day).
    pages_in: HashMap<(Box<str>, u32), usize>,
    agents_in: HashMap<(Box<str>, u32), usize>,
    /// Per organisation, at most one a second and the last `SAMPLES_KEPT`.
    samples: HashMap<Box<str>, Vec<SampleOf<Box<str>>>>,
}

impl Counts {
    pub fn is_empty(&self) -> bool {
        self.requests.is_empty()
            && self.pages.is_empty()
            && self.agents.is_empty()
            && self.samples.is_empty()
    }

    /// Distinct keys held: what the counters cost in memory.
    pub fn keys(&self) -> usize {
        self.requests.len() + self.pages.len() + self.agents.len()
    }

    pub fn add_request(&mut self, key: &RequestKey<&str>, n: u64) {
        match self.requests.get_mut(key) {
            Some(count) => *count += n,
            None => {
                self.requests.insert(key.map(owned), n);
            }
        }
    }

    /// Counts `n` requests of a page, by what `of` says; past the bound of its organisation's
    /// hour, under `(other pages)`, card, reason and all.
    pub fn add_page(&mut self, key: &PageKey<&str>, of: PageOf, n: u64, bounds: MemoryBounds) {
        if let Some(entries) = self.pages.get_mut(key) {
            return add_entry(entries, of, n);
        }
        let key = if key.host == OTHER_PAGES {
            // The entry that stands for the others takes no place of the bound.
            *key
        } else {
            let bucket = (Box::from(key.org_id), key.hour);
            let held = self.pages_in.entry(bucket).or_default();
            if *held < bounds.pages_per_hour {
                *held += 1;
                *key
            } else {
                key.other_pages()
            }
        };
        let entries = self.pages.entry(key.map(owned)).or_default();
        add_entry(entries, of, n);
    }

    /// Counts an unmatched User-Agent; past the bound of its day, under `(other user agents)`.
    pub fn add_agent(&mut self, key: &AgentKey<&str>, n: u64, bounds: MemoryBounds) {
        if let Some(count) = self.agents.get_mut(key) {
            *count += n;
            return;
        }
        if key.user_agent == OTHER_USER_AGENTS {
            *self.agents.entry(key.map(owned)).or_default() += n;
            return;
        }
        let bucket = (Box::from(key.org_id), key.day);
        let held = self.agents_in.entry(bucket).or_default();
        let key = if *held < bounds.unmatched_agents_per_day {
            *held += 1;
            *key
        } else {
            AgentKey {
                user_agent: OTHER_USER_AGENTS,
                ..*key
            }
        };
        *self.agents.entry(key.map(owned)).or_default() += n;
    }

    /// Keeps a request of `org_id` for the live check, unless one of the same second is kept:
    /// a second's later requests cost a lookup, no copy.
    pub fn add_sample(&mut self, org_id: &str, sample: &SampleOf<&str>) {
        let kept = match self.samples.get_mut(org_id) {
            Some(kept) => kept,
            None => self.samples.entry(Box::from(org_id)).or_default(),
        };
        if kept.iter().any(|k| k.second == sample.second) {
            return;
        }
        if kept.len() >= SAMPLES_KEPT {
            let oldest = (kept.iter().enumerate()).min_by_key(|(_, k)| k.second);
            let oldest = oldest.map_or(0, |(index, _)| index);
            kept.swap_remove(oldest);
        }
        kept.push(sample.map(owned));
    }

    /// Adds every counter of `other` (the bounds apply to the sum).
    pub fn merge(&mut self, other: Counts, bounds: MemoryBounds) {
        for (org_id, samples) in other.samples {
            for sample in &samples {
                self.add_sample(&org_id, &sample.map(|text| &**text));
            }
        }
        for (key, n) in other.requests {
            self.add_request(&key.map(|text| &**text), n);
        }
        for (key, entries) in other.pages {
            for entry in entries {
                let key = key.map(|text| &**text);
                let of = PageOf {
                    purpose: entry.purpose,
                    card_id: &entry.card_id,
                    unserved: entry.unserved,
                };
                self.add_page(&key, of, entry.requests, bounds);
            }
        }
        for (key, n) in other.agents {
            self.add_agent(&key.map(|text| &**text), n, bounds);
        }
    }

    /// Whether request counters wait (page and User-Agent counters aside).
    pub fn has_requests(&self) -> bool {
        !self.requests.is_empty()
    }

    /// Moves the request counters out, as the database takes them, and the page and
    /// User-Agent counters too when `with_pages`.
    pub fn take_flush(&mut self, with_pages: bool) -> Flush {
        let requests = self.requests.drain().map(|(k, n)| request_count((&k, &n)));
        let samples = (self.samples.drain()).flat_map(|(org_id, kept)| {
            kept.into_iter()
                .map(move |sample| sample_row(&org_id, &sample))
        });
        let mut flush = Flush {
            requests: requests.collect(),
            samples: samples.collect(),
            ..Flush::default()
        };
        if with_pages {
            for (key, entries) in self.pages.drain() {
                page_counts(&key, &entries, &mut flush);
            }
            flush.unmatched_agents = self
                .agents
                .drain()
                .map(|(k, n)| agent_count((&k, &n)))
                .collect();
            self.pages_in.clear();
            self.agents_in.clear();
        }
        flush
    }
}

fn add_entry(entries: &mut Vec<PageEntry>, of: PageOf, n: u64) {
    let entry = (entries.iter_mut())
        .find(|e| (e.purpose, &*e.card_id, e.unserved) == (of.purpose, of.card_id, of.unserved));
    match entry {
        Some(entry) => entry.requests += n,
        None => entries.push(PageEntry {
            purpose: of.purpose,
            card_id: Box::from(of.card_id),
            unserved: of.unserved,
            requests: n,
        }),
    }
}

fn request_count((key, n): (&RequestKey<Box<str>>, &u64)) -> RequestCount {
    RequestCount {
        minute: time_of(key.minute, 60),
        org_id: key.org_id.to_string(),
        site: key.site.to_string(),
        requested_fragment_id: key.requested_fragment_id.to_string(),
        resolved_fragment_id: key.resolved_fragment_id.to_string(),
        card_id: key.card_id.to_string(),
        key_id: key.key_id.to_string(),
        lang: key.lang,
        format: key.format,
        ending: key.ending,
        refused: key.refused,
        agent: key.agent.name().to_string(),
        purpose: key.purpose,
        requests: *n as i64,
    }
}

/// A page's rows as the database takes them: requests and served per purpose
/// (`report_pages`), served per card (`report_card_pages`), not served per reason
/// (`report_page_reasons`).
fn page_counts(key: &PageKey<Box<str>>, entries: &[PageEntry], flush: &mut Flush) {
    let hour = time_of(key.hour, 3600);
    let page = format!("{}{}", key.host, key.path);
    let mut purposes: Vec<PageCount> = Vec::new();
    let mut cards: Vec<CardPageCount> = Vec::new();
    let mut reasons: Vec<PageReasonCount> = Vec::new();
    for entry in entries {
        let requests = entry.requests as i64;
        if let Some(reason) = entry.unserved {
            match reasons.iter_mut().find(|r| r.reason == reason) {
                Some(count) => count.requests += requests,
                None => reasons.push(PageReasonCount {
                    org_id: key.org_id.to_string(),
                    hour,
                    page: page.clone(),
                    reason,
                    requests,
                }),
            }
        }
        let served = if entry.card_id.is_empty() {
            0
        } else {
            requests
        };
        match purposes.iter_mut().find(|p| p.purpose == entry.purpose) {
            Some(count) => {
                count.requests += requests;
                count.served += served;
            }
            None => purposes.push(PageCount {
                hour,
                org_id: key.org_id.to_string(),
                page: page.clone(),
                purpose: entry.purpose,
                requests,
                served,
            }),
        }
        if entry.card_id.is_empty() {
            continue;
        }
        match cards.iter_mut().find(|c| *c.card_id == *entry.card_id) {
            Some(count) => count.served += served,
            None => cards.push(CardPageCount {
                org_id: key.org_id.to_string(),
                card_id: entry.card_id.to_string(),
                hour,
                page: page.clone(),
                served,
            }),
        }
    }
    flush.pages.extend(purposes);
    flush.card_pages.extend(cards);
    flush.page_reasons.extend(reasons);
}

fn sample_row(org_id: &str, sample: &SampleOf<Box<str>>) -> Sample {
    let (host, path) = &sample.page;
    Sample {
        org_id: org_id.to_string(),
        at: UNIX_EPOCH + Duration::from_secs(sample.second),
        agent: sample.agent.name().to_string(),
        page: format!("{host}{path}"),
        status: sample.status,
        reason: sample.reason,
    }
}

fn agent_count((key, n): (&AgentKey<Box<str>>, &u64)) -> UnmatchedAgentCount {
    UnmatchedAgentCount {
        day: time_of(key.day, 86_400),
        org_id: key.org_id.to_string(),
        user_agent: key.user_agent.to_string(),
        requests: *n as i64,
    }
}

/// The start of bucket `index` of `seconds` each since the Unix epoch.
fn time_of(index: u32, seconds: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(u64::from(index) * seconds)
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOUNDS: MemoryBounds = MemoryBounds {
        pages_per_hour: 2,
        unmatched_agents_per_day: 1,
    };

    /// A page's requests by agents of `purpose`, served `card` (`""`: none, no eligible card).
    fn of(purpose: Purpose, card: &str) -> PageOf<'_> {
        let no_fill = Reason {
            ending: Ending::NoEligibleCard,
            refused: None,
        };
        PageOf {
            purpose,
            card_id: card,
            unserved: card.is_empty().then_some(no_fill),
        }
    }

    fn page(path: &str) -> PageKey<&str> {
        PageKey {
            hour: 7,
            org_id: "acc_1",
            host: "a.example",
            path,
        }
    }

    /// The flush's page rows, `(page, purpose, requests, served)`, in order.
    fn page_rows(flush: &Flush) -> Vec<(&str, &str, i64, i64)> {
        let mut rows: Vec<_> = (flush.pages.iter())
            .map(|p| (&*p.page, p.purpose.as_str(), p.requests, p.served))
            .collect();
        rows.sort();
        rows
    }

    /// The flush's card rows, `(card, page, served)`, in order.
    fn card_rows(flush: &Flush) -> Vec<(&str, &str, i64)> {
        let mut rows: Vec<_> = (flush.card_pages.iter())
            .map(|c| (&*c.card_id, &*c.page, c.served))
            .collect();
        rows.sort();
        rows
    }

    #[test]
    fn pages_past_the_bound_count_under_other_pages_and_nothing_is_lost() {
        let mut counts = Counts::default();
        for path in ["/a/", "/b/", "/c/", "/a/", "/d/"] {
            counts.add_page(&page(path), of(Purpose::Training, "crd_1"), 1, BOUNDS);
        }
        let flush = counts.take_flush(true);
        assert_eq!(
            page_rows(&flush),
            [
                ("(other pages)", "training", 2, 2),
                ("a.example/a/", "training", 2, 2),
                ("a.example/b/", "training", 1, 1)
            ]
        );
        assert_eq!(
            flush.pages[0].hour,
            UNIX_EPOCH + Duration::from_secs(7 * 3600)
        );
    }

    #[test]
    fn a_page_counts_once_in_the_bound_whatever_its_purposes_and_cards() {
        let mut counts = Counts::default();
        let served = [
            ("/a/", Purpose::Training, "crd_x"),
            ("/a/", Purpose::Search, "crd_y"),
            ("/a/", Purpose::Training, ""),
            ("/b/", Purpose::Training, "crd_y"),
            ("/a/", Purpose::Training, "crd_x"),
            ("/c/", Purpose::Search, "crd_x"),
            ("/d/", Purpose::Search, ""),
        ];
        for (path, purpose, card) in served {
            counts.add_page(&page(path), of(purpose, card), 1, BOUNDS);
        }
        let flush = counts.take_flush(true);
        assert_eq!(
            page_rows(&flush),
            [
                ("(other pages)", "search", 2, 1),
                ("a.example/a/", "search", 1, 1),
                ("a.example/a/", "training", 3, 2),
                ("a.example/b/", "training", 1, 1)
            ]
        );
        // A page past the bound is `(other pages)` for its card too; unserved requests
        // count for no card.
        assert_eq!(
            card_rows(&flush),
            [
                ("crd_x", "(other pages)", 1),
                ("crd_x", "a.example/a/", 2),
                ("crd_y", "a.example/a/", 1),
                ("crd_y", "a.example/b/", 1)
            ]
        );
    }

    #[test]
    fn the_entry_for_other_pages_takes_no_place_of_the_bound_when_merged() {
        let mut full = Counts::default();
        for path in ["/a/", "/b/", "/c/"] {
            full.add_page(&page(path), of(Purpose::Training, ""), 1, BOUNDS);
        }
        let mut merged = Counts::default();
        merged.merge(full, BOUNDS);
        let mut other = Counts::default();
        other.add_page(&page("/d/"), of(Purpose::Training, ""), 1, BOUNDS);
        merged.merge(other, BOUNDS);
        let mut names: Vec<String> = merged
            .take_flush(true)
            .pages
            .into_iter()
            .map(|p| p.page)
            .collect();
        names.sort();
        assert_eq!(names, ["(other pages)", "a.example/a/", "a.example/b/"]);
    }

    #[test]
    fn merged_slots_keep_the_bound_for_cards_too() {
        let mut one = Counts::default();
        one.add_page(&page("/a/"), of(Purpose::Training, "crd_x"), 2, BOUNDS);
        one.add_page(&page("/b/"), of(Purpose::Training, "crd_x"), 1, BOUNDS);
        let mut two = Counts::default();
        two.add_page(&page("/c/"), of(Purpose::Training, "crd_y"), 1, BOUNDS);
        two.add_page(&page("/a/"), of(Purpose::Search, "crd_y"), 1, BOUNDS);
        one.merge(two, BOUNDS);
        let flush = one.take_flush(true);
        assert_eq!(
            card_rows(&flush),
            [
                ("crd_x", "a.example/a/", 2),
                ("crd_x", "a.example/b/", 1),
                ("crd_y", "(other pages)", 1),
                ("crd_y", "a.example/a/", 1)
            ]
        );
    }

    fn sample(second: u64, path: &str) -> SampleOf<&str> {
        SampleOf {
            second,
            agent: Agent(None),
            page: ("a.example", path),
            status: 200,
            reason: None,
        }
    }

    /// The flush's samples, `(org, second, page)`, in order.
    fn sample_rows(counts: &mut Counts) -> Vec<(String, u64, String)> {
        let since_epoch = |at: SystemTime| at.duration_since(UNIX_EPOCH).unwrap().as_secs();
        let mut rows: Vec<_> = (counts.take_flush(false).samples.into_iter())
            .map(|s| (s.org_id, since_epoch(s.at), s.page))
            .collect();
        rows.sort();
        rows
    }

    #[test]
    fn samples_are_one_a_second_per_organisation_the_last_ones_kept() {
        let mut one = Counts::default();
        one.add_sample("acc_1", &sample(10, "/first/"));
        one.add_sample("acc_1", &sample(10, "/same-second/"));
        one.add_sample("acc_2", &sample(10, "/theirs/"));
        let mut two = Counts::default();
        two.add_sample("acc_1", &sample(10, "/other-slot/"));
        two.add_sample("acc_1", &sample(11, "/next/"));
        one.merge(two, BOUNDS);
        let row = |org: &str, second, page: &str| (org.to_string(), second, page.to_string());
        assert_eq!(
            sample_rows(&mut one),
            [
                row("acc_1", 10, "a.example/first/"),
                row("acc_1", 11, "a.example/next/"),
                row("acc_2", 10, "a.example/theirs/")
            ]
        );
        let mut many = Counts::default();
        for second in 0..(SAMPLES_KEPT as u64 + 10) {
            many.add_sample("acc_1", &sample(second, "/"));
        }
        let seconds: Vec<u64> = sample_rows(&mut many).iter().map(|r| r.1).collect();
        assert_eq!(seconds, (10..SAMPLES_KEPT as u64 + 10).collect::<Vec<_>>());
    }

    #[test]
    fn merging_adds_every_counter_once() {
        let key = RequestKey {
            minute: 3,
            org_id: "acc_1",
            site: "",
            requested_fragment_id: "",
            resolved_fragment_id: "",
            card_id: "",
            key_id: "",
            lang: Some(Lang::Fr),
            format: Some(Format::Html),
            ending: Ending::Served,
            refused: None,
            agent: Agent(None),
            purpose: Purpose::None,
        };
        let mut a = Counts::default();
        a.add_request(&key, 2);
        let mut b = Counts::default();
        b.add_request(&key, 3);
        b.add_request(&RequestKey { minute: 4, ..key }, 1);
        b.add_agent(
            &AgentKey {
                day: 0,
                org_id: "acc_1",
                user_agent: "curl/8",
            },
            1,
            BOUNDS,
        );
        a.merge(b, BOUNDS);
        let keys = a.keys();
        let requests: i64 = a.take_flush(true).requests.iter().map(|r| r.requests).sum();
        assert_eq!((requests, keys), (6, 3));
    }
}
