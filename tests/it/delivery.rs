//! Delivery, the serving endpoint `GET /fragment`: statuses and headers, each resolution step,
//! each selection rule, formats, hosts, determinism (the report's counts are `counting`'s).
//! Fixtures are written as the console would (`World`: its operations, and SQL for the rest)
//! and the cache is brought up to date with `harness::sync_cache`;
//! `cache_follows_writes_of_others` proves the notification path without it.

use crate::fixtures::{served_card, CardSpec, ServeProcess, World};
use crate::harness::{self, server, tenant, Client, Resp, CONSOLE_HOST, LEGACY_HOST};
use agentcard::{auth, ids};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

const CACHEABLE: &str = "public, s-maxage=120, stale-while-revalidate=240";

fn assert_refused(resp: &Resp, status: u16, code: &str) {
    assert_eq!(resp.status, status, "{}", resp.text());
    assert_eq!(resp.json()["error"]["code"], code);
    assert_eq!(resp.header("Cache-Control"), Some("no-store"));
}

/// A site with one fragment and one card on it.
fn simple_world() -> (World, String, String) {
    let mut w = World::new();
    let site = w.site("simple.example");
    let fragment = w.fragment(site, "/home", true);
    let card = w.card(CardSpec::default(), &[&fragment]);
    harness::sync_cache();
    (w, fragment, card)
}

#[test]
fn a_card_is_served_as_cacheable_html() {
    let (w, fragment, card) = simple_world();
    let resp = w.fetch(&fragment, "");
    assert_eq!(served_card(&resp), card);
    assert_eq!(
        resp.header("Content-Type"),
        Some("text/html; charset=UTF-8")
    );
    assert_eq!(resp.header("Cache-Control"), Some(CACHEABLE));
    assert_eq!(resp.header("Vary"), None);
    let html = resp.text();
    assert!(html.starts_with("<aside ") && html.ends_with("</aside>"));
    assert!(html.contains("data-brand=\"Brand\"") && html.contains("lang=\"fr\""));
}

#[test]
fn json_and_both_formats() {
    let (w, fragment, card) = simple_world();
    let json = w.fetch(&fragment, "&format=json");
    assert_eq!(json.header("Content-Type"), Some("application/json"));
    assert_eq!(
        json.json(),
        json!({"card": {"id": card, "lang": "fr", "brand": "Brand", "title": "Title", "body": "Body", "link_url": null, "link_label": null}})
    );
    let both = w.fetch(&fragment, "&format=both").json();
    assert_eq!(both["card"], json.json()["card"]);
    assert_eq!(
        both["html"].as_str().unwrap(),
        w.fetch(&fragment, "").text()
    );
    assert_refused(&w.fetch(&fragment, "&format=xml"), 400, "invalid_request");
}

#[test]
fn missing_or_invalid_parameters_are_400() {
    let (w, fragment, _) = simple_world();
    let key = &w.key;
    let org = &w.org_id;
    let cases = [
        format!("/fragment?fragment_id={fragment}&lang=fr&api_key={key}"),
        format!("/fragment?partner_id={org}&lang=fr&api_key={key}"),
        format!("/fragment?partner_id={org}&fragment_id={fragment}&api_key={key}"),
        format!("/fragment?partner_id={org}&fragment_id={fragment}&lang=pt&api_key={key}"),
        format!("/fragment?partner_id=&fragment_id={fragment}&lang=fr&api_key={key}"),
        "/fragment".to_string(),
    ];
    for path in cases {
        assert_refused(
            &Client::new(server().addr).get(&path),
            400,
            "invalid_request",
        );
    }
}

#[test]
fn missing_malformed_unknown_or_revoked_keys_are_401() {
    let (mut w, fragment, _) = simple_world();
    let base = format!(
        "/fragment?partner_id={}&fragment_id={fragment}&lang=fr",
        w.org_id
    );
    let unknown = auth::generate(auth::SecretKind::DeliveryKey, "svc").value;
    let (_, mgmt_token) = harness::new_token(&mut harness::db(), &w.org_id, false);
    for key in [
        "",
        "&api_key=nope",
        &format!("&api_key={unknown}"),
        &format!("&api_key={mgmt_token}"),
    ] {
        assert_refused(
            &Client::new(server().addr).get(&format!("{base}{key}")),
            401,
            "invalid_key",
        );
    }
    assert_eq!(w.fetch(&fragment, "").status, 200);
    let key_id = w.key_id.clone();
    w.sql(
        "UPDATE delivery_keys SET revoked_at = now() WHERE id = $1",
        &key_id,
    );
    harness::sync_cache();
    assert_refused(&w.fetch(&fragment, ""), 401, "invalid_key");
}

