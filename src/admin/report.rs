//! `admin report --org ID [--since …]`: fill rate, no-fill reasons and agent purposes of the
//! organisation's `/fragment` requests, per site and per fragment.

use super::AdminError;
use crate::db::orgs;
use crate::db::reports::{self, ReportGroup, Since};
use postgres::Client;
use serde_json::{json, Map, Value};
use std::time::UNIX_EPOCH;

pub fn run(db: &mut Client, org: &str, since: Option<&str>) -> Result<Value, AdminError> {
    orgs::find_org(db, org)?.ok_or_else(|| AdminError::NotFound(org.into()))?;
    let since = match since {
        Some(since) => reports::since_timestamp(db, &since_bound(since)).map_err(|_| {
            AdminError::Invalid(format!(
                "--since {since:?}: an RFC 3339 time, or a duration such as 24h or 7d"
            ))
        })?,
        None => UNIX_EPOCH,
    };
    let groups = reports::summary(db, org, since)?;
    let mut out = stats(&groups.iter().collect::<Vec<_>>());
    out["org_id"] = json!(org);
    out["sites"] = json!(by_site(&groups));
    Ok(out)
}

/// `--since`: a duration back from now (`36h`, `7d`), else a time (RFC 3339).
fn since_bound(since: &str) -> Since {
    let unit = match since.as_bytes().last() {
        Some(b'h') => "hours",
        Some(b'd') => "days",
        _ => return Since::At(since.to_string()),
    };
    let count = &since[..since.len() - 1];
    if count.is_empty() || !count.bytes().all(|b| b.is_ascii_digit()) {
        return Since::At(since.to_string());
    }
    Since::Ago(format!("{count} {unit}"))
}

/// Sites in order, each with its fragments; requests refused before resolution have no site.
fn by_site(groups: &[ReportGroup]) -> Vec<Value> {
    let mut sites: Vec<Value> = Vec::new();
    for chunk in groups.chunk_by(|a, b| a.site == b.site) {
        let mut site = stats(&chunk.iter().collect::<Vec<_>>());
        site["site"] = json!(chunk[0].site);
        let fragments: Vec<Value> = chunk
            .chunk_by(|a, b| a.fragment_id == b.fragment_id)
            .map(|f| {
                let mut fragment = stats(&f.iter().collect::<Vec<_>>());
                fragment["fragment_id"] = json!(f[0].fragment_id);
                fragment["ref"] = json!(f[0].fragment_ref);
                fragment
            })
            .collect();
        site["fragments"] = json!(fragments);
        sites.push(site);
    }
    sites
}

/// `{requests, served, fill_rate, no_fill_reasons, agent_purposes}` of some groups. The fill
/// rate is served over all requests; reasons count every request that was not served.
fn stats(groups: &[&ReportGroup]) -> Value {
    let requests: i64 = groups.iter().map(|g| g.count).sum();
    let served: i64 = groups
        .iter()
        .filter(|g| g.reason == "served")
        .map(|g| g.count)
        .sum();
    let mut reasons = Map::new();
    let mut purposes = Map::new();
    for group in groups {
        if group.reason != "served" {
            add(&mut reasons, &group.reason, group.count);
        }
        add(&mut purposes, &group.purpose, group.count);
    }
    let fill_rate = if requests == 0 {
        0.0
    } else {
        served as f64 / requests as f64
    };
    json!({
        "requests": requests,
        "served": served,
        "fill_rate": (fill_rate * 1000.0).round() / 1000.0,
        "no_fill_reasons": reasons,
        "agent_purposes": purposes,
    })
}

fn add(counts: &mut Map<String, Value>, key: &str, n: i64) {
    let total = counts.get(key).and_then(Value::as_i64).unwrap_or(0) + n;
    counts.insert(key.to_string(), json!(total));
}
