//! A report as CSV, the text of `admin report --format csv` and of the console's downloads: a
//! header, then a line per group or one of totals; a column per reason and purpose, the same
//! for every grouping, every cell filled (a [`super::top`] view's groups, which count requests and
//! served only, leave refused and the reasons empty).

use super::{no_fill_reasons, purposes, refused_reasons, Counts, Report};
use crate::domain::{Ending, Purpose, Refused};
use std::collections::BTreeMap;

pub fn csv(report: &Report) -> String {
    let refusals: Vec<Refused> = refused_reasons().collect();
    let reasons: Vec<Ending> = no_fill_reasons().collect();
    let purposes: Vec<Purpose> = purposes().collect();
    let counts = |counts: &Counts| {
        let mut cells = vec![
            counts.requests.to_string(),
            counts.served.to_string(),
            counts.fill_rate().to_string(),
            counts.refused.map(|n| n.to_string()).unwrap_or_default(),
        ];
        cells.extend(cells_of(&refusals, counts.refused_reasons.as_ref()));
        cells.extend(cells_of(&reasons, counts.no_fill_reasons.as_ref()));
        cells.extend(purposes.iter().map(|purpose| {
            let count = counts.agent_purposes.get(purpose);
            count.copied().unwrap_or(0).to_string()
        }));
        cells
    };
    let mut header: Vec<String> = match &report.groups {
        Some((by, _)) => by.columns().iter().map(ToString::to_string).collect(),
        None => ["org_id", "org_name", "since", "until"]
            .map(String::from)
            .to_vec(),
    };
    header.extend(["requests", "served", "fill_rate", "refused"].map(String::from));
    header.extend(refusals.iter().map(|r| format!("refused_reasons.{r}")));
    header.extend(reasons.iter().map(|r| format!("no_fill_reasons.{r}")));
    header.extend(purposes.iter().map(|p| format!("agent_purposes.{p}")));
    let mut lines = vec![header];
    match &report.groups {
        Some((_, groups)) => lines.extend(groups.iter().map(|group| {
            let mut cells: Vec<String> = group
                .key
                .cells()
                .into_iter()
                .map(Option::unwrap_or_default)
                .collect();
            cells.extend(counts(&group.counts));
            cells
        })),
        None => {
            let mut cells = vec![
                report.org.id.to_string(),
                report.org.name.clone(),
                report.bounds.since().to_string(),
                report.bounds.until().to_string(),
            ];
            cells.extend(counts(&report.total));
            lines.push(cells);
        }
    }
    lines.iter().map(|cells| crate::csv::line(cells)).collect()
}

/// A cell per key, its count (zero when absent); all empty where the counts are unknown.
fn cells_of<'k, K: Ord>(
    keys: &'k [K],
    counts: Option<&'k BTreeMap<K, i64>>,
) -> impl Iterator<Item = String> + 'k {
    keys.iter().map(move |key| {
        let count = counts.map(|counts| counts.get(key).copied().unwrap_or(0));
        count.map(|n| n.to_string()).unwrap_or_default()
    })
}
