//! The publisher's numbers: the Reports page (a window, a group, the totals and their change
//! against the window before, a chart and its table, the groups with names and links, most
//! requests first, what to do about each no-fill reason) and each view as CSV (canonical
//! pages; the page shows them decoded for reading). The numbers are `ops::reports`'s, the same
//! `admin report` prints for the window.

use super::answers;
use super::chart::{bucket_label, percent, Chart, Glance, Row, Week, WeekPage};
use super::context::{Answer, PageContext};
use super::inputs::{Input, InputKind, Inputs};
use super::layout::Layout;
use super::refusal::PageRefusal;
use crate::db::cards::CardRow;
use crate::domain::{Ending, Invalid, Purpose, Refused};
use crate::error::ApiError;
use crate::http::Response;
use crate::ops::reports::{
    self, csv::csv, series, Bounds, By, ConsoleWindow, Counts, Key, Report, ALL_OTHERS,
    NOT_YET_WRITTEN,
};
use crate::ops::Caller;
use askama::Template;
use jiff::civil::Date;
use jiff::Timestamp;
use std::cmp::Reverse;
use std::time::Duration;

/// The windows of the picker: the query's value, its label, the window.
const WINDOWS: [(&str, &str, Option<ConsoleWindow>); 4] = [
    (
        "24h",
        "Last 24 hours, by hour",
        Some(ConsoleWindow::Last24Hours),
    ),
    ("7d", "Last 7 days, by day", Some(ConsoleWindow::Last7Days)),
    (
        "30d",
        "Last 30 days, by day",
        Some(ConsoleWindow::Last30Days),
    ),
    ("dates", "From and to the dates below, by day", None),
];

/// How many User-Agents that matched no marker the page lists.
const UNMATCHED_SHOWN: i64 = 20;

/// How many groups of a view by site, fragment, card or page the page lists (the most
/// requests first, then all others as one row): a month holds up to ~100 000 of them, which
/// the CSV holds.
const TOP_SHOWN: i64 = 100;

/// A replica's lag beyond which the page says its numbers are late.
const LAG_SHOWN: Duration = Duration::from_secs(10);

/// The groups of the picker, by their `By` name, and their name on the page.
const GROUPS: [(By, &str); 5] = [
    (By::Agent, "Agent"),
    (By::Site, "Site"),
    (By::Fragment, "Fragment"),
    (By::Card, "Card"),
    (By::Page, "Page"),
];

/// What to do about a no-fill reason: its words and where to go (none for the endings that
/// are no reason of a no-fill).
pub(super) fn advice(reason: Ending) -> (&'static str, &'static str) {
    match reason {
        Ending::FragmentPaused => (
            "A paused fragment answers without a card: open it and activate it.",
            "/sites",
        ),
        Ending::NoEligibleCard => (
            "No active card is eligible there: make a card eligible on these fragments.",
            "/cards",
        ),
        Ending::ServingError => (
            "The service could not serve a card: the operator's logs say why.",
            "",
        ),
        Ending::Served | Ending::InvalidRequest | Ending::InvalidKey | Ending::Forbidden => {
            ("", "")
        }
    }
}

/// A no-fill reason of the window, with what to do and the fragments it happened on.
#[derive(Debug, Clone)]
pub struct Reason {
    pub name: Ending,
    pub requests: i64,
    pub advice: &'static str,
    pub link: &'static str,
    pub fragments: Vec<Row>,
}

#[derive(Template)]
#[template(path = "console/reports.html")]
pub struct ReportsPage {
    pub layout: Layout,
    pub form: Inputs,
    /// The window shown (none when a field was refused).
    pub window: Option<Period>,
    /// `None` when a field was refused: nothing was run.
    pub numbers: Option<Numbers>,
}

