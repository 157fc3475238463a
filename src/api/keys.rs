//! `/v1/keys`: delivery API keys. `POST` makes a new key each call and shows it once; `GET`
//! lists them newest first, never the key; `DELETE` revokes, keeping the first revocation date.

use super::{Ctx, Reply};
use crate::auth::{self, SecretKind};
use crate::db::keys;
use crate::domain::KeyName;
use crate::error::ApiError;
use crate::wire;
use serde_json::Value;

pub fn list_keys(ctx: &mut Ctx) -> Result<Reply, ApiError> {
    let keys = keys::list_keys(&mut *ctx.db, &ctx.owner.org.id)?;
    Ok(Reply::ok(wire::key_list_json(&keys)))
}

/// `{name?}`: absent, `null` or blank means no name.
pub fn create_key(ctx: &mut Ctx, body: &Value) -> Result<Reply, ApiError> {
    let object = wire::as_object(body)?;
    wire::deny_unknown(object, &["name"], "")?;
    let name = wire::optional_str(object, "name", "name")?
        .map(KeyName::parse)
        .transpose()?
        .filter(|name| !name.is_empty());
    let secret = auth::generate(SecretKind::DeliveryKey, &ctx.app.config.prefix);
    let key = keys::create_key(
        &mut *ctx.db,
        &ctx.owner.org.id,
        name.as_deref(),
        &secret.hash,
        &secret.prefix,
    )?;
    Ok(Reply::created(wire::created_key_json(&key, &secret.value)))
}

/// Repeatable: revoking a revoked key answers the same record, first revocation date kept.
pub fn revoke_key(ctx: &mut Ctx, id: &str, body: &Value) -> Result<Reply, ApiError> {
    wire::deny_unknown(wire::as_object(body)?, &[], "")?;
    let key = keys::revoke_key(&mut *ctx.db, &ctx.owner.org.id, id)?.ok_or(ApiError::NotFound)?;
    Ok(Reply::ok(wire::key_json(&key)))
}
