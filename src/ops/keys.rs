//! Delivery keys: `POST /v1/keys` makes a new key each call and shows it once; the list never
//! shows a key; `DELETE` revokes, keeping the first revocation date; the console deletes
//! revoked keys.

use super::audit::{self, revocation_words, AuditEntry, Operation};
use super::{Caller, Scope};
use crate::auth::{self, SecretKind};
use crate::db::keys::{self, KeyRow};
use crate::domain::KeyName;
use crate::error::ApiError;
use crate::ids::KeyId;
use postgres::GenericClient;

/// A key just made, with the full key: the only time it is shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreatedKey {
    pub key: KeyRow,
    pub secret: String,
}

pub fn list_keys(db: &mut impl GenericClient, caller: &Caller) -> Result<Vec<KeyRow>, ApiError> {
    Ok(keys::list_keys(db, &caller.org.id)?)
}

/// A new key of the caller's organisation, of the service `prefix` (`svc_live_…`).
pub fn create_key(
    db: &mut impl GenericClient,
    caller: &Caller,
    name: Option<&KeyName>,
    prefix: &str,
) -> Result<CreatedKey, ApiError> {
    let secret = auth::generate(SecretKind::DeliveryKey, prefix);
    let mut tx = db.transaction()?;
    let key = keys::create_key(&mut tx, &caller.org.id, name, &secret.hash, &secret.prefix)?;
    audit::record(&mut tx, caller, key_entry(Operation::CreateKey, &key))?;
    tx.commit()?;
    Ok(CreatedKey {
        key,
        secret: secret.value,
    })
}

/// Repeatable: revoking a revoked key answers the same record, first revocation date kept.
pub fn revoke_key(
    db: &mut impl GenericClient,
    caller: &Caller,
    id: &KeyId,
) -> Result<KeyRow, ApiError> {
    let mut tx = db.transaction()?;
    let before = keys::lock_key(&mut tx, id)?
        .filter(|key| key.org_id == caller.org.id)
        .ok_or(ApiError::NotFound)?;
    let key = keys::revoke_key(&mut tx, &caller.org.id, id)?.ok_or(ApiError::NotFound)?;
    let entry = key_entry(Operation::RevokeKey, &key).change(
        "status",
        revocation_words(before.revoked_at.as_ref()),
        revocation_words(key.revoked_at.as_ref()),
    );
    audit::record(&mut tx, caller, entry)?;
    tx.commit()?;
    Ok(key)
}

/// Deletes a revoked key (a console action); a live key is refused, to be revoked first.
pub fn delete_revoked_key(
    db: &mut impl GenericClient,
    scope: Scope,
    id: &KeyId,
) -> Result<KeyRow, ApiError> {
    let mut tx = db.transaction()?;
    let key = keys::lock_key(&mut tx, id)?
        .filter(|key| scope.reaches(Some(&key.org_id)))
        .ok_or(ApiError::NotFound)?;
    if !key.is_revoked() {
        return Err(ApiError::validation(
            "id",
            format!("key {id} is live: revoke it first (DELETE /v1/keys/{id}), then delete it"),
        ));
    }
    keys::delete_revoked_key(&mut tx, id)?;
    audit::record_by(
        &mut tx,
        Some(&key.org_id),
        scope.actor(),
        key_entry(Operation::DeleteKey, &key),
    )?;
    tx.commit()?;
    Ok(key)
}

/// A key's entry, named by its name (never the key itself).
fn key_entry(operation: Operation, key: &KeyRow) -> AuditEntry<'_> {
    let entry = AuditEntry::new(operation, "key", key.id.as_str());
    match &key.name {
        Some(name) => entry.named(name.as_str()),
        None => entry,
    }
}
