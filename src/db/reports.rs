//! The report's reads, for `agentcard admin report` and the console's numbers: an
//! organisation's `/fragment` requests over a window, from the aggregates of
//! `sql/005_report_aggregates.sql` (and a card's pages, of `sql/010_report_card_pages.sql`).
//! Each row is read by its columns' names.
//!
//! A window `[since, until)` counts each bucket whose start lies in it. Minutes past their
//! retention are rolled into hours and deleted, so no bucket is in both tables and a window
//! reads both: the minutes it holds, and the hours it holds once they are rolled up. Each hour
//! is also added to its UTC day in `report_days` (by the database, `sql/011_report_days.sql`),
//! so the whole days of a window are read there, one row per day and key, and only its partial
//! days' hours from `report_hours`. Pages, and a card's pages, are counted per hour. Every time
//! is UTC; nothing depends on the session's time zone.

use crate::domain::{Ending, Outcome, Purpose, Reason, Refused};
use postgres::types::ToSql;
use postgres::{Client, GenericClient, IsolationLevel, Row, Transaction};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// PostgreSQL's memory for each grouping of a report's reads (its default is 4 MB).
const WORK_MEM: &str = "64MB";

/// A read-only transaction for the reads of one report: one snapshot, so its groups add up to
/// its totals whatever a flush adds meanwhile; and the memory and the workers its groupings
/// need. A month's view by fragment sums ~100 000 groups: in memory, not in batches on disk;
/// and in one process, since PostgreSQL's parallel workers would take the cores `/fragment` is
/// served on, and merging ~100 000 partial groups costs more than they save.
pub fn snapshot(db: &mut Client) -> Result<Transaction<'_>, postgres::Error> {
    let mut transaction = db
        .build_transaction()
        .isolation_level(IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()?;
    transaction.batch_execute(&format!(
        "SET LOCAL work_mem = '{WORK_MEM}'; SET LOCAL max_parallel_workers_per_gather = 0"
    ))?;
    Ok(transaction)
}

/// How far the server read is behind its primary: zero on a primary, and on a standby that has
/// replayed all it received from a primary it streams from; else the age of the last
/// transaction it replayed (a standby cut off from its primary ages).
pub fn replica_lag(db: &mut impl GenericClient) -> Result<Duration, postgres::Error> {
    let row = db.query_one(
        "SELECT CASE
                  WHEN NOT pg_is_in_recovery() THEN 0
                  WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn()
                   AND EXISTS (SELECT FROM pg_stat_wal_receiver WHERE status = 'streaming')
                  THEN 0
                  ELSE coalesce(extract(epoch FROM now() - pg_last_xact_replay_timestamp()), 0)
                END::float8 AS lag",
        &[],
    )?;
    let seconds: f64 = row.try_get("lag")?;
    Ok(Duration::from_secs_f64(seconds.max(0.0)))
}

/// The buckets that start at or after `since` and before `until`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub since: SystemTime,
    pub until: SystemTime,
}

const DAY: Duration = Duration::from_secs(24 * 3600);

impl Window {
    /// The start of the first and the end of the last whole UTC day in the window, the same
    /// instant (`until`) when it holds none: `$4` and `$5` of [`counted_sql`].
    fn whole_days(self) -> (SystemTime, SystemTime) {
        let day = DAY.as_secs();
        let since = self.since.duration_since(UNIX_EPOCH).unwrap_or_default();
        let since = since.as_secs() + u64::from(since.subsec_nanos() > 0);
        let until = self.until.duration_since(UNIX_EPOCH).unwrap_or_default();
        let (first, end) = (since.div_ceil(day), until.as_secs() / day);
        let start = |day_number: u64| UNIX_EPOCH + Duration::from_secs(day_number * day);
        match first < end {
            true => (start(first), start(end)),
            false => (self.until, self.until),
        }
    }

    /// The parameters `$1` to `$5` of [`counted_sql`] grouped `by`: without whole days by
    /// hour (the days hold no hours).
    fn params(self, org_id: &str, by: Option<Dimension>) -> Params<'_> {
        let (days_since, days_until) = match by {
            Some(Dimension::Hour | Dimension::Key) => (self.until, self.until),
            _ => self.whole_days(),
        };
        Params {
            org_id,
            bounds: [self.since, self.until, days_since, days_until],
        }
    }
}

/// The organisation and the window's bounds, as [`counted_sql`] reads them.
struct Params<'a> {
    org_id: &'a str,
    bounds: [SystemTime; 4],
}

