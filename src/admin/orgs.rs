//! `admin org …` and `admin token …`.

use super::AdminError;
use crate::auth::{self, SecretKind};
use crate::db::orgs::{self, TokenRow};
use clap::Subcommand;
use postgres::Client;
use serde_json::{json, Value};

#[derive(Debug, Subcommand)]
pub enum OrgCommand {
    /// Create an organisation.
    Create {
        #[arg(long)]
        name: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum TokenCommand {
    /// Create a management token; the full token is printed once.
    Create {
        #[arg(long)]
        org: String,
        #[arg(long, default_value = "")]
        name: String,
        /// Created by service support: expires after 90 days.
        #[arg(long)]
        support: bool,
    },
    /// Revoke a token; its next call answers 401.
    Revoke { id: String },
    /// Delete a token.
    Delete { id: String },
    /// List an organisation's tokens (never the token itself).
    List {
        #[arg(long)]
        org: String,
    },
}

pub fn run_org(db: &mut Client, command: OrgCommand) -> Result<Value, AdminError> {
    match command {
        OrgCommand::Create { name } => {
            let name = name.trim();
            if name.is_empty() || name.chars().count() > 200 {
                return Err(AdminError::Invalid(
                    "--name must be 1 to 200 characters".into(),
                ));
            }
            let org = orgs::create_org(db, name)?;
            Ok(json!({"id": org.id, "name": org.name}))
        }
    }
}

pub fn run_token(
    db: &mut Client,
    command: TokenCommand,
    prefix: &str,
) -> Result<Value, AdminError> {
    match command {
        TokenCommand::Create { org, name, support } => {
            orgs::find_org(db, &org)?.ok_or_else(|| AdminError::NotFound(org.clone()))?;
            let secret = auth::generate(SecretKind::ManagementToken, prefix);
            let row =
                orgs::create_token(db, &org, name.trim(), &secret.hash, &secret.prefix, support)?;
            let mut out = token_json(&row);
            out["token"] = json!(secret.value);
            Ok(out)
        }
        TokenCommand::Revoke { id } => {
            let row = orgs::revoke_token(db, &id)?.ok_or(AdminError::NotFound(id))?;
            Ok(token_json(&row))
        }
        TokenCommand::Delete { id } => {
            if !orgs::delete_token(db, &id)? {
                return Err(AdminError::NotFound(id));
            }
            Ok(json!({"id": id, "deleted": true}))
        }
        TokenCommand::List { org } => {
            let items: Vec<Value> = orgs::list_tokens(db, &org)?
                .iter()
                .map(token_json)
                .collect();
            Ok(json!({"items": items}))
        }
    }
}

fn token_json(row: &TokenRow) -> Value {
    json!({
        "id": row.id,
        "org_id": row.org_id,
        "name": row.name,
        "prefix": row.prefix,
        "creator": row.creator,
        "created_at": row.created_at,
        "expires_at": row.expires_at,
        "revoked_at": row.revoked_at,
        "last_used_at": row.last_used_at,
    })
}