/// What the page shows of a window.
pub struct Numbers {
    pub total: Counts,
    pub fill: String,
    /// Each total's change against the preceding window of the same length.
    pub change: Change,
    pub reasons: Vec<Reason>,
    /// Each reason requests were refused for in the window, most first: the edge's settings
    /// to fix.
    pub refusals: Vec<(Refused, i64)>,
    pub chart: Chart,
    /// The group shown.
    pub by: Option<Groups>,
    /// How many groups at most the view lists by name ([`TOP_SHOWN`]), when it lists only
    /// the top ones.
    pub top: Option<i64>,
    /// The same view as CSV.
    pub csv: String,
    /// The User-Agents that matched no marker, most requests first.
    pub unmatched: Vec<(String, i64)>,
    /// Seconds the replica the numbers were read on is behind the primary, beyond
    /// [`LAG_SHOWN`].
    pub behind: Option<u64>,
}

/// The rows of a group, most requests first (the others, together, last).
pub struct Groups {
    /// The name of the group's column ("Agent").
    pub heading: &'static str,
    pub rows: Vec<Row>,
    /// Whether any row has an id: the Id column is shown only then.
    pub ids: bool,
}

/// A window's first moment and the moment it ends (excluded), RFC 3339, for `time.html`.
pub struct Period {
    pub since: String,
    pub until: String,
}

impl Period {
    pub(super) fn of(bounds: Bounds) -> Period {
        Period {
            since: bounds.since().to_string(),
            until: bounds.until().to_string(),
        }
    }
}

/// Each total's change against the preceding window of the same length, in words.
pub struct Change {
    /// The preceding window.
    pub window: Period,
    pub requests: String,
    pub served: String,
    pub fill: String,
    pub refused: String,
}

impl Change {
    pub(super) fn of(now: &Counts, before: &Counts, window: Period) -> Change {
        let refused = |counts: &Counts| counts.refused.unwrap_or(0);
        Change {
            window,
            requests: count_change(now.requests, before.requests),
            served: count_change(now.served, before.served),
            fill: fill_change(now, before),
            refused: count_change(refused(now), refused(before)),
        }
    }
}

/// `+12 (+9.8 %) from 122`; `unchanged from 122`; `+5 from 0`.
fn count_change(now: i64, before: i64) -> String {
    let difference = now - before;
    match (difference, before) {
        (0, _) => format!("unchanged from {before}"),
        (_, 0) => format!("{difference:+} from 0"),
        _ => {
            let relative = difference as f64 * 100.0 / before as f64;
            format!("{difference:+} ({relative:+.1} %) from {before}")
        }
    }
}

/// `+2.5 points from 80.0 %`, or what there is to say when a window had no requests.
fn fill_change(now: &Counts, before: &Counts) -> String {
    if before.requests <= 0 {
        return "no requests before".into();
    }
    if now.requests <= 0 {
        return format!("from {}", percent(before));
    }
    let points = (now.fill_rate() - before.fill_rate()) * 100.0;
    match format!("{points:+.1}").as_str() {
        "+0.0" | "-0.0" => format!("unchanged from {}", percent(before)),
        points => format!("{points} points from {}", percent(before)),
    }
}

impl Numbers {
    pub fn purposes(&self) -> impl Iterator<Item = (&Purpose, &i64)> {
        self.total.agent_purposes.iter()
    }
}

/// What the query asks for: a window and maybe a group; the refusals of its fields.
struct Asked {
    window: ConsoleWindow,
    by: Option<By>,
}

