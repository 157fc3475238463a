//! `admin key …`: making a delivery key from a shell (what `POST /v1/keys` does, for an
//! operator without a management token at hand), and deleting one, a console action allowed on
//! revoked keys only (a live key is revoked first, through `DELETE /v1/keys/{id}`).

use super::{existing_org, named, AdminError};
use crate::auth::{self, SecretKind};
use crate::db::keys;
use crate::domain::KeyName;
use crate::ids::KeyId;
use clap::Subcommand;
use postgres::Client;
use serde_json::{json, Value};

#[derive(Debug, Subcommand)]
pub enum KeyCommand {
    /// Make a delivery key for an organisation; the full key is printed once.
    Create {
        #[arg(long)]
        org: String,
        #[arg(long, default_value = "")]
        name: String,
    },
    /// Delete a revoked delivery key (a live key is refused).
    Delete { id: String },
}

pub fn run(db: &mut Client, command: KeyCommand, prefix: &str) -> Result<Value, AdminError> {
    match command {
        KeyCommand::Create { org, name } => {
            let org = existing_org(db, &org)?.id;
            let name = KeyName::parse(&name)?;
            let secret = auth::generate(SecretKind::DeliveryKey, prefix);
            let key = keys::create_key(db, &org, name.as_ref(), &secret.hash, &secret.prefix)?;
            Ok(crate::wire::created_key_json(&key, &secret.value))
        }
        KeyCommand::Delete { id } => {
            let key_id = named(KeyId::parse, &id)?;
            let key =
                keys::lock_key(db, &key_id)?.ok_or_else(|| AdminError::NotFound(id.clone()))?;
            if !key.is_revoked() || !keys::delete_revoked_key(db, &key_id)? {
                return Err(AdminError::Invalid(format!(
                    "key {id} is live: revoke it first (DELETE /v1/keys/{id}), then delete it"
                )));
            }
            Ok(json!({"id": id, "deleted": true}))
        }
    }
}
