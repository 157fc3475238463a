//! Fragments: `GET …/fragments` and the whole-object `PUT …/fragments/{ref}`: creation and
//! replacement, validation fields, the `{ref}` path segment, the order of checks, the list
//! order, and the warnings of a write that leaves a fragment paused.

use crate::fixtures::{
    assert_error, enc, fragment_without_ref, get_items, is_timestamp, members, new_fragment,
    new_site, put_fragment,
};
use crate::harness::{self, tenant, Tenant};
use serde_json::{json, Value};

const SITE: &str = "example.com";

fn fragments(t: &Tenant) -> Vec<Value> {
    get_items(t, &format!("/v1/sites/{SITE}/fragments"))
}

/// A fragment's record as listed (no `warnings`).
fn listed(write_answer: &Value) -> Value {
    let mut record = write_answer.clone();
    if let Some(object) = record.as_object_mut() {
        object.remove("warnings");
    }
    record
}

#[test]
fn put_fragment_creates_with_defaults_and_answers_201() {
    let t = tenant();
    new_site(&t, SITE);
    let resp = put_fragment(&t, SITE, "/politique", &json!({"name": " Politique "}));
    assert_eq!(resp.status, 201);
    let record = resp.json();
    assert_eq!(
        members(&record),
        [
            "created_at",
            "description",
            "id",
            "key_values",
            "lang",
            "name",
            "ref",
            "status",
            "updated_at",
            "warnings"
        ]
    );
    assert!(record["id"]
        .as_str()
        .is_some_and(|id| id.starts_with("frg_")));
    assert_eq!(record["ref"], "/politique");
    assert_eq!(record["name"], "Politique");
    assert_eq!(record["lang"], "fr");
    assert_eq!(record["description"], Value::Null);
    assert_eq!(record["key_values"], json!({}));
    assert_eq!(record["status"], "active");
    assert_eq!(record["warnings"], json!([]));
    assert!(is_timestamp(&record["created_at"]) && is_timestamp(&record["updated_at"]));
    assert_eq!(fragments(&t), [listed(&record)]);
}

#[test]
fn put_fragment_stores_every_member_given() {
    let t = tenant();
    new_site(&t, SITE);
    let body = json!({
        "name": "Sport",
        "lang": "en",
        "description": "  All sports  ",
        "key_values": {"section": [" sport ", "foot"], "tier-1": ["x"]},
        "status": "paused",
    });
    let resp = put_fragment(&t, SITE, "sport:foot", &body);
    assert_eq!(resp.status, 201);
    let record = resp.json();
    assert_eq!(record["ref"], "sport:foot");
    assert_eq!(record["lang"], "en");
    assert_eq!(record["description"], "All sports");
    assert_eq!(
        record["key_values"],
        json!({"section": ["sport", "foot"], "tier-1": ["x"]})
    );
    assert_eq!(record["status"], "paused");
    assert_eq!(
        record["warnings"],
        json!([]),
        "nothing points at a new fragment"
    );
    assert_eq!(fragments(&t), [listed(&record)]);
}

#[test]
fn put_fragment_update_resets_left_out_members_and_keeps_the_status() {
    let t = tenant();
    new_site(&t, SITE);
    let full = json!({
        "name": "Sport", "lang": "de", "description": "d",
        "key_values": {"k": ["v"]}, "status": "paused",
    });
    let created = put_fragment(&t, SITE, "sport", &full).json();
    let resp = put_fragment(&t, SITE, "sport", &json!({"name": "Sport 2"}));
    assert_eq!(resp.status, 200);
    let record = resp.json();
    assert_eq!(record["id"], created["id"]);
    assert_eq!(record["created_at"], created["created_at"]);
    assert_eq!(record["name"], "Sport 2");
    assert_eq!(record["lang"], "fr");
    assert_eq!(record["description"], Value::Null);
    assert_eq!(record["key_values"], json!({}));
    assert_eq!(record["status"], "paused", "status absent keeps it");
    assert_eq!(fragments(&t), [listed(&record)]);

    let nulls = json!({"name": "Sport 2", "lang": null, "description": null,
                       "key_values": null, "status": null});
    let again = put_fragment(&t, SITE, "sport", &nulls);
    assert_eq!(
        (again.status, again.json()),
        (200, record.clone()),
        "null means absent"
    );
    let active = put_fragment(&t, SITE, "sport", &json!({"name": "S", "status": "active"}));
    assert_eq!(active.json()["status"], "active");
    let empty_description =
        put_fragment(&t, SITE, "sport", &json!({"name": "S", "description": ""}));
    assert_eq!(empty_description.json()["description"], Value::Null);
}