/// `GET /reports`: the page, opening on the last 7 days; a refused field is shown next to
/// itself and nothing is run (`422`).
pub fn page(ctx: &mut PageContext) -> Answer {
    let mut form = picker().sent(&ctx.query);
    if form.0[0].value.is_empty() {
        let dated = !ctx.query.get("from").is_empty() || !ctx.query.get("to").is_empty();
        form.0[0].value = if dated { "dates" } else { "7d" }.into();
    }
    let asked = match asked(ctx) {
        Ok(asked) => asked,
        Err(refusals) => {
            form.refuse_all(refusals);
            let page = ReportsPage {
                layout: ctx.layout().in_utc(),
                form,
                window: None,
                numbers: None,
            };
            return Ok(answers::html(422, &page));
        }
    };
    if ctx.query.get("format") == "csv" {
        return download(ctx, &asked);
    }
    let now = Timestamp::now();
    let org = ctx.caller.org.clone();
    let bounds = asked.window.bounds(now);
    let (window, by) = (asked.window, asked.by);
    let view =
        ctx.on_replica(|db| reports::view(db, &org, window, by, TOP_SHOWN, UNMATCHED_SHOWN, now))?;
    let points = series(&view.by_bucket, &asked.window.buckets(now));
    let title = "Requests and served".to_string();
    let chart = Chart::new("window", title, &points, asked.window.by());
    let total = view.by_bucket.total;
    let top = asked.by.filter(|by| *by != By::Agent).map(|_| TOP_SHOWN);
    let reasons = reasons(&total, view.by_fragment.as_ref());
    let refusals = refusals(&total);
    let by = view.grouped.as_ref().and_then(groups);
    let change = Change::of(&total, &view.previous, Period::of(bounds.preceding()));
    let unmatched = view.unmatched;
    let behind = (view.lag > LAG_SHOWN).then_some(view.lag.as_secs());
    let csv = csv_link(&form);
    let page = ReportsPage {
        layout: ctx.layout().in_utc(),
        form,
        window: Some(Period::of(bounds)),
        numbers: Some(Numbers {
            fill: percent(&total),
            change,
            total,
            reasons,
            refusals,
            chart,
            by,
            top,
            csv,
            unmatched,
            behind,
        }),
    };
    Ok(answers::html(200, &page))
}

/// `GET /reports.csv`: the view as CSV, the columns of `admin report --format csv`.
pub fn csv_file(ctx: &mut PageContext) -> Answer {
    match asked(ctx) {
        Ok(asked) => download(ctx, &asked),
        Err(refusals) => {
            let first = refusals.into_iter().next();
            let invalid = first.unwrap_or_else(|| Invalid::new("window", "refused"));
            Err(ApiError::validation(invalid.field, invalid.message).into())
        }
    }
}

fn download(ctx: &mut PageContext, asked: &Asked) -> Answer {
    let now = Timestamp::now();
    let org = ctx.caller.org.clone();
    let bounds = asked.window.bounds(now);
    let view = asked.by.unwrap_or(asked.window.by());
    let report = ctx
        .on_replica(|db| reports::report(&mut reports::snapshot(db)?, &org, bounds, Some(view)))?;
    let day = |at: Timestamp| at.strftime("%Y-%m-%d").to_string();
    let name = format!(
        "agentcard-report-{}-by-{}-{}-{}.csv",
        org.id.as_str(),
        view.as_str(),
        day(bounds.since()),
        day(bounds.until()),
    );
    Ok(Response::new(200)
        .header("Content-Type", "text/csv; charset=utf-8")
        .header(
            "Content-Disposition",
            format!("attachment; filename=\"{name}\""),
        )
        .body(csv(&report).into_bytes()))
}

/// The picker: a window, two dates, a group.
fn picker() -> Inputs {
    let windows = WINDOWS
        .iter()
        .map(|(v, l, _)| (v.to_string(), l.to_string()));
    let mut groups = vec![(String::new(), "None: the totals only".to_string())];
    groups.extend(
        GROUPS
            .iter()
            .map(|(by, name)| (by.as_str().to_string(), name.to_string())),
    );
    Inputs(vec![
        Input::new("report", "window", "Window")
            .required()
            .kind(InputKind::Choice(windows.collect()))
            .value("7d"),
        Input::new("report", "from", "From (a date, UTC)")
            .hint("YYYY-MM-DD, with the window \"from and to the dates below\"."),
        Input::new("report", "to", "To (a date, UTC, included)").hint("YYYY-MM-DD."),
        Input::new("report", "by", "Group by").kind(InputKind::Choice(groups)),
    ])
}

