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

/// The JSON Schemas of these bodies and records, by name (`super::SCHEMAS`).
pub const SCHEMAS: &str = r##"{
    "Key": {
        "type": "object",
        "description": "A delivery API key (used on the fragment endpoint). Never contains the full key.",
        "required": [
            "id",
            "prefix",
            "name",
            "created_at",
            "revoked_at",
            "last_used_at"
        ],
        "properties": {
            "id": {
                "type": "string",
                "pattern": "^key_[0-9a-z]{20,}$",
                "description": "Key id: `key_` followed by at least 20 characters of `[0-9a-z]`; random and unguessable, never sequential."
            },
            "prefix": {
                "type": "string",
                "minLength": 12,
                "maxLength": 12,
                "description": "The first 12 characters of the key (e.g. `svc_live_9a1`)."
            },
            "name": {
                "type": [
                    "string",
                    "null"
                ],
                "maxLength": 100,
                "description": "Name given at creation; null when created without one."
            },
            "created_at": {
                "type": "string",
                "format": "date-time",
                "description": "Creation time (RFC 3339, UTC)."
            },
            "revoked_at": {
                "type": [
                    "string",
                    "null"
                ],
                "format": "date-time",
                "description": "Revocation time (the first one, kept on later revocations); null while live."
            },
            "last_used_at": {
                "type": [
                    "string",
                    "null"
                ],
                "format": "date-time",
                "description": "Last use on the fragment endpoint; null if never used."
            }
        }
    },
    "KeyCreate": {
        "type": "object",
        "additionalProperties": false,
        "description": "Body of `POST /v1/keys`. `{}` is valid.",
        "properties": {
            "name": {
                "type": [
                    "string",
                    "null"
                ],
                "pattern": "^[\\t\\n\\x0b\\x0c\\r \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]*(?:[^\\x00-\\x20\\x7f-\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000](?:[^\\x00-\\x1f\\x7f-\\x9f]{0,98}[^\\x00-\\x20\\x7f-\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000])?)?[\\t\\n\\x0b\\x0c\\r \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]*$",
                "description": "Optional. Trimmed, then at most 100 characters, none of them a control character (U+0000–U+001F, U+007F–U+009F: tab and line breaks included); otherwise `422` with field `name`. Absent, null, empty or only whitespace: no name (`null` in the record)."
            }
        }
    },
    "KeyCreated": {
        "description": "The new key record plus the full key, shown only here.",
        "allOf": [
            {
                "$ref": "#/components/schemas/Key"
            },
            {
                "type": "object",
                "required": [
                    "key"
                ],
                "properties": {
                    "key": {
                        "type": "string",
                        "pattern": "^[A-Za-z0-9]+_live_[0-9a-f]{40}$",
                        "description": "The full delivery key: `svc_live_` followed by 40 lowercase hexadecimal characters (`svc` is the configurable service prefix). Returned only in this response; store it now."
                    }
                }
            }
        ]
    },
    "KeyList": {
        "type": "object",
        "required": [
            "items"
        ],
        "properties": {
            "items": {
                "type": "array",
                "items": {
                    "$ref": "#/components/schemas/Key"
                },
                "description": "All keys of the organisation, revoked ones included, newest first."
            }
        }
    }
}"##;
