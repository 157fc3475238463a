//! `GET /v1/me`: `{account: {id, name}, token: {id, prefix}}`.

use crate::db::orgs::TokenOwner;
use serde_json::{json, Value};

pub fn me_json(owner: &TokenOwner) -> Value {
    json!({
        "account": {"id": owner.org.id, "name": owner.org.name},
        "token": {"id": owner.token_id, "prefix": owner.token_prefix},
    })
}
