//! The reads of `agentcard admin report`: an organisation's `/fragment` requests over a window,
//! from the aggregates of `sql/005_report_aggregates.sql` (and a card's pages, of
//! `sql/010_report_card_pages.sql`).
//!
//! A window `[since, until)` counts each bucket whose start lies in it. Minutes past their
//! retention are rolled into hours and deleted, so no bucket is in both tables and a window
//! reads both: the minutes it holds, and the hours it holds once they are rolled up. Pages, and
//! a card's pages, are counted per hour. Every time is UTC; nothing depends on the session's
//! time zone.

use postgres::GenericClient;
use std::time::SystemTime;

/// The buckets that start at or after `since` and before `until`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub since: SystemTime,
    pub until: SystemTime,
}

/// What request counts are grouped by, besides outcome, reason and agent purpose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dimension {
    Site,
    /// The resolved fragment, else the requested one.
    Fragment,
    Card,
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
    /// The groups beyond the top ones ([`top_request_counts`]), together.
    Others,
}

/// The requests of one group with the same outcome, reason and agent purpose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestCount {
    pub key: GroupKey,
    /// `served`, `no_fill` or `refused`.
    pub outcome: String,
    pub reason: String,
    pub purpose: String,
    pub requests: i64,
}

/// The requests of one page (host and canonical path, `(other pages)` or `(no page)`) and
/// agent purpose, and how many of them were served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageCount {
    /// `None`: the pages beyond the top ones ([`top_page_counts`]), together.
    pub page: Option<String>,
    pub purpose: String,
    pub requests: i64,
    pub served: i64,
}

/// The organisation's requests in `window`, by outcome, reason, purpose and `by` (when some),
/// the groups in order: by start, else by name in byte order, those without one last.
pub fn request_counts(
    db: &mut impl GenericClient,
    org_id: &str,
    window: Window,
    by: Option<Dimension>,
) -> Result<Vec<RequestCount>, postgres::Error> {
    let query = format!(
        "{grouped}
         SELECT g.name, l.reference, g.start, g.outcome, g.reason, g.purpose, g.requests,
                l.label
           FROM grouped g
           LEFT JOIN LATERAL {labels} AS l(reference, label) ON true
          ORDER BY g.start, g.name = '', g.name COLLATE \"C\", g.outcome, g.reason, g.purpose",
        grouped = grouped_sql(by, ""),
        labels = labels_sql(by),
    );
    let rows = db.query(&query, &[&org_id, &window.since, &window.until])?;
    Ok(rows.iter().map(|row| request_count(row, by)).collect())
}

/// The organisation's requests in `window` by outcome, reason, purpose and `by` (a site, a
/// fragment or a card), for the `top` groups with the most requests only (ties in the order
/// of [`request_counts`]), in that order; then the other groups' requests together, by
/// outcome, reason and purpose, as [`GroupKey::Others`]. Grouped and ranked in the database,
/// names read for the top groups only: a month holds up to ~100 000 groups. `no_fill_only`:
/// of the requests answered without a card only.
pub fn top_request_counts(
    db: &mut impl GenericClient,
    org_id: &str,
    window: Window,
    by: Dimension,
    top: i64,
    no_fill_only: bool,
) -> Result<Vec<RequestCount>, postgres::Error> {
    let by = Some(by);
    let query = format!(
        "{grouped},
         ranked AS (
             SELECT name, row_number() OVER (
                        ORDER BY sum(requests) DESC, name = '', name COLLATE \"C\") AS rank
               FROM grouped
              GROUP BY name),
         shown AS (
             SELECT r.rank, g.name, g.start, g.outcome, g.reason, g.purpose, g.requests
               FROM grouped g JOIN ranked r USING (name)
              WHERE r.rank <= $4
             UNION ALL
             SELECT NULL, NULL, NULL, g.outcome, g.reason, g.purpose, sum(g.requests)::int8
               FROM grouped g JOIN ranked r USING (name)
              WHERE r.rank > $4
              GROUP BY g.outcome, g.reason, g.purpose)
         SELECT g.name, l.reference, g.start, g.outcome, g.reason, g.purpose, g.requests,
                l.label
           FROM shown g
           LEFT JOIN LATERAL {labels} AS l(reference, label) ON true
          ORDER BY g.rank NULLS LAST, g.outcome, g.reason, g.purpose",
        grouped = grouped_sql(
            by,
            if no_fill_only {
                "AND outcome = 'no_fill'"
            } else {
                ""
            }
        ),
        labels = labels_sql(by),
    );
    let rows = db.query(&query, &[&org_id, &window.since, &window.until, &top])?;
    Ok(rows
        .iter()
        .map(|row| match row.get::<_, Option<String>>(0) {
            None => RequestCount {
                key: GroupKey::Others,
                ..request_count(row, by)
            },
            Some(_) => request_count(row, by),
        })
        .collect())
}

/// The CTE `grouped`: the window's request counts by `by`'s name and start, outcome, reason
/// and purpose, from the minutes and the hours; `only`: more conditions on their rows.
fn grouped_sql(by: Option<Dimension>, only: &str) -> String {
    let (name, start) = key_sql(by);
    format!(
        "WITH counted AS (
             SELECT {name} AS name, {start} AS start, outcome, reason, purpose, requests
               FROM report_minutes
              WHERE org_id = $1 AND bucket >= $2 AND bucket < $3 {only}
             UNION ALL
             SELECT {name}, {start}, outcome, reason, purpose, requests
               FROM report_hours
              WHERE org_id = $1 AND bucket >= $2 AND bucket < $3 {only}),
         grouped AS (
             SELECT name, start, outcome, reason, purpose, sum(requests)::int8 AS requests
               FROM counted
              GROUP BY name, start, outcome, reason, purpose)"
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
        _ => "(SELECT NULL::text, NULL::text)",
    }
}

