//! The report's counters in PostgreSQL (`sql/005_report_aggregates.sql`,
//! `sql/010_report_card_pages.sql`, `sql/018_page_reasons_time_zones.sql`): one flush of an instance's counters added by upserts that
//! add, exactly once, and the roll-up that keeps the tables' size independent of the request
//! rate. `crate::db::reports` reads them. Also the live check's sample of each
//! organisation's last requests (`sql/017_report_samples.sql`), written with the flush.

use crate::domain::{Ending, Format, Lang, Purpose, Reason, Refused};
use postgres::{Client, GenericClient, Transaction};
use std::collections::HashSet;
use std::time::{Duration, SystemTime};

/// The page that stands for the pages past the bound of an organisation's hour.
pub const OTHER_PAGES: &str = "(other pages)";
/// The User-Agent that stands for those past the bound of an organisation's day.
pub const OTHER_USER_AGENTS: &str = "(other user agents)";

/// Requests of one minute with the same dimensions; `""` (stored for `None` too) where a
/// dimension does not apply. The ending is stored as its outcome and its reason (a refusal's
/// reason when refused).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestCount {
    pub minute: SystemTime,
    pub org_id: String,
    pub site: String,
    pub requested_fragment_id: String,
    pub resolved_fragment_id: String,
    pub card_id: String,
    pub key_id: String,
    pub lang: Option<Lang>,
    pub format: Option<Format>,
    pub ending: Ending,
    pub refused: Option<Refused>,
    /// The agent marker, or `none`.
    pub agent: String,
    pub purpose: Purpose,
    pub requests: i64,
}

/// Requests and served of one page (host + canonical path) and purpose in one hour.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageCount {
    pub hour: SystemTime,
    pub org_id: String,
    pub page: String,
    pub purpose: Purpose,
    pub requests: i64,
    pub served: i64,
}

/// Requests a card served on one page (host + canonical path) in one hour.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardPageCount {
    pub org_id: String,
    pub card_id: String,
    pub hour: SystemTime,
    pub page: String,
    pub served: i64,
}

/// Requests of one page (host + canonical path) not served, of one reason, in one hour.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageReasonCount {
    pub org_id: String,
    pub hour: SystemTime,
    pub page: String,
    /// A refusal's or a no-fill's.
    pub reason: Reason,
    pub requests: i64,
}

/// Requests of a User-Agent that matched no marker, in one day (its midnight, UTC).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnmatchedAgentCount {
    pub day: SystemTime,
    pub org_id: String,
    pub user_agent: String,
    pub requests: i64,
}

/// How many requests of an organisation the live check's sample keeps, the last ones.
pub const SAMPLES_KEPT: usize = 50;

/// A request of an organisation kept for the live check, at a whole second.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sample {
    pub org_id: String,
    pub at: SystemTime,
    /// The agent marker, or `none`.
    pub agent: String,
    /// Host and canonical path, or `(no page)`.
    pub page: String,
    pub status: u16,
    /// Of a refusal or a no-fill; `None` when served.
    pub reason: Option<Reason>,
}

/// What one flush adds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Flush {
    pub requests: Vec<RequestCount>,
    pub pages: Vec<PageCount>,
    /// The served requests of `pages`, per card (the pages named as in `pages`).
    pub card_pages: Vec<CardPageCount>,
    /// The requests of `pages` not served, per reason (the pages named as in `pages`).
    pub page_reasons: Vec<PageReasonCount>,
    pub unmatched_agents: Vec<UnmatchedAgentCount>,
    /// At most one per second and organisation.
    pub samples: Vec<Sample>,
}

impl RequestCount {
    /// Its key in `report_minutes`, in the order of the table's primary key.
    fn key(&self) -> (&str, SystemTime, [&str; 11]) {
        let dimensions = [
            &*self.site,
            &self.requested_fragment_id,
            &self.resolved_fragment_id,
            &self.card_id,
            &self.key_id,
            self.lang.map_or("", Lang::as_str),
            self.format.map_or("", Format::as_str),
            self.ending.outcome().as_str(),
            self.reason().as_str(),
            &self.agent,
            self.purpose.as_str(),
        ];
        (&self.org_id, self.minute, dimensions)
    }

    fn reason(&self) -> Reason {
        Reason {
            ending: self.ending,
            refused: self.refused,
        }
    }
}

