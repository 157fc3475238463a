//! `admin key …`: making a delivery key from a shell (what `POST /v1/keys` does, for an
//! operator without a management token at hand), and deleting one, a console action allowed on
//! revoked keys only (a live key is revoked first, through `DELETE /v1/keys/{id}`).

use super::{cli_caller, named};
use crate::domain::KeyName;
use crate::error::ApiError;
use crate::ids::KeyId;
use crate::ops::{self, Actor, Scope};
use crate::wire;
use clap::Subcommand;
use postgres::Client;
use serde_json::{json, Value};

#[derive(Debug, Subcommand)]
pub enum KeyCommand {
    /// Make a delivery key for an organisation; the full key is printed once.
    Create {
        #[arg(long)]
        org: String,
        /// At most 100 characters; blank for none.
        #[arg(long, default_value = "")]
        name: String,
    },
    /// Delete a revoked delivery key (a live key is refused).
    Delete { id: String },
}

pub fn run(db: &mut Client, command: KeyCommand, prefix: &str) -> Result<Value, ApiError> {
    match command {
        KeyCommand::Create { org: id, name } => {
            let name = KeyName::parse(&name)?;
            let caller = cli_caller(db, &id)?;
            let created = ops::keys::create_key(db, &caller, name.as_ref(), prefix)?;
            Ok(wire::created_key_json(&created.key, &created.secret))
        }
        KeyCommand::Delete { id } => {
            let id = named(KeyId::parse, &id)?;
            ops::keys::delete_revoked_key(db, Scope::Operator(&Actor::Cli), &id)?;
            Ok(json!({"id": id, "deleted": true}))
        }
    }
}