impl Params<'_> {
    fn with<'b>(&'b self, more: &[&'b (dyn ToSql + Sync)]) -> Vec<&'b (dyn ToSql + Sync)> {
        let mut params: Vec<&(dyn ToSql + Sync)> = vec![&self.org_id];
        params.extend(self.bounds.iter().map(|at| at as &(dyn ToSql + Sync)));
        params.extend_from_slice(more);
        params
    }
}

/// What request counts are grouped by, besides outcome, reason and agent purpose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dimension {
    Site,
    /// The resolved fragment, else the requested one.
    Fragment,
    Card,
    /// The delivery key (the days hold none: a window by key is read from the hours and
    /// minutes only).
    Key,
    /// The agent marker, or `none`.
    Agent,
    /// The UTC hour a bucket starts in.
    Hour,
    /// The UTC day a bucket starts in.
    Day,
}

/// The group a count belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GroupKey {
    /// No grouping: the whole window.
    Total,
    /// An agent marker, or `none`.
    Name(Option<String>),
    /// A site, a fragment or a card: its domain or id (`None` where it does not apply: a
    /// request refused before its site was known, or that named no fragment, or no card was
    /// served), the fragment's reference, and the object's name. Reference and name are `None`
    /// when it has none, or is not (or no longer) the organisation's (or for a card, a
    /// platform card).
    Item {
        id: Option<String>,
        reference: Option<String>,
        name: Option<String>,
    },
    /// The start of an hour or of a day.
    Start(SystemTime),
}

/// The requests of one group with the same ending and agent purpose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestCount {
    pub key: GroupKey,
    /// Read from its reason (each reason is of one outcome).
    pub ending: Ending,
    /// The reason of a refusal (`None` for an earlier release's refusal of a request).
    pub refused: Option<Refused>,
    pub purpose: Purpose,
    pub requests: i64,
}

/// The requests of one page (host and canonical path, `(other pages)` or `(no page)`) and
/// agent purpose, and how many of them were served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageCount {
    /// `None`: every page together ([`TopPages::written`]).
    pub page: Option<String>,
    pub purpose: Purpose,
    pub requests: i64,
    pub served: i64,
}

/// The organisation's requests in `window`, by ending, purpose and `by` (when some), the
/// groups in order: by start, else by name in byte order, those without one last.
pub fn request_counts(
    db: &mut impl GenericClient,
    org_id: &str,
    window: Window,
    by: Option<Dimension>,
) -> Result<Vec<RequestCount>, postgres::Error> {
    let query = format!(
        "WITH {counted},
         grouped AS (
             SELECT name, start, reason, purpose, sum(requests)::int8 AS requests
               FROM counted
              GROUP BY name, start, reason, purpose)
         SELECT g.name, l.reference, g.start, g.reason, g.purpose, g.requests, l.label
           FROM grouped g
           LEFT JOIN LATERAL {labels} AS l(reference, label) ON true
          ORDER BY g.start, g.name = '', g.name COLLATE \"C\", g.reason, g.purpose",
        counted = counted_sql(by, Only::All, Days::of(by)),
        labels = labels_sql(by),
    );
    let params = window.params(org_id, by);
    let rows = db.query(&query, &params.with(&[]))?;
    rows.iter().map(|row| request_count(row, by)).collect()
}

/// The requests and served requests of one group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tally {
    pub key: GroupKey,
    pub requests: i64,
    pub served: i64,
}

/// The `top` groups by `by` (a site, a fragment or a card) with the most requests in
/// `window` (ties in the order of [`request_counts`]), in that order, with their requests and
/// served requests only: a month holds up to ~100 000 groups, so they are summed by name alone
/// and ranked in the database, and names read for the top groups only.
pub fn top_tallies(
    db: &mut impl GenericClient,
    org_id: &str,
    window: Window,
    by: Dimension,
    top: i64,
) -> Result<Vec<Tally>, postgres::Error> {
    let query = format!(
        "WITH {counted},
         ranked AS (
             SELECT name, sum(requests)::int8 AS requests,
                    coalesce(sum(requests) FILTER (WHERE outcome = {served}), 0)::int8 AS served
               FROM counted
              GROUP BY name
              ORDER BY requests DESC, name = '', name COLLATE \"C\"
              LIMIT $6)
         SELECT g.name, l.reference, g.requests, g.served, l.label
           FROM ranked g
           LEFT JOIN LATERAL {labels} AS l(reference, label) ON true
          ORDER BY g.requests DESC, g.name = '', g.name COLLATE \"C\"",
        counted = counted_sql(Some(by), Only::All, Days::Keyed),
        labels = labels_sql(Some(by)),
        served = quoted(Outcome::Served.as_str()),
    );
    let params = window.params(org_id, Some(by));
    let rows = db.query(&query, &params.with(&[&top]))?;
    let tally = |row: &Row| {
        Ok(Tally {
            key: item_key(row)?,
            requests: row.try_get("requests")?,
            served: row.try_get("served")?,
        })
    };
    rows.iter().map(tally).collect()
}

