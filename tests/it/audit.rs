//! The audit log: every write through `/v1` and the CLI recorded with who, what and which
//! object, newest first, never a secret; a refused write records nothing.

use crate::fixtures::{admin, card, put_fragment, CARD_FLAGS};
use crate::harness::{db, tenant};
use agentcard::domain::CardStatus;
use serde_json::{json, Value};

/// The organisation's entries as `admin audit` prints them: (actor, operation, object kind,
/// object), newest first.
fn entries(org: &str, extra: &[&str]) -> Vec<(String, String, String, String)> {
    let (ok, out, stderr) = admin(&[&["audit", "--org", org], extra].concat());
    assert!(ok, "{stderr}");
    let text = |entry: &Value, member: &str| entry[member].as_str().unwrap().to_owned();
    out["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| {
            let kind = text(entry, "actor_kind");
            let actor = format!("{kind}:{}", text(entry, "actor"));
            let object = (text(entry, "object_kind"), text(entry, "object"));
            (actor, text(entry, "operation"), object.0, object.1)
        })
        .collect()
}

fn entry(
    actor: &str,
    operation: &str,
    kind: &str,
    object: &str,
) -> (String, String, String, String) {
    (actor.into(), operation.into(), kind.into(), object.into())
}

#[test]
fn writes_through_the_api_and_the_cli_are_recorded_without_secrets() {
    let t = tenant();
    let token = format!("token:{}", &t.token[..12]);
    assert_eq!(t.client.put("/v1/sites/a.example", &json!({})).status, 201);
    let put = put_fragment(&t, "a.example", "/home", &json!({"name": "Home"}));
    assert_eq!(put.status, 201, "{}", put.text());
    let fragment = put.json()["id"].as_str().unwrap().to_owned();
    let rule = json!({"path_prefix": "/", "match": "prefix", "ref": "/home"});
    let route = t.client.post("/v1/sites/a.example/routes", &rule).json();
    let own = card(Some(&t.org_id), CardStatus::Active);
    let list = json!({"fragments": [{"domain": "a.example", "ref": "/home"}]});
    let path = format!("/v1/cards/{}/eligibility", own.id);
    assert_eq!(t.client.put(&path, &list).status, 200);
    let key = t.client.post("/v1/keys", &json!({"name": "edge"})).json();
    let key_id = key["id"].as_str().unwrap();
    assert_eq!(t.client.delete(&format!("/v1/keys/{key_id}")).status, 200);

    // Refused writes record nothing.
    let refused = t.client.put("/v1/sites/a.example", &json!({"name": 5}));
    assert_eq!(refused.status, 422);
    assert_eq!(
        t.client
            .delete("/v1/keys/key_000000000000000000000000")
            .status,
        404
    );
    assert!(!admin(&["key", "create", "--org", &t.org_id, "--name", "a\nb"]).0);

    let (ok, cli_key, _) = admin(&["key", "create", "--org", &t.org_id]);
    assert!(ok);
    let (ok, cli_token, _) = admin(&["token", "create", "--org", &t.org_id]);
    assert!(ok);
    let (ok, _, stderr) = admin(&[
        "site",
        "delete",
        "--org",
        &t.org_id,
        "--domain",
        "a.example",
    ]);
    assert!(ok, "{stderr}");

    let text = |value: &Value, member: &str| value[member].as_str().unwrap().to_owned();
    let expected = vec![
        entry("cli:cli", "delete_site", "site", "a.example"),
        // The card was eligible only on the site's fragment: set to draft, not widened.
        entry("cli:cli", "draft_after_deletion", "card", &own.id),
        entry("cli:cli", "create_token", "token", &text(&cli_token, "id")),
        entry("cli:cli", "create_key", "key", &text(&cli_key, "id")),
        entry(&token, "revoke_key", "key", key_id),
        entry(&token, "create_key", "key", key_id),
        entry(&token, "replace_eligibility", "card", &own.id),
        entry(&token, "create_route", "route", &text(&route, "id")),
        entry(&token, "put_fragment", "fragment", &fragment),
        entry(&token, "put_site", "site", "a.example"),
    ];
    assert_eq!(entries(&t.org_id, &[]), expected);
    assert_eq!(entries(&t.org_id, &["--actor", "cli"]), expected[..4]);
    assert_eq!(entries(&t.org_id, &["--limit", "2"]), expected[..2]);

    let stored: Vec<String> = db()
        .query(
            "SELECT audit_log::text FROM audit_log WHERE org_id = $1",
            &[&t.org_id],
        )
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
    assert_eq!(stored.len(), expected.len());
    let secrets = [
        &t.token,
        &text(&key, "key"),
        &text(&cli_key, "key"),
        &text(&cli_token, "token"),
    ];
    for secret in secrets {
        assert!(
            stored.iter().all(|row| !row.contains(secret.as_str())),
            "a secret in the audit log"
        );
    }
}

#[test]
fn platform_card_writes_are_the_platforms_and_another_orgs_log_stays_apart() {
    let a = tenant();
    let b = tenant();
    let create = [&["card", "create", "--platform"][..], &CARD_FLAGS].concat();
    let (ok, platform, stderr) = admin(&create);
    assert!(ok, "{stderr}");
    let id = platform["id"].as_str().unwrap();
    let (ok, _, stderr) = admin(&["card", "eligibility", id, "--org", &a.org_id]);
    assert!(ok, "{stderr}");
    assert_eq!(
        entries(&a.org_id, &[]),
        [entry("cli:cli", "set_platform_eligibility", "card", id)]
    );
    assert_eq!(entries(&b.org_id, &[]), []);
    let platform_rows: i64 = db()
        .query_one(
            "SELECT count(*) FROM audit_log WHERE org_id IS NULL AND object = $1",
            &[&id],
        )
        .unwrap()
        .get(0);
    assert_eq!(platform_rows, 1, "the card's creation, of no organisation");
}
