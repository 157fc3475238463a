//! The report of an organisation's `/fragment` requests over a window, as `agentcard admin
//! report` and the console read it: the window (the CLI's `--since`/`--until`, the console's
//! last 24 hours, 7 or 30 days, two dates), the totals (requests, served, fill rate, refused,
//! no-fill reasons, agent purposes) and the groups of one dimension, with names beside ids.
//! Typed values out; the renderers are the callers' (`csv` here for both, JSON and the table
//! in `admin`).
//!
//! Totals come from the request counters whatever the grouping. Page rows are written less
//! often than the other counters (every tenth flush), so a view by page covers whole hours and
//! what its rows do not hold yet is the group [`NOT_YET_WRITTEN`]: its groups add up to the
//! totals like every other view's.

pub mod csv;
mod digest;
mod glance;
pub mod live;
mod touched;
mod view;
mod window;

pub use crate::db::reports::snapshot;
pub use digest::{digest, Digest};
pub use glance::{card_week, glance, series, CardPage, CardWeek, Glance};
pub use touched::{last_day, Touched};
pub use view::{view, View};
pub use window::{parse_time, Bounds, ConsoleWindow, TimeArg};

use crate::db::orgs::Org;
use crate::db::reports::{self, Dimension, GroupKey, PageCount, PageReason, RequestCount};
use crate::domain::closed_set::closed_set;
use crate::domain::{Ending, Outcome, Purpose, Reason, Refused};
use crate::error::ApiError;
use jiff::Timestamp;
use postgres::GenericClient;
use std::collections::{BTreeMap, BTreeSet};
use std::time::SystemTime;

/// The page group of the requests the page rows do not hold yet.
pub const NOT_YET_WRITTEN: &str = "(not yet written)";

/// What the console calls the groups beyond the top ones ([`top`]), together.
pub const ALL_OTHERS: &str = "(all others)";

closed_set! {
    /// What the groups are keyed by, by the name `--by` and the console's query take, in the
    /// order the CLI lists them.
    pub enum By {
        /// The page's site (none: refused before a site was known).
        Site = "site",
        /// The fragment resolved, else the one requested.
        Fragment = "fragment",
        /// The card served (none: none served).
        Card = "card",
        /// Host and canonical path, from the hourly page counts.
        Page = "page",
        /// The agent marker as the v0.1 list spells it (`GPTBot`), or `none`.
        Agent = "agent",
        /// The UTC hour.
        Hour = "hour",
        /// The UTC day.
        Day = "day",
    }
}

impl By {
    /// The dimension of the request counts; `None` for pages, which have counts of their own.
    fn dimension(self) -> Option<Dimension> {
        match self {
            By::Site => Some(Dimension::Site),
            By::Fragment => Some(Dimension::Fragment),
            By::Card => Some(Dimension::Card),
            By::Page => None,
            By::Agent => Some(Dimension::Agent),
            By::Hour => Some(Dimension::Hour),
            By::Day => Some(Dimension::Day),
        }
    }

    /// The key's columns, as JSON members and CSV headers (see [`Key::cells`]).
    pub fn columns(self) -> &'static [&'static str] {
        match self {
            By::Site => &["site"],
            By::Fragment => &["fragment_id", "ref"],
            By::Card => &["card_id", "card_name"],
            By::Page => &["page"],
            By::Agent => &["agent"],
            By::Hour => &["hour"],
            By::Day => &["day"],
        }
    }
}

/// A group's key, with the names the console shows beside ids.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Key {
    /// `domain` `None`: refused before a site was known; `name` `None`: not (or no longer) a
    /// site of the organisation.
    Site {
        domain: Option<String>,
        name: Option<String>,
    },
    /// `id` `None`: no fragment named; `reference` and `name` `None`: not (or no longer) the
    /// organisation's (a reference also when it has none).
    Fragment {
        id: Option<String>,
        reference: Option<String>,
        name: Option<String>,
    },
    /// `id` `None`: no card served.
    Card {
        id: Option<String>,
        name: Option<String>,
    },
    /// Host and canonical path, `(other pages)`, `(no page)` or [`NOT_YET_WRITTEN`].
    Page(String),
    Agent(String),
    Hour(Timestamp),
    Day(Timestamp),
}

