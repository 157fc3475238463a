//! Routing rules: list order, `POST` (conflict, ceiling, fields, boundaries), `PUT` (whole
//! list checked then applied at once, new ids, field paths, atomicity, concurrent writers),
//! `DELETE`, and isolation of another site's or organisation's rules.

use crate::fixtures::{
    assert_error, fragment_without_ref, get_items, members, new_fragment, new_site, put_fragment,
};
use crate::harness::{tenant, Tenant};
use serde_json::{json, Value};
use std::collections::HashSet;

const SITE: &str = "example.com";
const ROUTES: &str = "/v1/sites/example.com/routes";

fn rule(path: &str, mode: &str, reference: &str) -> Value {
    json!({"path_prefix": path, "match": mode, "ref": reference})
}

fn routes(t: &Tenant) -> Vec<Value> {
    get_items(t, ROUTES)
}

/// A tenant with the site and fragments `a` and `b`; returns the tenant and `a`'s id.
fn site_with_fragments() -> (Tenant, String) {
    let t = tenant();
    new_site(&t, SITE);
    let a = new_fragment(&t, SITE, "a");
    new_fragment(&t, SITE, "b");
    (t, a)
}

/// `n` distinct exact rules on fragment `a`.
fn many_rules(n: usize) -> Vec<Value> {
    (0..n)
        .map(|i| rule(&format!("/p{i}"), "exact", "a"))
        .collect()
}

/// The rules without their ids: what a client wrote.
fn written(items: &[Value]) -> Vec<(String, String, String)> {
    items
        .iter()
        .map(|r| {
            let text = |name: &str| r[name].as_str().unwrap_or_default().to_owned();
            (text("path_prefix"), text("match"), text("fragment_ref"))
        })
        .collect()
}

// ---- POST ----

#[test]
fn post_route_creates_a_canonical_rule_and_answers_201() {
    let (t, a) = site_with_fragments();
    let resp = t
        .client
        .post(ROUTES, &rule("  Actualite/Été ", " prefix\n", "a"));
    assert_eq!(resp.status, 201, "{}", resp.text());
    let record = resp.json();
    assert_eq!(
        members(&record),
        ["fragment_id", "fragment_ref", "id", "match", "path_prefix"]
    );
    assert!(record["id"]
        .as_str()
        .is_some_and(|id| id.starts_with("rte_")));
    assert_eq!(record["path_prefix"], "/actualite/%C3%A9t%C3%A9/");
    assert_eq!(record["match"], "prefix");
    assert_eq!(record["fragment_ref"], "a");
    assert_eq!(record["fragment_id"], a.as_str());
    assert_eq!(routes(&t), [record]);
}

#[test]
fn post_route_with_the_same_canonical_path_and_match_is_409() {
    let (t, _) = site_with_fragments();
    assert_eq!(
        t.client
            .post(ROUTES, &rule("/actualite", "exact", "a"))
            .status,
        201
    );
    let duplicate = t.client.post(ROUTES, &rule("ACTUALITE/", " exact", "b"));
    assert_error(&duplicate, 409, "conflict", Some("path_prefix"));
    assert_eq!(
        t.client
            .post(ROUTES, &rule("/actualite/", "prefix", "b"))
            .status,
        201
    );
    assert_eq!(routes(&t).len(), 2);
}

#[test]
fn post_route_accepts_a_paused_target() {
    let (t, _) = site_with_fragments();
    let paused = put_fragment(&t, SITE, "b", &json!({"name": "b", "status": "paused"}));
    assert_eq!(paused.status, 200);
    let resp = t.client.post(ROUTES, &rule("/x", "exact", "b"));
    assert_eq!(
        (resp.status, resp.json()["fragment_ref"].clone()),
        (201, json!("b"))
    );
}

