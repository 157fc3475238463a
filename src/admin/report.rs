//! `admin report`: an organisation's `/fragment` requests over a window (requests, fill rate,
//! refused requests, no-fill reasons, agent purposes), in total or grouped by one dimension;
//! printed as the one JSON object of every admin command, as CSV, or as a table for people.
//!
//! Every reason and purpose is listed, zeros included, so that CSV has the same columns for
//! every window and grouping. Refused requests (`403`: a key used with another `partner_id`,
//! or a fragment not of the organisation) are counted apart: they are the edge's settings to
//! fix, not a page without a card.

use super::Output;
use crate::agents::Purpose;
use crate::db::orgs;
use crate::db::report_summary::{self, Dimension, GroupKey, PageCount, RequestCount, Window};
use crate::delivery::select::Ending;
use crate::error::ApiError;
use clap::{Args, ValueEnum};
use jiff::{SignedDuration, Timestamp};
use postgres::Client;
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::io::IsTerminal;
use std::time::SystemTime;

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The organisation (acc_…).
    #[arg(long, value_name = "ID")]
    org: String,
    /// Start of the window, included: an RFC 3339 time (2026-11-24T13:00:00Z) or a duration
    /// back from now (30m, 24h, 7d). Default: all time.
    #[arg(long, value_name = "T", value_parser = parse_time)]
    since: Option<TimeArg>,
    /// End of the window, excluded, in the same forms. Default: now.
    #[arg(long, value_name = "T", value_parser = parse_time)]
    until: Option<TimeArg>,
    /// Add groups keyed by this dimension; they add up to the totals.
    #[arg(long, value_enum)]
    by: Option<By>,
    /// Default: table when standard output is a terminal, else json.
    #[arg(long, value_enum)]
    format: Option<Format>,
}

/// The grouping of `--by`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum By {
    /// The page's site (null: refused before a site was known).
    Site,
    /// The fragment resolved, else the one requested, with its ref.
    Fragment,
    /// The card served, with its name (null: none served).
    Card,
    /// Host and canonical path, from the hourly page counts, which give the totals too (whole
    /// hours only) and no no_fill_reasons.
    Page,
    /// The agent marker as the v0.1 list spells it (GPTBot), or none.
    Agent,
    /// The UTC hour (2026-11-24T13:00:00Z).
    Hour,
    /// The UTC day (2026-11-24).
    Day,
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

    /// The key's columns, as JSON members and CSV headers.
    fn columns(self) -> &'static [&'static str] {
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    /// Aligned columns, for people.
    Table,
    /// One object, as every admin command prints.
    Json,
    /// A header line, then one line per group (one line of totals without --by).
    Csv,
}

/// `--since` or `--until` as written.
#[derive(Debug, Clone, Copy)]
enum TimeArg {
    At(Timestamp),
    /// Back from now.
    Ago(SignedDuration),
}

fn parse_time(text: &str) -> Result<TimeArg, String> {
    if let Some(ago) = parse_ago(text) {
        return Ok(TimeArg::Ago(ago));
    }
    text.parse().map(TimeArg::At).map_err(|_| {
        "expected an RFC 3339 time such as 2026-11-24T13:00:00Z, or a duration back from now \
         such as 30m, 24h or 7d"
            .to_string()
    })
}

/// A count of minutes, hours or days: `30m`, `24h`, `7d`.
fn parse_ago(text: &str) -> Option<SignedDuration> {
    let (count, unit) = text.split_at_checked(text.len().checked_sub(1)?)?;
    let unit_seconds: i64 = match unit {
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => return None,
    };
    if count.is_empty() || !count.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let seconds = count.parse::<i64>().ok()?.checked_mul(unit_seconds)?;
    Some(SignedDuration::from_secs(seconds))
}

impl TimeArg {
    fn resolve(self, now: Timestamp, field: &str) -> Result<Timestamp, ApiError> {
        match self {
            TimeArg::At(at) => Ok(at),
            TimeArg::Ago(ago) => now
                .checked_sub(ago)
                .map_err(|_| ApiError::validation(field, "too far back")),
        }
    }
}