#[test]
fn the_x_api_key_header_wins_over_the_parameter() {
    let (w, fragment, card) = simple_world();
    let base = format!(
        "/fragment?partner_id={}&fragment_id={fragment}&lang=fr",
        w.org_id
    );
    let client = Client::new(server().addr);
    assert_eq!(
        served_card(&client.request("GET", &base, &[("X-API-Key", &w.key)], None)),
        card
    );
    let wrong = auth::generate(auth::SecretKind::DeliveryKey, "svc").value;
    let with_param = format!("{base}&api_key={}", w.key);
    assert_refused(
        &client.request("GET", &with_param, &[("X-API-Key", &wrong)], None),
        401,
        "invalid_key",
    );
    let with_wrong_param = format!("{base}&api_key={wrong}");
    assert_eq!(
        client
            .request("GET", &with_wrong_param, &[("X-API-Key", &w.key)], None)
            .status,
        200
    );
}

#[test]
fn a_key_of_another_partner_or_fragment_is_403() {
    let (w, fragment, _) = simple_world();
    let (other, other_fragment, _) = simple_world();
    let wrong_partner = format!(
        "/fragment?partner_id={}&fragment_id={fragment}&lang=fr&api_key={}",
        other.org_id, w.key
    );
    assert_refused(
        &Client::new(server().addr).get(&wrong_partner),
        403,
        "forbidden",
    );
    assert_refused(&w.fetch(&other_fragment, ""), 403, "forbidden");
    assert_refused(&w.fetch("frg_doesnotexist", ""), 403, "forbidden");
}

#[test]
fn placement_id_is_a_deprecated_alias() {
    let (w, fragment, card) = simple_world();
    let path = format!(
        "/fragment?partner_id={}&placement_id={fragment}&lang=fr&api_key={}",
        w.org_id, w.key
    );
    assert_eq!(served_card(&Client::new(server().addr).get(&path)), card);
}

#[test]
fn no_fill_is_204_with_an_empty_cacheable_body() {
    let mut w = World::new();
    let site = w.site("nofill.example");
    let bare = w.fragment(site, "/bare", true);
    let paused = w.fragment(site, "/paused", false);
    let other = w.fragment(site, "/other", true);
    w.card(CardSpec::default(), &[&paused, &other]);
    w.card(
        CardSpec {
            lang: "en",
            ..CardSpec::default()
        },
        &[&bare],
    );
    harness::sync_cache();
    for fragment in [&bare, &paused] {
        let resp = w.fetch(fragment, "");
        assert_eq!(resp.status, 204);
        assert!(resp.body.is_empty());
        assert_eq!(resp.header("Cache-Control"), Some(CACHEABLE));
        // RFC 9110 §8.6: a 204 carries no Content-Length.
        assert_eq!(resp.header("Content-Length"), None);
    }
    assert_eq!(w.fetch(&other, "").status, 200);
}

#[test]
fn head_answers_like_get_without_a_body() {
    let (w, fragment, _) = simple_world();
    let path = format!(
        "/fragment?partner_id={}&fragment_id={fragment}&lang=fr&api_key={}",
        w.org_id, w.key
    );
    let resp = Client::new(server().addr).request("HEAD", &path, &[], None);
    assert_eq!(resp.status, 200);
    assert!(resp.body.is_empty());
    let get = w.fetch(&fragment, "");
    assert_eq!(
        resp.header("Content-Length").unwrap(),
        get.body.len().to_string()
    );
    assert_eq!(resp.header("Cache-Control"), Some(CACHEABLE));
}

#[test]
fn the_answer_never_depends_on_a_user_agent() {
    let (w, fragment, _) = simple_world();
    let plain = w.fetch(&fragment, "");
    let variants = [
        w.fetch_with(&fragment, "", &[("User-Agent", "GPTBot/1.1")]),
        w.fetch_with(
            &fragment,
            "",
            &[("X-Agent-UA", "ClaudeBot/1.0"), ("User-Agent", "curl/8")],
        ),
        w.fetch(&fragment, "&agent_ua=PerplexityBot"),
    ];
    for resp in variants {
        assert_eq!((resp.status, &resp.body), (plain.status, &plain.body));
        assert_eq!(resp.header("Cache-Control"), plain.header("Cache-Control"));
        assert_eq!(resp.header("Vary"), None);
    }
}

