//! What the console's Reports page reads of a window, in one call: the totals and chart by
//! bucket, the view asked for (its top groups when it is by site, fragment, card or page),
//! the fragments with requests answered without a card (the no-fill reasons), the User-Agents
//! that matched no marker.
//! `examples/report_page.rs` times this call (`scripts/bench-report.sh`).

use super::{report, top, unfilled, unmatched_agents, By, ConsoleWindow, Report};
use crate::db::orgs::Org;
use crate::error::ApiError;
use jiff::Timestamp;
use postgres::{Client, IsolationLevel, Transaction};

/// PostgreSQL's memory for each grouping of the page's reads (its default is 4 MB).
const WORK_MEM: &str = "64MB";

/// A read-only transaction for the reads of one report: one snapshot, so its groups add up to
/// its totals whatever a flush adds meanwhile; and the memory and the workers its groupings
/// need. A month's view by fragment sums ~100 000 groups: in memory, not in batches on disk;
/// and in one process, since PostgreSQL's parallel workers would take the cores `/fragment` is
/// served on, and merging ~100 000 partial groups costs more than they save.
pub fn snapshot(db: &mut Client) -> Result<Transaction<'_>, ApiError> {
    let mut transaction = db
        .build_transaction()
        .isolation_level(IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()?;
    transaction.batch_execute(&format!(
        "SET LOCAL work_mem = '{WORK_MEM}'; SET LOCAL max_parallel_workers_per_gather = 0"
    ))?;
    Ok(transaction)
}

/// The reads of one page.
pub struct View {
    /// The window by its buckets: the totals and the chart.
    pub by_bucket: Report,
    /// The view asked for: [`top`]'s.
    pub grouped: Option<Report>,
    /// The fragments with the most requests answered without a card, when some were
    /// ([`unfilled`]): the no-fill reasons' fragments.
    pub by_fragment: Option<Report>,
    /// The User-Agents that matched no marker, most requests first.
    pub unmatched: Vec<(String, i64)>,
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
        unmatched,
        by_bucket,
        grouped,
        by_fragment,
    })
}
