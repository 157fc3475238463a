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