/// The window and group the query asks for, or the refusal of each field at fault.
fn asked(ctx: &PageContext) -> Result<Asked, Vec<Invalid>> {
    let query = &ctx.query;
    let mut refusals = Vec::new();
    let by = match query.get("by") {
        "" => None,
        name => match GROUPS.iter().find(|(by, _)| by.as_str() == name) {
            Some((by, _)) => Some(*by),
            None => {
                let names: Vec<&str> = GROUPS.iter().map(|(by, _)| by.as_str()).collect();
                let message = format!("expected one of {}", names.join(", "));
                refusals.push(Invalid::new("by", message));
                None
            }
        },
    };
    let name = match query.get("window") {
        "" if !query.get("from").is_empty() || !query.get("to").is_empty() => "dates",
        "" => "7d",
        name => name,
    };
    let window = match WINDOWS.iter().find(|(value, _, _)| *value == name) {
        Some((_, _, Some(window))) => Some(*window),
        Some((_, _, None)) => dates(ctx).map_err(|invalid| refusals.push(invalid)).ok(),
        None => {
            refusals.push(Invalid::new("window", "expected 24h, 7d, 30d or dates"));
            None
        }
    };
    match window {
        Some(window) if refusals.is_empty() => Ok(Asked { window, by }),
        _ => Err(refusals),
    }
}

/// The two dates, as `ConsoleWindow::dates` takes them: within what the report keeps.
fn dates(ctx: &PageContext) -> Result<ConsoleWindow, Invalid> {
    let date = |field: &str| {
        let text = ctx.query.get(field);
        let parsed = text.parse::<Date>().ok().filter(|_| text.len() == 10);
        parsed.ok_or_else(|| Invalid::new(field, "expected a date, YYYY-MM-DD"))
    };
    let (first, last) = (date("from")?, date("to")?);
    let today = Timestamp::now().to_zoned(jiff::tz::TimeZone::UTC).date();
    let kept = (ctx.app.config.report_kept.as_secs() / 86_400).max(1) as i64;
    let oldest = today.saturating_sub(jiff::Span::new().days(kept - 1));
    if first < oldest {
        let message = format!("the report keeps {kept} days: the first is {oldest}");
        return Err(Invalid::new("from", message));
    }
    if last > today {
        return Err(Invalid::new("to", format!("after today ({today}, UTC)")));
    }
    ConsoleWindow::dates(first, last, kept).map_err(|error| match error {
        ApiError::Validation { field, message } => Invalid::new(field, message),
        other => Invalid::new("window", other.to_string()),
    })
}

/// Each no-fill reason counted in the window, with what to do and its fragments among the
/// fragments with the most requests without a card (`by_fragment`: `ops::reports::unfilled`).
fn reasons(total: &Counts, by_fragment: Option<&Report>) -> Vec<Reason> {
    let counted = (total.no_fill_reasons.iter().flatten()).filter(|(_, n)| **n > 0);
    let groups = by_fragment.and_then(|r| r.groups.as_ref());
    let groups = groups.map_or(&[][..], |(_, groups)| groups.as_slice());
    counted
        .map(|(&name, &requests)| {
            let (advice, link) = advice(name);
            let fragments = (groups.iter())
                .filter(|group| {
                    let reasons = group.counts.no_fill_reasons.as_ref();
                    reasons.and_then(|r| r.get(&name)).is_some_and(|n| *n > 0)
                })
                .map(|group| row(&group.key, &group.counts))
                .collect();
            Reason {
                advice,
                link,
                name,
                requests,
                fragments,
            }
        })
        .collect()
}

