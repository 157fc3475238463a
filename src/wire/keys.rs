//! Delivery key records: listed without the key; the `POST /v1/keys` answer adds `key`, the
//! only place the full key ever appears. The `POST`'s body.

use super::{as_object, deny_unknown, optional_str};
use crate::db::keys::KeyRow;
use crate::domain::KeyName;
use crate::error::ApiError;
use serde_json::{json, Value};

/// `POST /v1/keys`'s `{name?}`: absent, `null` or blank means no name.
pub fn key_write(body: &Value) -> Result<Option<KeyName>, ApiError> {
    let object = as_object(body)?;
    deny_unknown(object, &["name"], "")?;
    match optional_str(object, "name", "name")? {
        Some(name) => Ok(KeyName::parse(name)?),
        None => Ok(None),
    }
}

pub fn key_json(key: &KeyRow) -> Value {
    json!({
        "id": key.id,
        "prefix": key.prefix,
        "name": key.name,
        "created_at": key.created_at,
        "revoked_at": key.revoked_at,
        "last_used_at": key.last_used_at,
    })
}

pub fn key_list_json(keys: &[KeyRow]) -> Value {
    json!({"items": keys.iter().map(key_json).collect::<Vec<_>>()})
}

/// The record of a key just created, with the full key shown this once.
pub fn created_key_json(key: &KeyRow, full_key: &str) -> Value {
    let mut record = key_json(key);
    record["key"] = json!(full_key);
    record
}
