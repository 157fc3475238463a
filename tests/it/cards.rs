//! `/v1/cards` and `/v1/cards/{id}/eligibility`: what an organisation sees, the replacement of
//! a card's list (checks in the contract's order, all or nothing), and platform cards.
//!
//! Fixtures (sites, fragments, cards) are written with the service's own db functions, as the
//! console would make them.

use crate::fixtures::{assert_error, card, card_in, fragment};
use crate::harness::{db, server, tenant, Resp, Tenant};
use agentcard::db::cards;
use agentcard::domain::CardStatus;
use agentcard::ids::{CardId, FragmentId, OrgId};
use serde_json::{json, Value};
use std::collections::BTreeSet;

const ABSENT_CARD: &str = "crd_000000000000000000000000";

/// Sets `org`'s list of a card directly, as the console does for platform cards.
fn set_list(card_id: &str, org: &str, fragment_ids: &[String]) {
    let mut db = db();
    let card_id = CardId::parse(card_id).unwrap();
    let org = OrgId::parse(org).unwrap();
    let fragment_ids: Vec<FragmentId> = fragment_ids
        .iter()
        .map(|id| FragmentId::parse(id).unwrap())
        .collect();
    cards::replace_eligibility(&mut db, &card_id, &org, &fragment_ids).unwrap();
}

fn eligibility_path(card_id: &str) -> String {
    format!("/v1/cards/{card_id}/eligibility")
}

fn put_list(t: &Tenant, card_id: &str, body: Value) -> Resp {
    t.client.put(&eligibility_path(card_id), &body)
}

fn get_list(t: &Tenant, card_id: &str) -> Value {
    let resp = t.client.get(&eligibility_path(card_id));
    assert_eq!(resp.status, 200, "{}", resp.text());
    resp.json()
}

fn item(domain: &str, fragment_ref: &str, fragment_id: &str) -> Value {
    json!({"domain": domain, "ref": fragment_ref, "fragment_id": fragment_id})
}

fn stored_rows(card_id: &str) -> i64 {
    db().query_one(
        "SELECT count(*) FROM card_eligibility WHERE card_id = $1",
        &[&card_id],
    )
    .unwrap()
    .get(0)
}

#[test]
fn card_list_holds_own_and_platform_cards_in_id_order_and_never_another_orgs() {
    let server = server();
    let (a, b) = (server.tenant(), server.tenant());
    let mut db = server.db();
    let draft = card_in(&mut db, Some(&a.org_id), CardStatus::Draft);
    let archived = card_in(&mut db, Some(&a.org_id), CardStatus::Archived);
    let platform = card_in(&mut db, None, CardStatus::Active);
    card_in(&mut db, Some(&b.org_id), CardStatus::Active);

    let resp = a.client.get("/v1/cards");
    assert_eq!(resp.status, 200);
    let items = resp.json()["items"].as_array().unwrap().clone();
    let ids: Vec<&str> = items.iter().map(|c| c["id"].as_str().unwrap()).collect();
    let mut expected = [&draft.id, &archived.id, &platform.id].map(String::as_str);
    expected.sort_unstable();
    assert_eq!(
        ids, expected,
        "A's and the platform's, ordered by id, byte order"
    );

    let listed = items.iter().find(|c| c["id"] == json!(draft.id)).unwrap();
    let expected = json!({
        "id": draft.id, "account_id": a.org_id, "status": "draft",
        "name": "Subscription offer", "lang": "fr", "brand": "Example News",
        "brand_domain": "example.com", "title": "Read Example News",
        "body": "Independent reporting since 1950.",
        "link_url": "https://example.com/subscribe", "link_label": "Subscribe",
        "key_values": {"section": ["politics"]},
        "created_at": draft.created_at, "updated_at": draft.updated_at,
    });
    assert_eq!(listed, &expected);
    let platform_listed = items
        .iter()
        .find(|c| c["id"] == json!(platform.id))
        .unwrap();
    assert_eq!(platform_listed["account_id"], Value::Null);
    assert_eq!(platform_listed["status"], "active");
}