/// A site whose fragments each carry a card of their own, so the served card names the
/// fragment the page resolved to.
struct Resolution {
    w: World,
    cards: std::collections::HashMap<&'static str, String>,
    requested: String,
}

fn resolution_world() -> Resolution {
    let mut w = World::new();
    let site = w.site("news.example");
    let bare_site = w.site("bare.example");
    let mut cards = std::collections::HashMap::new();
    let mut fragment_with_card =
        |w: &mut World, site: agentcard::ids::SiteId, name: &'static str| {
            let fragment = w.fragment(site, &format!("/{name}"), true);
            cards.insert(name, w.card(CardSpec::default(), &[&fragment]));
            fragment
        };
    let exact = fragment_with_card(&mut w, site, "exact");
    let prefix = fragment_with_card(&mut w, site, "prefix");
    let longer = fragment_with_card(&mut w, site, "longer");
    let default = fragment_with_card(&mut w, site, "default");
    let requested = fragment_with_card(&mut w, bare_site, "requested");
    w.route(site, "/news/", true, &exact);
    w.route(site, "/news/", false, &prefix);
    w.route(site, "/news/world/", false, &longer);
    w.route(site, "/%C3%A9t%C3%A9/", false, &longer);
    w.default_fragment(site, &default);
    harness::sync_cache();
    Resolution {
        w,
        cards,
        requested,
    }
}

#[test]
fn pages_resolve_exact_then_longest_prefix_then_default_then_fragment_id() {
    let r = resolution_world();
    let cases = [
        ("https://news.example/news", "exact"),
        ("https://news.example/news/", "exact"),
        ("https://news.example/news?x=1#top", "exact"),
        ("https://news.example/news/story-1", "prefix"),
        ("https://News.Example:8443/NEWS/World/europe/x", "longer"),
        ("http://news.example/news/world", "longer"),
        ("https://news.example/%C3%89t%C3%A9/juillet", "longer"),
        ("https://news.example/newsroom", "default"),
        ("https://news.example/", "default"),
        ("https://news.example/a//b", "default"),
        ("https://bare.example/news/", "requested"),
        ("https://elsewhere.example/news/", "requested"),
        ("ftp://news.example/news/", "requested"),
        ("not a url", "requested"),
    ];
    for (page_url, expected) in cases {
        let encoded: String = url::form_urlencoded::byte_serialize(page_url.as_bytes()).collect();
        let resp = r.w.fetch(&r.requested, &format!("&page_url={encoded}"));
        assert_eq!(served_card(&resp), r.cards[expected], "{page_url}");
    }
    assert_eq!(
        served_card(&r.w.fetch(&r.requested, "")),
        r.cards["requested"]
    );
}

#[test]
fn a_resolved_paused_fragment_answers_204() {
    let mut w = World::new();
    let site = w.site("paused.example");
    let paused = w.fragment(site, "/paused", false);
    let requested = w.fragment(site, "/requested", true);
    w.card(CardSpec::default(), &[]);
    w.route(site, "/", false, &paused);
    harness::sync_cache();
    assert_eq!(
        w.fetch(&requested, "").status,
        200,
        "own card with an empty list serves everywhere"
    );
    assert_eq!(
        w.fetch(&requested, "&page_url=https%3A%2F%2Fpaused.example%2Fx")
            .status,
        204
    );
}

#[test]
fn cards_are_picked_by_lang_brand_context_ownership_then_hash() {
    let mut w = World::new();
    let site = w.site("www.brand.example");
    let fragment = w.fragment(site, "/f", true);
    let plain = w.card(CardSpec::default(), &[&fragment]);
    let english = w.card(
        CardSpec {
            lang: "en",
            ..CardSpec::default()
        },
        &[&fragment],
    );
    let sport = w.card(
        CardSpec {
            key_values: json!({"topic": ["sport", "foot"]}),
            ..CardSpec::default()
        },
        &[&fragment],
    );
    let branded = w.card(
        CardSpec {
            brand_domain: Some("brand.example"),
            ..CardSpec::default()
        },
        &[&fragment],
    );
    let en_path = format!(
        "/fragment?partner_id={}&fragment_id={fragment}&lang=en&api_key={}",
        w.org_id, w.key
    );
    harness::sync_cache();

    assert_eq!(
        served_card(&Client::new(server().addr).get(&en_path)),
        english
    );
    let page = "&page_url=https%3A%2F%2Fwww.brand.example%2Fx";
    assert_eq!(
        served_card(&w.fetch(&fragment, page)),
        branded,
        "brand first"
    );
    assert_eq!(
        served_card(&w.fetch(&fragment, &format!("{page}&ctx.topic=sport"))),
        branded,
        "brand before context"
    );
    assert_eq!(
        served_card(&w.fetch(&fragment, "&ctx.topic=sport")),
        sport,
        "context without brand"
    );
    assert_eq!(
        served_card(&w.fetch(&fragment, "&ctx.topic=+foot+&ctx.topic=sport")),
        sport
    );
    let unmatched = w.fetch(&fragment, "&ctx.topic=chess");
    assert_eq!(
        unmatched.status, 200,
        "a value matching nothing does not cause a no-fill"
    );
    assert!([&plain, &sport, &branded].contains(&&served_card(&unmatched)));
}

