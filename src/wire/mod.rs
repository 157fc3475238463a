//! JSON on the wire: the strict body parser, the readers of request members with the field
//! paths the contract names, and the record shapes of every response.
//!
//! Validation runs in stages: here the JSON syntax (`400 invalid_json`), unknown members
//! (`400 unknown_field`, nested ones included) and member types (`422 validation`); the
//! meaning of each value is checked by `crate::domain`.
//!
//! Names: what our code calls the organisation (`org`, id `acc_…`) is the contract's
//! *account* on the wire (`account` in `GET /v1/me`, a card's `account_id`), and the
//! fragment endpoint's `partner_id`. This module and `crate::delivery::params` translate.

mod cards;
mod contact;
mod fragments;
mod keys;
mod me;
mod routes;
mod sites;

pub use cards::{card_json, card_list_json, eligibility_json, eligibility_write};
pub use contact::{contact_message, ContactMessage};
pub use fragments::{fragment_json, fragment_list_json, fragment_write, fragment_write_json};
pub use keys::{created_key_json, key_json, key_list_json, key_write};
pub use me::me_json;
pub use routes::{route_json, route_list, route_list_json, route_write};
pub use sites::{default_fragment_write, site_json, site_list_json, site_write};

use crate::error::ApiError;
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::fmt;

pub type Object = Map<String, Value>;

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Parses a request body: a leading UTF-8 byte order mark is skipped (it was counted in the
/// size limit already), and an object naming the same member twice is `invalid_json`.
pub fn parse_body(bytes: &[u8]) -> Result<Value, ApiError> {
    let bytes = bytes.strip_prefix(BOM).unwrap_or(bytes);
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let Strict(value) =
        Strict::deserialize(&mut deserializer).map_err(|_| ApiError::InvalidJson)?;
    deserializer.end().map_err(|_| ApiError::InvalidJson)?;
    Ok(value)
}

/// A JSON value whose objects never repeat a member.
struct Strict(Value);

impl<'de> Deserialize<'de> for Strict {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(StrictVisitor).map(Strict)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(v.into())
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(v.into())
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(Strict(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let Strict(value) = map.next_value()?;
            if object.insert(key, value).is_some() {
                return Err(de::Error::custom("duplicate member"));
            }
        }
        Ok(Value::Object(object))
    }
}

/// The `{}` body of a `DELETE`: an object without members.
pub fn empty_write(body: &Value) -> Result<(), ApiError> {
    deny_unknown(as_object(body)?, &[], "")
}

/// The body as an object; any other JSON value is `422` with field `body`.
pub fn as_object(body: &Value) -> Result<&Object, ApiError> {
    body.as_object()
        .ok_or_else(|| ApiError::validation("body", "the body must be a JSON object"))
}

/// Refuses a member not in `allowed`, naming it `{prefix}{name}` (e.g. `routes[3].foo`).
pub fn deny_unknown(object: &Object, allowed: &[&str], prefix: &str) -> Result<(), ApiError> {
    match object.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(unknown) => Err(ApiError::UnknownField(format!("{prefix}{unknown}"))),
        None => Ok(()),
    }
}

/// Applies `deny_unknown` to every object item of the array member `name` (items of another
/// type are left to the shape checks).
pub fn deny_unknown_in_items(
    object: &Object,
    name: &str,
    allowed: &[&str],
) -> Result<(), ApiError> {
    let Some(Value::Array(items)) = object.get(name) else {
        return Ok(());
    };
    for (index, item) in items.iter().enumerate() {
        if let Value::Object(entry) = item {
            deny_unknown(entry, allowed, &format!("{name}[{index}]."))?;
        }
    }
    Ok(())
}

/// An optional string member; `null` means absent. Another type is `422` on `field`.
pub fn optional_str<'a>(
    object: &'a Object,
    name: &str,
    field: &str,
) -> Result<Option<&'a str>, ApiError> {
    match object.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(ApiError::validation(
            field,
            format!("{field} must be a string"),
        )),
    }
}

/// A required string member: absent or `null` is `422` on `field`.
pub fn required_str<'a>(object: &'a Object, name: &str, field: &str) -> Result<&'a str, ApiError> {
    optional_str(object, name, field)?
        .ok_or_else(|| ApiError::validation(field, format!("{field} is required")))
}

/// A required array member.
pub fn required_array<'a>(object: &'a Object, name: &str) -> Result<&'a [Value], ApiError> {
    match object.get(name) {
        Some(Value::Array(items)) => Ok(items),
        None | Some(Value::Null) => Err(ApiError::validation(name, format!("{name} is required"))),
        Some(_) => Err(ApiError::validation(
            name,
            format!("{name} must be an array"),
        )),
    }
}

/// An array item that must be an object, with its `name[i]` field path on refusal.
pub fn item_object<'a>(item: &'a Value, name: &str, index: usize) -> Result<&'a Object, ApiError> {
    item.as_object().ok_or_else(|| {
        ApiError::validation(format!("{name}[{index}]"), "each item must be an object")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn body_parser_cases() {
        let cases: Vec<(&[u8], Option<Value>)> = vec![
            (b"{}", Some(json!({}))),
            (b"\xEF\xBB\xBF{\"a\":1}", Some(json!({"a": 1}))),
            (b"{\"a\":1,\"a\":2}", None),
            (b"{\"o\":{\"b\":1,\"b\":1}}", None),
            (b"[{\"b\":1},{\"b\":1}]", Some(json!([{"b": 1}, {"b": 1}]))),
            (b"{\"a\":1} x", None),
            (b"", None),
            (b"{\"a\":", None),
            (b"\"text\"", Some(json!("text"))),
        ];
        for (input, expected) in cases {
            let got = parse_body(input).ok();
            assert_eq!(got, expected, "{}", String::from_utf8_lossy(input));
        }
    }

    #[test]
    fn unknown_members_are_named_with_their_path() {
        let body =
            json!({"routes": [{"path_prefix": "/", "match": "exact", "ref": "a"}, 5, {"x": 1}]});
        let object = body.as_object().unwrap();
        assert!(deny_unknown(object, &["routes"], "").is_ok());
        let error =
            deny_unknown_in_items(object, "routes", &["path_prefix", "match", "ref"]).unwrap_err();
        assert_eq!(error.to_json()["error"]["field"], "routes[2].x");
    }

    #[test]
    fn member_readers_treat_null_as_absent() {
        let body = json!({"a": null, "b": "x", "c": 3});
        let o = body.as_object().unwrap();
        assert_eq!(optional_str(o, "a", "a").unwrap(), None);
        assert_eq!(optional_str(o, "b", "b").unwrap(), Some("x"));
        assert_eq!(optional_str(o, "c", "c").unwrap_err().status(), 422);
        assert_eq!(required_str(o, "a", "a").unwrap_err().status(), 422);
    }
}