#[test]
fn another_orgs_card_answers_exactly_like_an_absent_one() {
    let a = tenant();
    let b = tenant();
    let foreign = card(Some(&b.org_id), CardStatus::Active);
    let b_fragment = fragment(&b.org_id, "b.example", Some("/b"));
    set_list(&foreign.id, &b.org_id, std::slice::from_ref(&b_fragment));
    let body = json!({"fragments": []});
    for id in [foreign.id.as_str(), ABSENT_CARD, "not-a-card", "crd_%2F"] {
        let get = a.client.get(&eligibility_path(id));
        assert_error(&get, 404, "not_found", None);
        assert_eq!(
            get.json(),
            json!({"error": {"code": "not_found", "message": "not found"}})
        );
        let put = put_list(&a, id, body.clone());
        assert_error(&put, 404, "not_found", None);
        assert_eq!(put.json(), get.json());
    }
    assert_eq!(stored_rows(&foreign.id), 1, "B's list untouched");
}

#[test]
fn a_replaced_list_is_sorted_deduplicated_and_read_back() {
    let t = tenant();
    let archived = card(Some(&t.org_id), CardStatus::Archived);
    let b_z = fragment(&t.org_id, "b.example", Some("/z"));
    let a_b = fragment(&t.org_id, "a.example", Some("b"));
    let a_upper = fragment(&t.org_id, "a.example", Some("B"));
    let paused = fragment(&t.org_id, "a.example", Some("sport:foot/x.y"));
    db().execute(
        "UPDATE fragments SET status = 'paused' WHERE id = $1",
        &[&paused],
    )
    .unwrap();
    assert_eq!(get_list(&t, &archived.id), json!({"items": []}));

    let resp = put_list(
        &t,
        &archived.id,
        json!({"fragments": [
            {"domain": "b.example", "ref": "/z"},
            {"domain": "  A.Example  ", "ref": "b"},
            {"domain": "a.example", "ref": "sport:foot/x.y"},
            {"domain": "a.example", "ref": "B"},
            {"domain": "a.example", "ref": "b"},
        ]}),
    );
    assert_eq!(resp.status, 200, "{}", resp.text());
    let expected = json!({"items": [
        item("a.example", "B", &a_upper),
        item("a.example", "b", &a_b),
        item("a.example", "sport:foot/x.y", &paused),
        item("b.example", "/z", &b_z),
    ]});
    assert_eq!(resp.json(), expected);
    assert_eq!(get_list(&t, &archived.id), expected);
    assert_eq!(stored_rows(&archived.id), 4, "the duplicate counts once");
}

#[test]
fn missing_fragments_lose_the_card_and_an_empty_list_means_everywhere() {
    let t = tenant();
    let c = card(Some(&t.org_id), CardStatus::Active);
    let x = fragment(&t.org_id, "news.example", Some("x"));
    let y = fragment(&t.org_id, "news.example", Some("y"));
    let both = json!({"fragments": [
        {"domain": "news.example", "ref": "x"}, {"domain": "news.example", "ref": "y"}
    ]});
    assert_eq!(put_list(&t, &c.id, both).status, 200);

    let resp = put_list(
        &t,
        &c.id,
        json!({"fragments": [{"domain": "news.example", "ref": "y"}]}),
    );
    let only_y = json!({"items": [item("news.example", "y", &y)]});
    assert_eq!(resp.json(), only_y);
    assert_eq!(get_list(&t, &c.id), only_y);
    assert_ne!(x, y);

    let resp = put_list(&t, &c.id, json!({"fragments": []}));
    assert_eq!(resp.status, 200);
    assert_eq!(resp.json(), json!({"items": []}));
    assert_eq!(get_list(&t, &c.id), json!({"items": []}));
    assert_eq!(stored_rows(&c.id), 0, "everywhere is stored as no rows");
}