/// The `top` fragments with the most requests answered without a card in `window` (ties in
/// the order of [`request_counts`]), those requests by reason and purpose, in that order.
pub fn top_unfilled_counts(
    db: &mut impl GenericClient,
    org_id: &str,
    window: Window,
    top: i64,
) -> Result<Vec<RequestCount>, postgres::Error> {
    let by = Some(Dimension::Fragment);
    let query = format!(
        "WITH {counted},
         grouped AS (
             SELECT name, reason, purpose, sum(requests)::int8 AS requests
               FROM counted
              GROUP BY name, reason, purpose),
         ranked AS (
             SELECT name, sum(requests) AS total
               FROM grouped
              GROUP BY name
              ORDER BY total DESC, name = '', name COLLATE \"C\"
              LIMIT $6)
         SELECT g.name, l.reference, g.reason, g.purpose, g.requests, l.label
           FROM grouped g
           JOIN ranked r USING (name)
           LEFT JOIN LATERAL {labels} AS l(reference, label) ON true
          ORDER BY r.total DESC, g.name = '', g.name COLLATE \"C\", g.reason, g.purpose",
        counted = counted_sql(by, Only::Outcome(Outcome::NoFill), Days::Keyed),
        labels = labels_sql(by),
    );
    let params = window.params(org_id, by);
    let rows = db.query(&query, &params.with(&[&top]))?;
    rows.iter().map(|row| request_count(row, by)).collect()
}

/// Which of the window's request counts a query reads.
#[derive(Clone, Copy)]
enum Only {
    All,
    /// Those of one outcome.
    Outcome(Outcome),
    /// Those that served the card `$6`.
    Card,
}

impl Only {
    /// The condition on a counter row, after the organisation's and the window's.
    fn sql(self) -> String {
        match self {
            Only::All => String::new(),
            Only::Outcome(outcome) => format!("AND outcome = {}", quoted(outcome.as_str())),
            Only::Card => "AND card_id = $6".into(),
        }
    }
}

/// A name of a closed set as an SQL literal: the names hold no quote.
fn quoted(name: &'static str) -> String {
    format!("'{name}'")
}

/// The CTE `counted`: the window's request counts as `by`'s name and start, outcome, reason,
/// purpose and requests, those `only` asks for. `$1` the organisation, `[$2, $3)` the window,
/// `[$4, $5)` its whole days ([`Window::whole_days`]): read from the days, the rest of the
/// window from the hours, and the minutes not rolled up yet.
fn counted_sql(by: Option<Dimension>, only: Only, days: Days) -> String {
    let (name, start) = key_sql(by, Table::Buckets);
    let (day_name, day_start) = key_sql(by, Table::Days);
    let days = days.table();
    let only = only.sql();
    let columns = "outcome, reason, purpose, requests";
    format!(
        "counted AS (
             SELECT {name} AS name, {start} AS start, {columns}
               FROM report_minutes
              WHERE org_id = $1 AND bucket >= $2 AND bucket < $3 {only}
             UNION ALL
             SELECT {name}, {start}, {columns}
               FROM report_hours
              WHERE org_id = $1 AND bucket >= $2 AND bucket < $4 {only}
             UNION ALL
             SELECT {name}, {start}, {columns}
               FROM report_hours
              WHERE org_id = $1 AND bucket >= $5 AND bucket < $3 {only}
             UNION ALL
             SELECT {day_name}, {day_start}, {columns}
               FROM {days}
              WHERE org_id = $1 AND bucket >= $4 AND bucket < $5 {only})"
    )
}