impl Flush {
    pub fn is_empty(&self) -> bool {
        self.keys() == 0
    }

    /// How many counters it holds.
    pub fn keys(&self) -> usize {
        self.requests.len()
            + self.pages.len()
            + self.card_pages.len()
            + self.page_reasons.len()
            + self.unmatched_agents.len()
            + self.samples.len()
    }
}

/// How many distinct pages an organisation's hour keeps, and User-Agents its day.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    pub pages_per_hour: usize,
    pub unmatched_agents_per_day: usize,
}

/// The outcome of [`apply_flush`].
#[derive(Debug, PartialEq, Eq)]
pub enum Applied {
    /// This flush had been applied already (a retry after an unknown outcome): nothing added.
    Before,
    /// Added now, except the counters PostgreSQL refused, one by one (to keep and log).
    Now { refused: Flush },
}

/// The report's own connection: times in UTC, and a statement given up past
/// `statement_timeout` (a flush may take longer than a management query).
pub fn connect(database_url: &str, statement_timeout: Duration) -> Result<Client, postgres::Error> {
    let mut client = super::connect(database_url)?;
    client.batch_execute(&format!(
        "SET TIME ZONE 'UTC'; SET statement_timeout = {}",
        statement_timeout.as_millis()
    ))?;
    Ok(client)
}

/// Adds one flush of instance `instance_id`, numbered `seq`, in one transaction. A flush
/// already applied adds nothing, so a retry after a lost answer never counts twice. A counter
/// PostgreSQL refuses is isolated (the others are written) and handed back: each table's rows
/// are first written together; only when PostgreSQL refuses some, the flush is written again,
/// each table's rows in savepoints (see [`isolating`]).
pub fn apply_flush(
    db: &mut Client,
    instance_id: &str,
    seq: i64,
    flush: &Flush,
    bounds: Bounds,
) -> Result<Applied, postgres::Error> {
    match apply(db, instance_id, seq, flush, bounds, Rows::Together) {
        Err(error) if is_refusal_of_data(&error) => {
            apply(db, instance_id, seq, flush, bounds, Rows::Isolated)
        }
        outcome => outcome,
    }
}

/// How a table's rows are written: in one statement, or isolating those PostgreSQL refuses.
#[derive(Debug, Clone, Copy)]
enum Rows {
    Together,
    Isolated,
}

fn apply(
    db: &mut Client,
    instance_id: &str,
    seq: i64,
    flush: &Flush,
    bounds: Bounds,
    rows: Rows,
) -> Result<Applied, postgres::Error> {
    let mut tx = db.transaction()?;
    let first_time = tx.execute(
        "INSERT INTO report_flushes (instance_id, seq) VALUES ($1, $2) ON CONFLICT DO NOTHING",
        &[&instance_id, &seq],
    )? == 1;
    if !first_time {
        return Ok(Applied::Before);
    }
    let pages = bounded(&mut tx, &flush.pages, bounds.pages_per_hour)?;
    let agents = bounded(
        &mut tx,
        &flush.unmatched_agents,
        bounds.unmatched_agents_per_day,
    )?;
    let requests = rows.write(&mut tx, &flush.requests, add_requests)?;
    let refused_pages = rows.write(&mut tx, &pages, add_pages)?;
    // After the pages: a card's or a reason's page not in this flush is looked up among those
    // written.
    let card_pages = named_as_pages(&mut tx, &flush.card_pages, &flush.pages, &pages)?;
    let page_reasons = named_as_pages(&mut tx, &flush.page_reasons, &flush.pages, &pages)?;
    let refused = Flush {
        requests,
        pages: refused_pages,
        card_pages: rows.write(&mut tx, &card_pages, add_card_pages)?,
        page_reasons: rows.write(&mut tx, &page_reasons, add_page_reasons)?,
        unmatched_agents: rows.write(&mut tx, &agents, add_unmatched_agents)?,
        samples: rows
            .write(
                &mut tx,
                &with_instance(&flush.samples, instance_id),
                add_samples,
            )?
            .into_iter()
            .map(|(sample, _)| sample)
            .collect(),
    };
    keep_last_samples(&mut tx, &flush.samples)?;
    touch_keys(&mut tx, &flush.requests)?;
    tx.commit()?;
    Ok(Applied::Now { refused })
}

