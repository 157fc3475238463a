//! Fragment bodies: the whole-object `PUT …/fragments/{ref}` request and the fragment record
//! `{id, ref, name, lang, description, key_values, status, created_at, updated_at}`; the write
//! answers the same record plus `warnings`.

use super::{as_object, deny_unknown, optional_str, required_str};
use crate::db::fragments::FragmentRow;
use crate::domain::{Description, FragmentName, FragmentStatus, KeyValues, Lang};
use crate::error::ApiError;
use crate::ops::fragments::FragmentWrite;
use serde_json::{json, Value};

const MEMBERS: &[&str] = &["name", "lang", "description", "key_values", "status"];

pub fn fragment_write(body: &Value) -> Result<FragmentWrite, ApiError> {
    let object = as_object(body)?;
    deny_unknown(object, MEMBERS, "")?;
    let name = FragmentName::parse(required_str(object, "name", "name")?)?;
    let lang = match optional_str(object, "lang", "lang")? {
        Some(code) => Lang::parse(code, "lang")?,
        None => Lang::default(),
    };
    let description = match optional_str(object, "description", "description")? {
        Some(text) => Description::parse(text)?,
        None => None,
    };
    let key_values = match object.get("key_values") {
        None | Some(Value::Null) => KeyValues::default(),
        Some(value) => KeyValues::parse(value)?,
    };
    let status = optional_str(object, "status", "status")?
        .map(FragmentStatus::parse)
        .transpose()?;
    Ok(FragmentWrite {
        name,
        lang,
        description,
        key_values,
        status,
    })
}

pub fn fragment_json(fragment: &FragmentRow) -> Value {
    json!({
        "id": fragment.id,
        "ref": fragment.fragment_ref,
        "name": fragment.name,
        "lang": fragment.lang.as_str(),
        "description": fragment.description,
        "key_values": fragment.key_values,
        "status": fragment.status.as_str(),
        "created_at": fragment.created_at,
        "updated_at": fragment.updated_at,
    })
}

/// The answer of a fragment write: the record plus its `warnings`.
pub fn fragment_write_json(fragment: &FragmentRow, warnings: &[String]) -> Value {
    let mut record = fragment_json(fragment);
    record["warnings"] = json!(warnings);
    record
}

pub fn fragment_list_json(fragments: &[FragmentRow]) -> Value {
    json!({ "items": fragments.iter().map(fragment_json).collect::<Vec<_>>() })
}