#[test]
fn put_fragment_refuses_invalid_members_with_their_field() {
    let t = tenant();
    new_site(&t, SITE);
    let cases = [
        (json!({}), 422, "validation", "name"),
        (json!({"name": null}), 422, "validation", "name"),
        (json!({"name": "  "}), 422, "validation", "name"),
        (json!({"name": 5}), 422, "validation", "name"),
        (json!({"name": "n".repeat(201)}), 422, "validation", "name"),
        (
            json!({"name": "n", "lang": "pt"}),
            422,
            "validation",
            "lang",
        ),
        (
            json!({"name": "n", "lang": "FR"}),
            422,
            "validation",
            "lang",
        ),
        (json!({"name": "n", "lang": 1}), 422, "validation", "lang"),
        (
            json!({"name": "n", "description": "d".repeat(2001)}),
            422,
            "validation",
            "description",
        ),
        (
            json!({"name": "n", "description": []}),
            422,
            "validation",
            "description",
        ),
        (
            json!({"name": "n", "status": "draft"}),
            422,
            "validation",
            "status",
        ),
        (
            json!({"name": "n", "status": true}),
            422,
            "validation",
            "status",
        ),
        (
            json!({"name": "n", "key_values": []}),
            422,
            "validation",
            "key_values",
        ),
        (
            json!({"name": "n", "key_values": {"Bad": ["x"]}}),
            422,
            "validation",
            "key_values.Bad",
        ),
        (
            json!({"name": "n", "key_values": {"__proto__": ["x"]}}),
            422,
            "validation",
            "key_values.__proto__",
        ),
        (
            json!({"name": "n", "key_values": {"k": []}}),
            422,
            "validation",
            "key_values.k",
        ),
        (
            json!({"name": "n", "key_values": {"k": ["a,b"]}}),
            422,
            "validation",
            "key_values.k",
        ),
        (
            json!({"name": "n", "key_values": {"k": [" "]}}),
            422,
            "validation",
            "key_values.k",
        ),
        (
            json!({"name": "n", "key_values": {"k": "v"}}),
            422,
            "validation",
            "key_values.k",
        ),
        (json!([]), 422, "validation", "body"),
        (
            json!({"name": "n", "ref": "x"}),
            400,
            "unknown_field",
            "ref",
        ),
        (
            json!({"name": 5, "lang": "pt", "extra": 1}),
            400,
            "unknown_field",
            "extra",
        ),
    ];
    for (body, status, code, field) in cases {
        let resp = put_fragment(&t, SITE, "a", &body);
        assert_error(&resp, status, code, Some(field));
    }
    assert_eq!(fragments(&t), Vec::<Value>::new(), "nothing written");
    let max = json!({"name": "é".repeat(200), "description": "d".repeat(2000)});
    assert_eq!(put_fragment(&t, SITE, "a", &max).status, 201);
}

