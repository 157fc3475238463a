//! `/v1/keys`: delivery API keys. `POST` makes a new key each call and shows it once; `GET`
//! lists them newest first, never the key; `DELETE` revokes, keeping the first revocation date.

use super::{Ctx, Reply};
use crate::auth::{self, SecretKind};
use crate::db::keys;
use crate::error::ApiError;
use crate::ids::KeyId;
use crate::wire;
use serde_json::Value;

pub fn list_keys(ctx: &mut Ctx) -> Result<Reply, ApiError> {
    let keys = keys::list_keys(&mut *ctx.db, &ctx.owner.org.id)?;
    Ok(Reply::ok(wire::key_list_json(&keys)))
}

pub fn create_key(ctx: &mut Ctx, body: &Value) -> Result<Reply, ApiError> {
    let name = wire::key_write(body)?;
    let secret = auth::generate(SecretKind::DeliveryKey, &ctx.app.config.prefix);
    let key = keys::create_key(
        &mut *ctx.db,
        &ctx.owner.org.id,
        name.as_ref(),
        &secret.hash,
        &secret.prefix,
    )?;
    Ok(Reply::created(wire::created_key_json(&key, &secret.value)))
}

/// Repeatable: revoking a revoked key answers the same record, first revocation date kept.
pub fn revoke_key(ctx: &mut Ctx, id: &str, body: &Value) -> Result<Reply, ApiError> {
    wire::empty_write(body)?;
    let id = KeyId::parse(id).ok_or(ApiError::NotFound)?;
    let key = keys::revoke_key(&mut *ctx.db, &ctx.owner.org.id, &id)?.ok_or(ApiError::NotFound)?;
    Ok(Reply::ok(wire::key_json(&key)))
}