/// A table's writer: adds `rows` in one statement (all or nothing).
type Write<T> = fn(&mut Transaction, &[T]) -> Result<(), postgres::Error>;

impl Rows {
    /// Writes `rows` with `write`; the rows PostgreSQL refused (none when together: a refusal
    /// is an error then).
    fn write<T: Clone>(
        self,
        tx: &mut Transaction,
        rows: &[T],
        write: Write<T>,
    ) -> Result<Vec<T>, postgres::Error> {
        match self {
            _ if rows.is_empty() => Ok(Vec::new()),
            Rows::Together => write(tx, rows).map(|()| Vec::new()),
            Rows::Isolated => isolating(tx, rows, write),
        }
    }
}

/// Writes `rows` with `write` inside a savepoint; when PostgreSQL refuses the data (not the
/// connection), writes each half again the same way, down to the single rows it refuses, which
/// it returns.
fn isolating<T: Clone>(
    tx: &mut Transaction,
    rows: &[T],
    write: Write<T>,
) -> Result<Vec<T>, postgres::Error> {
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    let mut attempt = tx.transaction()?;
    match write(&mut attempt, rows) {
        Ok(()) => {
            attempt.commit()?;
            Ok(Vec::new())
        }
        Err(error) if is_refusal_of_data(&error) => {
            attempt.rollback()?;
            if rows.len() == 1 {
                return Ok(rows.to_vec());
            }
            let (left, right) = rows.split_at(rows.len() / 2);
            let mut refused = isolating(tx, left, write)?;
            refused.extend(isolating(tx, right, write)?);
            Ok(refused)
        }
        Err(error) => Err(error),
    }
}

/// An error about the values sent (bad text, out of range, a constraint, a key twice in one
/// statement), as opposed to the connection or the server's state: only those are worth
/// isolating row by row.
fn is_refusal_of_data(error: &postgres::Error) -> bool {
    error
        .as_db_error()
        .is_some_and(|db| matches!(&db.code().code()[..2], "21" | "22" | "23"))
}

fn add_requests(tx: &mut Transaction, rows: &[RequestCount]) -> Result<(), postgres::Error> {
    let rows = in_order(rows, RequestCount::key);
    let column =
        |get: fn(&RequestCount) -> &str| -> Vec<&str> { rows.iter().map(|r| get(r)).collect() };
    let minutes: Vec<SystemTime> = rows.iter().map(|r| r.minute).collect();
    let requests: Vec<i64> = rows.iter().map(|r| r.requests).collect();
    tx.execute(
        "INSERT INTO report_minutes (bucket, org_id, site, requested_fragment_id,
                resolved_fragment_id, card_id, key_id, lang, format, outcome, reason, agent,
                purpose, requests)
         SELECT * FROM unnest($1::timestamptz[], $2::text[], $3::text[], $4::text[], $5::text[],
                $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[],
                $12::text[], $13::text[], $14::bigint[])
         ON CONFLICT (org_id, bucket, site, requested_fragment_id, resolved_fragment_id,
                card_id, key_id, lang, format, outcome, reason, agent, purpose)
         DO UPDATE SET requests = report_minutes.requests + excluded.requests",
        &[
            &minutes,
            &column(|r| &r.org_id),
            &column(|r| &r.site),
            &column(|r| &r.requested_fragment_id),
            &column(|r| &r.resolved_fragment_id),
            &column(|r| &r.card_id),
            &column(|r| &r.key_id),
            &column(|r| r.lang.map_or("", Lang::as_str)),
            &column(|r| r.format.map_or("", Format::as_str)),
            &column(|r| r.ending.outcome().as_str()),
            &column(|r| r.reason().as_str()),
            &column(|r| &r.agent),
            &column(|r| r.purpose.as_str()),
            &requests,
        ],
    )?;
    Ok(())
}