/// Each refusal's reason counted in the window, most requests first.
fn refusals(total: &Counts) -> Vec<(Refused, i64)> {
    let counted = (total.refused_reasons.iter().flatten()).filter(|(_, n)| **n > 0);
    let mut refusals: Vec<(Refused, i64)> = counted.map(|(&reason, &n)| (reason, n)).collect();
    refusals.sort_by_key(|&(_, n)| std::cmp::Reverse(n));
    refusals
}

/// The organisation's last 24 hours (`ops::reports::glance`).
pub(super) fn glance<V, C>(
    ctx: &mut PageContext<V, C>,
    caller: &Caller,
) -> Result<Glance, PageRefusal> {
    let glance = ctx.on_replica(|db| reports::glance(db, &caller.org, Timestamp::now()))?;
    let total = &glance.by_hour.total;
    let title = "Requests and served, last 24 hours".to_string();
    let rows = |groups: &[reports::Group]| groups.iter().map(|g| row(&g.key, &g.counts)).collect();
    Ok(Glance {
        requests: total.requests,
        served: total.served,
        fill: percent(total),
        chart: Chart::new("glance", title, &glance.hours, By::Hour),
        top_agents: rows(&glance.top_agents),
        unfilled: rows(&glance.unfilled_fragments),
    })
}

/// The card's last 7 days (`ops::reports::card_week`).
pub(super) fn week(ctx: &mut PageContext, card: &CardRow) -> Result<Week, PageRefusal> {
    let org = ctx.caller.org.clone();
    let week = ctx.on_replica(|db| reports::card_week(db, &org, &card.id, Timestamp::now()))?;
    let page = |page: reports::CardPage| WeekPage {
        why: (page.site.as_ref()).map(|site| why_link(site, &page.page, card)),
        page: readable_page(&page.page),
        served: page.served,
    };
    Ok(Week {
        served: week.served,
        days: (week.days.into_iter())
            .map(|(day, n)| (bucket_label(day, By::Day), n))
            .collect(),
        pages: week.pages.into_iter().map(page).collect(),
    })
}

/// "Why this card?" asked about a page (host and path) of `site`, in the card's language: the
/// form answers at once.
fn why_link(site: &str, page: &str, card: &CardRow) -> String {
    let query = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("page_url", &format!("https://{page}"))
        .append_pair("lang", card.lang.as_str())
        .finish();
    format!("/sites/{site}/why?{query}")
}

/// The rows of a grouped report, most requests first (ties in the report's order), what the
/// page rows do not hold yet and the others last.
fn groups(report: &Report) -> Option<Groups> {
    let (by, groups) = report.groups.as_ref()?;
    let heading = GROUPS
        .iter()
        .find(|(b, _)| b == by)
        .map_or("Group", |(_, name)| name);
    let mut groups: Vec<&reports::Group> = groups.iter().collect();
    let unwritten = Key::Page(NOT_YET_WRITTEN.into());
    groups.sort_by_key(|g| (g.key == unwritten, Reverse(g.counts.requests)));
    let mut rows: Vec<Row> = groups.iter().map(|g| row(&g.key, &g.counts)).collect();
    rows.extend(report.others.as_ref().map(|counts| Row {
        name: ALL_OTHERS.into(),
        id: None,
        link: None,
        requests: counts.requests,
        served: counts.served,
        fill: percent(counts),
    }));
    let ids = rows.iter().any(|row| row.id.is_some());
    Some(Groups { heading, rows, ids })
}

/// A page (host and canonical path) as a person reads it: without the slash the canonical
/// form ends with, each segment percent-decoded (an escaped `/` stays escaped); the canonical
/// form where it does not decode to UTF-8, and the pseudo-pages (`(other pages)`) as they are.
fn readable_page(page: &str) -> String {
    let path = page.strip_suffix('/').filter(|p| p.contains('/'));
    let Some(path) = path.filter(|_| !page.starts_with('(')) else {
        return page.into();
    };
    let decoded: Option<Vec<String>> = (path.split("%2F"))
        .map(|part| {
            let part = percent_encoding::percent_decode_str(part).decode_utf8();
            part.ok().map(|part| part.into_owned())
        })
        .collect();
    decoded.map_or_else(|| page.into(), |parts| parts.join("%2F"))
}

