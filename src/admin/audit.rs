//! `admin audit`: an organisation's audit log, newest first.

use super::cli_caller;
use crate::error::ApiError;
use crate::ops::{self, audit::Query};
use clap::Args;
use jiff::Timestamp;
use postgres::Client;
use serde_json::{json, Value};

#[derive(Debug, Args)]
pub struct AuditArgs {
    #[arg(long)]
    org: String,
    /// Only the writes of this actor, whatever the case: a token's prefix (svc_mgmt_…), a
    /// person's email, or cli.
    #[arg(long)]
    actor: Option<String>,
    /// Only the writes at or after this time (RFC 3339, e.g. 2026-11-27T00:00:00Z).
    #[arg(long, value_name = "T")]
    since: Option<Timestamp>,
    /// Only the writes before this time (RFC 3339).
    #[arg(long, value_name = "T")]
    until: Option<Timestamp>,
    /// Only the entries older than this one (an entry's `id`): the next page.
    #[arg(long, value_name = "ID")]
    before: Option<i64>,
    /// How many of the newest entries.
    #[arg(long, default_value_t = 100)]
    limit: u32,
}

/// Each entry as stored, and in words: `who`, `what`; the object's name and the changes are
/// those the write saw.
pub fn run(db: &mut Client, args: AuditArgs) -> Result<Value, ApiError> {
    let caller = cli_caller(db, &args.org)?;
    let query = Query {
        actor: args.actor.as_deref(),
        since: args.since.map(Into::into),
        until: args.until.map(Into::into),
        before: args.before,
        limit: args.limit,
    };
    let entries = ops::audit::entries(db, &caller, &query)?;
    let items: Vec<Value> = entries
        .iter()
        .map(|entry| {
            let row = &entry.row;
            json!({
                "id": row.id,
                "at": row.at,
                "actor_kind": row.actor_kind.as_str(),
                "actor": row.actor,
                "operation": entry.operation.as_str(),
                "object_kind": row.object_kind,
                "object": row.object,
                "who": entry.who(),
                "what": entry.what(),
                "object_name": row.object_name,
                "changes": row.changes,
            })
        })
        .collect();
    Ok(json!({ "items": items }))
}