/// A row of `grouped` with its labels, as a count of `by`.
fn request_count(row: &postgres::Row, by: Option<Dimension>) -> RequestCount {
    let name = row
        .get::<_, Option<String>>(0)
        .filter(|name| !name.is_empty());
    let key = match by {
        None => GroupKey::Total,
        Some(Dimension::Agent) => GroupKey::Name(name),
        Some(Dimension::Site | Dimension::Fragment | Dimension::Card) => GroupKey::Item {
            id: name,
            reference: row.get(1),
            name: row.get(7),
        },
        Some(Dimension::Hour | Dimension::Day) => GroupKey::Start(row.get(2)),
    };
    RequestCount {
        key,
        outcome: row.get(3),
        reason: row.get(4),
        purpose: row.get(5),
        requests: row.get(6),
    }
}

/// The SQL of a bucket row's group: its name (`''` when the grouping has none) and its start.
fn key_sql(by: Option<Dimension>) -> (&'static str, &'static str) {
    const NO_START: &str = "NULL::timestamptz";
    match by {
        None => ("''", NO_START),
        Some(Dimension::Site) => ("site", NO_START),
        Some(Dimension::Fragment) => (
            "coalesce(nullif(resolved_fragment_id, ''), requested_fragment_id)",
            NO_START,
        ),
        Some(Dimension::Card) => ("card_id", NO_START),
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
        "SELECT page, purpose, sum(requests)::int8, sum(served)::int8
           FROM report_pages
          WHERE org_id = $1 AND hour >= $2 AND hour < $3
          GROUP BY page, purpose
          ORDER BY page COLLATE \"C\", purpose",
        &[&org_id, &window.since, &window.until],
    )?;
    Ok(rows.iter().map(page_count).collect())
}

/// The organisation's page counts of the hours that start in `window`, by page and purpose,
/// for the `top` pages with the most requests (ties in byte order), in that order; then the
/// other pages' counts together by purpose, with page `None`.
pub fn top_page_counts(
    db: &mut impl GenericClient,
    org_id: &str,
    window: Window,
    top: i64,
) -> Result<Vec<PageCount>, postgres::Error> {
    let rows = db.query(
        "WITH grouped AS (
             SELECT page, purpose, sum(requests)::int8 AS requests, sum(served)::int8 AS served
               FROM report_pages
              WHERE org_id = $1 AND hour >= $2 AND hour < $3
              GROUP BY page, purpose),
         ranked AS (
             SELECT page, row_number() OVER (
                        ORDER BY sum(requests) DESC, page COLLATE \"C\") AS rank
               FROM grouped
              GROUP BY page),
         shown AS (
             SELECT CASE WHEN r.rank <= $4 THEN r.rank END AS rank, g.*
               FROM grouped g JOIN ranked r USING (page))
         SELECT CASE WHEN rank IS NOT NULL THEN page END, purpose, sum(requests)::int8,
                sum(served)::int8
           FROM shown
          GROUP BY rank, 1, purpose
          ORDER BY rank NULLS LAST, purpose",
        &[&org_id, &window.since, &window.until, &top],
    )?;
    Ok(rows.iter().map(page_count).collect())
}

fn page_count(row: &postgres::Row) -> PageCount {
    PageCount {
        page: row.get(0),
        purpose: row.get(1),
        requests: row.get(2),
        served: row.get(3),
    }
}

/// The requests `card_id` served to the organisation in `window`, per UTC day (days without
/// any left out), in order.
pub fn served_by_card_per_day(
    db: &mut impl GenericClient,
    org_id: &str,
    card_id: &str,
    window: Window,
) -> Result<Vec<(SystemTime, i64)>, postgres::Error> {
    let rows = db.query(
        "WITH counted AS (
             SELECT bucket, requests FROM report_minutes
              WHERE org_id = $1 AND bucket >= $2 AND bucket < $3 AND card_id = $4
             UNION ALL
             SELECT bucket, requests FROM report_hours
              WHERE org_id = $1 AND bucket >= $2 AND bucket < $3 AND card_id = $4)
         SELECT date_trunc('day', bucket AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS day,
                sum(requests)::int8
           FROM counted
          GROUP BY day
          ORDER BY day",
        &[&org_id, &window.since, &window.until, &card_id],
    )?;
    Ok(rows.iter().map(|row| (row.get(0), row.get(1))).collect())
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
    Ok(rows
        .iter()
        .map(|row| CardPage {
            page: row.get(0),
            served: row.get(1),
            site: row.get(2),
        })
        .collect())
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
    Ok(rows.iter().map(|row| (row.get(0), row.get(1))).collect())
}
