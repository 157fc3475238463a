//! What the console's live check of an edge shows: an organisation's last requests (time,
//! agent, page, status, reason), from the sample the instances write with the report's flush;
//! and its refusals by reason over a window, each with what to fix (`Refused::fix`).

use super::{report, Bounds};
use crate::db::counting;
use crate::db::orgs::Org;
use crate::domain::Refused;
use crate::error::ApiError;
use postgres::GenericClient;
use std::collections::BTreeMap;

pub use crate::db::counting::{Sample, SAMPLES_KEPT};

/// The last `n` requests of `org` in the sample (at most [`SAMPLES_KEPT`]), the latest first.
/// A request reaches it with the flush after it, about a second later.
pub fn last_requests(
    db: &mut impl GenericClient,
    org: &Org,
    n: usize,
) -> Result<Vec<Sample>, ApiError> {
    let n = n.min(SAMPLES_KEPT) as i64;
    Ok(counting::samples(db, org.id.as_str(), n)?)
}

/// The refusals of `org`'s requests in `bounds`, by reason, every reason a member.
pub fn refused_reasons(
    db: &mut impl GenericClient,
    org: &Org,
    bounds: Bounds,
) -> Result<BTreeMap<Refused, i64>, ApiError> {
    let total = report(db, org, bounds, None)?.total;
    Ok(total.refused_reasons.unwrap_or_default())
}
