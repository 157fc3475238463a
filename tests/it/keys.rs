//! `/v1/keys`: delivery keys shown once, listed newest first without the key, revoked
//! repeatably with the first revocation date kept, and private to their organisation.

use crate::fixtures::assert_error;
use crate::harness::{db, tenant, Resp, Tenant};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

const ABSENT_KEY: &str = "key_000000000000000000000000";

fn create(t: &Tenant, body: Value) -> Value {
    let resp = t.client.post("/v1/keys", &body);
    assert_eq!(resp.status, 201, "{}", resp.text());
    resp.json()
}

fn listed(t: &Tenant) -> Vec<Value> {
    let resp = t.client.get("/v1/keys");
    assert_eq!(resp.status, 200);
    resp.json()["items"].as_array().unwrap().clone()
}

fn revoke(t: &Tenant, id: &str) -> Resp {
    t.client.delete(&format!("/v1/keys/{id}"))
}

/// The record without `key`, as the list shows it.
fn without_key(created: &Value) -> Value {
    let mut record = created.clone();
    record.as_object_mut().unwrap().remove("key");
    record
}

fn is_live_key(value: &str) -> bool {
    value.strip_prefix("svc_live_").is_some_and(|hex| {
        hex.len() == 40
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

#[test]
fn a_created_key_is_shown_once_and_only_its_hash_is_stored() {
    let t = tenant();
    let created = create(&t, json!({"name": "  edge worker "}));
    let key = created["key"].as_str().unwrap().to_owned();
    assert!(is_live_key(&key), "{key}");
    let id = created["id"].as_str().unwrap();
    assert!(id.starts_with("key_") && id.len() >= 24);
    assert!(created["created_at"].as_str().unwrap().ends_with('Z'));
    let expected = json!({
        "id": id, "prefix": &key[..12], "name": "edge worker",
        "created_at": created["created_at"], "revoked_at": null, "last_used_at": null,
        "key": key,
    });
    assert_eq!(created, expected);

    let resp = t.client.get("/v1/keys");
    assert!(!resp.text().contains(&key), "never listed");
    assert_eq!(resp.json(), json!({"items": [without_key(&created)]}));

    let row = db()
        .query_one(
            "SELECT key_hash, prefix, org_id FROM delivery_keys WHERE id = $1",
            &[&id],
        )
        .unwrap();
    let hash: Vec<u8> = row.get(0);
    assert_eq!(hash, Sha256::digest(key.as_bytes()).to_vec());
    assert_eq!(row.get::<_, String>(1), &key[..12]);
    assert_eq!(row.get::<_, String>(2), t.org_id);
}

#[test]
fn every_post_makes_a_new_key_and_names_are_optional() {
    let t = tenant();
    let first = create(&t, json!({}));
    let second = create(&t, json!({}));
    assert_ne!(first["id"], second["id"]);
    assert_ne!(first["key"], second["key"]);
    let cases = [
        (json!({}), Value::Null),
        (json!({"name": null}), Value::Null),
        (json!({"name": "   "}), Value::Null),
        (json!({"name": "é".repeat(100)}), json!("é".repeat(100))),
    ];
    for (body, name) in cases {
        assert_eq!(create(&t, body.clone())["name"], name, "{body}");
    }
    assert_eq!(listed(&t).len(), 6);
}

#[test]
fn refused_bodies_create_nothing() {
    let t = tenant();
    let cases: Vec<(Value, u16, &str, &str)> = vec![
        (json!({"name": "ci", "x": 1}), 400, "unknown_field", "x"),
        (json!({"name": 5, "x": 1}), 400, "unknown_field", "x"),
        (json!({"name": "é".repeat(101)}), 422, "validation", "name"),
        (json!({"name": 5}), 422, "validation", "name"),
        (json!({"name": ["a"]}), 422, "validation", "name"),
        (json!([]), 422, "validation", "body"),
        (json!("name"), 422, "validation", "body"),
    ];
    for (body, status, code, field) in cases {
        let resp = t.client.post("/v1/keys", &body);
        assert_error(&resp, status, code, Some(field));
    }
    assert!(listed(&t).is_empty());
}

#[test]
fn keys_are_listed_newest_first_revoked_ones_included() {
    let t = tenant();
    let ids: Vec<Value> = ["one", "two", "three"]
        .iter()
        .map(|name| create(&t, json!({ "name": name }))["id"].clone())
        .collect();
    assert_eq!(revoke(&t, ids[1].as_str().unwrap()).status, 200);
    let items = listed(&t);
    let listed_ids: Vec<&Value> = items.iter().map(|k| &k["id"]).collect();
    assert_eq!(listed_ids, [&ids[2], &ids[1], &ids[0]]);
    let revoked: Vec<bool> = items.iter().map(|k| k["revoked_at"].is_string()).collect();
    assert_eq!(revoked, [false, true, false]);
    assert!(items.iter().all(|k| k.get("key").is_none()));
}

#[test]
fn revoking_twice_keeps_the_first_revocation_date() {
    let t = tenant();
    let created = create(&t, json!({"name": "edge"}));
    let id = created["id"].as_str().unwrap();
    let first = revoke(&t, id);
    assert_eq!(first.status, 200);
    let revoked_at = first.json()["revoked_at"].clone();
    assert!(revoked_at.is_string());
    let mut expected = without_key(&created);
    expected["revoked_at"] = revoked_at.clone();
    assert_eq!(first.json(), expected);

    std::thread::sleep(std::time::Duration::from_millis(20));
    let second = revoke(&t, id);
    assert_eq!(second.status, 200);
    assert_eq!(second.json(), expected, "same record, first date");
    assert_eq!(listed(&t), [expected]);
}

#[test]
fn another_orgs_key_answers_like_an_absent_one_and_stays_live() {
    let a = tenant();
    let b = tenant();
    let foreign = create(&b, json!({"name": "b"}));
    let foreign_id = foreign["id"].as_str().unwrap();
    for id in [foreign_id, ABSENT_KEY, "nonsense"] {
        let resp = revoke(&a, id);
        assert_error(&resp, 404, "not_found", None);
        assert_eq!(
            resp.json(),
            json!({"error": {"code": "not_found", "message": "not found"}})
        );
    }
    assert!(listed(&a).is_empty(), "B's key is not listed for A");
    assert_eq!(listed(&b), [without_key(&foreign)], "still live");
}

#[test]
fn revoke_takes_only_an_empty_object_checked_before_the_key() {
    let t = tenant();
    let created = create(&t, json!({}));
    let path = format!("/v1/keys/{}", created["id"].as_str().unwrap());
    let absent = format!("/v1/keys/{ABSENT_KEY}");
    let cases: Vec<(&str, Value, u16, &str, &str)> = vec![
        (&path, json!({"x": 1}), 400, "unknown_field", "x"),
        (&absent, json!({"x": 1}), 400, "unknown_field", "x"),
        (&path, json!([]), 422, "validation", "body"),
        (&absent, json!(null), 422, "validation", "body"),
    ];
    for (target, body, status, code, field) in cases {
        let resp = t.client.send_json("DELETE", target, &body);
        assert_error(&resp, status, code, Some(field));
    }
    assert_eq!(listed(&t), [without_key(&created)], "not revoked");
}
