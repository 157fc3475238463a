//! Delivery API keys: created and revoked through `/v1/keys`, deleted (revoked ones only) from
//! the console. Only the key's SHA-256 hash and its 12-character prefix are stored.

use crate::ids;
use postgres::GenericClient;

/// A key as listed: never the key itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyRow {
    pub id: String,
    pub prefix: String,
    pub name: Option<String>,
    pub created_at: String,
    pub revoked_at: Option<String>,
    pub last_used_at: Option<String>,
}

const KEY_COLUMNS: &str = "id, prefix, name, rfc3339(created_at), rfc3339(revoked_at),
     rfc3339(last_used_at)";

fn key_row(r: &postgres::Row) -> KeyRow {
    KeyRow {
        id: r.get(0),
        prefix: r.get(1),
        name: r.get(2),
        created_at: r.get(3),
        revoked_at: r.get(4),
        last_used_at: r.get(5),
    }
}

pub fn create_key(
    db: &mut impl GenericClient,
    org_id: &str,
    name: Option<&str>,
    hash: &[u8],
    prefix: &str,
) -> Result<KeyRow, postgres::Error> {
    let id = ids::new_id(ids::KEY);
    let sql = format!(
        "INSERT INTO delivery_keys (id, org_id, name, key_hash, prefix)
         VALUES ($1, $2, $3, $4, $5) RETURNING {KEY_COLUMNS}"
    );
    let row = db.query_one(&sql, &[&id, &org_id, &name, &hash, &prefix])?;
    Ok(key_row(&row))
}

/// The organisation's keys, newest first (ties by id), revoked ones included.
pub fn list_keys(
    db: &mut impl GenericClient,
    org_id: &str,
) -> Result<Vec<KeyRow>, postgres::Error> {
    let sql = format!(
        "SELECT {KEY_COLUMNS} FROM delivery_keys WHERE org_id = $1
          ORDER BY created_at DESC, id COLLATE \"C\""
    );
    Ok(db.query(&sql, &[&org_id])?.iter().map(key_row).collect())
}

/// Any key by id, whatever its organisation (the console's view).
pub fn find_key(db: &mut impl GenericClient, id: &str) -> Result<Option<KeyRow>, postgres::Error> {
    let sql = format!("SELECT {KEY_COLUMNS} FROM delivery_keys WHERE id = $1");
    Ok(db.query_opt(&sql, &[&id])?.as_ref().map(key_row))
}

/// Revokes the organisation's key once: a later call keeps the first revocation date.
/// `None`: no such key in this organisation.
pub fn revoke_key(
    db: &mut impl GenericClient,
    org_id: &str,
    id: &str,
) -> Result<Option<KeyRow>, postgres::Error> {
    // One statement, so two concurrent revocations still keep a single, first date.
    let sql = format!(
        "UPDATE delivery_keys SET revoked_at = coalesce(revoked_at, now())
          WHERE id = $1 AND org_id = $2 RETURNING {KEY_COLUMNS}"
    );
    Ok(db.query_opt(&sql, &[&id, &org_id])?.as_ref().map(key_row))
}

/// Deletes a key only if it is revoked; `true` when a row went.
pub fn delete_revoked_key(db: &mut impl GenericClient, id: &str) -> Result<bool, postgres::Error> {
    let deleted = db.execute(
        "DELETE FROM delivery_keys WHERE id = $1 AND revoked_at IS NOT NULL",
        &[&id],
    )?;
    Ok(deleted == 1)
}
