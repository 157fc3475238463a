//! `admin key delete`: deleting a delivery key, a console action allowed on revoked keys only
//! (a live key is revoked first, through `DELETE /v1/keys/{id}`).

use super::AdminError;
use crate::db::keys;
use clap::Subcommand;
use postgres::Client;
use serde_json::{json, Value};

#[derive(Debug, Subcommand)]
pub enum KeyCommand {
    /// Delete a revoked delivery key (a live key is refused).
    Delete { id: String },
}

pub fn run(db: &mut Client, command: KeyCommand) -> Result<Value, AdminError> {
    match command {
        KeyCommand::Delete { id } => {
            let key = keys::find_key(db, &id)?.ok_or_else(|| AdminError::NotFound(id.clone()))?;
            if key.revoked_at.is_none() || !keys::delete_revoked_key(db, &id)? {
                return Err(AdminError::Invalid(format!(
                    "key {id} is live: revoke it first (DELETE /v1/keys/{id}), then delete it"
                )));
            }
            Ok(json!({"id": id, "deleted": true}))
        }
    }
}
