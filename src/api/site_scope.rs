//! What every site-scoped handler shares: the site named by the `{domain}` path parameter, and
//! the `409` of a write that collided with a concurrent one.

use crate::db::{self, sites::SiteRow};
use crate::domain::DomainName;
use crate::error::ApiError;
use crate::ids::OrgId;
use postgres::GenericClient;

/// The `409` message of a write that collided with a concurrent one.
pub const CHANGED_MEANWHILE: &str = "changed by another request meanwhile: read it again";

/// The caller's site named by the `{domain}` path parameter. Absent, another organisation's
/// and invalid all answer the same `404`.
pub fn site_in_path(
    db: &mut impl GenericClient,
    org_id: &OrgId,
    raw_domain: &str,
) -> Result<SiteRow, ApiError> {
    db::sites::find_site(db, org_id, &domain_in_path(raw_domain)?)?.ok_or(ApiError::NotFound)
}

/// Like [`site_in_path`], and locks the site for the rest of the transaction, so that the
/// writers of one site run one after the other.
pub fn lock_site_in_path(
    db: &mut impl GenericClient,
    org_id: &OrgId,
    raw_domain: &str,
) -> Result<SiteRow, ApiError> {
    db::sites::lock_site(db, org_id, &domain_in_path(raw_domain)?)?.ok_or(ApiError::NotFound)
}

/// The `{domain}` path parameter; an invalid one names no site: `404`.
fn domain_in_path(raw_domain: &str) -> Result<DomainName, ApiError> {
    DomainName::from_path_segment(raw_domain).map_err(|_| ApiError::NotFound)
}

/// Maps a unique violation (a concurrent writer got there first) to `409 conflict` on
/// `field`; any other database error stays `500`.
pub fn conflict_on_unique(
    field: &'static str,
    message: &'static str,
) -> impl FnOnce(postgres::Error) -> ApiError {
    move |error| {
        if db::is_unique_violation(&error) {
            ApiError::conflict(field, message)
        } else {
            error.into()
        }
    }
}