/// `rows` in the order of `key` (their table's primary key): instances flushing at once lock
/// the counters they share in the same order, so that neither waits for the other in a cycle
/// (a deadlock, which PostgreSQL breaks by failing one of the flushes after a second).
fn in_order<'r, T, K: Ord>(rows: &'r [T], key: impl Fn(&'r T) -> K) -> Vec<&'r T> {
    let mut ordered: Vec<&T> = rows.iter().collect();
    ordered.sort_by_cached_key(|row| key(row));
    ordered
}

/// The samples with the instance that kept them (their rows' key: one a second per instance).
fn with_instance(samples: &[Sample], instance_id: &str) -> Vec<(Sample, String)> {
    let instance = |sample: &Sample| (sample.clone(), instance_id.to_string());
    samples.iter().map(instance).collect()
}

fn add_samples(tx: &mut Transaction, rows: &[(Sample, String)]) -> Result<(), postgres::Error> {
    let orgs: Vec<&str> = rows.iter().map(|(s, _)| s.org_id.as_str()).collect();
    let at: Vec<SystemTime> = rows.iter().map(|(s, _)| s.at).collect();
    let instances: Vec<&str> = rows.iter().map(|(_, i)| i.as_str()).collect();
    let agents: Vec<&str> = rows.iter().map(|(s, _)| s.agent.as_str()).collect();
    let pages: Vec<&str> = rows.iter().map(|(s, _)| s.page.as_str()).collect();
    let statuses: Vec<i16> = (rows.iter())
        .map(|(s, _)| i16::try_from(s.status).unwrap_or(i16::MAX))
        .collect();
    let reasons: Vec<Option<Reason>> = rows.iter().map(|(s, _)| s.reason).collect();
    tx.execute(
        "INSERT INTO report_samples (org_id, at, instance_id, agent, page, status, reason)
         SELECT * FROM unnest($1::text[], $2::timestamptz[], $3::text[], $4::text[],
                $5::text[], $6::smallint[], $7::text[])
         ON CONFLICT DO NOTHING",
        &[&orgs, &at, &instances, &agents, &pages, &statuses, &reasons],
    )?;
    Ok(())
}

/// Deletes the samples of the organisations of `samples` past their last [`SAMPLES_KEPT`].
fn keep_last_samples(tx: &mut Transaction, samples: &[Sample]) -> Result<(), postgres::Error> {
    let orgs: HashSet<&str> = samples.iter().map(|s| s.org_id.as_str()).collect();
    if orgs.is_empty() {
        return Ok(());
    }
    let orgs: Vec<&str> = orgs.into_iter().collect();
    tx.execute(
        "DELETE FROM report_samples
          WHERE (org_id, at, instance_id) IN (
                SELECT org_id, at, instance_id
                  FROM (SELECT org_id, at, instance_id,
                               row_number() OVER (PARTITION BY org_id
                                                  ORDER BY at DESC, instance_id) AS place
                          FROM report_samples
                         WHERE org_id = ANY($1)) ranked
                 WHERE place > $2)",
        &[&orgs, &(SAMPLES_KEPT as i64)],
    )?;
    Ok(())
}

/// The last `limit` samples of an organisation, the latest first.
pub fn samples(
    db: &mut impl GenericClient,
    org_id: &str,
    limit: i64,
) -> Result<Vec<Sample>, postgres::Error> {
    let rows = db.query(
        "SELECT org_id, at, agent, page, status, reason FROM report_samples
          WHERE org_id = $1 ORDER BY at DESC, instance_id LIMIT $2",
        &[&org_id, &limit],
    )?;
    rows.iter()
        .map(|row| {
            Ok(Sample {
                org_id: row.try_get("org_id")?,
                at: row.try_get("at")?,
                agent: row.try_get("agent")?,
                page: row.try_get("page")?,
                status: u16::try_from(row.try_get::<_, i16>("status")?).unwrap_or_default(),
                reason: row.try_get("reason")?,
            })
        })
        .collect()
}

fn add_pages(tx: &mut Transaction, rows: &[PageCount]) -> Result<(), postgres::Error> {
    let rows = in_order(rows, |r| (&r.org_id, r.hour, &r.page, r.purpose.as_str()));
    let hours: Vec<SystemTime> = rows.iter().map(|r| r.hour).collect();
    let orgs: Vec<&str> = rows.iter().map(|r| r.org_id.as_str()).collect();
    let pages: Vec<&str> = rows.iter().map(|r| r.page.as_str()).collect();
    let purposes: Vec<&str> = rows.iter().map(|r| r.purpose.as_str()).collect();
    let requests: Vec<i64> = rows.iter().map(|r| r.requests).collect();
    let served: Vec<i64> = rows.iter().map(|r| r.served).collect();
    tx.execute(
        "INSERT INTO report_pages (hour, org_id, page, purpose, requests, served)
         SELECT * FROM unnest($1::timestamptz[], $2::text[], $3::text[], $4::text[],
                $5::bigint[], $6::bigint[])
         ON CONFLICT (org_id, hour, page, purpose) DO UPDATE
            SET requests = report_pages.requests + excluded.requests,
                served = report_pages.served + excluded.served",
        &[&hours, &orgs, &pages, &purposes, &requests, &served],
    )?;
    Ok(())
}

fn add_card_pages(tx: &mut Transaction, rows: &[CardPageCount]) -> Result<(), postgres::Error> {
    let orgs: Vec<&str> = rows.iter().map(|r| r.org_id.as_str()).collect();
    let cards: Vec<&str> = rows.iter().map(|r| r.card_id.as_str()).collect();
    let hours: Vec<SystemTime> = rows.iter().map(|r| r.hour).collect();
    let pages: Vec<&str> = rows.iter().map(|r| r.page.as_str()).collect();
    let served: Vec<i64> = rows.iter().map(|r| r.served).collect();
    tx.execute(
        "INSERT INTO report_card_pages (org_id, card_id, hour, page, served)
         SELECT * FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::text[],
                $5::bigint[])
         ON CONFLICT (org_id, card_id, hour, page) DO UPDATE
            SET served = report_card_pages.served + excluded.served",
        &[&orgs, &cards, &hours, &pages, &served],
    )?;
    Ok(())
}

