//! Reading the audit log: an organisation's writes, newest first.

use super::Caller;
use crate::db::audit::{self, AuditRow};
use crate::error::ApiError;
use postgres::GenericClient;

/// The caller's organisation's last `limit` writes, newest first; only those of `actor` (a
/// token's prefix, a person's email, `cli`) when given.
pub fn list_entries(
    db: &mut impl GenericClient,
    caller: &Caller,
    actor: Option<&str>,
    limit: u32,
) -> Result<Vec<AuditRow>, ApiError> {
    Ok(audit::list(db, &caller.org.id, actor, i64::from(limit))?)
}
