//! `admin report` (being rebuilt over the aggregates on branch report-cli).

use super::AdminError;
use postgres::Client;
use serde_json::Value;

pub fn run(_db: &mut Client, _org: &str, _since: Option<&str>) -> Result<Value, AdminError> {
    Err(AdminError::Invalid("report: not yet".into()))
}