fn add_page_reasons(tx: &mut Transaction, rows: &[PageReasonCount]) -> Result<(), postgres::Error> {
    let hours: Vec<SystemTime> = rows.iter().map(|r| r.hour).collect();
    let orgs: Vec<&str> = rows.iter().map(|r| r.org_id.as_str()).collect();
    let pages: Vec<&str> = rows.iter().map(|r| r.page.as_str()).collect();
    let reasons: Vec<&str> = rows.iter().map(|r| r.reason.as_str()).collect();
    let requests: Vec<i64> = rows.iter().map(|r| r.requests).collect();
    tx.execute(
        "INSERT INTO report_page_reasons (hour, org_id, page, reason, requests)
         SELECT * FROM unnest($1::timestamptz[], $2::text[], $3::text[], $4::text[],
                $5::bigint[])
         ON CONFLICT (org_id, hour, page, reason) DO UPDATE
            SET requests = report_page_reasons.requests + excluded.requests",
        &[&hours, &orgs, &pages, &reasons, &requests],
    )?;
    Ok(())
}

fn add_unmatched_agents(
    tx: &mut Transaction,
    rows: &[UnmatchedAgentCount],
) -> Result<(), postgres::Error> {
    let rows = in_order(rows, |r| (&r.org_id, r.day, &r.user_agent));
    let days: Vec<SystemTime> = rows.iter().map(|r| r.day).collect();
    let orgs: Vec<&str> = rows.iter().map(|r| r.org_id.as_str()).collect();
    let agents: Vec<&str> = rows.iter().map(|r| r.user_agent.as_str()).collect();
    let requests: Vec<i64> = rows.iter().map(|r| r.requests).collect();
    tx.execute(
        "INSERT INTO report_unmatched_agents (day, org_id, user_agent, requests)
         SELECT (d AT TIME ZONE 'UTC')::date, o, a, n
           FROM unnest($1::timestamptz[], $2::text[], $3::text[], $4::bigint[]) AS t(d, o, a, n)
         ON CONFLICT (org_id, day, user_agent) DO UPDATE
            SET requests = report_unmatched_agents.requests + excluded.requests",
        &[&days, &orgs, &agents, &requests],
    )?;
    Ok(())
}

/// A counter kept per name (a page, a User-Agent) within an organisation's bucket (an hour, a
/// day), at most so many names a bucket.
trait Named: Clone {
    /// What locks its buckets; which of the names `$3` a bucket (`$1`, `$2`) holds already (an
    /// index lookup); how many names it holds, `$3` aside (a scan, only when a name is new).
    const KIND: &'static str;
    const KNOWN: &'static str;
    const COUNT: &'static str;
    const OTHER: &'static str;
    fn bucket(&self) -> (&str, SystemTime);
    fn name(&self) -> &str;
    fn rename_other(&mut self);
    fn requests(&self) -> i64;
    /// Adds `other`'s counts when it has the same key; `false` otherwise.
    fn absorb(&mut self, other: &Self) -> bool;
}