impl Key {
    /// The values of the grouping's columns ([`By::columns`]), `None` where none applies.
    pub fn cells(&self) -> Vec<Option<String>> {
        match self {
            Key::Site { domain, .. } => vec![domain.clone()],
            Key::Fragment { id, reference, .. } => vec![id.clone(), reference.clone()],
            Key::Card { id, name } => vec![id.clone(), name.clone()],
            Key::Page(page) => vec![Some(page.clone())],
            Key::Agent(agent) => vec![Some(agent.clone())],
            Key::Hour(start) => vec![Some(start.to_string())],
            Key::Day(start) => vec![Some(start.strftime("%Y-%m-%d").to_string())],
        }
    }

    fn of(key: &GroupKey, by: By) -> Option<Key> {
        Some(match (key, by) {
            (GroupKey::Item { id, name, .. }, By::Site) => Key::Site {
                domain: id.clone(),
                name: name.clone(),
            },
            (
                GroupKey::Item {
                    id,
                    reference,
                    name,
                },
                By::Fragment,
            ) => Key::Fragment {
                id: id.clone(),
                reference: reference.clone(),
                name: name.clone(),
            },
            (GroupKey::Item { id, name, .. }, By::Card) => Key::Card {
                id: id.clone(),
                name: name.clone(),
            },
            (GroupKey::Name(name), By::Agent) => Key::Agent(name.clone().unwrap_or_default()),
            (GroupKey::Start(start), By::Hour) => Key::Hour(timestamp(*start)?),
            (GroupKey::Start(start), By::Day) => Key::Day(timestamp(*start)?),
            _ => return None,
        })
    }
}

fn timestamp(at: SystemTime) -> Option<Timestamp> {
    Timestamp::try_from(at).ok()
}

/// Requests, served, refused with the reasons of the refusals, and the reasons of the requests
/// not served (all `None` for the counts of a [`top`] view's groups, which know none) and the
/// agent purposes of all.
/// Every reason and purpose is a member, zeros included, in the order of their names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counts {
    pub requests: i64,
    pub served: i64,
    pub refused: Option<i64>,
    /// The refusals by reason ([`Refused::fix`] says what to fix). An earlier release's
    /// refusal of a request counts in `refused` only (they were never an organisation's).
    pub refused_reasons: Option<BTreeMap<Refused, i64>>,
    /// The endings of no-fill reasons only.
    pub no_fill_reasons: Option<BTreeMap<Ending, i64>>,
    pub agent_purposes: BTreeMap<Purpose, i64>,
}

/// Every no-fill reason, in the order of their names.
pub fn no_fill_reasons() -> impl Iterator<Item = Ending> {
    let reasons: BTreeSet<Ending> = (Ending::ALL.into_iter())
        .filter(|ending| ending.outcome() == Outcome::NoFill)
        .collect();
    reasons.into_iter()
}

/// Every reason of a refusal, in the order of their names.
pub fn refused_reasons() -> impl Iterator<Item = Refused> {
    BTreeSet::from(Refused::ALL).into_iter()
}

/// Every agent purpose, in the order of their names.
pub fn purposes() -> impl Iterator<Item = Purpose> {
    BTreeSet::from(Purpose::ALL).into_iter()
}

/// A count of zero for each key.
fn zeros<K: Ord>(keys: impl Iterator<Item = K>) -> BTreeMap<K, i64> {
    keys.map(|key| (key, 0)).collect()
}

impl Counts {
    /// Zero requests; `requests_known`: with refused and no-fill reasons.
    pub fn zero(requests_known: bool) -> Counts {
        Counts {
            requests: 0,
            served: 0,
            refused: requests_known.then_some(0),
            refused_reasons: requests_known.then(|| zeros(refused_reasons())),
            no_fill_reasons: requests_known.then(|| zeros(no_fill_reasons())),
            agent_purposes: zeros(purposes()),
        }
    }

    /// The requests and served requests of a group in a [`top`] view, which counts nothing
    /// else: no refused, no reasons, no purposes.
    pub fn tally(requests: i64, served: i64) -> Counts {
        Counts {
            requests,
            served,
            refused: None,
            refused_reasons: None,
            no_fill_reasons: None,
            agent_purposes: BTreeMap::new(),
        }
    }

