//! Sites: `GET /v1/sites`, `PUT /v1/sites/{domain}`, the default fragment, and isolation
//! between organisations on every site-scoped endpoint.

use crate::fixtures::{
    assert_error, fragment_without_ref, get_items, is_timestamp, members, new_fragment, new_site,
    put_fragment,
};
use crate::harness::{self, tenant, Resp, Tenant};
use agentcard::db;
use agentcard::domain::DomainName;
use agentcard::ids::OrgId;
use serde_json::{json, Value};

fn sites(t: &Tenant) -> Vec<Value> {
    get_items(t, "/v1/sites")
}

fn site(t: &Tenant, domain: &str) -> Value {
    sites(t)
        .into_iter()
        .find(|s| s["domain"] == domain)
        .unwrap_or(Value::Null)
}

fn pause(t: &Tenant, domain: &str, reference: &str) {
    let body = json!({"name": reference, "status": "paused"});
    assert_eq!(put_fragment(t, domain, reference, &body).status, 200);
}

// ---- PUT /v1/sites/{domain} ----

#[test]
fn put_site_creates_with_201_then_updates_with_200() {
    let t = tenant();
    let created = t.client.put("/v1/sites/example.com", &json!({}));
    assert_eq!(created.status, 201);
    let record = created.json();
    assert_eq!(
        members(&record),
        [
            "created_at",
            "default_fragment_id",
            "default_fragment_ref",
            "domain",
            "icon",
            "name",
            "updated_at"
        ]
    );
    assert_eq!(record["domain"], "example.com");
    assert_eq!(record["name"], "");
    assert_eq!(record["default_fragment_ref"], Value::Null);
    assert_eq!(record["default_fragment_id"], Value::Null);
    assert_eq!(record["icon"], Value::Null);
    assert!(is_timestamp(&record["created_at"]) && is_timestamp(&record["updated_at"]));

    let steps = [
        (json!({"name": "  Le Monde  "}), "Le Monde"),
        (json!({}), "Le Monde"),
        (json!({"name": null}), "Le Monde"),
        (json!({"name": ""}), ""),
    ];
    for (body, name) in steps {
        let resp = t.client.put("/v1/sites/example.com", &body);
        assert_eq!(resp.status, 200, "{body}");
        assert_eq!(resp.json()["name"], name, "{body}");
        assert_eq!(resp.json()["created_at"], record["created_at"]);
        assert_eq!(site(&t, "example.com"), resp.json());
    }
    assert_eq!(sites(&t).len(), 1);
}

#[test]
fn put_site_trims_and_lowercases_the_domain() {
    let t = tenant();
    let resp = t.client.put("/v1/sites/%20News.Example.COM%20", &json!({}));
    assert_eq!(resp.status, 201);
    assert_eq!(resp.json()["domain"], "news.example.com");
    let again = t
        .client
        .put("/v1/sites/NEWS.example.com", &json!({"name": "N"}));
    assert_eq!(again.status, 200);
    assert_eq!(again.json()["domain"], "news.example.com");
    let fragments = t.client.get("/v1/sites/News.Example.Com/fragments");
    assert_eq!(
        fragments.status, 200,
        "the path domain is read the same way"
    );
    let www = t.client.put("/v1/sites/www.news.example.com", &json!({}));
    assert_eq!(www.status, 201, "www.<domain> is another site");
    assert_eq!(sites(&t).len(), 2);
}

#[test]
fn put_site_refuses_an_invalid_domain_with_422_domain() {
    let t = tenant();
    let cases = [
        "localhost",
        "1.2.3.4",
        "x.com:80",
        "-x.com",
        "x_y.com",
        "x.com.",
        "x..com",
        "a%2Fb.com",
        "user@x.com",
        "b%C3%BCcher.de",
        "%zz.com",
        &format!("{}.com", "a".repeat(64)),
    ];
    for domain in cases {
        let resp = t.client.put(&format!("/v1/sites/{domain}"), &json!({}));
        assert_error(&resp, 422, "validation", Some("domain"));
    }
    assert_eq!(sites(&t), Vec::<Value>::new());
}