#[test]
fn the_ref_path_segment_is_decoded_exactly_once() {
    let t = tenant();
    new_site(&t, SITE);
    let base = format!("/v1/sites/{SITE}/fragments");
    let body = json!({"name": "n"});
    let accepted = [
        ("%2Fpolitique", "/politique"),
        ("sport%3Afoot", "sport:foot"),
        ("sport:foot2", "sport:foot2"),
        ("Politique", "Politique"),
        ("politique", "politique"),
    ];
    for (segment, reference) in accepted {
        let resp = t.client.put(&format!("{base}/{segment}"), &body);
        assert_eq!(
            (resp.status, resp.json()["ref"].clone()),
            (201, json!(reference))
        );
    }
    let refused = [
        "%252Fpolitique",
        "%2E%2E",
        "a%20b",
        "%C3%A9",
        "%zz",
        "a%2F..%2Fb",
    ];
    for segment in refused {
        let resp = t.client.put(&format!("{base}/{segment}"), &body);
        assert_error(&resp, 422, "validation", Some("ref"));
    }
    let raw_slash = t.client.put(&format!("{base}/a/b"), &body);
    assert_error(&raw_slash, 404, "not_found", None);
    assert_eq!(
        fragments(&t).len(),
        accepted.len(),
        "case-sensitive: two fragments"
    );
}

#[test]
fn a_ref_of_200_characters_is_accepted_and_201_refused() {
    let t = tenant();
    new_site(&t, SITE);
    let max = format!("/{}", "r".repeat(199));
    let resp = put_fragment(&t, SITE, &max, &json!({"name": "n"}));
    assert_eq!((resp.status, resp.json()["ref"].clone()), (201, json!(max)));
    let over = format!("{max}r");
    let resp = put_fragment(&t, SITE, &over, &json!({"name": "n"}));
    assert_error(&resp, 422, "validation", Some("ref"));
}

#[test]
fn put_fragment_checks_body_and_ref_before_the_site() {
    let t = tenant();
    let cases = [
        ("a", json!({"name": ""}), 422, "validation", Some("name")),
        (
            "%252Fa",
            json!({"name": "n"}),
            422,
            "validation",
            Some("ref"),
        ),
        (
            "%252Fa",
            json!({"name": "n", "x": 1}),
            400,
            "unknown_field",
            Some("x"),
        ),
        ("a", json!({"name": "n"}), 404, "not_found", None),
    ];
    for domain in ["absent.com", "not_a_domain"] {
        for (segment, body, status, code, field) in &cases {
            let resp = t
                .client
                .put(&format!("/v1/sites/{domain}/fragments/{segment}"), body);
            assert_error(&resp, *status, code, *field);
        }
    }
    assert_error(
        &t.client.get("/v1/sites/absent.com/fragments"),
        404,
        "not_found",
        None,
    );
}

#[test]
fn fragments_are_listed_by_ref_in_byte_order_and_those_without_one_last() {
    let t = tenant();
    new_site(&t, SITE);
    assert_eq!(
        t.client.get("/v1/sites/example.com/fragments").json(),
        json!({"items": []})
    );
    let refs = ["b", "_x", "a.b", "B", "/z", "a-b", "a/b", "a:b"];
    for reference in refs {
        new_fragment(&t, SITE, reference);
    }
    let console_made = fragment_without_ref(&t, SITE, "console");
    let listed = fragments(&t);
    let order: Vec<Value> = listed.iter().map(|f| f["ref"].clone()).collect();
    let expected = ["/z", "B", "_x", "a-b", "a.b", "a/b", "a:b", "b"];
    let mut expected: Vec<Value> = expected.iter().map(|r| json!(r)).collect();
    expected.push(Value::Null);
    assert_eq!(order, expected);
    let last = listed.last().cloned().unwrap_or_default();
    assert_eq!(
        (last["id"].clone(), last["name"].clone()),
        (json!(console_made), json!("console"))
    );
}

#[test]
fn the_same_body_twice_leaves_the_same_state() {
    let t = tenant();
    new_site(&t, SITE);
    let body = json!({"name": "n", "lang": "it", "key_values": {"k": ["v"]}});
    let first = put_fragment(&t, SITE, "a", &body);
    let state = fragments(&t);
    let second = put_fragment(&t, SITE, "a", &body);
    assert_eq!((first.status, second.status), (201, 200));
    assert_eq!(second.json(), first.json());
    assert_eq!(fragments(&t), state);
}

// ---- warnings ----

fn rule(path: &str, reference: &str) -> Value {
    json!({"path_prefix": path, "match": "prefix", "ref": reference})
}