#[test]
fn own_cards_beat_platform_cards_and_platform_cards_need_a_list() {
    let mut w = World::new();
    let site = w.site("platform.example");
    let listed = w.fragment(site, "/listed", true);
    let unlisted = w.fragment(site, "/unlisted", true);
    let platform = w.card(
        CardSpec {
            platform: true,
            ..CardSpec::default()
        },
        &[&listed],
    );
    harness::sync_cache();
    assert_eq!(served_card(&w.fetch(&listed, "")), platform);
    assert_eq!(
        w.fetch(&unlisted, "").status,
        204,
        "no list for this org: not eligible"
    );
    let own = w.card(CardSpec::default(), &[&listed]);
    harness::sync_cache();
    assert_eq!(served_card(&w.fetch(&listed, "")), own);
}

#[test]
fn the_same_page_and_context_get_the_same_card_and_pages_spread() {
    let mut w = World::new();
    let site = w.site("spread.example");
    let fragment = w.fragment(site, "/f", true);
    let cards: Vec<String> = (0..4)
        .map(|_| w.card(CardSpec::default(), &[&fragment]))
        .collect();
    harness::sync_cache();
    let mut seen = std::collections::HashSet::new();
    for page in 0..40 {
        let extra = format!("&page_url=https%3A%2F%2Fspread.example%2Fp{page}");
        let first = served_card(&w.fetch(&fragment, &extra));
        assert_eq!(served_card(&w.fetch(&fragment, &extra)), first);
        assert!(cards.contains(&first));
        seen.insert(first);
    }
    assert!(seen.len() > 1, "the hash spreads pages over tied cards");
}

#[test]
fn another_server_process_picks_the_same_cards() {
    let mut w = World::new();
    let site = w.site("twoprocs.example");
    let fragment = w.fragment(site, "/f", true);
    for _ in 0..5 {
        w.card(CardSpec::default(), &[&fragment]);
    }
    harness::sync_cache();
    let other = ServeProcess::start();
    for page in 0..20 {
        let path = format!(
            "/fragment?partner_id={}&fragment_id={fragment}&lang=fr&api_key={}&page_url=https%3A%2F%2Ftwoprocs.example%2F{page}&ctx.a=b",
            w.org_id, w.key
        );
        let here = Client::new(server().addr).get(&path);
        let there = Client::new(other.addr).get(&path);
        assert_eq!(served_card(&here), served_card(&there), "page {page}");
        assert_eq!(here.body, there.body);
    }
}

