//! Card and eligibility records: `GET /v1/cards` items, and the `{"items": [...]}` of
//! `GET`/`PUT /v1/cards/{id}/eligibility`. The console prints the same card record.

use crate::db::cards::{CardRow, EligibilityRow};
use serde_json::{json, Value};

pub fn card_json(card: &CardRow) -> Value {
    json!({
        "id": card.id,
        "account_id": card.org_id,
        "status": card.status,
        "name": card.name,
        "lang": card.lang,
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
