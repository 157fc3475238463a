//! What a scheduled report mails of an organisation's past period (`Bounds::past`), read in
//! one snapshot: its totals and those of the period before, its top agents and pages by
//! requests, most first.

use super::{report, snapshot, top, Bounds, By, Counts, Group, Key, NOT_YET_WRITTEN};
use crate::db::orgs::Org;
use crate::domain::Cadence;
use crate::error::ApiError;
use jiff::Timestamp;
use postgres::Client;
use std::cmp::Reverse;

/// The numbers of one period.
pub struct Digest {
    pub bounds: Bounds,
    /// The period before, of the same cadence.
    pub before: Bounds,
    pub total: Counts,
    pub previous: Counts,
    /// The top agents, most requests first.
    pub agents: Vec<Group>,
    /// The top pages, most requests first (what the page rows did not hold yet, if anything,
    /// among them as [`NOT_YET_WRITTEN`]).
    pub pages: Vec<Group>,
}

/// The report of `org`'s last whole period of `cadence` at `now`, with `n` agents and pages.
pub fn digest(
    db: &mut Client,
    org: &Org,
    cadence: Cadence,
    now: Timestamp,
    n: usize,
) -> Result<Digest, ApiError> {
    let mut db = snapshot(db)?;
    let db = &mut db;
    let bounds = Bounds::past(cadence, now);
    let before = bounds.period_before(cadence);
    let by_agent = report(db, org, bounds, Some(By::Agent))?;
    let previous = report(db, org, before, None)?.total;
    let by_page = top(db, org, bounds, By::Page, n as i64)?;
    Ok(Digest {
        bounds,
        before,
        total: by_agent.total,
        previous,
        agents: most_first(by_agent.groups, n),
        pages: most_first(by_page.groups, n),
    })
}

/// The `n` groups with the most requests, most first (ties in the report's order); what the
/// page rows do not hold yet only where it ranks.
fn most_first(groups: Option<(By, Vec<Group>)>, n: usize) -> Vec<Group> {
    let mut groups = groups.map(|(_, groups)| groups).unwrap_or_default();
    groups.retain(|group| group.counts.requests > 0);
    groups.sort_by_key(|group| {
        let unwritten = group.key == Key::Page(NOT_YET_WRITTEN.into());
        (Reverse(group.counts.requests), unwritten)
    });
    groups.truncate(n);
    groups
}
