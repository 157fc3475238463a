//! `admin org …` and `admin token …`.

use super::{existing_org, named, AdminError};
use crate::auth::{self, SecretKind};
use crate::db::orgs::{self, Creator, TokenRow};
use crate::domain::{OrgName, TokenName};
use crate::ids::TokenId;
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
            let org = orgs::create_org(db, &OrgName::parse(&name)?)?;
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
            let org = existing_org(db, &org)?.id;
            let name = TokenName::parse(&name)?;
            let creator = if support {
                Creator::Support
            } else {
                Creator::Owner
            };
            let secret = auth::generate(SecretKind::ManagementToken, prefix);
            let row = orgs::create_token(db, &org, &name, &secret.hash, &secret.prefix, creator)?;
            let mut out = token_json(&row);
            out["token"] = json!(secret.value);
            Ok(out)
        }
        TokenCommand::Revoke { id } => {
            let row = orgs::revoke_token(db, &named(TokenId::parse, &id)?)?
                .ok_or(AdminError::NotFound(id))?;
            Ok(token_json(&row))
        }
        TokenCommand::Delete { id } => {
            if orgs::delete_token(db, &named(TokenId::parse, &id)?)?.is_none() {
                return Err(AdminError::NotFound(id));
            }
            Ok(json!({"id": id, "deleted": true}))
        }
        TokenCommand::List { org } => {
            let org = existing_org(db, &org)?.id;
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
        "creator": row.creator.as_str(),
        "created_at": row.created_at,
        "expires_at": row.expires_at,
        "revoked_at": row.revoked_at,
        "last_used_at": row.last_used_at,
    })
}