#[test]
fn put_site_checks_the_body_before_the_domain() {
    let t = tenant();
    let long_name = "n".repeat(201);
    let cases = [
        (
            json!({"domain": "example.com"}),
            400,
            "unknown_field",
            "domain",
        ),
        (
            json!({"name": 5, "icon": "x"}),
            400,
            "unknown_field",
            "icon",
        ),
        (json!([]), 422, "validation", "body"),
        (json!("text"), 422, "validation", "body"),
        (json!({"name": 5}), 422, "validation", "name"),
        (json!({"name": long_name}), 422, "validation", "name"),
        (
            json!({"default_fragment_ref": 5}),
            422,
            "validation",
            "default_fragment_ref",
        ),
        (
            json!({"default_fragment_ref": "a b"}),
            422,
            "validation",
            "default_fragment_ref",
        ),
    ];
    for (body, status, code, field) in cases {
        for domain in ["example.com", "not_a_domain"] {
            // With an invalid domain too, the body is refused first.
            let resp = t.client.put(&format!("/v1/sites/{domain}"), &body);
            assert_error(&resp, status, code, Some(field));
        }
    }
    let name_ok = "é".repeat(200);
    let resp = t
        .client
        .put("/v1/sites/example.com", &json!({"name": name_ok}));
    assert_eq!(
        (resp.status, resp.json()["name"].clone()),
        (201, json!(name_ok))
    );
}

#[test]
fn put_site_cannot_set_a_default_while_creating_the_site() {
    let t = tenant();
    let resp = t.client.put(
        "/v1/sites/example.com",
        &json!({"name": "x", "default_fragment_ref": "a"}),
    );
    assert_error(&resp, 422, "validation", Some("default_fragment_ref"));
    assert_eq!(sites(&t), Vec::<Value>::new(), "nothing written");
}

#[test]
fn put_site_sets_the_default_to_an_active_fragment_of_this_site_only() {
    let t = tenant();
    new_site(&t, "example.com");
    new_site(&t, "other.com");
    let active = new_fragment(&t, "example.com", "a");
    new_fragment(&t, "example.com", "b");
    pause(&t, "example.com", "b");
    new_fragment(&t, "other.com", "c");
    for reference in ["b", "c", "missing", "A"] {
        let body = json!({"default_fragment_ref": reference, "name": "changed"});
        let resp = t.client.put("/v1/sites/example.com", &body);
        assert_error(&resp, 422, "validation", Some("default_fragment_ref"));
        assert_eq!(site(&t, "example.com")["name"], "", "nothing written");
    }
    let resp = t.client.put(
        "/v1/sites/example.com",
        &json!({"default_fragment_ref": "a"}),
    );
    assert_eq!(resp.status, 200);
    assert_eq!(resp.json()["default_fragment_ref"], "a");
    assert_eq!(resp.json()["default_fragment_id"], active.as_str());
    let kept = t.client.put("/v1/sites/example.com", &json!({"name": "N"}));
    assert_eq!(
        kept.json()["default_fragment_ref"],
        "a",
        "absent keeps the default"
    );
    assert_eq!(site(&t, "example.com"), kept.json());
}

#[test]
fn put_site_twice_with_the_same_body_leaves_the_same_state() {
    let t = tenant();
    new_site(&t, "example.com");
    new_fragment(&t, "example.com", "a");
    let body = json!({"name": "Le Monde", "default_fragment_ref": "a"});
    let first = t.client.put("/v1/sites/example.com", &body);
    assert_eq!(first.status, 200);
    let state = sites(&t);
    let second = t.client.put("/v1/sites/example.com", &body);
    assert_eq!((second.status, second.json()), (200, first.json()));
    assert_eq!(sites(&t), state);
}

#[test]
fn the_same_domain_is_a_separate_site_in_each_organisation() {
    let a = tenant();
    let b = tenant();
    let resp = a.client.put("/v1/sites/example.com", &json!({"name": "A"}));
    assert_eq!(resp.status, 201);
    let resp = b.client.put("/v1/sites/example.com", &json!({"name": "B"}));
    assert_eq!(resp.status, 201, "created in the caller's organisation");
    assert_eq!(site(&a, "example.com")["name"], "A");
    assert_eq!(site(&b, "example.com")["name"], "B");
    assert_eq!(sites(&a).len(), 1);
}