#[test]
fn post_route_refuses_invalid_bodies_with_the_field_at_fault() {
    let (t, _) = site_with_fragments();
    new_site(&t, "other.com");
    new_fragment(&t, "other.com", "elsewhere");
    let cases = [
        (json!([]), 422, "validation", "body"),
        (json!("text"), 422, "validation", "body"),
        (json!(null), 422, "validation", "body"),
        (
            json!({"path_prefix": "/a", "match": "exact"}),
            422,
            "validation",
            "ref",
        ),
        (rule("/a", "exact", "a b"), 422, "validation", "ref"),
        (rule("/a", "exact", " a"), 422, "validation", "ref"),
        (rule("/a", "exact", "A"), 422, "validation", "ref"),
        (rule("/a", "exact", "missing"), 422, "validation", "ref"),
        (rule("/a", "exact", "elsewhere"), 422, "validation", "ref"),
        (rule("/a", "exact", "%61"), 422, "validation", "ref"),
        (
            json!({"path_prefix": "/a", "match": "exact", "ref": 5}),
            422,
            "validation",
            "ref",
        ),
        (
            json!({"path_prefix": "/a", "match": "exact", "ref": null}),
            422,
            "validation",
            "ref",
        ),
        (
            json!({"match": "exact", "ref": "a"}),
            422,
            "validation",
            "path_prefix",
        ),
        (
            json!({"path_prefix": 1, "match": "exact", "ref": "a"}),
            422,
            "validation",
            "path_prefix",
        ),
        (rule("", "exact", "a"), 422, "validation", "path_prefix"),
        (rule("   ", "exact", "a"), 422, "validation", "path_prefix"),
        (
            rule("/a?b=1", "exact", "a"),
            422,
            "validation",
            "path_prefix",
        ),
        (rule("/a#b", "exact", "a"), 422, "validation", "path_prefix"),
        (rule("/a b", "exact", "a"), 422, "validation", "path_prefix"),
        (
            rule("/a\\b", "exact", "a"),
            422,
            "validation",
            "path_prefix",
        ),
        (
            rule("/a/../b", "exact", "a"),
            422,
            "validation",
            "path_prefix",
        ),
        (
            rule("/a//b", "exact", "a"),
            422,
            "validation",
            "path_prefix",
        ),
        (rule("/%zz", "exact", "a"), 422, "validation", "path_prefix"),
        (
            json!({"path_prefix": "/a", "ref": "a"}),
            422,
            "validation",
            "match",
        ),
        (rule("/a", "Exact", "a"), 422, "validation", "match"),
        (rule("/a", "both", "a"), 422, "validation", "match"),
        (
            json!({"path_prefix": "/a", "match": "exact", "ref": "a", "x": 1}),
            400,
            "unknown_field",
            "x",
        ),
        (
            json!({"path_prefix": 5, "fragment_ref": "a"}),
            400,
            "unknown_field",
            "fragment_ref",
        ),
    ];
    for (body, status, code, field) in cases {
        let resp = t.client.post(ROUTES, &body);
        assert_error(&resp, status, code, Some(field));
    }
    assert_eq!(routes(&t), Vec::<Value>::new(), "nothing written");
}

#[test]
fn post_route_checks_the_body_before_the_site() {
    let t = tenant();
    for domain in ["absent.com", "not_a_domain"] {
        let path = format!("/v1/sites/{domain}/routes");
        let invalid = t.client.post(&path, &rule("/a b", "exact", "a"));
        assert_error(&invalid, 422, "validation", Some("path_prefix"));
        let unknown = t.client.post(&path, &json!({"x": 1, "match": "no"}));
        assert_error(&unknown, 400, "unknown_field", Some("x"));
        let valid = t.client.post(&path, &rule("/a", "exact", "a"));
        assert_error(&valid, 404, "not_found", None);
        let list = t
            .client
            .put(&path, &json!({"routes": [rule("/a", "both", "a")]}));
        assert_error(&list, 422, "validation", Some("routes[0].match"));
        let list = t.client.put(&path, &json!({"routes": []}));
        assert_error(&list, 404, "not_found", None);
    }
    assert_error(
        &t.client.get("/v1/sites/absent.com/routes"),
        404,
        "not_found",
        None,
    );
}