pub fn run(db: &mut Client, args: ReportArgs) -> Result<Output, ApiError> {
    // Whole seconds, so that the printed `until` is the bound that was used.
    let now = Timestamp::now();
    let now = Timestamp::from_second(now.as_second()).unwrap_or(now);
    let since = args
        .since
        .map(|since| since.resolve(now, "since"))
        .transpose()?;
    let until = args
        .until
        .map(|until| until.resolve(now, "until"))
        .transpose()?;
    let bounds = Bounds { since, until, now };
    if bounds.until() < bounds.since() {
        return Err(ApiError::validation(
            "until",
            format!(
                "until {} is before since {}",
                bounds.until(),
                bounds.since()
            ),
        ));
    }
    let org = super::org(db, &args.org)?.org;
    let window = Window {
        since: bounds.since().into(),
        until: bounds.until().into(),
    };
    let (total, groups) = if args.by == Some(By::Page) {
        by_page(report_summary::page_counts(db, org.id.as_str(), window)?)
    } else {
        let dimension = args.by.and_then(By::dimension);
        let counts = report_summary::request_counts(db, org.id.as_str(), window, dimension)?;
        by_key(&counts, args.by)
    };
    let report = Report {
        org,
        bounds,
        total,
        groups: args.by.map(|by| (by, groups)),
    };
    let format = args.format.unwrap_or(if std::io::stdout().is_terminal() {
        Format::Table
    } else {
        Format::Json
    });
    Ok(match format {
        Format::Json => Output::Json(report.json()),
        Format::Csv => Output::Text(report.csv()),
        Format::Table => Output::Text(report.table()),
    })
}

/// The window as asked: `None` where unbounded (all time before, or up to `now`).
#[derive(Debug, Clone, Copy)]
struct Bounds {
    since: Option<Timestamp>,
    until: Option<Timestamp>,
    now: Timestamp,
}

impl Bounds {
    fn since(self) -> Timestamp {
        self.since.unwrap_or(Timestamp::UNIX_EPOCH)
    }

    fn until(self) -> Timestamp {
        self.until.unwrap_or(self.now)
    }

    /// The window in words: `all time`, `before T`, `since T`, `from T to T (excluded)`.
    fn words(self) -> String {
        match (self.since, self.until) {
            (None, None) => "all time".into(),
            (None, Some(until)) => format!("before {until}"),
            (Some(since), None) => format!("since {since}"),
            (Some(since), Some(until)) => format!("from {since} to {until} (excluded)"),
        }
    }
}

/// The report of a window, ready to print.
struct Report {
    org: orgs::Org,
    bounds: Bounds,
    total: Counts,
    /// With `--by`: the grouping and its groups, in order.
    groups: Option<(By, Vec<Group>)>,
}

/// One group: its key (a value per column of the grouping, `None` where it does not apply) and
/// its counts.
struct Group {
    key: Vec<Option<String>>,
    counts: Counts,
}

/// Requests, served, refused and the reasons of the requests not served (both `None`: page
/// counts know neither) and the agent purposes of all. Every reason and purpose is a member,
/// zeros included (and any other name found counted too).
struct Counts {
    requests: i64,
    served: i64,
    refused: Option<i64>,
    no_fill_reasons: Option<BTreeMap<String, i64>>,
    agent_purposes: BTreeMap<String, i64>,
}

/// Every no-fill reason, in the order of their names.
fn no_fill_reasons() -> impl Iterator<Item = &'static str> {
    let names: BTreeSet<&str> = Ending::ALL
        .iter()
        .map(|ending| ending.names())
        .filter(|(outcome, _)| *outcome == "no_fill")
        .map(|(_, reason)| reason)
        .collect();
    names.into_iter()
}

/// A count of zero for each name.
fn zeros(names: impl Iterator<Item = &'static str>) -> BTreeMap<String, i64> {
    names.map(|name| (name.to_string(), 0)).collect()
}

impl Counts {
    /// Zero requests; `requests_known`: with refused and no-fill reasons.
    fn zero(requests_known: bool) -> Counts {
        Counts {
            requests: 0,
            served: 0,
            refused: requests_known.then_some(0),
            no_fill_reasons: requests_known.then(|| zeros(no_fill_reasons())),
            agent_purposes: zeros(Purpose::ALL.iter().map(|purpose| purpose.as_str())),
        }
    }