#[test]
fn cache_follows_writes_of_others_by_notification() {
    let (mut w, fragment, card) = simple_world();
    assert_eq!(served_card(&w.fetch(&fragment, "")), card);
    w.sql(
        "UPDATE fragments SET status = 'paused' WHERE id = $1",
        &fragment,
    );
    let started = Instant::now();
    while w.fetch(&fragment, "").status != 204 {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the cache never saw the change"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn the_legacy_host_serves_identically_and_the_console_host_not_at_all() {
    let (w, fragment, _) = simple_world();
    let path = format!(
        "/fragment?partner_id={}&fragment_id={fragment}&lang=fr&api_key={}",
        w.org_id, w.key
    );
    let base = Client::new(server().addr).get(&path);
    let legacy = Client::new(server().addr).host(LEGACY_HOST).get(&path);
    assert_eq!((legacy.status, &legacy.body), (base.status, &base.body));
    assert_eq!(legacy.header("Cache-Control"), base.header("Cache-Control"));
    assert_eq!(
        Client::new(server().addr)
            .host(CONSOLE_HOST)
            .get(&path)
            .status,
        404
    );
    assert_eq!(
        Client::new(server().addr)
            .host(LEGACY_HOST)
            .get("/contact")
            .status,
        404
    );
}

#[test]
fn a_platform_card_listed_for_an_organisation_survives_its_reloads() {
    let t = tenant();
    let key = t.client.post("/v1/keys", &json!({})).json()["key"]
        .as_str()
        .unwrap()
        .to_string();
    let site = "/v1/sites/platform-reload.example";
    assert_eq!(t.client.put(site, &json!({})).status, 201);
    let fragment = t
        .client
        .put(&format!("{site}/fragments/%2Fp"), &json!({"name": "P"}))
        .json()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let platform = ids::CardId::generate().to_string();
    let mut db = harness::db();
    db.execute(
        "INSERT INTO cards (id, org_id, status, name, lang, brand, title, body) VALUES ($1, NULL, 'active', 'p', 'fr', 'P', 'T', 'x')",
        &[&platform],
    )
    .unwrap();
    db.execute(
        "INSERT INTO card_eligibility (card_id, org_id, fragment_id) VALUES ($1, $2, $3)",
        &[&platform, &t.org_id, &fragment],
    )
    .unwrap();
    harness::sync_cache();
    let fetch = || {
        let path = format!(
            "/fragment?partner_id={}&fragment_id={fragment}&lang=fr&api_key={key}",
            t.org_id
        );
        Client::new(server().addr).get(&path)
    };
    assert_eq!(served_card(&fetch()), platform);
    // A write reloads this organisation alone, with only the platform cards it lists.
    assert_eq!(t.client.put(site, &json!({"name": "renamed"})).status, 200);
    assert_eq!(served_card(&fetch()), platform, "after its reload");
}

#[test]
fn writes_through_the_api_are_seen_by_the_very_next_fragment_call() {
    let t = tenant();
    let key = t.client.post("/v1/keys", &json!({"name": "edge"})).json();
    let (key_id, key) = (
        key["id"].as_str().unwrap().to_string(),
        key["key"].as_str().unwrap().to_string(),
    );
    assert_eq!(
        t.client.put("/v1/sites/api.example", &json!({})).status,
        201
    );
    let put_fragment = |r: &str, body: Value| {
        t.client
            .put(&format!("/v1/sites/api.example/fragments/{r}"), &body)
    };
    let a = put_fragment("%2Fa", json!({"name": "A"})).json()["id"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(put_fragment("%2Fb", json!({"name": "B"})).status, 201);
    let mut db = harness::db();
    let card_on_b = ids::CardId::generate().to_string();
    db.execute(
        "INSERT INTO cards (id, org_id, status, name, lang, brand, title, body) VALUES ($1, $2, 'active', 'c', 'fr', 'B', 'T', 'x')",
        &[&card_on_b, &t.org_id],
    )
    .unwrap();
    harness::sync_cache();
    let fetch = |extra: &str| {
        let path = format!(
            "/fragment?partner_id={}&fragment_id={a}&lang=fr&api_key={key}{extra}",
            t.org_id
        );
        Client::new(server().addr).get(&path)
    };
    assert_eq!(
        served_card(&fetch("")),
        card_on_b,
        "a key created through the API serves"
    );

    assert_eq!(
        put_fragment("%2Fa", json!({"name": "A", "status": "paused"})).status,
        200
    );
    assert_eq!(fetch("").status, 204, "pausing is seen at once");
    let page = "&page_url=https%3A%2F%2Fapi.example%2Fsport%2Fx";
    let rule = json!({"path_prefix": "/sport/", "match": "prefix", "ref": "/b"});
    assert_eq!(
        t.client.post("/v1/sites/api.example/routes", &rule).status,
        201
    );
    assert_eq!(
        served_card(&fetch(page)),
        card_on_b,
        "a new rule resolves at once"
    );
    let eligibility = json!({"fragments": [{"domain": "api.example", "ref": "/a"}]});
    assert_eq!(
        t.client
            .put(&format!("/v1/cards/{card_on_b}/eligibility"), &eligibility)
            .status,
        200
    );
    assert_eq!(fetch(page).status, 204, "the card left /b at once");

    assert_eq!(t.client.delete(&format!("/v1/keys/{key_id}")).status, 200);
    let refused = fetch(page);
    assert_eq!(
        (refused.status, refused.json()["error"]["code"].as_str()),
        (401, Some("invalid_key"))
    );
}