impl Named for PageCount {
    const KIND: &'static str = "pages";
    const KNOWN: &'static str = "SELECT DISTINCT page FROM report_pages
          WHERE org_id = $1 AND hour = $2 AND page = ANY($3)";
    const COUNT: &'static str = "SELECT count(DISTINCT page) FROM report_pages
          WHERE org_id = $1 AND hour = $2 AND page <> $3";
    const OTHER: &'static str = OTHER_PAGES;
    fn bucket(&self) -> (&str, SystemTime) {
        (&self.org_id, self.hour)
    }
    fn name(&self) -> &str {
        &self.page
    }
    fn rename_other(&mut self) {
        self.page = OTHER_PAGES.to_string();
    }
    fn requests(&self) -> i64 {
        self.requests
    }
    fn absorb(&mut self, other: &Self) -> bool {
        let same = (&self.org_id, self.hour, &self.page, &self.purpose)
            == (&other.org_id, other.hour, &other.page, &other.purpose);
        if same {
            self.requests += other.requests;
            self.served += other.served;
        }
        same
    }
}

impl Named for UnmatchedAgentCount {
    const KIND: &'static str = "agents";
    const KNOWN: &'static str = "SELECT DISTINCT user_agent FROM report_unmatched_agents
          WHERE org_id = $1 AND day = ($2::timestamptz AT TIME ZONE 'UTC')::date
            AND user_agent = ANY($3)";
    const COUNT: &'static str = "SELECT count(DISTINCT user_agent) FROM report_unmatched_agents
          WHERE org_id = $1 AND day = ($2::timestamptz AT TIME ZONE 'UTC')::date
            AND user_agent <> $3";
    const OTHER: &'static str = OTHER_USER_AGENTS;
    fn bucket(&self) -> (&str, SystemTime) {
        (&self.org_id, self.day)
    }
    fn name(&self) -> &str {
        &self.user_agent
    }
    fn rename_other(&mut self) {
        self.user_agent = OTHER_USER_AGENTS.to_string();
    }
    fn requests(&self) -> i64 {
        self.requests
    }
    fn absorb(&mut self, other: &Self) -> bool {
        let same = (&self.org_id, self.day, &self.user_agent)
            == (&other.org_id, other.day, &other.user_agent);
        if same {
            self.requests += other.requests;
        }
        same
    }
}

/// The counters, those past the bound of their bucket renamed `T::OTHER`. Names already stored
/// keep their row; new ones are admitted, most requested first, while the bucket has room. The
/// bucket is locked meanwhile, so instances flushing at once cannot overshoot the bound
/// together.
fn bounded<T: Named>(
    tx: &mut Transaction,
    counters: &[T],
    bound: usize,
) -> Result<Vec<T>, postgres::Error> {
    let mut out = counters.to_vec();
    let mut buckets: Vec<(String, SystemTime)> = out
        .iter()
        .map(|c| (c.bucket().0.to_string(), c.bucket().1))
        .collect();
    buckets.sort();
    buckets.dedup();
    for (org_id, at) in buckets {
        lock_bucket(tx, T::KIND, &org_id, at)?;
        let in_bucket: Vec<usize> = (0..out.len())
            .filter(|&i| out[i].bucket() == (org_id.as_str(), at))
            .collect();
        let names: Vec<&str> = in_bucket.iter().map(|&i| out[i].name()).collect();
        let known: Vec<String> = tx
            .query(T::KNOWN, &[&org_id, &at, &names])?
            .iter()
            .map(|row| row.get(0))
            .collect();
        let is_new = |name: &&str| *name != T::OTHER && !known.iter().any(|k| k == name);
        if !names.iter().any(is_new) {
            continue;
        }
        let stored: i64 = tx.query_one(T::COUNT, &[&org_id, &at, &T::OTHER])?.get(0);
        let mut room = bound.saturating_sub(stored as usize);
        let mut admitted = known;
        let mut order = in_bucket;
        order.sort_by_key(|&i| std::cmp::Reverse(out[i].requests()));
        for i in order {
            let name = out[i].name();
            if name == T::OTHER || admitted.iter().any(|a| a == name) {
                continue;
            }
            if room > 0 {
                room -= 1;
                admitted.push(name.to_string());
            } else {
                out[i].rename_other();
            }
        }
    }
    Ok(merged(out))
}