#[test]
fn path_prefix_and_ref_lengths_have_their_boundaries() {
    let t = tenant();
    new_site(&t, SITE);
    let long_ref = format!("/{}", "r".repeat(199));
    new_fragment(&t, SITE, &long_ref);
    let escaped = "%61".repeat(170);
    let short_canonical = format!("/{}/", "a".repeat(170));
    let canonical_200 = format!("/{}/", "c".repeat(198));
    let cases = [
        // 512 UTF-16 units once trimmed, short once canonical: accepted.
        (
            format!("  /{escaped}/  "),
            "a".to_owned(),
            Ok(short_canonical.as_str()),
        ),
        (format!("/{escaped}a/"), "a".to_owned(), Err("path_prefix")),
        (
            canonical_200.clone(),
            "a".to_owned(),
            Ok(canonical_200.as_str()),
        ),
        (
            format!("/{}", "d".repeat(199)),
            "a".to_owned(),
            Err("path_prefix"),
        ),
        ("/r".to_owned(), long_ref.clone(), Ok("/r/")),
        ("/s".to_owned(), format!("{long_ref}r"), Err("ref")),
    ];
    new_fragment(&t, SITE, "a");
    for (path, reference, expected) in cases {
        let resp = t.client.post(ROUTES, &rule(&path, "exact", &reference));
        match expected {
            Ok(canonical) => {
                assert_eq!(resp.status, 201, "{path}: {}", resp.text());
                assert_eq!(resp.json()["path_prefix"], canonical);
                assert_eq!(resp.json()["fragment_ref"], reference.as_str());
            }
            Err(field) => assert_error(&resp, 422, "validation", Some(field)),
        }
    }
    assert_eq!(routes(&t).len(), 3);
}

#[test]
fn the_201st_rule_is_refused_by_post_and_by_put() {
    let (t, _) = site_with_fragments();
    let full = t.client.put(ROUTES, &json!({"routes": many_rules(200)}));
    assert_eq!(full.status, 200, "{}", full.text());
    assert_eq!(full.json()["items"].as_array().map(Vec::len), Some(200));
    let stored = routes(&t);
    let post = t.client.post(ROUTES, &rule("/one-more", "exact", "a"));
    assert_error(&post, 422, "validation", Some("routes"));
    let put = t.client.put(ROUTES, &json!({"routes": many_rules(201)}));
    assert_error(&put, 422, "validation", Some("routes"));
    assert_eq!(routes(&t), stored, "nothing changed");
    let duplicate = t.client.post(ROUTES, &rule("/p0", "exact", "b"));
    assert_error(&duplicate, 409, "conflict", Some("path_prefix"));
}

// ---- GET ----

#[test]
fn rules_are_listed_by_path_then_match_in_byte_order() {
    let (t, _) = site_with_fragments();
    assert_eq!(t.client.get(ROUTES).json(), json!({"items": []}));
    let list = json!({"routes": [
        rule("/b", "exact", "a"),
        rule("/a/", "prefix", "b"),
        rule("/a-b", "exact", "a"),
        rule("/a", "exact", "b"),
        rule("/a%20b", "prefix", "a"),
        rule("/", "prefix", "a"),
        rule("/Z", "exact", "a"),
    ]});
    assert_eq!(t.client.put(ROUTES, &list).status, 200);
    let order: Vec<(String, String)> = written(&routes(&t))
        .into_iter()
        .map(|(path, mode, _)| (path, mode))
        .collect();
    let expected = [
        ("/", "prefix"),
        ("/a%20b/", "prefix"),
        ("/a-b/", "exact"),
        ("/a/", "exact"),
        ("/a/", "prefix"),
        ("/b/", "exact"),
        ("/z/", "exact"),
    ];
    let expected: Vec<(String, String)> = expected
        .iter()
        .map(|(p, m)| (p.to_string(), m.to_string()))
        .collect();
    assert_eq!(order, expected);
}

#[test]
fn a_rule_on_a_fragment_without_a_reference_shows_a_null_fragment_ref() {
    let (t, _) = site_with_fragments();
    let id = fragment_without_ref(&t, SITE, "console");
    crate::harness::db()
        .execute(
            "INSERT INTO routes (id, site_id, path, match, fragment_id)
             SELECT 'rte_console0000000000000000', site_id, '/c/', 'exact', id
               FROM fragments WHERE id = $1",
            &[&id],
        )
        .unwrap();
    let listed = routes(&t);
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["fragment_ref"], Value::Null);
    assert_eq!(listed[0]["fragment_id"], id.as_str());
}

