//! The counters of one slot (in practice, one worker thread) between two flushes: requests per
//! minute and dimension, requests and served per page and hour, unmatched User-Agents per day.
//!
//! A request looks its keys up borrowed (`Equivalent`), so a key already counted costs no
//! allocation; only a key's first request in a flush interval copies its texts.

use crate::db::reports::{
    Flush, PageCount, RequestCount, UnmatchedAgentCount, OTHER_PAGES, OTHER_USER_AGENTS,
};
use hashbrown::{Equivalent, HashMap};
use std::hash::Hash;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The page of a request without a readable `page_url`.
pub const NO_PAGE: &str = "(no page)";

/// Requests of one minute (minutes since the Unix epoch) with the same dimensions; `S` is
/// `Box<str>` in the map and `&str` for a lookup. `""` where a dimension does not apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RequestKey<S> {
    pub minute: u32,
    pub org_id: S,
    pub site: S,
    pub requested_fragment_id: S,
    pub resolved_fragment_id: S,
    pub card_id: S,
    pub key_id: S,
    pub lang: &'static str,
    pub format: &'static str,
    pub outcome: &'static str,
    pub reason: &'static str,
    pub agent: &'static str,
    pub purpose: &'static str,
}

/// A page (host and canonical path) of an organisation and a purpose, in one hour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PageKey<S> {
    pub hour: u32,
    pub org_id: S,
    pub host: S,
    pub path: S,
    pub purpose: &'static str,
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
            outcome: self.outcome,
            reason: self.reason,
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
            purpose: self.purpose,
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

/// A key's texts copied from its borrowed form (`|text| &**text` borrows them back).
fn owned(text: &&str) -> Box<str> {
    Box::from(*text)
}

impl PageKey<&str> {
    /// The same organisation, hour and purpose, under the page that stands for the others.
    fn other_pages(&self) -> PageKey<&str> {
        PageKey {
            host: OTHER_PAGES,
            path: "",
            ..*self
        }
    }
}

/// Requests and, of those, served.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Served {
    pub requests: u64,
    pub served: u64,
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
    pages: HashMap<PageKey<Box<str>>, Served>,
    agents: HashMap<AgentKey<Box<str>>, u64>,
    /// Distinct pages per (organisation, hour), and User-Agents per (organisation, day).
    pages_in: HashMap<(Box<str>, u32), usize>,
    agents_in: HashMap<(Box<str>, u32), usize>,
}

impl Counts {
    pub fn is_empty(&self) -> bool {
        self.requests.is_empty() && self.pages.is_empty() && self.agents.is_empty()
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

    /// Counts a page; past the bound of its organisation's hour, under `(other pages)`.
    pub fn add_page(&mut self, key: &PageKey<&str>, add: Served, bounds: MemoryBounds) {
        if let Some(count) = self.pages.get_mut(key) {
            return add_served(count, add);
        }
        if key.host == OTHER_PAGES {
            // The entry that stands for the others takes no place of the bound.
            return add_served(self.pages.entry(key.map(owned)).or_default(), add);
        }
        let bucket = (Box::from(key.org_id), key.hour);
        let held = self.pages_in.entry(bucket).or_default();
        let key = if *held < bounds.pages_per_hour {
            *held += 1;
            *key
        } else {
            key.other_pages()
        };
        add_served(self.pages.entry(key.map(owned)).or_default(), add);
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

    /// Adds every counter of `other` (the bounds apply to the sum).
    pub fn merge(&mut self, other: Counts, bounds: MemoryBounds) {
        for (key, n) in other.requests {
            self.add_request(&key.map(|text| &**text), n);
        }
        for (key, served) in other.pages {
            self.add_page(&key.map(|text| &**text), served, bounds);
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
        let mut flush = Flush {
            requests: requests.collect(),
            ..Flush::default()
        };
        if with_pages {
            flush.pages = self
                .pages
                .drain()
                .map(|(k, n)| page_count((&k, &n)))
                .collect();
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

fn add_served(count: &mut Served, add: Served) {
    count.requests += add.requests;
    count.served += add.served;
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
        lang: key.lang.to_string(),
        format: key.format.to_string(),
        outcome: key.outcome.to_string(),
        reason: key.reason.to_string(),
        agent: key.agent.to_string(),
        purpose: key.purpose.to_string(),
        requests: *n as i64,
    }
}

fn page_count((key, served): (&PageKey<Box<str>>, &Served)) -> PageCount {
    PageCount {
        hour: time_of(key.hour, 3600),
        org_id: key.org_id.to_string(),
        page: format!("{}{}", key.host, key.path),
        purpose: key.purpose.to_string(),
        requests: served.requests as i64,
        served: served.served as i64,
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

    fn page(path: &str) -> PageKey<&str> {
        PageKey {
            hour: 7,
            org_id: "acc_1",
            host: "a.example",
            path,
            purpose: "training",
        }
    }

    #[test]
    fn pages_past_the_bound_count_under_other_pages_and_nothing_is_lost() {
        let mut counts = Counts::default();
        let one = Served {
            requests: 1,
            served: 1,
        };
        for path in ["/a/", "/b/", "/c/", "/a/", "/d/"] {
            counts.add_page(&page(path), one, BOUNDS);
        }
        let mut flush = counts.take_flush(true);
        flush.pages.sort_by(|a, b| a.page.cmp(&b.page));
        let pages: Vec<(&str, i64)> = flush
            .pages
            .iter()
            .map(|p| (p.page.as_str(), p.requests))
            .collect();
        assert_eq!(
            pages,
            [
                ("(other pages)", 2),
                ("a.example/a/", 2),
                ("a.example/b/", 1)
            ]
        );
        assert_eq!(
            flush.pages[0].hour,
            UNIX_EPOCH + Duration::from_secs(7 * 3600)
        );
    }

    #[test]
    fn the_entry_for_other_pages_takes_no_place_of_the_bound_when_merged() {
        let one = Served {
            requests: 1,
            served: 0,
        };
        let mut full = Counts::default();
        for path in ["/a/", "/b/", "/c/"] {
            full.add_page(&page(path), one, BOUNDS);
        }
        let mut merged = Counts::default();
        merged.merge(full, BOUNDS);
        let mut other = Counts::default();
        other.add_page(&page("/d/"), one, BOUNDS);
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
    fn merging_adds_every_counter_once() {
        let key = RequestKey {
            minute: 3,
            org_id: "acc_1",
            site: "",
            requested_fragment_id: "",
            resolved_fragment_id: "",
            card_id: "",
            key_id: "",
            lang: "fr",
            format: "html",
            outcome: "served",
            reason: "served",
            agent: "none",
            purpose: "none",
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