#[test]
fn ensure_site_creates_the_site_once_and_returns_it() {
    let t = tenant();
    let mut db = harness::db();
    let domain = DomainName::parse(" Example.com ").expect("valid domain");
    let org = OrgId::parse(&t.org_id).unwrap();
    let (created, was_created) = db::sites::ensure_site(&mut db, &org, &domain).expect("ensure");
    assert!(was_created);
    assert_eq!(
        (created.domain.as_str(), created.name.as_str()),
        ("example.com", "")
    );
    let again = db::sites::ensure_site(&mut db, &org, &domain).expect("ensure again");
    assert_eq!(again, (created.clone(), false));
    let found = db::sites::find_site(&mut db, &org, &domain).expect("find");
    assert_eq!(found, Some(created));
    let other = OrgId::parse(&tenant().org_id).unwrap();
    assert_eq!(
        db::sites::find_site(&mut db, &other, &domain).ok(),
        Some(None)
    );
    assert_eq!(sites(&t).len(), 1);
}

// ---- GET /v1/sites ----

#[test]
fn sites_are_listed_by_domain_in_byte_order() {
    let t = tenant();
    assert_eq!(t.client.get("/v1/sites").json(), json!({"items": []}));
    for domain in ["www.a.com", "b.com", "a0.com", "a.com", "a-b.com"] {
        new_site(&t, domain);
    }
    let domains: Vec<Value> = sites(&t).iter().map(|s| s["domain"].clone()).collect();
    assert_eq!(
        domains,
        [
            json!("a-b.com"),
            json!("a.com"),
            json!("a0.com"),
            json!("b.com"),
            json!("www.a.com")
        ]
    );
    assert_eq!(
        sites(&tenant()),
        Vec::<Value>::new(),
        "other organisations see none"
    );
}

// ---- default fragment ----

#[test]
fn put_default_fragment_sets_an_active_fragment_and_answers_the_site() {
    let t = tenant();
    new_site(&t, "example.com");
    let a = new_fragment(&t, "example.com", "/a");
    new_fragment(&t, "example.com", "paused");
    pause(&t, "example.com", "paused");
    let path = "/v1/sites/example.com/default-fragment";
    let resp = t.client.put(path, &json!({"ref": "/a"}));
    assert_eq!(resp.status, 200);
    assert_eq!(resp.json()["default_fragment_ref"], "/a");
    assert_eq!(resp.json()["default_fragment_id"], a.as_str());
    assert_eq!(resp.json(), site(&t, "example.com"));

    let refused = [
        (json!({"ref": "paused"}), 422, "validation", "ref"),
        (json!({"ref": "missing"}), 422, "validation", "ref"),
        (json!({"ref": "%2Fa"}), 422, "validation", "ref"),
        (json!({"ref": ".."}), 422, "validation", "ref"),
        (json!({"ref": 5}), 422, "validation", "ref"),
        (json!({}), 422, "validation", "ref"),
        (json!({"ref": null}), 422, "validation", "ref"),
        (json!([]), 422, "validation", "body"),
        (json!({"ref": "/a", "x": 1}), 400, "unknown_field", "x"),
    ];
    for (body, status, code, field) in refused {
        let resp = t.client.put(path, &body);
        assert_error(&resp, status, code, Some(field));
    }
    assert_eq!(site(&t, "example.com")["default_fragment_ref"], "/a");
}

#[test]
fn default_fragment_calls_check_the_body_before_the_site() {
    let t = tenant();
    for domain in ["absent.com", "not_a_domain"] {
        let path = format!("/v1/sites/{domain}/default-fragment");
        assert_error(
            &t.client.put(&path, &json!({"ref": 5})),
            422,
            "validation",
            Some("ref"),
        );
        assert_error(
            &t.client.put(&path, &json!({"ref": "a"})),
            404,
            "not_found",
            None,
        );
        let unknown = t.client.send_json("DELETE", &path, &json!({"x": 1}));
        assert_error(&unknown, 400, "unknown_field", Some("x"));
        assert_error(&t.client.delete(&path), 404, "not_found", None);
    }
}

