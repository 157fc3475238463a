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

/// The schemas of the shapes every resource shares and of the error body, by name; with the
/// other files' they are `openapi.json`'s `components.schemas`.
const SHARED_SCHEMAS: &str = r#"{
    "Error": {
        "type": "object",
        "required": [
            "error"
        ],
        "properties": {
            "error": {
                "type": "object",
                "required": [
                    "code",
                    "message"
                ],
                "properties": {
                    "code": {
                        "type": "string",
                        "enum": [
                            "unsupported_media_type",
                            "body_too_large",
                            "invalid_json",
                            "unknown_field",
                            "missing_token",
                            "invalid_token",
                            "platform_card",
                            "not_found",
                            "conflict",
                            "validation",
                            "rate_limited",
                            "internal",
                            "method_not_allowed"
                        ],
                        "description": "Stable code; branch on it (and on `field`)."
                    },
                    "message": {
                        "type": "string",
                        "description": "Console wording; may change."
                    },
                    "field": {
                        "type": "string",
                        "description": "The member at fault (e.g. `name`, `ref`, `path_prefix`, `match`, `body`, `routes`, `routes[3].path_prefix`, `fragments[0].domain`, `key_values.<key>`, `domain`). Present on `unknown_field`, `validation` and `conflict` only."
                    },
                    "retry_after": {
                        "type": "integer",
                        "const": 60,
                        "description": "Seconds to wait; present on `rate_limited` only."
                    }
                },
                "allOf": [
                    {
                        "if": {
                            "properties": {
                                "code": {
                                    "enum": [
                                        "unknown_field",
                                        "validation",
                                        "conflict"
                                    ]
                                }
                            }
                        },
                        "then": {
                            "required": [
                                "field"
                            ]
                        },
                        "else": {
                            "not": {
                                "required": [
                                    "field"
                                ]
                            }
                        }
                    },
                    {
                        "if": {
                            "properties": {
                                "code": {
                                    "const": "rate_limited"
                                }
                            }
                        },
                        "then": {
                            "required": [
                                "retry_after"
                            ]
                        },
                        "else": {
                            "not": {
                                "required": [
                                    "retry_after"
                                ]
                            }
                        }
                    }
                ]
            }
        }
    },
    "EmptyObject": {
        "type": "object",
        "additionalProperties": false,
        "maxProperties": 0,
        "description": "The empty JSON object `{}`."
    },
    "Ref": {
        "type": "string",
        "minLength": 1,
        "maxLength": 200,
        "pattern": "^[A-Za-z0-9/_.:-]{1,200}$",
        "not": {
            "type": "string",
            "pattern": "(^|/)\\.{1,2}(/|$)"
        },
        "description": "A fragment reference: its address within its site. 1 to 200 characters among `A-Z a-z 0-9 / _ - . :`; case-sensitive (`/Politics` and `/politics` are two fragments); no path segment may be exactly `.` or `..` (a dot inside a segment is allowed). In JSON bodies a plain string, never percent-encoded, not trimmed."
    },
    "Domain": {
        "type": "string",
        "minLength": 1,
        "maxLength": 253,
        "pattern": "^(?!.*\\.(?:[0-9]+|0x[0-9a-f]*)$)(?=.{1,253}$)(?!(?:[0-9]+\\.){3}[0-9]+$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\\.)+[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$",
        "description": "A site's bare domain as stored: lowercase host name of 2 or more dot-separated labels, each 1–63 of `[a-z0-9-]` not starting or ending with `-`, at most 253 in total; no scheme, path, port, user info, trailing dot, IP literal or non-ASCII (IDNs in `xn--` form). `www.<domain>` and `<domain>` are two different sites.",
        "examples": [
            "example.com"
        ]
    },
    "DomainInput": {
        "type": "string",
        "pattern": "^[\\t\\n\\x0b\\x0c\\r \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]*(?!.*\\.(?:[0-9]+|0[xX][0-9A-Fa-f]*)[\\t\\n\\x0b\\x0c\\r \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]*$)(?![0-9.]+[\\t\\n\\x0b\\x0c\\r \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]*$)(?=[A-Za-z0-9.-]{1,253}[\\t\\n\\x0b\\x0c\\r \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]*$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+[\\t\\n\\x0b\\x0c\\r \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]*$",
        "description": "A site's domain as a client sends it (path `{domain}`, `fragments[i].domain`). Trimmed and lowercased by the server, then: 2 or more dot-separated labels, each 1–63 of `[a-z0-9-]` not starting or ending with `-`, at most 253 characters in total, not only digits and dots (an IP literal), no numeric last label (`a.123`, `a.0x1f`: a URL would read an IPv4 address), `xn--` labels valid Punycode (not expressible here); no scheme, path, port, user info, trailing dot or non-ASCII (IDNs in `xn--` form). The pattern states exactly that rule, around optional surrounding whitespace.",
        "examples": [
            "example.com",
            "www.example.com"
        ]
    },
    "Lang": {
        "type": "string",
        "enum": [
            "fr",
            "en",
            "de",
            "es",
            "it"
        ],
        "description": "Language."
    },
    "KeyValues": {
        "type": "object",
        "description": "Targeting key-values (legacy targeting): each key maps to a non-empty list of non-empty strings. `{}` when none.",
        "propertyNames": {
            "pattern": "^[a-z0-9_-]{1,64}$"
        },
        "additionalProperties": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "string",
                "minLength": 1
            }
        }
    }
}"#;

/// The JSON Schema of every shape on the wire, each file's by name in a JSON object:
/// `api::openapi` puts them in `components.schemas`.
pub const SCHEMAS: [&str; 7] = [
    SHARED_SCHEMAS,
    me::SCHEMAS,
    sites::SCHEMAS,
    fragments::SCHEMAS,
    routes::SCHEMAS,
    cards::SCHEMAS,
    keys::SCHEMAS,
];

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