/// The group's reference and name, read once per group `g` (not per counted row).
fn labels_sql(by: Option<Dimension>) -> &'static str {
    match by {
        Some(Dimension::Site) => {
            "(SELECT NULL::text, s.name FROM sites s WHERE s.domain = g.name AND s.org_id = $1)"
        }
        Some(Dimension::Fragment) => {
            "(SELECT f.ref, f.name FROM fragments f JOIN sites s ON s.id = f.site_id
               WHERE f.id = g.name AND s.org_id = $1)"
        }
        Some(Dimension::Card) => {
            "(SELECT NULL::text, c.name FROM cards c
               WHERE c.id = g.name AND (c.org_id = $1 OR c.org_id IS NULL))"
        }
        Some(Dimension::Key) => {
            "(SELECT NULL::text, k.name FROM delivery_keys k WHERE k.id = g.name AND k.org_id = $1)"
        }
        None | Some(Dimension::Agent | Dimension::Hour | Dimension::Day) => {
            "(SELECT NULL::text, NULL::text)"
        }
    }
}

/// A row's group name, column `name` (`''` or NULL: none).
fn group_name(row: &Row) -> Result<Option<String>, postgres::Error> {
    let name: Option<String> = row.try_get("name")?;
    Ok(name.filter(|name| !name.is_empty()))
}

/// A site, a fragment or a card (its id in column `name`) with its labels, columns
/// `reference` and `label`.
fn item_key(row: &Row) -> Result<GroupKey, postgres::Error> {
    Ok(GroupKey::Item {
        id: group_name(row)?,
        reference: row.try_get("reference")?,
        name: row.try_get("label")?,
    })
}

/// A row of `grouped` with its labels, as a count of `by`.
fn request_count(row: &Row, by: Option<Dimension>) -> Result<RequestCount, postgres::Error> {
    let key = match by {
        None => GroupKey::Total,
        Some(Dimension::Agent) => GroupKey::Name(group_name(row)?),
        Some(Dimension::Site | Dimension::Fragment | Dimension::Card | Dimension::Key) => {
            item_key(row)?
        }
        Some(Dimension::Hour | Dimension::Day) => GroupKey::Start(row.try_get("start")?),
    };
    let reason: Reason = row.try_get("reason")?;
    Ok(RequestCount {
        key,
        ending: reason.ending,
        refused: reason.refused,
        purpose: row.try_get("purpose")?,
        requests: row.try_get("requests")?,
    })
}

/// Which days a query reads: with the site, fragment and card of each count (`report_days`),
/// or their totals only (`report_day_totals`, a few hundred rows a month).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Days {
    Keyed,
    Totals,
}

impl Days {
    /// The days a grouping `by` needs when nothing else is asked of a count.
    fn of(by: Option<Dimension>) -> Days {
        match by {
            Some(Dimension::Site | Dimension::Fragment | Dimension::Card) => Days::Keyed,
            None | Some(Dimension::Agent | Dimension::Hour | Dimension::Day | Dimension::Key) => {
                Days::Totals
            }
        }
    }

    fn table(self) -> &'static str {
        match self {
            Days::Keyed => "report_days",
            Days::Totals => "report_day_totals",
        }
    }
}

/// The counters a window reads: the minutes' and the hours' (every dimension), or the days'.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Table {
    Buckets,
    Days,
}

/// The SQL of a counter row's group: its name (`''` when the grouping has none) and its start.
fn key_sql(by: Option<Dimension>, table: Table) -> (&'static str, &'static str) {
    const NO_START: &str = "NULL::timestamptz";
    match by {
        None => ("''", NO_START),
        Some(Dimension::Site) => ("site", NO_START),
        Some(Dimension::Fragment) if table == Table::Days => ("fragment", NO_START),
        Some(Dimension::Fragment) => (
            "coalesce(nullif(resolved_fragment_id, ''), requested_fragment_id)",
            NO_START,
        ),
        Some(Dimension::Card) => ("card_id", NO_START),
        // Never read: a window by key reads no day (`Window::params`).
        Some(Dimension::Key) if table == Table::Days => ("''", NO_START),
        Some(Dimension::Key) => ("key_id", NO_START),
        Some(Dimension::Agent) => ("agent", NO_START),
        Some(Dimension::Hour) => (
            "''",
            "date_trunc('hour', bucket AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'",
        ),
        Some(Dimension::Day) => (
            "''",
            "date_trunc('day', bucket AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'",
        ),
    }
}