#[test]
fn delete_default_fragment_clears_it_repeatably_and_keeps_the_fragment() {
    let t = tenant();
    new_site(&t, "example.com");
    new_fragment(&t, "example.com", "a");
    let path = "/v1/sites/example.com/default-fragment";
    assert_eq!(t.client.put(path, &json!({"ref": "a"})).status, 200);
    let first = t.client.delete(path);
    assert_eq!(first.status, 200);
    assert_eq!(first.json()["default_fragment_ref"], Value::Null);
    assert_eq!(first.json()["default_fragment_id"], Value::Null);
    let second = t.client.delete(path);
    assert_eq!((second.status, second.json()), (200, first.json()));
    assert_eq!(site(&t, "example.com"), first.json());
    let fragments = get_items(&t, "/v1/sites/example.com/fragments");
    assert_eq!(fragments.len(), 1, "the fragment itself is kept");
    let not_object = t.client.send_json("DELETE", path, &json!([]));
    assert_error(&not_object, 422, "validation", Some("body"));
}

#[test]
fn a_default_paused_afterwards_stays_set_but_cannot_be_set_again() {
    let t = tenant();
    new_site(&t, "example.com");
    new_fragment(&t, "example.com", "a");
    let path = "/v1/sites/example.com/default-fragment";
    assert_eq!(t.client.put(path, &json!({"ref": "a"})).status, 200);
    pause(&t, "example.com", "a");
    assert_eq!(site(&t, "example.com")["default_fragment_ref"], "a");
    let again = t.client.put(path, &json!({"ref": "a"}));
    assert_error(&again, 422, "validation", Some("ref"));
    let via_site = t.client.put(
        "/v1/sites/example.com",
        &json!({"default_fragment_ref": "a"}),
    );
    assert_error(&via_site, 422, "validation", Some("default_fragment_ref"));
    assert_eq!(site(&t, "example.com")["default_fragment_ref"], "a");
}

#[test]
fn a_default_without_a_reference_reads_as_null_ref() {
    let t = tenant();
    new_site(&t, "example.com");
    let id = fragment_without_ref(&t, "example.com", "console-made");
    harness::db()
        .execute(
            "UPDATE sites SET default_fragment_id = $1 WHERE org_id = $2",
            &[&id, &t.org_id],
        )
        .unwrap();
    let record = site(&t, "example.com");
    assert_eq!(record["default_fragment_id"], id.as_str());
    assert_eq!(record["default_fragment_ref"], Value::Null);
}

// ---- isolation ----

/// Every site-scoped request, on `domain`.
fn site_scoped_requests(t: &Tenant, domain: &str, route_id: &str) -> Vec<Resp> {
    let site = format!("/v1/sites/{domain}");
    let rule = json!({"path_prefix": "/a", "match": "exact", "ref": "a"});
    vec![
        t.client.get(&format!("{site}/fragments")),
        t.client
            .put(&format!("{site}/fragments/a"), &json!({"name": "x"})),
        t.client
            .put(&format!("{site}/default-fragment"), &json!({"ref": "a"})),
        t.client.delete(&format!("{site}/default-fragment")),
        t.client.get(&format!("{site}/routes")),
        t.client.post(&format!("{site}/routes"), &rule),
        t.client
            .put(&format!("{site}/routes"), &json!({"routes": [rule]})),
        t.client.delete(&format!("{site}/routes/{route_id}")),
    ]
}

#[test]
fn another_organisations_site_answers_exactly_like_an_absent_one() {
    let owner = tenant();
    new_site(&owner, "example.com");
    new_fragment(&owner, "example.com", "a");
    let rule = json!({"path_prefix": "/r", "match": "prefix", "ref": "a"});
    let created = owner.client.post("/v1/sites/example.com/routes", &rule);
    let route_id = created.json()["id"].as_str().unwrap_or_default().to_owned();
    let before = (
        site(&owner, "example.com"),
        get_items(&owner, "/v1/sites/example.com/fragments"),
        get_items(&owner, "/v1/sites/example.com/routes"),
    );

    let stranger = tenant();
    let theirs = site_scoped_requests(&stranger, "example.com", &route_id);
    let absent = site_scoped_requests(&stranger, "absent.example.com", &route_id);
    for (their, none) in theirs.iter().zip(&absent) {
        assert_error(their, 404, "not_found", None);
        assert_eq!((their.status, their.json()), (none.status, none.json()));
    }
    let after = (
        site(&owner, "example.com"),
        get_items(&owner, "/v1/sites/example.com/fragments"),
        get_items(&owner, "/v1/sites/example.com/routes"),
    );
    assert_eq!(after, before, "nothing of the owner changed");
}
