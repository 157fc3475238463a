//! The `{domain}` path parameter of site-scoped operations.

use crate::domain::DomainName;
use crate::error::ApiError;

/// The `{domain}` path parameter; an invalid one names no site: `404`.
pub fn domain_in_path(raw_domain: &str) -> Result<DomainName, ApiError> {
    DomainName::from_path_segment(raw_domain).map_err(|_| ApiError::NotFound)
}