#[test]
fn one_bad_entry_leaves_the_stored_list_unchanged() {
    let a = tenant();
    let b = tenant();
    let c = card(Some(&a.org_id), CardStatus::Draft);
    let kept = fragment(&a.org_id, "a.example", Some("/a"));
    fragment(&b.org_id, "b.example", Some("/b"));
    fragment(&b.org_id, "a.example", Some("/only-in-b"));
    fragment(&a.org_id, "a.example", None);
    let good = json!({"domain": "a.example", "ref": "/a"});
    assert_eq!(
        put_list(&a, &c.id, json!({"fragments": [good]})).status,
        200
    );
    let before = get_list(&a, &c.id);

    let cases = [
        (
            json!({"domain": "nowhere.example", "ref": "/a"}),
            "fragments[1].domain",
        ),
        (
            json!({"domain": "b.example", "ref": "/b"}),
            "fragments[1].domain",
        ),
        (
            json!({"domain": "a.example", "ref": "/only-in-b"}),
            "fragments[1].ref",
        ),
        (
            json!({"domain": "a.example", "ref": "/A"}),
            "fragments[1].ref",
        ),
        (
            json!({"domain": "a.example", "ref": "/a/"}),
            "fragments[1].ref",
        ),
    ];
    for (bad, field) in cases {
        let resp = put_list(&a, &c.id, json!({"fragments": [good, bad, good]}));
        assert_error(&resp, 422, "validation", Some(field));
        assert_eq!(get_list(&a, &c.id), before, "{bad}");
    }
    assert_eq!(before, json!({"items": [item("a.example", "/a", &kept)]}));
}

#[test]
fn body_errors_come_in_the_contracts_order() {
    let t = tenant();
    let c = card(Some(&t.org_id), CardStatus::Active);
    let platform = card(None, CardStatus::Active);
    let f = fragment(&t.org_id, "a.example", Some("/a"));
    set_list(&c.id, &t.org_id, std::slice::from_ref(&f));
    let ok = json!({"domain": "a.example", "ref": "/a"});
    let cases: Vec<(Value, u16, &str, &str)> = vec![
        (json!({"fragments": [], "x": 1}), 400, "unknown_field", "x"),
        (
            json!({"fragments": [ok, {"domain": "a.example", "ref": "/a", "extra": 1}]}),
            400,
            "unknown_field",
            "fragments[1].extra",
        ),
        (
            json!({"fragments": [{"domain": 5}, {"domain": "a.example", "ref": "/a", "bad": 1}]}),
            400,
            "unknown_field",
            "fragments[1].bad",
        ),
        (json!([]), 422, "validation", "body"),
        (json!({}), 422, "validation", "fragments"),
        (json!({"fragments": null}), 422, "validation", "fragments"),
        (json!({"fragments": "x"}), 422, "validation", "fragments"),
        (json!({"fragments": {}}), 422, "validation", "fragments"),
        (
            json!({"fragments": [ok, 5]}),
            422,
            "validation",
            "fragments[1]",
        ),
        (
            json!({"fragments": [{"ref": "/a"}]}),
            422,
            "validation",
            "fragments[0].domain",
        ),
        (
            json!({"fragments": [{"domain": null, "ref": "/a"}]}),
            422,
            "validation",
            "fragments[0].domain",
        ),
        (
            json!({"fragments": [{"domain": 1, "ref": "/a"}]}),
            422,
            "validation",
            "fragments[0].domain",
        ),
        (
            json!({"fragments": [{"domain": "https://a.example", "ref": "/a"}]}),
            422,
            "validation",
            "fragments[0].domain",
        ),
        (
            json!({"fragments": [{"domain": "", "ref": "/a"}]}),
            422,
            "validation",
            "fragments[0].domain",
        ),
        (
            json!({"fragments": [{"domain": "a.example"}]}),
            422,
            "validation",
            "fragments[0].ref",
        ),
        (
            json!({"fragments": [ok, {"domain": "a.example", "ref": 3}]}),
            422,
            "validation",
            "fragments[1].ref",
        ),
        (
            json!({"fragments": [{"domain": "a.example", "ref": ""}]}),
            422,
            "validation",
            "fragments[0].ref",
        ),
        (
            json!({"fragments": [{"domain": "a.example", "ref": "a/../b"}]}),
            422,
            "validation",
            "fragments[0].ref",
        ),
        (
            json!({"fragments": [{"domain": "a.example", "ref": "%2Fa"}]}),
            422,
            "validation",
            "fragments[0].ref",
        ),
        (
            json!({"fragments": [{"domain": "a.example", "ref": " /a"}]}),
            422,
            "validation",
            "fragments[0].ref",
        ),
    ];
    // Body checks come before the card (404) and the platform refusal (403). One tenant per
    // card keeps each under the write limit.
    let (absent_caller, platform_caller) = (tenant(), tenant());
    let targets = [
        (&t, c.id.as_str()),
        (&absent_caller, ABSENT_CARD),
        (&platform_caller, platform.id.as_str()),
    ];
    for (caller, id) in targets {
        for (body, status, code, field) in &cases {
            let resp = put_list(caller, id, body.clone());
            assert_error(&resp, *status, code, Some(field));
        }
    }
    assert_eq!(
        get_list(&t, &c.id),
        json!({"items": [item("a.example", "/a", &f)]})
    );
    // A valid body naming unknown fragments: the card first (404), then the platform (403).
    let unknown = json!({"fragments": [{"domain": "nowhere.example", "ref": "/x"}]});
    let resp = put_list(&absent_caller, ABSENT_CARD, unknown.clone());
    assert_error(&resp, 404, "not_found", None);
    let resp = put_list(&platform_caller, &platform.id, unknown);
    assert_error(&resp, 403, "platform_card", None);
}

