//! Organisations (the contract's accounts, `acc_…`) and management tokens.

use crate::ids;
use postgres::GenericClient;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Org {
    pub id: String,
    pub name: String,
}

/// The live token behind a request, with its organisation.
#[derive(Debug, Clone)]
pub struct TokenOwner {
    pub token_id: String,
    pub token_prefix: String,
    pub org: Org,
}

#[derive(Debug, Clone)]
pub struct TokenRow {
    pub id: String,
    pub org_id: String,
    pub name: String,
    pub prefix: String,
    pub creator: String,
    pub created_at: String,
    pub expires_at: Option<String>,
    pub revoked_at: Option<String>,
    pub last_used_at: Option<String>,
}

pub fn create_org(db: &mut impl GenericClient, name: &str) -> Result<Org, postgres::Error> {
    let id = ids::new_id(ids::ORG);
    db.execute("INSERT INTO orgs (id, name) VALUES ($1, $2)", &[&id, &name])?;
    Ok(Org {
        id,
        name: name.to_string(),
    })
}

pub fn find_org(db: &mut impl GenericClient, id: &str) -> Result<Option<Org>, postgres::Error> {
    let row = db.query_opt("SELECT id, name FROM orgs WHERE id = $1", &[&id])?;
    Ok(row.map(|r| Org {
        id: r.get(0),
        name: r.get(1),
    }))
}

/// Support-created tokens live 90 days; owner tokens never expire.
pub fn create_token(
    db: &mut impl GenericClient,
    org_id: &str,
    name: &str,
    hash: &[u8],
    prefix: &str,
    support: bool,
) -> Result<TokenRow, postgres::Error> {
    let id = ids::new_id(ids::TOKEN);
    let creator = if support { "support" } else { "owner" };
    let row = db.query_one(
        "INSERT INTO mgmt_tokens (id, org_id, name, token_hash, prefix, creator, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6,
                 CASE WHEN $6 = 'support' THEN now() + interval '90 days' END)
         RETURNING id",
        &[&id, &org_id, &name, &hash, &prefix, &creator],
    )?;
    let id: String = row.get(0);
    Ok(find_token(db, &id)?.expect("token row just inserted"))
}

const TOKEN_COLUMNS: &str = "id, org_id, name, prefix, creator, rfc3339(created_at),
     rfc3339(expires_at), rfc3339(revoked_at), rfc3339(last_used_at)";

fn token_row(r: &postgres::Row) -> TokenRow {
    TokenRow {
        id: r.get(0),
        org_id: r.get(1),
        name: r.get(2),
        prefix: r.get(3),
        creator: r.get(4),
        created_at: r.get(5),
        expires_at: r.get(6),
        revoked_at: r.get(7),
        last_used_at: r.get(8),
    }
}

pub fn find_token(
    db: &mut impl GenericClient,
    id: &str,
) -> Result<Option<TokenRow>, postgres::Error> {
    let sql = format!("SELECT {TOKEN_COLUMNS} FROM mgmt_tokens WHERE id = $1");
    Ok(db.query_opt(&sql, &[&id])?.as_ref().map(token_row))
}

pub fn list_tokens(
    db: &mut impl GenericClient,
    org_id: &str,
) -> Result<Vec<TokenRow>, postgres::Error> {
    let sql = format!(
        "SELECT {TOKEN_COLUMNS} FROM mgmt_tokens WHERE org_id = $1 ORDER BY created_at DESC, id"
    );
    Ok(db.query(&sql, &[&org_id])?.iter().map(token_row).collect())
}

/// Revokes once; a second call keeps the first revocation date. `None`: no such token.
pub fn revoke_token(
    db: &mut impl GenericClient,
    id: &str,
) -> Result<Option<TokenRow>, postgres::Error> {
    db.execute(
        "UPDATE mgmt_tokens SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL",
        &[&id],
    )?;
    find_token(db, id)
}

pub fn delete_token(db: &mut impl GenericClient, id: &str) -> Result<bool, postgres::Error> {
    Ok(db.execute("DELETE FROM mgmt_tokens WHERE id = $1", &[&id])? == 1)
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
    Ok(row.map(|r| TokenOwner {
        token_id: r.get(0),
        token_prefix: r.get(1),
        org: Org {
            id: r.get(2),
            name: r.get(3),
        },
    }))
}

pub fn touch_token(db: &mut impl GenericClient, id: &str) -> Result<(), postgres::Error> {
    db.execute(
        "UPDATE mgmt_tokens SET last_used_at = now() WHERE id = $1",
        &[&id],
    )?;
    Ok(())
}