// ---- PUT ----

#[test]
fn put_routes_replaces_every_rule_with_new_ids() {
    let (t, a) = site_with_fragments();
    let first = json!({"routes": [rule("/x", "exact", "a"), rule("/y", "prefix", "b")]});
    let resp = t.client.put(ROUTES, &first);
    assert_eq!(resp.status, 200);
    assert_eq!(members(&resp.json()), ["items"]);
    let before = routes(&t);
    assert_eq!(resp.json()["items"], json!(before));

    let second = json!({"routes": [rule("/x", "exact", "a"), rule("/z", "exact", "a")]});
    let resp = t.client.put(ROUTES, &second);
    assert_eq!(resp.status, 200);
    let after = routes(&t);
    assert_eq!(resp.json()["items"], json!(after));
    assert_eq!(
        written(&after),
        [
            ("/x/".into(), "exact".into(), "a".into()),
            ("/z/".into(), "exact".into(), "a".into())
        ]
    );
    assert_eq!(after[0]["fragment_id"], a.as_str());
    let old_ids: HashSet<&Value> = before.iter().map(|r| &r["id"]).collect();
    assert!(
        after.iter().all(|r| !old_ids.contains(&r["id"])),
        "every rule has a new id"
    );

    let cleared = t.client.put(ROUTES, &json!({"routes": []}));
    assert_eq!(
        (cleared.status, cleared.json()),
        (200, json!({"items": []}))
    );
    assert_eq!(routes(&t), Vec::<Value>::new());
}

#[test]
fn put_routes_names_the_item_at_fault_and_changes_nothing() {
    let (t, _) = site_with_fragments();
    let stored = json!({"routes": [rule("/keep", "exact", "a")]});
    assert_eq!(t.client.put(ROUTES, &stored).status, 200);
    let before = routes(&t);
    let ok = rule("/ok", "exact", "a");
    let cases = [
        (json!({}), 422, "validation", "routes"),
        (json!({"routes": null}), 422, "validation", "routes"),
        (json!({"routes": {}}), 422, "validation", "routes"),
        (json!([]), 422, "validation", "body"),
        (json!({"routes": [], "x": 1}), 400, "unknown_field", "x"),
        (
            json!({"routes": [ok, {"path_prefix": "/a", "match": "exact", "ref": "a", "id": "r"}]}),
            400,
            "unknown_field",
            "routes[1].id",
        ),
        (
            json!({"routes": [rule("/a b", "both", "?"), {"x": 1}]}),
            400,
            "unknown_field",
            "routes[1].x",
        ),
        (json!({"routes": [ok, 5]}), 422, "validation", "routes[1]"),
        (
            json!({"routes": [ok, rule("/a?b", "exact", "a")]}),
            422,
            "validation",
            "routes[1].path_prefix",
        ),
        (
            json!({"routes": [ok, {"match": "exact", "ref": "a"}]}),
            422,
            "validation",
            "routes[1].path_prefix",
        ),
        (
            json!({"routes": [rule("/a", "any", "a")]}),
            422,
            "validation",
            "routes[0].match",
        ),
        (
            json!({"routes": [ok, ok, json!({"path_prefix": "/b", "match": "exact", "ref": 5})]}),
            422,
            "validation",
            "routes[1].path_prefix",
        ),
        (
            json!({"routes": [ok, rule("/b", "exact", "a b")]}),
            422,
            "validation",
            "routes[1].ref",
        ),
        (
            json!({"routes": [ok, rule("/b", "exact", "a"), rule("/c", "exact", "missing")]}),
            422,
            "validation",
            "routes[2].ref",
        ),
        (
            json!({"routes": [ok, {"path_prefix": "/b", "match": "exact"}]}),
            422,
            "validation",
            "routes[1].ref",
        ),
        (
            json!({"routes": [rule("/A", "exact", "a"), rule("/b", "exact", "a"), rule(" a/", "exact", "b")]}),
            422,
            "validation",
            "routes[2].path_prefix",
        ),
    ];
    for (body, status, code, field) in cases {
        let resp = t.client.put(ROUTES, &body);
        assert_error(&resp, status, code, Some(field));
        assert_eq!(routes(&t), before, "{body}: nothing changed");
    }
}