    fn of_requests<'a>(counts: impl IntoIterator<Item = &'a RequestCount>) -> Counts {
        let mut sum = Counts::zero(true);
        for count in counts {
            let served = if count.outcome == "served" {
                count.requests
            } else {
                0
            };
            sum.add(&count.purpose, count.requests, served);
            match count.outcome.as_str() {
                "served" => {}
                "refused" => *sum.refused.get_or_insert(0) += count.requests,
                _ => add(
                    sum.no_fill_reasons.get_or_insert_default(),
                    &count.reason,
                    count.requests,
                ),
            }
        }
        sum
    }

    fn of_pages<'a>(counts: impl IntoIterator<Item = &'a PageCount>) -> Counts {
        let mut sum = Counts::zero(false);
        for count in counts {
            sum.add(&count.purpose, count.requests, count.served);
        }
        sum
    }

    /// Adds requests of one agent purpose, `served` of them served.
    fn add(&mut self, purpose: &str, requests: i64, served: i64) {
        self.requests += requests;
        self.served += served;
        add(&mut self.agent_purposes, purpose, requests);
    }

    /// Served over requests, rounded half up to 3 decimals in integers (in floating point,
    /// 3 of 2000 would round down); 0 without requests.
    fn fill_rate(&self) -> f64 {
        if self.requests <= 0 {
            return 0.0;
        }
        let (served, requests) = (i128::from(self.served), i128::from(self.requests));
        let thousandths = (served * 2000 + requests) / (requests * 2);
        thousandths as f64 / 1000.0
    }

    /// The counts as JSON members.
    fn json_into(&self, object: &mut Map<String, Value>) {
        object.insert("requests".into(), json!(self.requests));
        object.insert("served".into(), json!(self.served));
        object.insert("fill_rate".into(), json!(self.fill_rate()));
        if let Some(refused) = self.refused {
            object.insert("refused".into(), json!(refused));
        }
        if let Some(reasons) = &self.no_fill_reasons {
            object.insert("no_fill_reasons".into(), json!(reasons));
        }
        object.insert("agent_purposes".into(), json!(self.agent_purposes));
    }
}

fn add(counts: &mut BTreeMap<String, i64>, name: &str, n: i64) {
    *counts.entry(name.to_string()).or_default() += n;
}

/// The totals, and groups of counts that arrive in key order.
fn by_key(counts: &[RequestCount], by: Option<By>) -> (Counts, Vec<Group>) {
    let groups = match by {
        None => Vec::new(),
        Some(by) => counts
            .chunk_by(|a, b| a.key == b.key)
            .map(|chunk| Group {
                key: key_values(&chunk[0].key, by),
                counts: Counts::of_requests(chunk),
            })
            .collect(),
    };
    (Counts::of_requests(counts), groups)
}

fn by_page(counts: Vec<PageCount>) -> (Counts, Vec<Group>) {
    let groups = counts
        .chunk_by(|a, b| a.page == b.page)
        .map(|chunk| Group {
            key: vec![Some(chunk[0].page.clone())],
            counts: Counts::of_pages(chunk),
        })
        .collect();
    (Counts::of_pages(&counts), groups)
}

fn key_values(key: &GroupKey, by: By) -> Vec<Option<String>> {
    match key {
        GroupKey::Total => Vec::new(),
        GroupKey::Name(name) => vec![name.clone()],
        GroupKey::Item { id, label } => vec![id.clone(), label.clone()],
        GroupKey::Start(start) => vec![time_key(*start, by)],
    }
}

/// An hour as RFC 3339 UTC, a day as its date.
fn time_key(start: SystemTime, by: By) -> Option<String> {
    let start = Timestamp::try_from(start).ok()?;
    Some(if by == By::Day {
        start.strftime("%Y-%m-%d").to_string()
    } else {
        start.to_string()
    })
}