/// Counters with equal keys (after renaming) added into one. Only the "other" entries can
/// share a key (every other name came once per bucket), so only they are compared.
fn merged<T: Named>(counters: Vec<T>) -> Vec<T> {
    let (others, mut merged): (Vec<T>, Vec<T>) =
        counters.into_iter().partition(|c| c.name() == T::OTHER);
    let first_other = merged.len();
    for counter in others {
        if !merged[first_other..].iter_mut().any(|m| m.absorb(&counter)) {
            merged.push(counter);
        }
    }
    merged
}

/// A counter of a page that `report_pages` names, kept beside it (a card's, a reason's).
trait OfPage: Clone {
    /// Its organisation, hour and page.
    fn page(&self) -> (&str, SystemTime, &str);
    fn rename_other(&mut self);
    /// Its key: its organisation, what it counts (a card, a reason), hour and page.
    fn key(&self) -> (&str, &str, SystemTime, &str);
    /// Adds `other`'s count, of the same key.
    fn absorb(&mut self, other: &Self);
}

impl OfPage for CardPageCount {
    fn page(&self) -> (&str, SystemTime, &str) {
        (&self.org_id, self.hour, &self.page)
    }
    fn rename_other(&mut self) {
        self.page = OTHER_PAGES.to_string();
    }
    fn key(&self) -> (&str, &str, SystemTime, &str) {
        (&self.org_id, &self.card_id, self.hour, &self.page)
    }
    fn absorb(&mut self, other: &Self) {
        self.served += other.served;
    }
}

impl OfPage for PageReasonCount {
    fn page(&self) -> (&str, SystemTime, &str) {
        (&self.org_id, self.hour, &self.page)
    }
    fn rename_other(&mut self) {
        self.page = OTHER_PAGES.to_string();
    }
    fn key(&self) -> (&str, &str, SystemTime, &str) {
        (&self.org_id, self.reason.as_str(), self.hour, &self.page)
    }
    fn absorb(&mut self, other: &Self) {
        self.requests += other.requests;
    }
}

/// The rows of `of_pages` (a card's, a reason's), each page named as [`bounded`] named its
/// page row (`sent` before, `kept` after): past the bound of its hour, a page is `(other
/// pages)` for them too. A page no row of `sent` names (a refused row tried again alone) keeps
/// its name when `report_pages` holds it, else is `(other pages)`.
fn named_as_pages<T: OfPage>(
    tx: &mut Transaction,
    of_pages: &[T],
    sent: &[PageCount],
    kept: &[PageCount],
) -> Result<Vec<T>, postgres::Error> {
    let (sent, kept) = (page_names(sent), page_names(kept));
    let mut out = of_pages.to_vec();
    for row in &mut out {
        let name = row.page();
        let renamed = if name.2 == OTHER_PAGES || kept.contains(&name) {
            false
        } else if sent.contains(&name) {
            true
        } else {
            let (org_id, hour, page) = name;
            let stored = tx.query_opt(
                "SELECT 1 FROM report_pages WHERE org_id = $1 AND hour = $2 AND page = $3 LIMIT 1",
                &[&org_id, &hour, &page],
            )?;
            stored.is_none()
        };
        if renamed {
            row.rename_other();
        }
    }
    // Pages renamed alike add into one row: an upsert may not touch a row twice.
    out.sort_by(|a, b| a.key().cmp(&b.key()));
    out.dedup_by(|later, first| {
        let same = later.key() == first.key();
        if same {
            first.absorb(later);
        }
        same
    });
    Ok(out)
}

fn page_names(pages: &[PageCount]) -> HashSet<(&str, SystemTime, &str)> {
    (pages.iter())
        .map(|p| (p.org_id.as_str(), p.hour, p.page.as_str()))
        .collect()
}

/// Serialises the writers of one organisation's bucket until the transaction ends.
fn lock_bucket(
    tx: &mut Transaction,
    kind: &str,
    org_id: &str,
    bucket: SystemTime,
) -> Result<(), postgres::Error> {
    tx.execute(
        "SELECT pg_advisory_xact_lock(hashtextextended($1 || ' ' || $2 || ' ' || $3::timestamptz::text, 0))",
        &[&kind, &org_id, &bucket],
    )?;
    Ok(())
}