#[test]
fn concurrent_replacements_end_with_exactly_one_of_the_written_lists() {
    let (t, _) = site_with_fragments();
    let lists: Vec<Value> = (0..6)
        .map(|writer| {
            let items: Vec<Value> = (0..30)
                .map(|i| {
                    let target = if (i + writer) % 2 == 0 { "a" } else { "b" };
                    rule(&format!("/w{writer}/r{i}"), "prefix", target)
                })
                .collect();
            json!({"routes": items})
        })
        .collect();
    for round in 0..3 {
        let statuses: Vec<u16> = std::thread::scope(|scope| {
            let handles: Vec<_> = lists
                .iter()
                .map(|list| scope.spawn(|| t.client.put(ROUTES, list).status))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap_or(0)).collect()
        });
        assert_eq!(statuses, [200; 6], "round {round}");
        let stored = written(&routes(&t));
        let matches = lists
            .iter()
            .filter(|list| {
                let items = list["routes"].as_array().cloned().unwrap_or_default();
                let mut expected: Vec<(String, String, String)> = items
                    .iter()
                    .map(|r| {
                        let path = r["path_prefix"].as_str().unwrap_or_default();
                        let target = r["ref"].as_str().unwrap_or_default();
                        (format!("{path}/"), "prefix".to_owned(), target.to_owned())
                    })
                    .collect();
                expected.sort();
                let mut got = stored.clone();
                got.sort();
                got == expected
            })
            .count();
        assert_eq!(matches, 1, "round {round}: {} rules stored", stored.len());
    }
}

// ---- DELETE ----

#[test]
fn delete_route_answers_the_removed_rule_then_404() {
    let (t, _) = site_with_fragments();
    let created = t.client.post(ROUTES, &rule("/x", "exact", "a")).json();
    let kept = t.client.post(ROUTES, &rule("/y", "exact", "b")).json();
    let id = created["id"].as_str().unwrap_or_default();
    let path = format!("{ROUTES}/{id}");
    let unknown = t.client.send_json("DELETE", &path, &json!({"x": 1}));
    assert_error(&unknown, 400, "unknown_field", Some("x"));
    let not_object = t.client.send_json("DELETE", &path, &json!([]));
    assert_error(&not_object, 422, "validation", Some("body"));
    let resp = t.client.delete(&path);
    assert_eq!((resp.status, resp.json()), (200, created.clone()));
    assert_error(&t.client.delete(&path), 404, "not_found", None);
    assert_eq!(routes(&t), [kept]);
    assert_error(
        &t.client.delete(&format!("{ROUTES}/rte_absent")),
        404,
        "not_found",
        None,
    );
}

#[test]
fn a_rule_of_another_site_or_organisation_answers_like_an_absent_one() {
    let (owner, _) = site_with_fragments();
    new_site(&owner, "other.com");
    let created = owner.client.post(ROUTES, &rule("/x", "exact", "a")).json();
    let id = created["id"].as_str().unwrap_or_default();
    let absent = owner
        .client
        .delete(&format!("{ROUTES}/rte_000000000000000000000000"));
    let via_other_site = owner
        .client
        .delete(&format!("/v1/sites/other.com/routes/{id}"));
    let stranger = tenant();
    new_site(&stranger, SITE);
    let via_other_org = stranger.client.delete(&format!("{ROUTES}/{id}"));
    for resp in [&via_other_site, &via_other_org] {
        assert_error(resp, 404, "not_found", None);
        assert_eq!(resp.json(), absent.json());
    }
    assert_eq!(get_items(&stranger, ROUTES), Vec::<Value>::new());
    assert_eq!(routes(&owner), [created], "the rule is still there");
}
