//! `admin audit`: an organisation's audit log, newest first.

use super::org;
use crate::error::ApiError;
use crate::ops;
use clap::Args;
use postgres::Client;
use serde_json::{json, Value};

#[derive(Debug, Args)]
pub struct AuditArgs {
    #[arg(long)]
    org: String,
    /// Only the writes of this actor: a token's prefix (svc_mgmt_…), a person's email, or cli.
    #[arg(long)]
    actor: Option<String>,
    /// How many of the newest entries.
    #[arg(long, default_value_t = 100)]
    limit: u32,
}

pub fn run(db: &mut Client, args: AuditArgs) -> Result<Value, ApiError> {
    let caller = org(db, &args.org)?;
    let entries = ops::audit::list_entries(db, &caller, args.actor.as_deref(), args.limit)?;
    let items: Vec<Value> = entries
        .iter()
        .map(|entry| {
            json!({
                "at": entry.at,
                "actor_kind": entry.actor_kind.as_str(),
                "actor": entry.actor,
                "operation": entry.operation,
                "object_kind": entry.object_kind,
                "object": entry.object,
            })
        })
        .collect();
    Ok(json!({ "items": items }))
}
