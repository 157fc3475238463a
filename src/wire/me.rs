//! `GET /v1/me`: `{account: {id, name}, token: {id, prefix}}`.

use crate::ops::orgs::Me;
use serde_json::{json, Value};

pub fn me_json(me: &Me) -> Value {
    json!({
        "account": {"id": me.org.id, "name": me.org.name},
        "token": {"id": me.token_id, "prefix": me.token_prefix},
    })
}

/// The JSON Schemas of these bodies and records, by name (`super::SCHEMAS`).
pub const SCHEMAS: &str = r##"{
    "Account": {
        "type": "object",
        "description": "The caller's organisation. Its `id` is also the `partner_id` of the fragment endpoint.",
        "required": [
            "id",
            "name"
        ],
        "properties": {
            "id": {
                "type": "string",
                "pattern": "^acc_[0-9a-z]{20,}$",
                "description": "Organisation id: `acc_` followed by at least 20 characters of `[0-9a-z]`; random and unguessable, never sequential."
            },
            "name": {
                "type": "string"
            }
        }
    },
    "TokenInfo": {
        "type": "object",
        "description": "The management token used for the call.",
        "required": [
            "id",
            "prefix"
        ],
        "properties": {
            "id": {
                "type": "string",
                "pattern": "^mgt_[0-9a-z]{20,}$",
                "description": "Management token id: `mgt_` followed by at least 20 characters of `[0-9a-z]`; random and unguessable, never sequential."
            },
            "prefix": {
                "type": "string",
                "minLength": 12,
                "maxLength": 12,
                "description": "The first 12 characters of the token (e.g. `svc_mgmt_3f2`)."
            }
        }
    },
    "Me": {
        "type": "object",
        "required": [
            "account",
            "token"
        ],
        "properties": {
            "account": {
                "$ref": "#/components/schemas/Account"
            },
            "token": {
                "$ref": "#/components/schemas/TokenInfo"
            }
        }
    }
}"##;
