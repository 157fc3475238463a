//! Delivery API keys: created and revoked through `/v1/keys`, deleted (revoked ones only) from
//! the console. Only the key's SHA-256 hash and its 12-character prefix are stored.

use super::{read_all, read_opt};
use crate::domain::KeyName;
use crate::ids::{KeyId, OrgId};
use postgres::GenericClient;

/// A key as listed: never the key itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyRow {
    pub id: KeyId,
    pub org_id: OrgId,
    pub prefix: String,
    pub name: Option<String>,
    pub created_at: String,
    pub revoked_at: Option<String>,
    pub last_used_at: Option<String>,
}

impl KeyRow {
    pub fn is_revoked(&self) -> bool {
        self.revoked_at.is_some()
    }
}

const KEY_COLUMNS: &str = "id, org_id, prefix, name, rfc3339(created_at), rfc3339(revoked_at),
     rfc3339(last_used_at)";

fn key_row(r: &postgres::Row) -> Result<KeyRow, postgres::Error> {
    Ok(KeyRow {
        id: r.try_get(0)?,
        org_id: r.try_get(1)?,
        prefix: r.try_get(2)?,
        name: r.try_get(3)?,
        created_at: r.try_get(4)?,
        revoked_at: r.try_get(5)?,
        last_used_at: r.try_get(6)?,
    })
}

pub fn create_key(
    db: &mut impl GenericClient,
    org_id: &OrgId,
    name: Option<&KeyName>,
    hash: &[u8],
    prefix: &str,
) -> Result<KeyRow, postgres::Error> {
    let sql = format!(
        "INSERT INTO delivery_keys (id, org_id, name, key_hash, prefix)
         VALUES ($1, $2, $3, $4, $5) RETURNING {KEY_COLUMNS}"
    );
    let id = KeyId::generate();
    key_row(&db.query_one(&sql, &[&id, org_id, &name, &hash, &prefix])?)
}

/// The organisation's keys, newest first (ties by id), revoked ones included.
pub fn list_keys(
    db: &mut impl GenericClient,
    org_id: &OrgId,
) -> Result<Vec<KeyRow>, postgres::Error> {
    let sql = format!(
        "SELECT {KEY_COLUMNS} FROM delivery_keys WHERE org_id = $1
          ORDER BY created_at DESC, id COLLATE \"C\""
    );
    read_all(&db.query(&sql, &[org_id])?, key_row)
}

/// Any key by id, whatever its organisation (the console's view), locked until the
/// transaction ends.
pub fn lock_key(
    db: &mut impl GenericClient,
    id: &KeyId,
) -> Result<Option<KeyRow>, postgres::Error> {
    let sql = format!("SELECT {KEY_COLUMNS} FROM delivery_keys WHERE id = $1 FOR UPDATE");
    read_opt(db.query_opt(&sql, &[id])?, key_row)
}

/// Revokes the organisation's key once: a later call keeps the first revocation date.
/// `None`: no such key in this organisation.
pub fn revoke_key(
    db: &mut impl GenericClient,
    org_id: &OrgId,
    id: &KeyId,
) -> Result<Option<KeyRow>, postgres::Error> {
    // One statement, so two concurrent revocations still keep a single, first date.
    let sql = format!(
        "UPDATE delivery_keys SET revoked_at = coalesce(revoked_at, now())
          WHERE id = $1 AND org_id = $2 RETURNING {KEY_COLUMNS}"
    );
    read_opt(db.query_opt(&sql, &[id, org_id])?, key_row)
}

/// Deletes a key only if it is revoked; `true` when a row went.
pub fn delete_revoked_key(
    db: &mut impl GenericClient,
    id: &KeyId,
) -> Result<bool, postgres::Error> {
    let deleted = db.execute(
        "DELETE FROM delivery_keys WHERE id = $1 AND revoked_at IS NOT NULL",
        &[id],
    )?;
    Ok(deleted == 1)
}