#[test]
fn platform_cards_refuse_writes_and_show_each_org_only_its_own_list() {
    let a = tenant();
    let b = tenant();
    let c = tenant();
    let platform = card(None, CardStatus::Active);
    let in_a = fragment(&a.org_id, "shared.example", Some("/a"));
    let in_b = fragment(&b.org_id, "shared.example", Some("/b"));
    set_list(&platform.id, &a.org_id, std::slice::from_ref(&in_a));
    set_list(&platform.id, &b.org_id, std::slice::from_ref(&in_b));

    assert_eq!(
        get_list(&a, &platform.id),
        json!({"items": [item("shared.example", "/a", &in_a)]})
    );
    assert_eq!(
        get_list(&b, &platform.id),
        json!({"items": [item("shared.example", "/b", &in_b)]})
    );
    assert_eq!(get_list(&c, &platform.id), json!({"items": []}));

    for body in [
        json!({"fragments": []}),
        json!({"fragments": [{"domain": "shared.example", "ref": "/a"}]}),
    ] {
        let resp = put_list(&a, &platform.id, body);
        assert_error(&resp, 403, "platform_card", None);
        assert_eq!(
            resp.json(),
            json!({"error": {"code": "platform_card",
                             "message": "platform cards are managed by the service operator"}})
        );
    }
    assert_eq!(stored_rows(&platform.id), 2, "nothing written");
    assert_eq!(
        get_list(&a, &platform.id),
        json!({"items": [item("shared.example", "/a", &in_a)]})
    );
}

#[test]
fn concurrent_replacements_leave_one_of_the_written_lists() {
    let t = tenant();
    let c = card(Some(&t.org_id), CardStatus::Active);
    let refs = ["r1", "r2", "r3", "r4", "r5", "r6"];
    for r in refs {
        fragment(&t.org_id, "race.example", Some(r));
    }
    let list = |names: &[&str]| -> Value {
        let entries: Vec<Value> = names
            .iter()
            .map(|r| json!({"domain": "race.example", "ref": r}))
            .collect();
        json!({ "fragments": entries })
    };
    let first = list(&refs[..3]);
    let second = list(&refs[3..]);
    for _ in 0..5 {
        let writers: Vec<_> = [first.clone(), second.clone()]
            .into_iter()
            .map(|body| {
                let client = t.client.clone();
                let path = eligibility_path(&c.id);
                std::thread::spawn(move || client.put(&path, &body).status)
            })
            .collect();
        for writer in writers {
            assert_eq!(writer.join().unwrap(), 200);
        }
        let stored: BTreeSet<String> = get_list(&t, &c.id)["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["ref"].as_str().unwrap().to_owned())
            .collect();
        let one: BTreeSet<String> = refs[..3].iter().map(|r| r.to_string()).collect();
        let other: BTreeSet<String> = refs[3..].iter().map(|r| r.to_string()).collect();
        assert!(stored == one || stored == other, "{stored:?}");
    }
}
