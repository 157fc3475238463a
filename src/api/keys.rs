//! `/v1/keys`: delivery API keys.

use super::{Ctx, Reply};
use crate::error::ApiError;
use crate::ids::KeyId;
use crate::ops;
use crate::wire;
use serde_json::Value;

pub fn list_keys(ctx: &mut Ctx) -> Result<Reply, ApiError> {
    let keys = ops::keys::list_keys(&mut *ctx.db, &ctx.caller)?;
    Ok(Reply::ok(wire::key_list_json(&keys)))
}

pub fn create_key(ctx: &mut Ctx, body: &Value) -> Result<Reply, ApiError> {
    let name = wire::key_write(body)?;
    let prefix = &ctx.app.config.prefix;
    let created = ops::keys::create_key(&mut *ctx.db, &ctx.caller, name.as_ref(), prefix)?;
    Ok(Reply::created(wire::created_key_json(
        &created.key,
        &created.secret,
    )))
}

pub fn revoke_key(ctx: &mut Ctx, id: &str, body: &Value) -> Result<Reply, ApiError> {
    wire::empty_write(body)?;
    let id = KeyId::parse(id).ok_or(ApiError::NotFound)?;
    let key = ops::keys::revoke_key(&mut *ctx.db, &ctx.caller, &id)?;
    Ok(Reply::ok(wire::key_json(&key)))
}