/// The JSON Schemas of these bodies and records, by name (`super::SCHEMAS`).
pub const SCHEMAS: &str = r##"{
    "FragmentStatus": {
        "type": "string",
        "enum": [
            "active",
            "paused"
        ]
    },
    "KeyValuesInput": {
        "type": "object",
        "description": "Targeting key-values as written. At most 50 keys; keys 1–64 characters of `a-z 0-9 _ -`, `__proto__` refused; each key maps to a non-empty list of at most 50 values; each value is trimmed, then 1–200 characters without a comma, a line break or any other control character. A refused entry is `422` with field `key_values.<key>` (or `key_values` for the whole object).",
        "maxProperties": 50,
        "propertyNames": {
            "pattern": "^[a-z0-9_-]{1,64}$",
            "not": {
                "const": "__proto__"
            }
        },
        "additionalProperties": {
            "type": "array",
            "minItems": 1,
            "maxItems": 50,
            "items": {
                "type": "string",
                "pattern": "^[\\t\\n\\x0b\\x0c\\r \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]*[^\\x00-\\x20\\x7f-\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000,](?:[^\\x00-\\x1f\\x7f-\\x9f,\\u2028\\u2029]{0,198}[^\\x00-\\x20\\x7f-\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000,])?[\\t\\n\\x0b\\x0c\\r \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]*$",
                "description": "Trimmed, then 1–200 characters, none of them a comma, a line break (U+2028 and U+2029 included) or a control character (U+0000–U+001F, U+007F–U+009F: tabs included)."
            }
        },
        "examples": [
            {
                "section": [
                    "politics",
                    "france"
                ]
            }
        ]
    },
    "Fragment": {
        "type": "object",
        "description": "A fragment of a site.",
        "required": [
            "id",
            "ref",
            "name",
            "lang",
            "description",
            "key_values",
            "status",
            "created_at",
            "updated_at"
        ],
        "properties": {
            "id": {
                "type": "string",
                "pattern": "^frg_[0-9a-z]{20,}$",
                "description": "Fragment id: `frg_` followed by at least 20 characters of `[0-9a-z]`; random and unguessable, never sequential."
            },
            "ref": {
                "type": [
                    "string",
                    "null"
                ],
                "minLength": 1,
                "maxLength": 200,
                "pattern": "^[A-Za-z0-9/_.:-]{1,200}$",
                "not": {
                    "type": "string",
                    "pattern": "(^|/)\\.{1,2}(/|$)"
                },
                "description": "The fragment's reference; null when created in the console without one (such a fragment cannot be written, made the site default, targeted by a rule or made a card's eligibility through the API). Cannot be changed through the API."
            },
            "name": {
                "type": "string",
                "minLength": 1,
                "maxLength": 200
            },
            "lang": {
                "$ref": "#/components/schemas/Lang"
            },
            "description": {
                "type": [
                    "string",
                    "null"
                ],
                "minLength": 1,
                "maxLength": 2000,
                "description": "Null when none."
            },
            "key_values": {
                "$ref": "#/components/schemas/KeyValues"
            },
            "status": {
                "$ref": "#/components/schemas/FragmentStatus"
            },
            "created_at": {
                "type": "string",
                "format": "date-time",
                "description": "Creation time (RFC 3339, UTC)."
            },
            "updated_at": {
                "type": "string",
                "format": "date-time",
                "description": "Last update time (RFC 3339, UTC)."
            }
        }
    },
    "FragmentWrite": {
        "type": "object",
        "additionalProperties": false,
        "description": "Body of `PUT /v1/sites/{domain}/fragments/{ref}`: the **whole** fragment. On update, a member left out (or null) is reset: `lang` goes back to `fr`, the description is removed, `key_values` becomes `{}`; only `status` is kept. The reference comes from the path; a `ref` member is `400 unknown_field`.",
        "required": [
            "name"
        ],
        "properties": {
            "name": {
                "type": "string",
                "pattern": "^[\\t\\n\\x0b\\x0c\\r \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]*[^\\x00-\\x20\\x7f-\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000](?:[^\\x00-\\x1f\\x7f-\\x9f]{0,198}[^\\x00-\\x20\\x7f-\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000])?[\\t\\n\\x0b\\x0c\\r \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]*$",
                "description": "Required (missing or null is `422` with field `name`). Trimmed, then 1–200 characters, none of them a control character (U+0000–U+001F, U+007F–U+009F: tab and line breaks included); otherwise `422` with field `name`."
            },
            "lang": {
                "anyOf": [
                    {
                        "$ref": "#/components/schemas/Lang"
                    },
                    {
                        "type": "null"
                    }
                ],
                "default": "fr",
                "description": "One of `fr`, `en`, `de`, `es`, `it`. Absent or null: `fr`."
            },
            "description": {
                "type": [
                    "string",
                    "null"
                ],
                "pattern": "^[\\t\\n\\x0b\\x0c\\r \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]*(?:[^\\x00-\\x20\\x7f-\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000](?:[^\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f\\x7f-\\x9f]{0,1998}[^\\x00-\\x20\\x7f-\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000])?)?[\\t\\n\\x0b\\x0c\\r \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]*$",
                "description": "Trimmed, then at most 2000 characters, none of them a control character other than tab, line feed and carriage return; otherwise `422` with field `description`. Absent, null, empty or only whitespace means none."
            },
            "key_values": {
                "anyOf": [
                    {
                        "$ref": "#/components/schemas/KeyValuesInput"
                    },
                    {
                        "type": "null"
                    }
                ],
                "description": "Targeting key-values. Absent or null: `{}`."
            },
            "status": {
                "anyOf": [
                    {
                        "$ref": "#/components/schemas/FragmentStatus"
                    },
                    {
                        "type": "null"
                    }
                ],
                "description": "Absent or null: `active` on creation, unchanged on update."
            }
        }
    },
    "FragmentWriteResult": {
        "description": "The fragment as written, plus `warnings`.",
        "allOf": [
            {
                "$ref": "#/components/schemas/Fragment"
            },
            {
                "type": "object",
                "required": [
                    "warnings"
                ],
                "properties": {
                    "warnings": {
                        "type": "array",
                        "description": "Empty unless the write leaves the fragment `paused` while it is the site default and/or the target of rules (these are kept; pages that resolve to it answer `204` on the fragment endpoint). Strings are exactly `site default` and `target of N rules` (N ≥ 1, same words for every N); when both apply, `site default` comes first.",
                        "maxItems": 2,
                        "items": {
                            "type": "string",
                            "pattern": "^(site default|target of [1-9][0-9]* rules)$"
                        }
                    }
                }
            }
        ]
    },
    "FragmentList": {
        "type": "object",
        "required": [
            "items"
        ],
        "properties": {
            "items": {
                "type": "array",
                "items": {
                    "$ref": "#/components/schemas/Fragment"
                },
                "description": "All fragments of the site, sorted by reference, those without a reference last."
            }
        }
    }
}"##;
