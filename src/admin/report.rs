//! `admin report`: an organisation's `/fragment` requests over a window (requests, fill rate,
//! refused requests, no-fill reasons, agent purposes), in total or grouped by one dimension;
//! printed as the one JSON object of every admin command, as CSV, or as a table for people.
//! The numbers are `ops::reports`'s, which the console reads too; here only the arguments and
//! the renderings of JSON and the table (CSV is `ops::reports::csv`, the console's downloads).
//!
//! Every reason and purpose is listed, zeros included, so that CSV has the same columns for
//! every window and grouping. Refused requests (`403`: a key used with another `partner_id`,
//! or a fragment not of the organisation) are counted apart: they are the edge's settings to
//! fix, not a page without a card.

use super::Output;
use crate::error::ApiError;
use crate::ops::reports::{self, csv::csv, parse_time, Bounds, By, Counts, Report, TimeArg};
use clap::{Args, ValueEnum};
use jiff::Timestamp;
use postgres::Client;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::fmt::Display;
use std::io::IsTerminal;

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
    /// Add groups keyed by this dimension; they add up to the totals: site (null: refused
    /// before a site was known), fragment (resolved, else requested, with its ref), card (with
    /// its name; null: none served), page (host and canonical path, from the hourly page
    /// counts: whole hours, no refused nor no_fill_reasons, "(not yet written)" what they do
    /// not hold yet), agent (the v0.1 marker, or none), hour (UTC, RFC 3339), day (UTC date).
    #[arg(long, value_name = "GROUPING", value_parser = parse_by)]
    by: Option<By>,
    /// Default: table when standard output is a terminal, else json.
    #[arg(long, value_enum)]
    format: Option<Format>,
}

/// `--by`: a grouping of `ops::reports`, by its name.
fn parse_by(text: &str) -> Result<By, String> {
    By::named(text).ok_or_else(|| {
        let names: Vec<&str> = By::ALL.iter().map(|by| by.as_str()).collect();
        format!("expected one of {}", names.join(", "))
    })
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

pub fn run(db: &mut Client, args: ReportArgs) -> Result<Output, ApiError> {
    let bounds = Bounds::of_args(args.since, args.until, Timestamp::now())?;
    let org = super::cli_caller(db, &args.org)?.org;
    let report = reports::report(&mut reports::snapshot(db)?, &org, bounds, args.by)?;
    let format = args.format.unwrap_or(if std::io::stdout().is_terminal() {
        Format::Table
    } else {
        Format::Json
    });
    Ok(match format {
        Format::Json => Output::Json(json(&report)),
        Format::Csv => Output::Text(csv(&report)),
        Format::Table => Output::Text(table(&report)),
    })
}

/// The counts as JSON members.
fn json_into(counts: &Counts, object: &mut Map<String, Value>) {
    object.insert("requests".into(), json!(counts.requests));
    object.insert("served".into(), json!(counts.served));
    object.insert("fill_rate".into(), json!(counts.fill_rate()));
    if let Some(refused) = counts.refused {
        object.insert("refused".into(), json!(refused));
    }
    if let Some(reasons) = &counts.refused_reasons {
        object.insert("refused_reasons".into(), named(reasons));
    }
    if let Some(reasons) = &counts.no_fill_reasons {
        object.insert("no_fill_reasons".into(), named(reasons));
    }
    object.insert("agent_purposes".into(), named(&counts.agent_purposes));
}

/// Counts as a JSON object, a member per key's name.
fn named<K: Display>(counts: &BTreeMap<K, i64>) -> Value {
    let members = counts.iter().map(|(key, n)| (key.to_string(), json!(n)));
    Value::Object(members.collect())
}

fn json(report: &Report) -> Value {
    let mut object = Map::new();
    object.insert("org_id".into(), json!(report.org.id));
    object.insert("org_name".into(), json!(report.org.name));
    object.insert("window".into(), json!(report.bounds.words()));
    object.insert("since".into(), json!(report.bounds.since().to_string()));
    object.insert("until".into(), json!(report.bounds.until().to_string()));
    json_into(&report.total, &mut object);
    if let Some((by, groups)) = &report.groups {
        let groups: Vec<Value> = groups
            .iter()
            .map(|group| {
                let mut member = Map::new();
                for (column, value) in by.columns().iter().zip(group.key.cells()) {
                    member.insert(column.to_string(), json!(value));
                }
                json_into(&group.counts, &mut member);
                Value::Object(member)
            })
            .collect();
        object.insert("groups".into(), json!(groups));
    }
    Value::Object(object)
}

/// A title line, then aligned columns: a row per group, and the totals.
fn table(report: &Report) -> String {
    let columns = report
        .groups
        .as_ref()
        .map_or(&[""][..], |(by, _)| by.columns());
    let mut header: Vec<String> = columns.iter().map(ToString::to_string).collect();
    header.extend(
        [
            "requests",
            "served",
            "fill rate",
            "refused",
            "refused reasons",
            "no-fill reasons",
            "agent purposes",
        ]
        .map(String::from),
    );
    let counts = |counts: &Counts| {
        let mut cells = vec![
            counts.requests.to_string(),
            counts.served.to_string(),
            format!("{:.1}%", counts.fill_rate() * 100.0),
        ];
        // Page groups know neither: empty cells under the totals' columns.
        cells.push(counts.refused.map(|n| n.to_string()).unwrap_or_default());
        cells.push(
            counts
                .refused_reasons
                .as_ref()
                .map(listed)
                .unwrap_or_default(),
        );
        cells.push(
            counts
                .no_fill_reasons
                .as_ref()
                .map(listed)
                .unwrap_or_default(),
        );
        cells.push(listed(&counts.agent_purposes));
        cells
    };
    let mut rows = vec![header];
    for group in report.groups.iter().flat_map(|(_, groups)| groups) {
        let mut cells: Vec<String> = group
            .key
            .cells()
            .into_iter()
            .map(|value| value.unwrap_or_else(|| "(none)".into()))
            .collect();
        cells.extend(counts(&group.counts));
        rows.push(cells);
    }
    let mut total = vec![String::new(); columns.len()];
    total[0] = "total".into();
    total.extend(counts(&report.total));
    rows.push(total);
    let numbers = columns.len()..columns.len() + 4;
    let right_aligned = |column: usize| numbers.contains(&column);
    let mut out = format!(
        "Requests of {} ({}), {}\n\n",
        report.org.name,
        report.org.id,
        report.bounds.words()
    );
    out.push_str(&aligned(&rows, right_aligned));
    out.push_str(&refused_fixes(&report.total));
    if matches!(report.groups, Some((By::Page, _))) {
        out.push_str(
            "Pages are counted per hour (whole hours in the window), without refusals or \
                 no-fill reasons; (not yet written): what their rows do not hold yet.\n",
        );
    }
    out
}

/// What to fix for each reason of the refusals counted, a line each; nothing without any.
fn refused_fixes(total: &Counts) -> String {
    let reasons = total.refused_reasons.iter().flatten();
    let fixes: Vec<String> = (reasons.filter(|(_, &n)| n > 0))
        .map(|(reason, _)| format!("  {reason}: {}\n", reason.fix()))
        .collect();
    match fixes.is_empty() {
        true => String::new(),
        false => format!("\nRefused, what to fix:\n{}", fixes.concat()),
    }
}

/// `name count, …` of the counts other than zero, in name order; `-` when none.
fn listed<K: Display>(counts: &BTreeMap<K, i64>) -> String {
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
