//! Organisations (the contract's accounts, `acc_…`) and management tokens.

use super::{read_all, read_opt};
use crate::domain::{OrgName, TokenName};
use crate::ids::{OrgId, TokenId};
use postgres::GenericClient;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Org {
    pub id: OrgId,
    pub name: String,
}

/// The live token behind a request, with its organisation.
#[derive(Debug, Clone)]
pub struct TokenOwner {
    pub token_id: TokenId,
    pub token_prefix: String,
    pub org: Org,
}

/// Who made a management token: an owner's never expires, support's lives 90 days.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Creator {
    Owner,
    Support,
}

impl Creator {
    pub const ALL: [Creator; 2] = [Creator::Owner, Creator::Support];

    pub fn as_str(self) -> &'static str {
        match self {
            Creator::Owner => "owner",
            Creator::Support => "support",
        }
    }
}

#[derive(Debug, Clone)]
pub struct TokenRow {
    pub id: TokenId,
    pub org_id: OrgId,
    pub name: String,
    pub prefix: String,
    pub creator: Creator,
    pub created_at: String,
    pub expires_at: Option<String>,
    pub revoked_at: Option<String>,
    pub last_used_at: Option<String>,
}

pub fn create_org(db: &mut impl GenericClient, name: &OrgName) -> Result<Org, postgres::Error> {
    let id = OrgId::generate();
    db.execute("INSERT INTO orgs (id, name) VALUES ($1, $2)", &[&id, name])?;
    Ok(Org {
        id,
        name: name.to_string(),
    })
}

pub fn find_org(db: &mut impl GenericClient, id: &OrgId) -> Result<Option<Org>, postgres::Error> {
    let row = db.query_opt("SELECT id, name FROM orgs WHERE id = $1", &[id])?;
    read_opt(row, |r| {
        Ok(Org {
            id: r.try_get(0)?,
            name: r.try_get(1)?,
        })
    })
}

/// A new token of the organisation, with the hash and prefix of its secret.
pub fn create_token(
    db: &mut impl GenericClient,
    org_id: &OrgId,
    name: &TokenName,
    hash: &[u8],
    prefix: &str,
    creator: Creator,
) -> Result<TokenRow, postgres::Error> {
    let sql = format!(
        "INSERT INTO mgmt_tokens (id, org_id, name, token_hash, prefix, creator, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6,
                 CASE WHEN $6 = 'support' THEN now() + interval '90 days' END)
         RETURNING {TOKEN_COLUMNS}"
    );
    let id = TokenId::generate();
    let row = db.query_one(&sql, &[&id, org_id, name, &hash, &prefix, &creator])?;
    token_row(&row)
}

const TOKEN_COLUMNS: &str = "id, org_id, name, prefix, creator, rfc3339(created_at),
     rfc3339(expires_at), rfc3339(revoked_at), rfc3339(last_used_at)";

fn token_row(r: &postgres::Row) -> Result<TokenRow, postgres::Error> {
    Ok(TokenRow {
        id: r.try_get(0)?,
        org_id: r.try_get(1)?,
        name: r.try_get(2)?,
        prefix: r.try_get(3)?,
        creator: r.try_get(4)?,
        created_at: r.try_get(5)?,
        expires_at: r.try_get(6)?,
        revoked_at: r.try_get(7)?,
        last_used_at: r.try_get(8)?,
    })
}

pub fn find_token(
    db: &mut impl GenericClient,
    id: &TokenId,
) -> Result<Option<TokenRow>, postgres::Error> {
    let sql = format!("SELECT {TOKEN_COLUMNS} FROM mgmt_tokens WHERE id = $1");
    read_opt(db.query_opt(&sql, &[id])?, token_row)
}

pub fn list_tokens(
    db: &mut impl GenericClient,
    org_id: &OrgId,
) -> Result<Vec<TokenRow>, postgres::Error> {
    let sql = format!(
        "SELECT {TOKEN_COLUMNS} FROM mgmt_tokens WHERE org_id = $1 ORDER BY created_at DESC, id"
    );
    read_all(&db.query(&sql, &[org_id])?, token_row)
}

/// Revokes once; a second call keeps the first revocation date. `None`: no such token.
pub fn revoke_token(
    db: &mut impl GenericClient,
    id: &TokenId,
) -> Result<Option<TokenRow>, postgres::Error> {
    db.execute(
        "UPDATE mgmt_tokens SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL",
        &[id],
    )?;
    find_token(db, id)
}

/// Deletes a token and answers what it was; `None`: no such token.
pub fn delete_token(
    db: &mut impl GenericClient,
    id: &TokenId,
) -> Result<Option<TokenRow>, postgres::Error> {
    let sql = format!("DELETE FROM mgmt_tokens WHERE id = $1 RETURNING {TOKEN_COLUMNS}");
    read_opt(db.query_opt(&sql, &[id])?, token_row)
}

/// The live (not revoked, not expired) token with this hash, and its organisation.
pub fn live_token_owner(
    db: &mut impl GenericClient,
    hash: &[u8],
) -> Result<Option<TokenOwner>, postgres::Error> {
    let row = db.query_opt(
        "SELECT t.id, t.prefix, o.id, o.name
           FROM mgmt_tokens t JOIN orgs o ON o.id = t.org_id
          WHERE t.token_hash = $1 AND t.revoked_at IS NULL
            AND (t.expires_at IS NULL OR t.expires_at > now())",
        &[&hash],
    )?;
    read_opt(row, |r| {
        Ok(TokenOwner {
            token_id: r.try_get(0)?,
            token_prefix: r.try_get(1)?,
            org: Org {
                id: r.try_get(2)?,
                name: r.try_get(3)?,
            },
        })
    })
}

pub fn touch_token(db: &mut impl GenericClient, id: &TokenId) -> Result<(), postgres::Error> {
    db.execute(
        "UPDATE mgmt_tokens SET last_used_at = now() WHERE id = $1",
        &[id],
    )?;
    Ok(())
}