/// A group's name, id and console page.
pub(super) fn row(key: &Key, counts: &Counts) -> Row {
    let (name, id, link) = match key {
        Key::Site { domain, name } => {
            let link = name
                .as_ref()
                .and(domain.as_ref())
                .map(|d| format!("/sites/{d}"));
            let shown = name.clone().or(domain.clone());
            (
                shown.unwrap_or_else(|| "(no site)".into()),
                domain.clone(),
                link,
            )
        }
        Key::Fragment {
            id,
            reference,
            name,
        } => {
            let link = name
                .as_ref()
                .and(id.as_ref())
                .map(|i| format!("/fragments/{i}"));
            let shown = name.clone().or(reference.clone());
            let shown = shown.unwrap_or_else(|| match id {
                Some(_) => "(not of this organisation)".into(),
                None => "(no fragment)".into(),
            });
            (shown, id.clone(), link)
        }
        Key::Card { id, name } => {
            let link = id.as_ref().map(|i| format!("/cards/{i}"));
            let shown = name.clone().unwrap_or_else(|| "(no card served)".into());
            (shown, id.clone(), link)
        }
        Key::Page(page) => (readable_page(page), None, None),
        Key::Agent(agent) => (agent.clone(), None, None),
        Key::Hour(at) => (bucket_label(*at, By::Hour), None, None),
        Key::Day(at) => (bucket_label(*at, By::Day), None, None),
    };
    Row {
        name,
        id,
        link,
        requests: counts.requests,
        served: counts.served,
        fill: percent(counts),
    }
}

/// The link of the same view as CSV: the picker's values.
fn csv_link(form: &Inputs) -> String {
    let mut query = url::form_urlencoded::Serializer::new(String::new());
    for input in form.0.iter().filter(|input| !input.value.is_empty()) {
        query.append_pair(input.name, &input.value);
    }
    format!("/reports.csv?{}", query.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_read_as_requested_without_the_added_slash_and_decoded() {
        let cases = [
            ("a.example/a-propos/", "a.example/a-propos"),
            ("a.example/soci%C3%A9t%C3%A9/", "a.example/société"),
            ("a.example/", "a.example/"),
            ("a.example/a%2Fb/c%20d/", "a.example/a%2Fb/c d"),
            ("a.example/%FF/", "a.example/%FF/"),
            ("(other pages)", "(other pages)"),
            (NOT_YET_WRITTEN, NOT_YET_WRITTEN),
        ];
        for (canonical, shown) in cases {
            assert_eq!(readable_page(canonical), shown, "{canonical}");
        }
    }

    #[test]
    fn changes_say_the_difference_and_what_it_was() {
        assert_eq!(count_change(146, 122), "+24 (+19.7 %) from 122");
        assert_eq!(count_change(3, 4), "-1 (-25.0 %) from 4");
        assert_eq!(count_change(5, 0), "+5 from 0");
        assert_eq!(count_change(7, 7), "unchanged from 7");
        let counts = |requests, served| Counts {
            requests,
            served,
            ..Counts::zero(true)
        };
        assert_eq!(
            fill_change(&counts(10, 9), &counts(10, 8)),
            "+10.0 points from 80.0 %"
        );
        assert_eq!(
            fill_change(&counts(10, 8), &counts(0, 0)),
            "no requests before"
        );
        assert_eq!(fill_change(&counts(0, 0), &counts(10, 8)), "from 80.0 %");
        assert_eq!(
            fill_change(&counts(4, 2), &counts(2, 1)),
            "unchanged from 50.0 %"
        );
    }
}