impl Report {
    fn json(&self) -> Value {
        let mut object = Map::new();
        object.insert("org_id".into(), json!(self.org.id));
        object.insert("org_name".into(), json!(self.org.name));
        object.insert("window".into(), json!(self.bounds.words()));
        object.insert("since".into(), json!(self.bounds.since().to_string()));
        object.insert("until".into(), json!(self.bounds.until().to_string()));
        self.total.json_into(&mut object);
        if let Some((by, groups)) = &self.groups {
            let groups: Vec<Value> = groups
                .iter()
                .map(|group| {
                    let mut member = Map::new();
                    for (column, value) in by.columns().iter().zip(&group.key) {
                        member.insert(column.to_string(), json!(value));
                    }
                    group.counts.json_into(&mut member);
                    Value::Object(member)
                })
                .collect();
            object.insert("groups".into(), json!(groups));
        }
        Value::Object(object)
    }

    /// Every reason and purpose (and any other name counted in the window): the count
    /// columns of CSV.
    fn count_names(&self) -> (Vec<&str>, Vec<&str>) {
        let mut reasons: BTreeSet<&str> = no_fill_reasons().collect();
        let counted = self.total.no_fill_reasons.iter().flatten();
        reasons.extend(counted.map(|(reason, _)| reason.as_str()));
        let purposes = self.total.agent_purposes.keys();
        (
            reasons.into_iter().collect(),
            purposes.map(String::as_str).collect(),
        )
    }

    /// A header, then a line per group or one of totals; a column per reason and purpose,
    /// the same for every grouping. Page counts leave refused and reasons empty: unknown.
    fn csv(&self) -> String {
        let (reasons, purposes) = self.count_names();
        let counts = |counts: &Counts| {
            let mut cells = vec![
                counts.requests.to_string(),
                counts.served.to_string(),
                counts.fill_rate().to_string(),
                counts.refused.map(|n| n.to_string()).unwrap_or_default(),
            ];
            let reason_counts = counts.no_fill_reasons.as_ref();
            cells.extend(reasons.iter().map(|reason| {
                let count = reason_counts.map(|r| r.get(*reason).copied().unwrap_or(0));
                count.map(|n| n.to_string()).unwrap_or_default()
            }));
            cells.extend(purposes.iter().map(|purpose| {
                let count = counts.agent_purposes.get(*purpose);
                count.copied().unwrap_or(0).to_string()
            }));
            cells
        };
        let mut header: Vec<String> = match &self.groups {
            Some((by, _)) => by.columns().iter().map(ToString::to_string).collect(),
            None => ["org_id", "org_name", "since", "until"]
                .map(String::from)
                .to_vec(),
        };
        header.extend(["requests", "served", "fill_rate", "refused"].map(String::from));
        header.extend(reasons.iter().map(|r| format!("no_fill_reasons.{r}")));
        header.extend(purposes.iter().map(|p| format!("agent_purposes.{p}")));
        let mut lines = vec![header];
        match &self.groups {
            Some((_, groups)) => lines.extend(groups.iter().map(|group| {
                let mut cells: Vec<String> = group
                    .key
                    .iter()
                    .map(|v| v.clone().unwrap_or_default())
                    .collect();
                cells.extend(counts(&group.counts));
                cells
            })),
            None => {
                let mut cells = vec![
                    self.org.id.to_string(),
                    self.org.name.clone(),
                    self.bounds.since().to_string(),
                    self.bounds.until().to_string(),
                ];
                cells.extend(counts(&self.total));
                lines.push(cells);
            }
        }
        lines.iter().map(|cells| crate::csv::line(cells)).collect()
    }

