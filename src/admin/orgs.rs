//! `admin org …` and `admin token …`.

use super::{cli_caller, named};
use crate::db::orgs::{Creator, TokenRow};
use crate::domain::{OrgName, TokenName};
use crate::error::ApiError;
use crate::ids::TokenId;
use crate::ops::{self, Actor, Scope};
use clap::Subcommand;
use postgres::Client;
use serde_json::{json, Value};

#[derive(Debug, Subcommand)]
pub enum OrgCommand {
    /// Create an organisation.
    Create {
        /// 1 to 200 characters.
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
        /// At most 100 characters.
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

pub fn run_org(db: &mut Client, command: OrgCommand) -> Result<Value, ApiError> {
    match command {
        OrgCommand::Create { name } => {
            let name = OrgName::parse(&name)?;
            let org = ops::orgs::create_org(db, &Actor::Cli, &name)?;
            Ok(json!({"id": org.id, "name": org.name}))
        }
    }
}

pub fn run_token(db: &mut Client, command: TokenCommand, prefix: &str) -> Result<Value, ApiError> {
    let operator = Scope::Operator(&Actor::Cli);
    match command {
        TokenCommand::Create {
            org: id,
            name,
            support,
        } => {
            let name = TokenName::parse(&name)?;
            let caller = cli_caller(db, &id)?;
            let creator = if support {
                Creator::Support
            } else {
                Creator::Owner
            };
            let created = ops::tokens::create_token(db, &caller, &name, creator, prefix)?;
            let mut out = token_json(&created.token);
            out["token"] = json!(created.secret);
            Ok(out)
        }
        TokenCommand::Revoke { id } => {
            let id = named(TokenId::parse, &id)?;
            Ok(token_json(&ops::tokens::revoke_token(db, operator, &id)?))
        }
        TokenCommand::Delete { id } => {
            let id = named(TokenId::parse, &id)?;
            ops::tokens::delete_token(db, operator, &id)?;
            Ok(json!({"id": id, "deleted": true}))
        }
        TokenCommand::List { org: id } => {
            let caller = cli_caller(db, &id)?;
            let items: Vec<Value> = ops::tokens::list_tokens(db, &caller)?
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