/// The organisation's page counts of the hours that start in `window`, by page (in byte
/// order) and purpose.
pub fn page_counts(
    db: &mut impl GenericClient,
    org_id: &str,
    window: Window,
) -> Result<Vec<PageCount>, postgres::Error> {
    let rows = db.query(
        "SELECT page, purpose, sum(requests)::int8 AS requests, sum(served)::int8 AS served
           FROM report_pages
          WHERE org_id = $1 AND hour >= $2 AND hour < $3
          GROUP BY page, purpose
          ORDER BY page COLLATE \"C\", purpose",
        &[&org_id, &window.since, &window.until],
    )?;
    rows.iter().map(page_count).collect()
}

/// The requests of one page not served, of one reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageReason {
    /// Host and canonical path, `(other pages)` or `(no page)`.
    pub page: String,
    /// A refusal's or a no-fill's.
    pub reason: Reason,
    pub requests: i64,
}

/// The organisation's requests not served in the hours that start in `window`, by page (in
/// byte order) and reason (`sql/018_page_reasons_time_zones.sql`).
pub fn page_reasons(
    db: &mut impl GenericClient,
    org_id: &str,
    window: Window,
) -> Result<Vec<PageReason>, postgres::Error> {
    let rows = db.query(
        "SELECT page, reason, sum(requests)::int8 AS requests
           FROM report_page_reasons
          WHERE org_id = $1 AND hour >= $2 AND hour < $3
          GROUP BY page, reason
          ORDER BY page COLLATE \"C\", reason",
        &[&org_id, &window.since, &window.until],
    )?;
    let page_reason = |row: &Row| {
        Ok(PageReason {
            page: row.try_get("page")?,
            reason: row.try_get("reason")?,
            requests: row.try_get("requests")?,
        })
    };
    rows.iter().map(page_reason).collect()
}

/// A page's requests and served requests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageTally {
    pub page: String,
    pub requests: i64,
    pub served: i64,
}

/// The top pages of a window ([`top_page_tallies`]) and what its page rows hold in all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopPages {
    /// Most requests first (ties in byte order).
    pub shown: Vec<PageTally>,
    /// Every page row of the window, by purpose (page `None`).
    pub written: Vec<PageCount>,
}

/// The `top` pages of the organisation with the most requests in the hours that start in
/// `window`, with their requests and served requests, and all its page counts by purpose,
/// summed in one pass.
pub fn top_page_tallies(
    db: &mut impl GenericClient,
    org_id: &str,
    window: Window,
    top: i64,
) -> Result<TopPages, postgres::Error> {
    let rows = db.query(
        "WITH sets AS MATERIALIZED (
             SELECT page, purpose, GROUPING(page) AS whole, sum(requests)::int8 AS requests,
                    sum(served)::int8 AS served
               FROM report_pages
              WHERE org_id = $1 AND hour >= $2 AND hour < $3
              GROUP BY GROUPING SETS ((page), (purpose)))
         (SELECT page, NULL AS purpose, requests, served
            FROM sets
           WHERE whole = 0
           ORDER BY requests DESC, page COLLATE \"C\"
           LIMIT $4)
         UNION ALL
         SELECT NULL, purpose, requests, served
           FROM sets
          WHERE whole = 1",
        &[&org_id, &window.since, &window.until, &top],
    )?;
    let mut written = Vec::new();
    let mut shown = Vec::new();
    for row in &rows {
        match row.try_get("page")? {
            None => written.push(page_count(row)?),
            Some(page) => shown.push(PageTally {
                page,
                requests: row.try_get("requests")?,
                served: row.try_get("served")?,
            }),
        }
    }
    // The order of the ranking, which the union does not keep.
    shown.sort_by(|a, b| (b.requests.cmp(&a.requests)).then_with(|| a.page.cmp(&b.page)));
    Ok(TopPages { shown, written })
}

/// A row of page counts: columns `page`, `purpose`, `requests` and `served`.
fn page_count(row: &Row) -> Result<PageCount, postgres::Error> {
    Ok(PageCount {
        page: row.try_get("page")?,
        purpose: row.try_get("purpose")?,
        requests: row.try_get("requests")?,
        served: row.try_get("served")?,
    })
}

