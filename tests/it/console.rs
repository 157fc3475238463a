//! The console-only actions through the real `agentcard admin` binary: cards, platform card
//! eligibility, fragments and sites, and deleting revoked keys. Each prints one JSON object,
//! or fails with a message on stderr; a refusal writes nothing.

use crate::fixtures::{admin, card, fragment};
use crate::harness::{db, tenant, Tenant};
use agentcard::domain::CardStatus;
use serde_json::{json, Value};

fn ok(args: &[&str]) -> Value {
    let (success, out, stderr) = admin(args);
    assert!(success, "{args:?}: {stderr}");
    out
}

/// Runs a command that must fail; returns its stderr.
fn refused(args: &[&str]) -> String {
    let (success, out, stderr) = admin(args);
    assert!(!success, "{args:?} succeeded: {out}");
    assert_eq!(out, Value::Null, "nothing on stdout");
    stderr
}

fn count(sql: &str, param: &str) -> i64 {
    db().query_one(sql, &[&param]).unwrap().get(0)
}

fn api_card(t: &Tenant, id: &str) -> Value {
    let items = t.client.get("/v1/cards").json()["items"].clone();
    items
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == json!(id))
        .cloned()
        .unwrap_or(Value::Null)
}

fn eligibility(t: &Tenant, card_id: &str) -> Value {
    let resp = t.client.get(&format!("/v1/cards/{card_id}/eligibility"));
    assert_eq!(resp.status, 200, "{}", resp.text());
    resp.json()
}

#[test]
fn card_create_prints_the_card_record_the_api_lists() {
    let t = tenant();
    let out = ok(&[
        "card",
        "create",
        "--org",
        &t.org_id,
        "--name",
        " Offer ",
        "--lang",
        "en",
        "--brand",
        "Example News",
        "--title",
        "Read us",
        "--body",
        "Since 1950.",
        "--brand-domain",
        " News.Example.COM ",
        "--link-url",
        "https://example.com/sub",
        "--link-label",
        "Subscribe",
        "--kv",
        "section=politics",
        "--kv",
        "section= sport ",
        "--kv",
        "tier=gold",
    ]);
    let id = out["id"].as_str().unwrap();
    assert!(id.starts_with("crd_") && id.len() >= 24);
    let expected = json!({
        "id": id, "account_id": t.org_id, "status": "draft", "name": "Offer", "lang": "en",
        "brand": "Example News", "brand_domain": "news.example.com", "title": "Read us",
        "body": "Since 1950.", "link_url": "https://example.com/sub", "link_label": "Subscribe",
        "key_values": {"section": ["politics", "sport"], "tier": ["gold"]},
        "created_at": out["created_at"], "updated_at": out["updated_at"],
    });
    assert_eq!(out, expected);
    assert_eq!(api_card(&t, id), expected);
}

#[test]
fn platform_and_active_cards_without_a_link() {
    let t = tenant();
    let base = [
        "card", "create", "--name", "N", "--lang", "fr", "--brand", "B", "--title", "T", "--body",
        "X",
    ];
    let platform = ok(&[&base[..], &["--platform", "--status", "active"][..]].concat());
    assert_eq!(platform["account_id"], Value::Null);
    assert_eq!(platform["status"], "active");
    for absent in ["link_url", "link_label", "brand_domain"] {
        assert_eq!(platform[absent], Value::Null);
    }
    assert_eq!(platform["key_values"], json!({}));
    let id = platform["id"].as_str().unwrap();
    assert_eq!(api_card(&t, id), platform, "visible to every organisation");
}

