//! Card and eligibility records: `GET /v1/cards` items, and the `{"items": [...]}` of
//! `GET`/`PUT /v1/cards/{id}/eligibility`; the `PUT`'s body. The console prints the same card
//! record.

use super::{as_object, deny_unknown, deny_unknown_in_items, item_object, required_array};
use super::{required_str, Object};
use crate::db::cards::{CardRow, EligibilityRow};
use crate::domain::{DomainName, FragmentRef};
use crate::error::ApiError;
use crate::ops::cards::{entry_domain, entry_field, entry_ref, FRAGMENTS};
use serde_json::{json, Value};

const ENTRY_MEMBERS: &[&str] = &["domain", "ref"];

/// `PUT /v1/cards/{id}/eligibility`'s `{fragments: [{domain, ref}]}`: every unknown member
/// (`400`) before any shape refusal (`422`), then each entry's domain and reference.
pub fn eligibility_write(body: &Value) -> Result<Vec<(DomainName, FragmentRef)>, ApiError> {
    let object = as_object(body)?;
    deny_unknown(object, &[FRAGMENTS], "")?;
    deny_unknown_in_items(object, FRAGMENTS, ENTRY_MEMBERS)?;
    required_array(object, FRAGMENTS)?
        .iter()
        .enumerate()
        .map(|(index, item)| entry(item_object(item, FRAGMENTS, index)?, index))
        .collect()
}

/// One entry: the domain, then the reference, each a string (`422` on its field path).
fn entry(entry: &Object, index: usize) -> Result<(DomainName, FragmentRef), ApiError> {
    let domain = required_str(entry, "domain", &entry_field(index, "domain"))?;
    let domain = entry_domain(index, domain)?;
    let fragment_ref = required_str(entry, "ref", &entry_field(index, "ref"))?;
    Ok((domain, entry_ref(index, fragment_ref)?))
}

pub fn card_json(card: &CardRow) -> Value {
    json!({
        "id": card.id,
        "account_id": card.org_id,
        "status": card.status.as_str(),
        "name": card.name,
        "lang": card.lang.as_str(),
        "brand": card.brand,
        "brand_domain": card.brand_domain,
        "title": card.title,
        "body": card.body,
        "link_url": card.link_url,
        "link_label": card.link_label,
        "key_values": card.key_values,
        "created_at": card.created_at,
        "updated_at": card.updated_at,
    })
}

pub fn card_list_json(cards: &[CardRow]) -> Value {
    json!({"items": cards.iter().map(card_json).collect::<Vec<_>>()})
}

pub fn eligibility_json(items: &[EligibilityRow]) -> Value {
    let items: Vec<Value> = items
        .iter()
        .map(|item| {
            json!({
                "domain": item.domain,
                "ref": item.fragment_ref,
                "fragment_id": item.fragment_id,
            })
        })
        .collect();
    json!({ "items": items })
}

/// The JSON Schemas of these bodies and records, by name (`super::SCHEMAS`).
pub const SCHEMAS: &str = r##"{
    "CardStatus": {
        "type": "string",
        "enum": [
            "draft",
            "active",
            "archived"
        ]
    },
    "Card": {
        "type": "object",
        "description": "A card (read-only through the API; created, edited, activated and archived in the console).",
        "required": [
            "id",
            "account_id",
            "status",
            "name",
            "lang",
            "brand",
            "brand_domain",
            "title",
            "body",
            "link_url",
            "link_label",
            "key_values",
            "created_at",
            "updated_at"
        ],
        "properties": {
            "id": {
                "type": "string",
                "pattern": "^crd_[0-9a-z]{20,}$",
                "description": "Card id: `crd_` followed by at least 20 characters of `[0-9a-z]`; random and unguessable, never sequential."
            },
            "account_id": {
                "type": [
                    "string",
                    "null"
                ],
                "pattern": "^acc_[0-9a-z]{20,}$",
                "description": "Owning organisation (`acc_…`); null for a platform card, managed by the service operator."
            },
            "status": {
                "$ref": "#/components/schemas/CardStatus"
            },
            "name": {
                "type": "string"
            },
            "lang": {
                "$ref": "#/components/schemas/Lang"
            },
            "brand": {
                "type": "string"
            },
            "brand_domain": {
                "type": [
                    "string",
                    "null"
                ],
                "description": "Domain of the brand; null when none."
            },
            "title": {
                "type": "string"
            },
            "body": {
                "type": "string"
            },
            "link_url": {
                "type": [
                    "string",
                    "null"
                ],
                "description": "Null when the card has no link."
            },
            "link_label": {
                "type": [
                    "string",
                    "null"
                ],
                "description": "Null when the card has no link."
            },
            "key_values": {
                "$ref": "#/components/schemas/KeyValues"
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
    "CardList": {
        "type": "object",
        "required": [
            "items"
        ],
        "properties": {
            "items": {
                "type": "array",
                "items": {
                    "$ref": "#/components/schemas/Card"
                },
                "description": "The organisation's cards and the platform cards (`account_id` null), all statuses, ordered by id."
            }
        }
    },
    "EligibilityItem": {
        "type": "object",
        "description": "A fragment of the caller's organisation on which the card may serve.",
        "required": [
            "domain",
            "ref",
            "fragment_id"
        ],
        "properties": {
            "domain": {
                "$ref": "#/components/schemas/Domain"
            },
            "ref": {
                "$ref": "#/components/schemas/Ref"
            },
            "fragment_id": {
                "type": "string",
                "pattern": "^frg_[0-9a-z]{20,}$",
                "description": "Fragment id: `frg_` followed by at least 20 characters of `[0-9a-z]`; random and unguessable, never sequential."
            }
        }
    },
    "EligibilityWriteItem": {
        "type": "object",
        "additionalProperties": false,
        "required": [
            "domain",
            "ref"
        ],
        "description": "A fragment named by site domain and reference. An unknown member is `400 unknown_field` with field `fragments[i].<name>`.",
        "properties": {
            "domain": {
                "$ref": "#/components/schemas/DomainInput"
            },
            "ref": {
                "type": "string",
                "minLength": 1,
                "maxLength": 200,
                "pattern": "^[A-Za-z0-9/_.:-]{1,200}$",
                "not": {
                    "type": "string",
                    "pattern": "(^|/)\\.{1,2}(/|$)"
                },
                "description": "Reference of a fragment of that site (paused ones accepted); plain string, not encoded. Otherwise `422` with field `fragments[i].ref`."
            }
        }
    },
    "EligibilityReplace": {
        "type": "object",
        "additionalProperties": false,
        "required": [
            "fragments"
        ],
        "description": "Body of `PUT /v1/cards/{id}/eligibility`: the complete new list. Missing fragments lose the card; the same fragment named twice counts once. `{\"fragments\": []}` makes the card, when active, eligible everywhere in the organisation.",
        "properties": {
            "fragments": {
                "type": "array",
                "items": {
                    "$ref": "#/components/schemas/EligibilityWriteItem"
                },
                "description": "Missing, null or not an array: `422` with field `fragments`."
            }
        }
    },
    "EligibilityList": {
        "type": "object",
        "required": [
            "items"
        ],
        "properties": {
            "items": {
                "type": "array",
                "items": {
                    "$ref": "#/components/schemas/EligibilityItem"
                },
                "description": "Fragments of the caller's organisation the card is eligible on, sorted by domain then ref."
            }
        }
    }
}"##;
