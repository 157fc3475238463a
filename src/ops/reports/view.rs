//! What the console's Reports page reads of a window, in one call: the totals and chart by
//! bucket and those of the window before, the view asked for (its top groups when it is by site, fragment, card or page),
//! the fragments with requests answered without a card (the no-fill reasons), the User-Agents
//! that matched no marker, and how far behind its primary the server read is (a replica's lag).
//! `examples/report_page.rs` times this call (`scripts/bench-report.sh`).

use super::{report, top, unfilled, unmatched_agents, By, ConsoleWindow, Counts, Report};
use crate::db::orgs::Org;
use crate::db::reports::{replica_lag, snapshot};
use crate::error::ApiError;
use jiff::Timestamp;
use postgres::Client;
use std::time::Duration;

/// The reads of one page.
pub struct View {
    /// The window by its buckets: the totals and the chart.
    pub by_bucket: Report,
    /// The totals of the preceding window of the same length ([`super::Bounds::preceding`]).
    pub previous: Counts,
    /// The view asked for: [`top`]'s.
    pub grouped: Option<Report>,
    /// The fragments with the most requests answered without a card, when some were
    /// ([`unfilled`]): the no-fill reasons' fragments.
    pub by_fragment: Option<Report>,
    /// The User-Agents that matched no marker, most requests first.
    pub unmatched: Vec<(String, i64)>,
    /// How far behind its primary the numbers are: zero when read on the primary.
    pub lag: Duration,
}

/// What the page shows of `window` at `now`, grouped `by` when given: at most `top` groups of
/// each view by name, and `unmatched` User-Agents, in one [`snapshot`].
pub fn view(
    db: &mut Client,
    org: &Org,
    window: ConsoleWindow,
    by: Option<By>,
    shown: i64,
    unmatched: i64,
    now: Timestamp,
) -> Result<View, ApiError> {
    let mut db = snapshot(db)?;
    let db = &mut db;
    let bounds = window.bounds(now);
    let by_bucket = report(db, org, bounds, Some(window.by()))?;
    let previous = report(db, org, bounds.preceding(), None)?.total;
    let grouped = match by {
        Some(by) => Some(top(db, org, bounds, by, shown)?),
        None => None,
    };
    let without_card = (by_bucket.total.no_fill_reasons.iter().flatten()).any(|(_, n)| *n > 0);
    let by_fragment = match without_card {
        true => Some(unfilled(db, org, bounds, shown)?),
        false => None,
    };
    let unmatched = unmatched_agents(db, org, bounds, unmatched)?;
    Ok(View {
        lag: replica_lag(db)?,
        unmatched,
        by_bucket,
        previous,
        grouped,
        by_fragment,
    })
}