#[test]
fn card_create_refusals_write_nothing() {
    let t = tenant();
    let org = t.org_id.as_str();
    // A valid command with `extra` (flag, value) pairs replacing or adding values.
    let with = |extra: &[&'static str]| -> Vec<String> {
        let mut args: Vec<String> = [
            "card", "create", "--org", org, "--name", "N", "--lang", "fr", "--brand", "B",
            "--title", "T", "--body", "X",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        for pair in extra.chunks(2) {
            match args.iter().position(|a| a == pair[0]) {
                Some(at) if pair.len() == 2 => args[at + 1] = pair[1].to_string(),
                _ => args.extend(pair.iter().map(|s| s.to_string())),
            }
        }
        args
    };
    let cases: Vec<(Vec<String>, &str)> = vec![
        (with(&["--platform"]), "--platform"),
        (with(&["--lang", "pt"]), "language"),
        (
            with(&["--link-url", "https://example.com/"]),
            "--link-label",
        ),
        (with(&["--link-label", "Go"]), "--link-url"),
        (
            with(&["--link-url", "ftp://example.com/", "--link-label", "Go"]),
            "link_url",
        ),
        (
            with(&["--link-url", "/relative", "--link-label", "Go"]),
            "link_url",
        ),
        (
            with(&["--link-url", "https://e.com/", "--link-label", " "]),
            "link_label",
        ),
        (with(&["--kv", "section"]), "KEY=VALUE"),
        (with(&["--kv", "Section=x"]), "key_values.Section"),
        (with(&["--kv", "a=x,y"]), "key_values.a"),
        (
            with(&["--brand-domain", "https://example.com"]),
            "brand_domain",
        ),
        (with(&["--name", "  "]), "name: "),
        (with(&["--title", ""]), "title: "),
        (with(&["--status", "archived"]), "archived"),
    ];
    for (args, expected) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let stderr = refused(&args);
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
    let no_owner = refused(&[
        "card", "create", "--name", "N", "--lang", "fr", "--brand", "B", "--title", "T", "--body",
        "X",
    ]);
    assert!(
        no_owner.contains("--org") && no_owner.contains("--platform"),
        "{no_owner}"
    );
    let unknown = with(&[]);
    let mut unknown: Vec<&str> = unknown.iter().map(String::as_str).collect();
    unknown[3] = "acc_doesnotexist0000000000";
    assert!(refused(&unknown).contains("not found"));
    assert_eq!(
        count("SELECT count(*) FROM cards WHERE org_id = $1", org),
        0
    );
}

#[test]
fn card_status_changes_and_deletion() {
    let t = tenant();
    let created = card(Some(&t.org_id), CardStatus::Draft);
    for status in ["active", "archived", "draft"] {
        let out = ok(&["card", "set-status", &created.id, status]);
        assert_eq!(out["status"], status);
        assert_eq!(api_card(&t, &created.id), out);
    }
    assert!(refused(&["card", "set-status", &created.id, "paused"]).contains("status"));
    assert_eq!(api_card(&t, &created.id)["status"], "draft");
    let absent = "crd_000000000000000000000000";
    assert!(refused(&["card", "set-status", absent, "active"]).contains("not found"));

    let f = fragment(&t.org_id, "a.example", Some("/a"));
    let put = t.client.put(
        &format!("/v1/cards/{}/eligibility", created.id),
        &json!({"fragments": [{"domain": "a.example", "ref": "/a"}]}),
    );
    assert_eq!(put.status, 200);
    assert_eq!(
        ok(&["card", "delete", &created.id]),
        json!({"id": created.id, "deleted": true})
    );
    assert_eq!(api_card(&t, &created.id), Value::Null);
    assert_eq!(
        count(
            "SELECT count(*) FROM card_eligibility WHERE fragment_id = $1",
            &f
        ),
        0
    );
    assert!(refused(&["card", "delete", &created.id]).contains("not found"));
}

#[test]
fn platform_card_eligibility_is_set_per_organisation() {
    let a = tenant();
    let b = tenant();
    let platform = card(None, CardStatus::Active);
    let f = fragment(&a.org_id, "a.example", Some("sport:foot"));
    let g = fragment(&a.org_id, "a.example", Some("/b"));
    fragment(&b.org_id, "b.example", Some("/b"));

    let out = ok(&[
        "card",
        "eligibility",
        &platform.id,
        "--org",
        &a.org_id,
        "--fragment",
        "A.Example:sport:foot",
        "--fragment",
        "a.example:/b",
        "--fragment",
        "a.example:sport:foot",
    ]);
    let items = json!([
        {"domain": "a.example", "ref": "/b", "fragment_id": g},
        {"domain": "a.example", "ref": "sport:foot", "fragment_id": f},
    ]);
    assert_eq!(
        out,
        json!({"card_id": platform.id, "org_id": a.org_id, "items": items})
    );
    assert_eq!(eligibility(&a, &platform.id), json!({"items": items}));
    assert_eq!(eligibility(&b, &platform.id), json!({"items": []}));

    // A refusal leaves A's list as it was.
    let refusals = [
        ("b.example:/b", "no site"),
        ("a.example:/nothing", "no fragment"),
        ("a.example", "DOMAIN:REF"),
        ("a.example:a/../b", "fragments[0].ref"),
    ];
    for (named, expected) in refusals {
        let stderr = refused(&[
            "card",
            "eligibility",
            &platform.id,
            "--org",
            &a.org_id,
            "--fragment",
            named,
        ]);
        assert!(stderr.contains(expected), "{named}: {stderr}");
    }
    assert_eq!(eligibility(&a, &platform.id), json!({"items": items}));

    let own = card(Some(&a.org_id), CardStatus::Active);
    let stderr = refused(&["card", "eligibility", &own.id, "--org", &a.org_id]);
    assert!(stderr.contains("platform cards only"), "{stderr}");
    let stderr = refused(&[
        "card",
        "eligibility",
        &platform.id,
        "--org",
        "acc_none0000000000000000000",
    ]);
    assert!(stderr.contains("not found"), "{stderr}");

    let emptied = ok(&["card", "eligibility", &platform.id, "--org", &a.org_id]);
    assert_eq!(emptied["items"], json!([]));
    assert_eq!(eligibility(&a, &platform.id), json!({"items": []}));
    assert_eq!(
        count(
            "SELECT count(*) FROM card_eligibility WHERE card_id = $1",
            &platform.id
        ),
        0,
        "no list: not eligible in A"
    );
}

#[test]
fn fragment_create_makes_the_site_when_needed() {
    let t = tenant();
    let first = ok(&[
        "fragment",
        "create",
        "--org",
        &t.org_id,
        "--domain",
        " News.Example ",
        "--ref",
        "/politics",
        "--name",
        " Politics ",
    ]);
    let id = first["id"].as_str().unwrap();
    assert!(id.starts_with("frg_"));
    let expected = json!({
        "id": id, "ref": "/politics", "name": "Politics", "lang": "fr", "description": null,
        "key_values": {}, "status": "active", "created_at": first["created_at"],
        "updated_at": first["updated_at"], "domain": "news.example", "site_created": true,
    });
    assert_eq!(first, expected);

    let no_ref = ok(&[
        "fragment",
        "create",
        "--org",
        &t.org_id,
        "--domain",
        "news.example",
        "--name",
        "Home",
    ]);
    assert_eq!(no_ref["ref"], Value::Null);
    assert_eq!(no_ref["site_created"], false);
    assert_eq!(
        count(
            "SELECT count(*) FROM sites WHERE org_id = $1 AND domain = 'news.example'",
            &t.org_id
        ),
        1
    );

    let duplicate = refused(&[
        "fragment",
        "create",
        "--org",
        &t.org_id,
        "--domain",
        "news.example",
        "--ref",
        "/politics",
        "--name",
        "Again",
    ]);
    assert!(duplicate.contains("already has a fragment"), "{duplicate}");
    for (flag, value, expected) in [
        ("--domain", "http://x.example", "domain"),
        ("--ref", "a/./b", "ref"),
        ("--name", " ", "name"),
    ] {
        let mut args = vec![
            "fragment",
            "create",
            "--org",
            &t.org_id,
            "--domain",
            "other.example",
            "--ref",
            "/x",
            "--name",
            "X",
        ];
        let at = args.iter().position(|a| *a == flag).unwrap();
        args[at + 1] = value;
        assert!(refused(&args).contains(expected), "{flag}");
    }
    let absent_org = refused(&[
        "fragment",
        "create",
        "--org",
        "acc_none0000000000000000000",
        "--domain",
        "x.example",
        "--name",
        "X",
    ]);
    assert!(absent_org.contains("not found"));
    assert_eq!(
        count("SELECT count(*) FROM sites WHERE org_id = $1", &t.org_id),
        1,
        "refusals made no site"
    );

    // The API sees it: it can be made a card's eligibility.
    let c = card(Some(&t.org_id), CardStatus::Draft);
    let put = t.client.put(
        &format!("/v1/cards/{}/eligibility", c.id),
        &json!({"fragments": [{"domain": "news.example", "ref": "/politics"}]}),
    );
    assert_eq!(put.json()["items"][0]["fragment_id"], json!(id));
}

#[test]
fn deleting_fragments_and_sites_cascades_and_names_the_cards_set_to_draft() {
    let a = tenant();
    let b = tenant();
    let only = fragment(&a.org_id, "a.example", Some("/only"));
    let other = fragment(&a.org_id, "b.example", Some("/other"));
    let narrow = card(Some(&a.org_id), CardStatus::Active);
    let wide = card(Some(&a.org_id), CardStatus::Active);
    let platform = card(None, CardStatus::Active);
    let path = |id: &str| format!("/v1/cards/{id}/eligibility");
    let on = |refs: &[(&str, &str)]| {
        let entries: Vec<Value> = refs
            .iter()
            .map(|(d, r)| json!({"domain": d, "ref": r}))
            .collect();
        json!({ "fragments": entries })
    };
    assert_eq!(
        a.client
            .put(&path(&narrow.id), &on(&[("a.example", "/only")]))
            .status,
        200
    );
    let both = on(&[("a.example", "/only"), ("b.example", "/other")]);
    assert_eq!(a.client.put(&path(&wide.id), &both).status, 200);
    ok(&[
        "card",
        "eligibility",
        &platform.id,
        "--org",
        &a.org_id,
        "--fragment",
        "a.example:/only",
    ]);

    let stderr = refused(&[
        "fragment",
        "delete",
        "--org",
        &b.org_id,
        "--fragment",
        &only,
    ]);
    assert!(stderr.contains("not found"), "another org's fragment");
    let out = ok(&[
        "fragment",
        "delete",
        "--org",
        &a.org_id,
        "--fragment",
        &only,
    ]);
    assert_eq!(out["id"], json!(only));
    assert_eq!(out["deleted"], true);
    let warnings = out["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].as_str().unwrap().contains(&narrow.id));
    assert!(warnings[0].as_str().unwrap().contains("it is a draft now"));
    assert_eq!(eligibility(&a, &narrow.id), json!({"items": []}));
    assert_eq!(eligibility(&a, &platform.id), json!({"items": []}));
    assert_eq!(
        eligibility(&a, &wide.id)["items"].as_array().unwrap().len(),
        1
    );
    assert!(refused(&[
        "fragment",
        "delete",
        "--org",
        &a.org_id,
        "--fragment",
        &only
    ])
    .contains("not found"));

    assert!(refused(&[
        "site",
        "delete",
        "--org",
        &b.org_id,
        "--domain",
        "b.example"
    ])
    .contains("not found"));
    let out = ok(&[
        "site",
        "delete",
        "--org",
        &a.org_id,
        "--domain",
        " B.example ",
    ]);
    assert_eq!(out["domain"], "b.example");
    assert_eq!(out["deleted"], true);
    assert!(out["warnings"][0].as_str().unwrap().contains(&wide.id));
    assert_eq!(
        count("SELECT count(*) FROM fragments WHERE id = $1", &other),
        0
    );
    assert_eq!(eligibility(&a, &wide.id), json!({"items": []}));
    assert!(refused(&[
        "site",
        "delete",
        "--org",
        &a.org_id,
        "--domain",
        "b.example"
    ])
    .contains("not found"));
}

#[test]
fn only_revoked_keys_can_be_deleted() {
    let t = tenant();
    let created = t.client.post("/v1/keys", &json!({"name": "edge"})).json();
    let id = created["id"].as_str().unwrap();
    let stderr = refused(&["key", "delete", id]);
    assert!(
        stderr.contains("live") && stderr.contains("revoke it first"),
        "{stderr}"
    );
    assert_eq!(
        t.client.get("/v1/keys").json()["items"]
            .as_array()
            .unwrap()
            .len(),
        1
    );

    assert_eq!(t.client.delete(&format!("/v1/keys/{id}")).status, 200);
    assert_eq!(
        ok(&["key", "delete", id]),
        json!({"id": id, "deleted": true})
    );
    assert_eq!(t.client.get("/v1/keys").json(), json!({"items": []}));
    assert!(refused(&["key", "delete", id]).contains("not found"));
    let resp = t.client.delete(&format!("/v1/keys/{id}"));
    assert_eq!(resp.status, 404);
}

#[test]
fn deleting_a_site_default_says_it_is_cleared_and_which_rules_went() {
    let a = tenant();
    let home = fragment(&a.org_id, "d.example", Some("/home"));
    let plain = fragment(&a.org_id, "d.example", Some("/plain"));
    let set = a.client.put(
        "/v1/sites/d.example/default-fragment",
        &json!({"ref": "/home"}),
    );
    assert_eq!(set.status, 200, "{}", set.text());
    for path in ["/a/", "/b/"] {
        let rule = json!({"path_prefix": path, "match": "prefix", "ref": "/home"});
        let made = a.client.post("/v1/sites/d.example/routes", &rule);
        assert_eq!(made.status, 201, "{}", made.text());
    }

    let delete = |id: &str| ok(&["fragment", "delete", "--org", &a.org_id, "--fragment", id]);
    assert_eq!(delete(&plain)["warnings"], json!([]));
    let out = delete(&home);
    assert_eq!(
        out["warnings"],
        json!([
            "site default: d.example has no default fragment now; its pages that no rule \
             matches get the fragment_id of the request",
            "target of 2 rules: deleted with it",
        ])
    );
    let sites = a.client.get("/v1/sites").json();
    assert_eq!(sites["items"][0]["default_fragment_ref"], Value::Null);
    let routes = a.client.get("/v1/sites/d.example/routes").json();
    assert_eq!(routes["items"], json!([]));
}
