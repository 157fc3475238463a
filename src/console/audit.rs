//! The audit log page, for every member: the organisation's writes, newest first, from the
//! console, `/v1` and the CLI alike, in words (`ops::audit`): the operation with each change
//! before → after, the object by the name it had then with a link to its page where it still
//! has one, the actor as an email, a token's name and prefix, or "command line". Filtered by
//! actor (whatever its case) and by a range of days (UTC), 100 entries a page by default with
//! a link to the older ones back to the first; the whole range downloadable as CSV. The log
//! holds no secret, so neither does the page.

use super::answers;
use super::context::{Answer, PageContext};
use super::inputs::{Input, InputKind};
use super::layout::Layout;
use super::refusal::PageRefusal;
use crate::error::ApiError;
use crate::http::Response;
use crate::ops::audit::{self, Entry, Page, Query};
use askama::Template;
use jiff::civil::Date;
use jiff::tz::TimeZone;
use std::time::SystemTime;

/// How many entries a page shows: 100 unless asked.
const LIMITS: [u32; 3] = [100, 500, 2000];

#[derive(Template)]
#[template(path = "console/audit.html")]
pub struct AuditPage {
    pub layout: Layout,
    pub actor: Input,
    /// From and to, each a day (UTC), both included.
    pub dates: [Input; 2],
    pub limits: [u32; 3],
    pub limit: u32,
    pub entries: Vec<Shown>,
    /// The page of the entries older than these, when there are.
    pub older: Option<String>,
    /// The first page of the same filter, when this one is not it.
    pub newest: Option<String>,
    /// Every entry of the filter's range as CSV: its query on `/audit.csv`.
    pub csv: String,
}

/// An entry as the page shows it.
pub struct Shown {
    pub at: String,
    pub who: String,
    pub what: String,
    pub object: String,
    /// The object's page, where it has one.
    pub href: Option<String>,
}

impl Shown {
    fn of(entry: &Entry) -> Shown {
        let row = &entry.row;
        Shown {
            at: row.at.clone(),
            who: entry.who(),
            what: entry.what(),
            object: entry.object(),
            href: object_page(&row.object_kind, &row.object, row.object_exists),
        }
    }
}

/// The console's page of an object of the log, for the kinds that have one: a card's or a
/// site's own page while it `exists`, the list of delivery keys.
fn object_page(kind: &str, id: &str, exists: bool) -> Option<String> {
    match (kind, exists) {
        ("card", true) => Some(format!("/cards/{id}")),
        ("site", true) => Some(format!("/sites/{id}")),
        ("key", _) => Some("/keys".into()),
        _ => None,
    }
}

/// The filter form as sent, and the query it makes; `None` when a field is refused (shown next
/// to it, and nothing is read).
struct Filter {
    actor: Input,
    from: Input,
    to: Input,
    limit: u32,
    /// The cursor of an older page: the entries before this one (a value not a number counts
    /// as none, the first page).
    before: Option<i64>,
    range: Option<(Option<SystemTime>, Option<SystemTime>)>,
}

fn filter(ctx: &PageContext) -> Filter {
    let value = |name: &str| ctx.query.get(name).trim().to_string();
    let limit = LIMITS
        .into_iter()
        .find(|l| l.to_string() == value("limit"))
        .unwrap_or(LIMITS[0]);
    let field = |name, label| {
        Input::alone(name, label)
            .kind(InputKind::Line("date"))
            .value(value(name))
    };
    let actor =
        Input::alone("actor", "Who (an email, a token prefix, or cli)").value(value("actor"));
    let (mut from, mut to) = (field("from", "From (UTC)"), field("to", "To (UTC)"));
    let since = day(&mut from);
    let until = day(&mut to);
    let range = match (since, until) {
        (Some(since), Some(until)) => {
            let until = until.and_then(|d| d.tomorrow().ok());
            match (since, until) {
                (Some(s), Some(u)) if s >= u => {
                    to.error = Some("the end is before the start".into());
                    None
                }
                (since, until) => Some((since.map(start_of), until.map(start_of))),
            }
        }
        _ => None,
    };
    Filter {
        actor,
        from,
        to,
        limit,
        before: value("before").parse().ok(),
        range,
    }
}