/// The requests `card_id` served to the organisation in `window`, per UTC day (days without
/// any left out), in order.
pub fn served_by_card_per_day(
    db: &mut impl GenericClient,
    org_id: &str,
    card_id: &str,
    window: Window,
) -> Result<Vec<(SystemTime, i64)>, postgres::Error> {
    let by = Some(Dimension::Day);
    let query = format!(
        "WITH {counted}
         SELECT start, sum(requests)::int8 AS requests
           FROM counted GROUP BY start ORDER BY start",
        counted = counted_sql(by, Only::Card, Days::Keyed),
    );
    let params = window.params(org_id, by);
    let rows = db.query(&query, &params.with(&[&card_id]))?;
    let day = |row: &Row| Ok((row.try_get("start")?, row.try_get("requests")?));
    rows.iter().map(day).collect()
}

/// A page that got a card, from `report_card_pages`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardPage {
    /// Host and canonical path, `(other pages)` or `(no page)`.
    pub page: String,
    pub served: i64,
    /// The page's host when it is a site of the organisation.
    pub site: Option<String>,
}

/// The pages `card_id` served the organisation's requests on most in the hours that start in
/// `window`, most served first (ties by page in byte order), at most `limit`.
pub fn card_top_pages(
    db: &mut impl GenericClient,
    org_id: &str,
    card_id: &str,
    window: Window,
    limit: i64,
) -> Result<Vec<CardPage>, postgres::Error> {
    // The sites are looked up for the pages shown only.
    let rows = db.query(
        "WITH top AS (
             SELECT page, sum(served)::int8 AS served
               FROM report_card_pages
              WHERE org_id = $1 AND card_id = $2 AND hour >= $3 AND hour < $4
              GROUP BY page
              ORDER BY sum(served) DESC, page COLLATE \"C\"
              LIMIT $5)
         SELECT t.page, t.served, s.domain
           FROM top t
           LEFT JOIN sites s ON s.org_id = $1 AND s.domain = split_part(t.page, '/', 1)
          ORDER BY t.served DESC, t.page COLLATE \"C\"",
        &[&org_id, &card_id, &window.since, &window.until, &limit],
    )?;
    let card_page = |row: &Row| {
        Ok(CardPage {
            page: row.try_get("page")?,
            served: row.try_get("served")?,
            site: row.try_get("domain")?,
        })
    };
    rows.iter().map(card_page).collect()
}

/// The User-Agents that matched no marker on the days that start before `until` and end after
/// `since` (they are counted per UTC day), most requests first, at most `limit`.
pub fn unmatched_agents(
    db: &mut impl GenericClient,
    org_id: &str,
    window: Window,
    limit: i64,
) -> Result<Vec<(String, i64)>, postgres::Error> {
    let rows = db.query(
        "SELECT user_agent, sum(requests)::int8 AS requests
           FROM report_unmatched_agents
          WHERE org_id = $1
            AND day >= ($2::timestamptz AT TIME ZONE 'UTC')::date
            AND day::timestamp AT TIME ZONE 'UTC' < $3
          GROUP BY user_agent
          ORDER BY requests DESC, user_agent
          LIMIT $4",
        &[&org_id, &window.since, &window.until, &limit],
    )?;
    let agent = |row: &Row| Ok((row.try_get("user_agent")?, row.try_get("requests")?));
    rows.iter().map(agent).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(seconds: u64, nanos: u32) -> SystemTime {
        UNIX_EPOCH + Duration::new(seconds, nanos)
    }

    #[test]
    fn the_whole_days_of_a_window_are_those_it_holds_from_start_to_end() {
        let day = DAY.as_secs();
        let window = |since, until| Window { since, until }.whole_days();
        // From a midnight to a midnight: every day.
        assert_eq!(
            window(at(day, 0), at(3 * day, 0)),
            (at(day, 0), at(3 * day, 0))
        );
        // A second (or a nanosecond) after midnight to a second before: the day between.
        let (since, until) = (at(day, 1), at(4 * day - 1, 0));
        assert_eq!(window(since, until), (at(2 * day, 0), at(3 * day, 0)));
        let since = at(day, 1);
        assert_eq!(
            window(since, at(3 * day, 0)),
            (at(2 * day, 0), at(3 * day, 0))
        );
        let since = at(day, 0) + Duration::from_nanos(1);
        assert_eq!(
            window(since, at(3 * day, 0)),
            (at(2 * day, 0), at(3 * day, 0))
        );
        // Within a day, or across one midnight only: none, as an empty range at `until`.
        let until = at(day + 7200, 0);
        assert_eq!(window(at(day + 3600, 0), until), (until, until));
        let until = at(2 * day + 60, 0);
        assert_eq!(window(at(day + 60, 0), until), (until, until));
    }
}
