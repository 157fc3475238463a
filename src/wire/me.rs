//! `GET /v1/me`: `{account: {id, name}, token: {id, prefix}}`.

use crate::ops::orgs::Me;
use serde_json::{json, Value};

pub fn me_json(me: &Me) -> Value {
    json!({
        "account": {"id": me.org.id, "name": me.org.name},
        "token": {"id": me.token_id, "prefix": me.token_prefix},
    })
}