/// The day a date field names (`Some(None)` when empty); `None` when refused, with its error.
fn day(field: &mut Input) -> Option<Option<Date>> {
    if field.value.is_empty() {
        return Some(None);
    }
    let parsed = (field.value.len() == 10)
        .then(|| field.value.parse::<Date>().ok())
        .flatten();
    if parsed.is_none() {
        field.error = Some("a date, as YYYY-MM-DD".into());
    }
    parsed.map(Some)
}

fn start_of(day: Date) -> SystemTime {
    let midnight = day.to_datetime(jiff::civil::Time::midnight());
    let at = TimeZone::UTC
        .to_timestamp(midnight)
        .unwrap_or(jiff::Timestamp::MAX);
    SystemTime::from(at)
}

impl Filter {
    /// The query it makes; `None` when a field is refused.
    fn query(&self) -> Option<Query<'_>> {
        let (since, until) = self.range?;
        Some(Query {
            actor: Some(self.actor.value.as_str()).filter(|a| !a.is_empty()),
            since,
            until,
            before: self.before,
            limit: self.limit,
        })
    }

    /// The address of the page or file `path` of this filter, older than `before` if given.
    fn href(&self, path: &str, limit: Option<u32>, before: Option<i64>) -> String {
        let mut query = url::form_urlencoded::Serializer::new(String::new());
        query
            .append_pair("actor", &self.actor.value)
            .append_pair("from", &self.from.value)
            .append_pair("to", &self.to.value);
        if let Some(limit) = limit {
            query.append_pair("limit", &limit.to_string());
        }
        if let Some(before) = before {
            query.append_pair("before", &before.to_string());
        }
        format!("{path}?{}", query.finish())
    }
}

/// The page of entries the filter keeps.
fn read(ctx: &mut PageContext, filter: &Filter) -> Result<Option<Page>, PageRefusal> {
    let Some(query) = filter.query() else {
        return Ok(None);
    };
    let caller = ctx.caller.clone();
    Ok(Some(ctx.on_replica(|db| audit::page(db, &caller, &query))?))
}

/// `GET /audit?actor=…&from=…&to=…&limit=…&before=…`: an unknown limit counts as the
/// default; a date that is not one, or a range that ends before it starts, is refused next to
/// its field (`422`) and nothing is read.
pub fn page(ctx: &mut PageContext) -> Answer {
    let filter = filter(ctx);
    let read = read(ctx, &filter)?;
    let status = if read.is_some() { 200 } else { 422 };
    let older = read.as_ref().and_then(|page| page.older);
    let limit = Some(filter.limit);
    let page = AuditPage {
        layout: ctx.layout(),
        entries: read
            .iter()
            .flat_map(|p| &p.entries)
            .map(Shown::of)
            .collect(),
        older: older.map(|before| filter.href("/audit", limit, Some(before))),
        newest: filter.before.map(|_| filter.href("/audit", limit, None)),
        csv: filter.href("/audit.csv", None, None),
        actor: filter.actor,
        dates: [filter.from, filter.to],
        limits: LIMITS,
        limit: filter.limit,
    };
    Ok(answers::html(status, &page))
}

/// `GET /audit.csv?actor=…&from=…&to=…`: every entry of the filter's range, as a CSV file
/// (a limit or a cursor is ignored).
pub fn csv(ctx: &mut PageContext) -> Answer {
    let filter = filter(ctx);
    let Some(query) = filter.query() else {
        let refused = [&filter.from, &filter.to].into_iter().find_map(|f| {
            let message = f.error.clone()?;
            Some(ApiError::validation(f.name, message))
        });
        return Err(refused.unwrap_or(ApiError::NotFound).into());
    };
    let caller = ctx.caller.clone();
    let body = ctx.on_replica(|db| audit::csv(db, &caller, &query))?;
    let org = caller.org.id;
    Ok(Response::new(200)
        .header("Content-Type", "text/csv; charset=utf-8")
        .header(
            "Content-Disposition",
            format!("attachment; filename=\"audit-{org}.csv\""),
        )
        .body(body.into_bytes()))
}