/// The delivery keys the flush counted: their `last_used_at`, at most once a minute (each
/// update is a new row version; a flush comes every few seconds).
fn touch_keys(tx: &mut Transaction, requests: &[RequestCount]) -> Result<(), postgres::Error> {
    let mut keys: Vec<&str> = requests
        .iter()
        .map(|r| r.key_id.as_str())
        .filter(|k| !k.is_empty())
        .collect();
    keys.sort_unstable();
    keys.dedup();
    if !keys.is_empty() {
        tx.execute(
            "UPDATE delivery_keys SET last_used_at = now()
              WHERE id = ANY($1)
                AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')",
            &[&keys],
        )?;
    }
    Ok(())
}

/// How long each table keeps its rows.
#[derive(Debug, Clone, Copy)]
pub struct Retention {
    /// Minute buckets; older whole hours are rolled into `report_hours`.
    pub minutes: Duration,
    /// Hours, pages (cards' pages too) and unmatched User-Agents.
    pub hours: Duration,
}

/// Flush records are needed only while an instance may retry a flush, seconds after it.
const FLUSH_RECORDS_KEPT: Duration = Duration::from_secs(24 * 3600);

/// Rolls the minutes of every whole hour older than `retention.minutes` into hours (their
/// sums; the database adds them to their days), and deletes what is older than
/// `retention.hours`. One instance at a time does it;
/// `false` when another was doing it.
pub fn roll_up(db: &mut Client, retention: Retention) -> Result<bool, postgres::Error> {
    let mut tx = db.transaction()?;
    let ours: bool = tx
        .query_one(
            "SELECT pg_try_advisory_xact_lock(hashtext('report roll-up'))",
            &[],
        )?
        .get(0);
    if !ours {
        return Ok(false);
    }
    let minutes_cutoff = SystemTime::now() - retention.minutes;
    let cutoff = SystemTime::now() - retention.hours;
    let flushes_cutoff = SystemTime::now() - FLUSH_RECORDS_KEPT;
    tx.execute(
        "WITH moved AS (
             DELETE FROM report_minutes
              WHERE bucket < date_trunc('hour', $1::timestamptz AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
             RETURNING *)
         INSERT INTO report_hours
         SELECT date_trunc('hour', bucket AT TIME ZONE 'UTC') AT TIME ZONE 'UTC', org_id, site,
                requested_fragment_id, resolved_fragment_id, card_id, key_id, lang, format,
                outcome, reason, agent, purpose, sum(requests)
           FROM moved
          GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13
         ON CONFLICT (org_id, bucket, site, requested_fragment_id, resolved_fragment_id,
                card_id, key_id, lang, format, outcome, reason, agent, purpose)
         DO UPDATE SET requests = report_hours.requests + excluded.requests",
        &[&minutes_cutoff],
    )?;
    tx.execute("DELETE FROM report_hours WHERE bucket < $1", &[&cutoff])?;
    // A day goes once all its hours have.
    for days in ["report_days", "report_day_totals"] {
        let query = format!("DELETE FROM {days} WHERE bucket + interval '1 day' <= $1");
        tx.execute(&query, &[&cutoff])?;
    }
    tx.execute("DELETE FROM report_pages WHERE hour < $1", &[&cutoff])?;
    tx.execute("DELETE FROM report_card_pages WHERE hour < $1", &[&cutoff])?;
    tx.execute(
        "DELETE FROM report_page_reasons WHERE hour < $1",
        &[&cutoff],
    )?;
    tx.execute(
        "DELETE FROM report_unmatched_agents WHERE day < ($1::timestamptz AT TIME ZONE 'UTC')::date",
        &[&cutoff],
    )?;
    tx.execute(
        "DELETE FROM report_flushes WHERE at < $1",
        &[&flushes_cutoff],
    )?;
    tx.commit()?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(page: &str, requests: i64) -> PageCount {
        PageCount {
            hour: SystemTime::UNIX_EPOCH,
            org_id: "acc_1".into(),
            page: page.into(),
            purpose: Purpose::None,
            requests,
            served: 1,
        }
    }

    #[test]
    fn pages_renamed_to_the_same_name_merge_their_counts() {
        let merged = merged(vec![
            page("a", 2),
            page(OTHER_PAGES, 3),
            page(OTHER_PAGES, 4),
        ]);
        assert_eq!(
            merged,
            vec![
                page("a", 2),
                PageCount {
                    served: 2,
                    ..page(OTHER_PAGES, 7)
                }
            ]
        );
    }
}