    fn of_requests<'a>(counts: impl IntoIterator<Item = &'a RequestCount>) -> Counts {
        let mut sum = Counts::zero(true);
        for count in counts {
            let outcome = count.ending.outcome();
            let served = match outcome {
                Outcome::Served => count.requests,
                Outcome::NoFill | Outcome::Refused => 0,
            };
            sum.add(count.purpose, count.requests, served);
            let reason = Reason {
                ending: count.ending,
                refused: count.refused,
            };
            sum.add_unserved(reason, count.requests);
        }
        sum
    }

    /// The sums of page counts: requests, served and purposes only.
    fn of_pages<'a>(counts: impl IntoIterator<Item = &'a PageCount>) -> Counts {
        let mut sum = Counts::zero(false);
        for count in counts {
            sum.add(count.purpose, count.requests, count.served);
        }
        sum
    }

    /// The same counts with refused and the reasons of those not served, from `reasons`.
    fn with_reasons<'a>(mut self, reasons: impl IntoIterator<Item = &'a PageReason>) -> Counts {
        let known = Counts::zero(true);
        self.refused = known.refused;
        self.refused_reasons = known.refused_reasons;
        self.no_fill_reasons = known.no_fill_reasons;
        for reason in reasons {
            self.add_unserved(reason.reason, reason.requests);
        }
        self
    }

    /// Counts `n` requests that ended for `reason` under refused or the no-fill reasons
    /// (served requests under neither).
    fn add_unserved(&mut self, reason: Reason, n: i64) {
        match reason.ending.outcome() {
            Outcome::Served => {}
            Outcome::Refused => {
                *self.refused.get_or_insert(0) += n;
                if let Some(refused) = reason.refused {
                    add(self.refused_reasons.get_or_insert_default(), refused, n);
                }
            }
            Outcome::NoFill => add(
                self.no_fill_reasons.get_or_insert_default(),
                reason.ending,
                n,
            ),
        }
    }

    /// Adds requests of one agent purpose, `served` of them served.
    fn add(&mut self, purpose: Purpose, requests: i64, served: i64) {
        self.requests += requests;
        self.served += served;
        add(&mut self.agent_purposes, purpose, requests);
    }

    /// What `self` holds beyond `part` (requests, served, purposes, and refused and the
    /// reasons when both know them): the totals less the page rows' sums. Never below zero.
    fn beyond(&self, part: &Counts) -> Counts {
        let less = |a: i64, b: i64| (a - b).max(0);
        let rest_of = |all: Option<i64>, counted: Option<i64>| Some(less(all?, counted?));
        Counts {
            requests: less(self.requests, part.requests),
            served: less(self.served, part.served),
            refused: rest_of(self.refused, part.refused),
            refused_reasons: map_beyond(
                self.refused_reasons.as_ref(),
                part.refused_reasons.as_ref(),
            ),
            no_fill_reasons: map_beyond(
                self.no_fill_reasons.as_ref(),
                part.no_fill_reasons.as_ref(),
            ),
            agent_purposes: map_beyond(Some(&self.agent_purposes), Some(&part.agent_purposes))
                .unwrap_or_default(),
        }
    }

    /// Served over requests, rounded half up to 3 decimals in integers (in floating point,
    /// 3 of 2000 would round down); 0 without requests.
    pub fn fill_rate(&self) -> f64 {
        if self.requests <= 0 {
            return 0.0;
        }
        let (served, requests) = (i128::from(self.served), i128::from(self.requests));
        let thousandths = (served * 2000 + requests) / (requests * 2);
        thousandths as f64 / 1000.0
    }
}

/// Each count of `all` less the same key's in `part` (never below zero); `None` unless both
/// are known.
fn map_beyond<K: Ord + Copy>(
    all: Option<&BTreeMap<K, i64>>,
    part: Option<&BTreeMap<K, i64>>,
) -> Option<BTreeMap<K, i64>> {
    let (all, part) = (all?, part?);
    let less = |key: &K, n: i64| (n - part.get(key).copied().unwrap_or(0)).max(0);
    Some(all.iter().map(|(key, &n)| (*key, less(key, n))).collect())
}

fn add<K: Ord>(counts: &mut BTreeMap<K, i64>, key: K, n: i64) {
    *counts.entry(key).or_default() += n;
}

/// One group: its key and its counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    pub key: Key,
    pub counts: Counts,
}

/// The report of a window.
#[derive(Debug, Clone)]
pub struct Report {
    pub org: Org,
    /// The window counted: for a view by page, in whole hours ([`Bounds::whole_hours`]).
    pub bounds: Bounds,
    pub total: Counts,
    /// The grouping asked for and its groups, in order: by start, else by key in byte order,
    /// those without one last; by page, [`NOT_YET_WRITTEN`] last. In a [`top`] view, the top
    /// groups by requests.
    pub groups: Option<(By, Vec<Group>)>,
    /// In a [`top`] view, the counts of the groups beyond the top ones, when there are any.
    pub others: Option<Counts>,
}