    /// A title line, then aligned columns: a row per group, and the totals.
    fn table(&self) -> String {
        let columns = self
            .groups
            .as_ref()
            .map_or(&[""][..], |(by, _)| by.columns());
        let mut header: Vec<String> = columns.iter().map(ToString::to_string).collect();
        header.extend(["requests", "served", "fill rate"].map(String::from));
        let requests_known = self.total.refused.is_some();
        if requests_known {
            header.extend(["refused", "no-fill reasons"].map(String::from));
        }
        header.push("agent purposes".into());
        let counts = |counts: &Counts| {
            let mut cells = vec![
                counts.requests.to_string(),
                counts.served.to_string(),
                format!("{:.1}%", counts.fill_rate() * 100.0),
            ];
            if let Some(refused) = counts.refused {
                cells.push(refused.to_string());
            }
            if let Some(reasons) = &counts.no_fill_reasons {
                cells.push(listed(reasons));
            }
            cells.push(listed(&counts.agent_purposes));
            cells
        };
        let mut rows = vec![header];
        for group in self.groups.iter().flat_map(|(_, groups)| groups) {
            let mut cells: Vec<String> = group
                .key
                .iter()
                .map(|value| value.clone().unwrap_or_else(|| "(none)".into()))
                .collect();
            cells.extend(counts(&group.counts));
            rows.push(cells);
        }
        let mut total = vec![String::new(); columns.len()];
        total[0] = "total".into();
        total.extend(counts(&self.total));
        rows.push(total);
        let numbers = columns.len()..columns.len() + if requests_known { 4 } else { 3 };
        let right_aligned = |column: usize| numbers.contains(&column);
        let mut out = format!(
            "Requests of {} ({}), {}\n\n",
            self.org.name,
            self.org.id,
            self.bounds.words()
        );
        out.push_str(&aligned(&rows, right_aligned));
        out.push_str(if requests_known {
            "\nRefused: answered 403, a partner_id or fragment_id not the organisation's (check \
             the edge's settings).\n"
        } else {
            "\nPages are counted per hour (whole hours in the window), without refusals or \
             no-fill reasons.\n"
        });
        out
    }
}

/// `name count, …` of the counts other than zero, in name order; `-` when none.
fn listed(counts: &BTreeMap<String, i64>) -> String {
    let items: Vec<String> = counts
        .iter()
        .filter(|(_, &n)| n != 0)
        .map(|(name, n)| format!("{name} {n}"))
        .collect();
    if items.is_empty() {
        return "-".into();
    }
    items.join(", ")
}

/// Rows of cells in columns as wide as their widest cell, two spaces apart.
fn aligned(rows: &[Vec<String>], right_aligned: impl Fn(usize) -> bool) -> String {
    let width = |column: usize| {
        let cells = rows.iter().filter_map(|row| row.get(column));
        cells.map(|cell| cell.chars().count()).max().unwrap_or(0)
    };
    let widths: Vec<usize> = (0..rows[0].len()).map(width).collect();
    let mut out = String::new();
    for row in rows {
        let cells: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(column, cell)| {
                let pad = " ".repeat(widths[column] - cell.chars().count());
                if right_aligned(column) {
                    pad + cell
                } else {
                    format!("{cell}{pad}")
                }
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_back_from_now() {
        let cases: &[(&str, Option<i64>)] = &[
            ("30m", Some(1800)),
            ("24h", Some(86_400)),
            ("7d", Some(604_800)),
            ("0h", Some(0)),
            ("h", None),
            ("5", None),
            ("-3h", None),
            ("+3h", None),
            ("3w", None),
            ("1.5h", None),
            ("99999999999999999999d", None),
            ("", None),
            ("é", None),
        ];
        for &(text, seconds) in cases {
            let parsed = parse_ago(text).map(|d| d.as_secs());
            assert_eq!(parsed, seconds, "{text:?}");
        }
    }

    #[test]
    fn times_are_rfc_3339_with_an_offset() {
        let cases: &[(&str, Option<&str>)] = &[
            ("2026-11-24T13:00:00Z", Some("2026-11-24T13:00:00Z")),
            ("2026-11-24T14:30:00+01:00", Some("2026-11-24T13:30:00Z")),
            ("2026-11-24T13:00:00.5Z", Some("2026-11-24T13:00:00.5Z")),
            ("2026-11-24T13:00:00", None),
            ("2026-11-24", None),
            ("yesterday-ish", None),
        ];
        for &(text, expected) in cases {
            let parsed = match parse_time(text) {
                Ok(TimeArg::At(at)) => Some(at.to_string()),
                _ => None,
            };
            assert_eq!(parsed.as_deref(), expected, "{text:?}");
        }
    }

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
}