fn status_write(t: &Tenant, reference: &str, status: &str) -> Value {
    let resp = put_fragment(
        t,
        SITE,
        reference,
        &json!({"name": reference, "status": status}),
    );
    assert_eq!(resp.status, 200, "{}", resp.text());
    resp.json()["warnings"].clone()
}

#[test]
fn pausing_warns_about_the_site_default_and_the_rules_still_pointing_at_it() {
    let t = tenant();
    new_site(&t, SITE);
    for reference in ["both", "default", "one-rule", "free"] {
        new_fragment(&t, SITE, reference);
    }
    let routes = json!({"routes": [
        rule("/a", "both"), rule("/b", "both"), rule("/c", "one-rule"),
    ]});
    assert_eq!(
        t.client
            .put(&format!("/v1/sites/{SITE}/routes"), &routes)
            .status,
        200
    );
    let cases = [
        ("both", json!(["site default", "target of 2 rules"])),
        ("default", json!(["site default"])),
        ("one-rule", json!(["target of 1 rules"])),
        ("free", json!([])),
    ];
    for (reference, expected) in cases {
        let default = json!({"ref": reference});
        let path = format!("/v1/sites/{SITE}/default-fragment");
        if expected.to_string().contains("site default") {
            assert_eq!(t.client.put(&path, &default).status, 200);
        }
        assert_eq!(
            status_write(&t, reference, "paused"),
            expected,
            "{reference}"
        );
        assert_eq!(
            status_write(&t, reference, "paused"),
            expected,
            "{reference} again"
        );
        assert_eq!(
            status_write(&t, reference, "active"),
            json!([]),
            "{reference} active"
        );
    }
    let kept_paused = put_fragment(&t, SITE, "both", &json!({"name": "x", "status": "paused"}));
    let paused_again = put_fragment(&t, SITE, "both", &json!({"name": "x"}));
    assert_eq!(kept_paused.json()["warnings"], json!(["target of 2 rules"]));
    assert_eq!(
        paused_again.json()["warnings"],
        json!(["target of 2 rules"])
    );
    let fragment = fragments(&t).into_iter().find(|f| f["ref"] == "both");
    assert_eq!(fragment.map(|f| f["status"].clone()), Some(json!("paused")));
    assert_eq!(
        get_items(&t, &format!("/v1/sites/{SITE}/routes")).len(),
        3,
        "rules are kept"
    );
}

#[test]
fn fragment_refs_are_plain_in_bodies_and_encoded_in_paths() {
    let t = tenant();
    new_site(&t, SITE);
    new_fragment(&t, SITE, "/a/b");
    let path = format!("/v1/sites/{SITE}/fragments/{}", enc("/a/b"));
    assert_eq!(path, "/v1/sites/example.com/fragments/%2Fa%2Fb");
    assert_eq!(t.client.put(&path, &json!({"name": "x"})).status, 200);
    let default = t.client.put(
        &format!("/v1/sites/{SITE}/default-fragment"),
        &json!({"ref": "/a/b"}),
    );
    assert_eq!(default.json()["default_fragment_ref"], "/a/b");
}

#[test]
fn a_stored_value_none_of_its_types_is_an_internal_error_never_a_refusal() {
    let t = tenant();
    new_site(&t, "stored.example");
    // Ids have no constraint in the schema: a row written around the service, with an id of
    // no kind, reads as an internal error, on a read and on the write that reads it first.
    harness::db()
        .execute(
            "INSERT INTO fragments (id, site_id, ref, name, lang, status)
             SELECT 'fragment-1', id, '/x', 'X', 'fr', 'active' FROM sites
              WHERE org_id = $1 AND domain = 'stored.example'",
            &[&t.org_id],
        )
        .unwrap();
    let listed = t.client.get("/v1/sites/stored.example/fragments");
    assert_error(&listed, 500, "internal", None);
    let written = put_fragment(&t, "stored.example", "/x", &json!({"name": "X"}));
    assert_error(&written, 500, "internal", None);
}