/// The report of `org`'s requests in `bounds`, grouped `by` when given.
pub fn report(
    db: &mut impl GenericClient,
    org: &Org,
    bounds: Bounds,
    by: Option<By>,
) -> Result<Report, ApiError> {
    let org_id = org.id.as_str();
    let bounds = if by == Some(By::Page) {
        bounds.whole_hours()
    } else {
        bounds
    };
    let window = bounds.window();
    let dimension = by.and_then(By::dimension);
    let counts = reports::request_counts(db, org_id, window, dimension)?;
    let total = Counts::of_requests(&counts);
    let groups = match by {
        None => None,
        Some(By::Page) => {
            let pages = reports::page_counts(db, org_id, window)?;
            let reasons = reports::page_reasons(db, org_id, window)?;
            Some((By::Page, by_page(&pages, &reasons, &total)))
        }
        Some(by) => Some((by, by_key(&counts, by)?)),
    };
    Ok(Report {
        org: org.clone(),
        bounds,
        total,
        groups,
        others: None,
    })
}

/// The report of `org`'s requests in `bounds` by site, fragment, card or page as the console
/// shows it: the `n` groups with the most requests (ties in key order), most first, and the
/// others' counts together in [`Report::others`]; the totals as [`report`]'s, which the groups
/// and the others add up to. The groups of a site, a fragment or a card count requests and
/// served only ([`Counts::tally`]); a page's, its purposes too. Other groupings are
/// [`report`]'s, whole.
pub fn top(
    db: &mut impl GenericClient,
    org: &Org,
    bounds: Bounds,
    by: By,
    n: i64,
) -> Result<Report, ApiError> {
    let dimension = match by {
        By::Page => return top_pages(db, org, bounds, n),
        By::Site | By::Fragment | By::Card => by.dimension(),
        By::Agent | By::Hour | By::Day => None,
    };
    let Some(dimension) = dimension else {
        return report(db, org, bounds, Some(by));
    };
    let (org_id, window) = (org.id.as_str(), bounds.window());
    let total = Counts::of_requests(&reports::request_counts(db, org_id, window, None)?);
    let tallies = reports::top_tallies(db, org_id, window, dimension, n)?;
    let groups = (tallies.iter())
        .map(|tally| {
            let key = Key::of(&tally.key, by)
                .ok_or_else(|| ApiError::internal(format!("report group {:?}", tally.key)))?;
            Ok(Group {
                key,
                counts: Counts::tally(tally.requests, tally.served),
            })
        })
        .collect::<Result<Vec<Group>, ApiError>>()?;
    let others = others(&total, &groups);
    Ok(Report {
        org: org.clone(),
        bounds,
        total,
        groups: Some((by, groups)),
        others,
    })
}

/// What `all` holds beyond the top `groups` (requests and served), when anything: the row
/// "(all others)".
fn others(all: &Counts, groups: &[Group]) -> Option<Counts> {
    let shown = |count: fn(&Counts) -> i64| groups.iter().map(|g| count(&g.counts)).sum::<i64>();
    let (requests, served) = (shown(|c| c.requests), shown(|c| c.served));
    (all.requests > requests).then(|| Counts::tally(all.requests - requests, all.served - served))
}

/// [`top`] by page: over whole hours, the top pages (requests and served), the others, and
/// what the page rows do not hold yet.
fn top_pages(
    db: &mut impl GenericClient,
    org: &Org,
    bounds: Bounds,
    n: i64,
) -> Result<Report, ApiError> {
    let org_id = org.id.as_str();
    let bounds = bounds.whole_hours();
    let window = bounds.window();
    let total = Counts::of_requests(&reports::request_counts(db, org_id, window, None)?);
    let pages = reports::top_page_tallies(db, org_id, window, n)?;
    let written = Counts::of_pages(&pages.written);
    let mut groups: Vec<Group> = (pages.shown.into_iter())
        .map(|page| Group {
            key: Key::Page(page.page),
            counts: Counts::tally(page.requests, page.served),
        })
        .collect();
    let others = others(&written, &groups);
    groups.extend(not_yet_written(&total, &written));
    Ok(Report {
        org: org.clone(),
        bounds,
        total,
        groups: Some((By::Page, groups)),
        others,
    })
}

/// The `n` fragments of `org` with the most requests answered without a card in `bounds`,
/// most first, their counts those requests only (the no-fill reasons' fragments; ranking
/// these rows is a fraction of ranking every fragment's). The totals are those of the
/// fragments listed.
pub fn unfilled(
    db: &mut impl GenericClient,
    org: &Org,
    bounds: Bounds,
    n: i64,
) -> Result<Report, ApiError> {
    let window = bounds.window();
    let counts = reports::top_unfilled_counts(db, org.id.as_str(), window, n)?;
    Ok(Report {
        org: org.clone(),
        bounds,
        total: Counts::of_requests(&counts),
        groups: Some((By::Fragment, by_key(&counts, By::Fragment)?)),
        others: None,
    })
}

/// Groups of counts that arrive in key order.
fn by_key(counts: &[RequestCount], by: By) -> Result<Vec<Group>, ApiError> {
    counts
        .chunk_by(|a, b| a.key == b.key)
        .map(|chunk| {
            let key = Key::of(&chunk[0].key, by)
                .ok_or_else(|| ApiError::internal(format!("report group {:?}", chunk[0].key)))?;
            Ok(Group {
                key,
                counts: Counts::of_requests(chunk),
            })
        })
        .collect()
}

/// The pages' groups, each with the reasons of its requests not served, then what they do not
/// hold of `total` yet, when anything.
fn by_page(counts: &[PageCount], reasons: &[PageReason], total: &Counts) -> Vec<Group> {
    let mut reasons_of: BTreeMap<&str, Vec<&PageReason>> = BTreeMap::new();
    for reason in reasons {
        reasons_of.entry(&reason.page).or_default().push(reason);
    }
    let mut groups: Vec<Group> = counts
        .chunk_by(|a, b| a.page == b.page)
        .map(|chunk| {
            let page = chunk[0].page.clone().unwrap_or_default();
            let reasons = reasons_of.get(page.as_str()).into_iter().flatten().copied();
            Group {
                counts: Counts::of_pages(chunk).with_reasons(reasons),
                key: Key::Page(page),
            }
        })
        .collect();
    let written = Counts::of_pages(counts).with_reasons(reasons);
    groups.extend(not_yet_written(total, &written));
    groups
}

/// The group of what the page rows (`written`) do not hold of `total` yet, when anything.
fn not_yet_written(total: &Counts, written: &Counts) -> Option<Group> {
    let rest = total.beyond(written);
    (rest.requests > 0).then(|| Group {
        key: Key::Page(NOT_YET_WRITTEN.into()),
        counts: rest,
    })
}

/// The User-Agents of `org` that matched no marker in the days `bounds` touches (they are
/// kept per UTC day, the top 100 of each), most requests first, at most `limit`.
pub fn unmatched_agents(
    db: &mut impl GenericClient,
    org: &Org,
    bounds: Bounds,
    limit: i64,
) -> Result<Vec<(String, i64)>, ApiError> {
    let window = bounds.window();
    Ok(reports::unmatched_agents(
        db,
        org.id.as_str(),
        window,
        limit,
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_rate_rounds_half_up_to_three_decimals() {
        let cases = [
            (0, 0, 0.0),
            (2, 3, 0.667),
            (1, 16, 0.063),
            (3, 2000, 0.002),
            (1, 3, 0.333),
            (5, 5, 1.0),
            (0, 7, 0.0),
        ];
        for (served, requests, expected) in cases {
            let counts = Counts {
                requests,
                served,
                ..Counts::zero(false)
            };
            assert_eq!(counts.fill_rate(), expected, "{served}/{requests}");
        }
    }

    #[test]
    fn what_page_rows_do_not_hold_is_a_group_of_its_own() {
        let page = |page: &str, purpose, requests, served| PageCount {
            page: Some(page.into()),
            purpose,
            requests,
            served,
        };
        let mut total = Counts::zero(true);
        total.add(Purpose::Training, 10, 7);
        total.add(Purpose::Search, 2, 2);
        let pages = [page("a.example/x", Purpose::Training, 6, 4)];
        let groups = by_page(&pages, &[], &total);
        assert_eq!(groups.len(), 2);
        let rest = &groups[1];
        assert_eq!(rest.key, Key::Page(NOT_YET_WRITTEN.into()));
        assert_eq!((rest.counts.requests, rest.counts.served), (6, 5));
        assert_eq!(rest.counts.agent_purposes[&Purpose::Training], 4);
        assert_eq!(rest.counts.agent_purposes[&Purpose::Search], 2);
        // All written: no such group.
        let pages = [
            page("a.example/x", Purpose::Training, 10, 7),
            page("a.example/y", Purpose::Search, 2, 2),
        ];
        assert_eq!(by_page(&pages, &[], &total).len(), 2);
    }
}
