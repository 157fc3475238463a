//! Acting where one reads (issue 43): a fragment's own page pauses, activates, edits and deletes
//! it; a rule's deletion goes through a confirmation page that says where its pages go instead;
//! every confirmation counts the last 24 hours' requests of what it deletes or revokes; a card's
//! eligibility page groups the fragments by site, those ticked first, with a filter. Each
//! action read back from the database and the audit log, over real HTTP.

use crate::console_fixtures::{person, Browser};
use crate::fixtures::{CardSpec, World};
use crate::harness::{self, db, Resp};
use agentcard::domain::Role;
use agentcard::ids::SiteId;
use std::time::{Duration, Instant};

/// The `Location` of a `303`.
#[track_caller]
fn redirected(resp: &Resp) -> String {
    assert_eq!(resp.status, 303, "{}", resp.text());
    resp.header("Location").unwrap().to_string()
}

/// A page read with `200`.
#[track_caller]
fn page(browser: &Browser, path: &str) -> String {
    let resp = browser.get(path);
    assert_eq!(resp.status, 200, "{path}: {}", resp.text());
    resp.text()
}

fn one(sql: &str, id: &str) -> Option<String> {
    db().query_opt(sql, &[&id]).unwrap().map(|row| row.get(0))
}

fn audited(org: &str) -> Vec<String> {
    db().query(
        "SELECT operation FROM audit_log WHERE org_id = $1 ORDER BY id",
        &[&org],
    )
    .unwrap()
    .iter()
    .map(|row| row.get(0))
    .collect()
}

fn signed_in(w: &World, role: Role) -> Browser {
    Browser::signed_in(&person(Some(&w.org_id), role))
}

#[test]
fn a_fragments_own_page_pauses_activates_edits_and_deletes_it() {
    let mut w = World::new();
    let site = w.site("own.example");
    let id = w.fragment(site, "/home", true);
    let member = signed_in(&w, Role::Member);
    let path = format!("/fragments/{id}");
    let status = || one("SELECT status FROM fragments WHERE id = $1", &id);

    let shown = page(&member, &path);
    assert!(
        shown.contains(&format!("action=\"{path}/status\"")),
        "{shown}"
    );
    assert!(shown.contains("Pause this fragment"), "{shown}");
    assert!(
        shown.contains(&format!("href=\"{path}/delete\"")),
        "{shown}"
    );

    let paused = [("status", "paused"), ("back", "fragment")];
    let resp = member.write(&format!("{path}/status"), &paused);
    assert_eq!(redirected(&resp), format!("{path}?notice=fragment-paused"));
    assert_eq!(status().as_deref(), Some("paused"));
    let shown = page(&member, &path);
    assert!(shown.contains("status <strong>paused</strong>"), "{shown}");
    assert!(shown.contains("Activate this fragment"), "{shown}");

    let active = [("status", "active"), ("back", "fragment")];
    let resp = member.write(&format!("{path}/status"), &active);
    assert_eq!(redirected(&resp), format!("{path}?notice=fragment-active"));
    assert_eq!(status().as_deref(), Some("active"));
    // From the site's page (no `back`), or an unknown `back`: back to the site's page.
    for fields in [
        &[("status", "paused")][..],
        &[("status", "paused"), ("back", "//evil.example")],
    ] {
        let resp = member.write(&format!("{path}/status"), fields);
        assert_eq!(
            redirected(&resp),
            "/sites/own.example?notice=fragment-paused"
        );
    }

    let edit = [
        ("name", "Front page"),
        ("lang", "en"),
        ("description", "The first page"),
        ("key_values", ""),
    ];
    redirected(&member.write(&path, &edit));
    let name = one("SELECT name FROM fragments WHERE id = $1", &id);
    assert_eq!(name.as_deref(), Some("Front page"));

    let confirm = page(&member, &format!("{path}/delete"));
    assert!(
        confirm.contains("Delete the fragment /home of own.example?"),
        "{confirm}"
    );
    assert!(
        status().is_some(),
        "reading the confirmation deletes nothing"
    );
    let resp = member.write(&format!("{path}/delete"), &[]);
    assert_eq!(
        redirected(&resp),
        "/sites/own.example?notice=fragment-deleted"
    );
    assert_eq!(status(), None);
    let audit = audited(&w.org_id);
    let expected = [
        "set_fragment_status",
        "set_fragment_status",
        "set_fragment_status",
        "set_fragment_status",
        "edit_fragment",
        "delete_fragment",
    ];
    assert!(audit.ends_with(&expected.map(String::from)), "{audit:?}");
}

#[test]
fn a_viewer_sees_none_of_the_fragments_actions() {
    let mut w = World::new();
    let site = w.site("read.example");
    let id = w.fragment(site, "/home", true);
    let shown = page(&signed_in(&w, Role::Viewer), &format!("/fragments/{id}"));
    for write in ["/status", "/delete", &format!("action=\"/fragments/{id}\"")] {
        assert!(!shown.contains(write), "{write}: {shown}");
    }
}

/// The id of the rule of `site` at `path` with match `mode`.
fn rule_id(site: SiteId, path: &str, mode: &str) -> String {
    let row = db()
        .query_one(
            "SELECT id FROM routes WHERE site_id = $1 AND path = $2 AND match = $3",
            &[&site, &path, &mode],
        )
        .unwrap();
    row.get(0)
}

fn rules_of(site: SiteId) -> i64 {
    let row = db()
        .query_one("SELECT count(*) FROM routes WHERE site_id = $1", &[&site])
        .unwrap();
    row.get(0)
}

#[test]
fn a_rules_deletion_is_confirmed_and_says_where_its_pages_go_instead() {
    let mut w = World::new();
    let site = w.site("rules.example");
    let docs = w.fragment(site, "/docs", true);
    let api = w.fragment(site, "/api", false);
    w.route(site, "/docs/", false, &docs);
    w.route(site, "/docs/api/", false, &api);
    w.route(site, "/docs/api/", true, &docs);
    w.route(site, "/solo/", true, &docs);
    let member = signed_in(&w, Role::Member);
    let confirmation = |path: &str, mode: &str| {
        let id = rule_id(site, path, mode);
        page(&member, &format!("/sites/rules.example/rules/{id}/delete"))
    };
    let cases = [
        (
            "/solo/",
            "exact",
            "The page /solo/ will go to no fragment: no other rule matches and the site has no \
             default, so /fragment serves only the fragment a request names (fragment_id).",
        ),
        (
            "/docs/api/",
            "exact",
            "The page /docs/api/ will go to the prefix rule /docs/api/ instead: the fragment \
             /api, which is paused: no card.",
        ),
        // The exact rule of the same path never takes the prefix rule's other pages.
        (
            "/docs/api/",
            "prefix",
            "The pages under /docs/api/ will go to the prefix rule /docs/ instead: the fragment \
             /docs.",
        ),
    ];
    for (path, mode, sentence) in cases {
        let shown = confirmation(path, mode);
        assert!(shown.contains(sentence), "{path} {mode}: {shown}");
        assert!(
            shown.contains(&format!("Delete the {mode} rule {path} of rules.example?")),
            "{shown}"
        );
    }
    w.default_fragment(site, &api);
    let shown = confirmation("/docs/", "prefix");
    let sentence = "The pages under /docs/ will go to the site default instead: the fragment \
                    /api, which is paused: no card.";
    assert!(shown.contains(sentence), "{shown}");
    assert_eq!(
        rules_of(site),
        4,
        "reading the confirmations deletes nothing"
    );

    let id = rule_id(site, "/docs/", "prefix");
    let rule = format!("/sites/rules.example/rules/{id}");
    let shown = page(&member, &rule);
    assert!(
        shown.contains(&format!("href=\"{rule}/delete\"")),
        "{shown}"
    );
    assert!(
        !shown.contains(&format!("action=\"{rule}/delete\"")),
        "{shown}"
    );
    let resp = member.write(&format!("{rule}/delete"), &[]);
    assert_eq!(
        redirected(&resp),
        "/sites/rules.example?notice=rule-deleted"
    );
    assert_eq!(rules_of(site), 3);
    assert_eq!(
        audited(&w.org_id).last().map(String::as_str),
        Some("delete_route")
    );
    let viewer = page(
        &signed_in(&w, Role::Viewer),
        &format!(
            "/sites/rules.example/rules/{}",
            rule_id(site, "/solo/", "exact")
        ),
    );
    assert!(!viewer.contains("/delete"), "{viewer}");
}

/// The confirmation's sentence of the live traffic.
fn traffic(page: &str) -> &str {
    let start = page.find("<p id=\"traffic\">").expect("a traffic sentence") + 16;
    let rest = &page[start..];
    &rest[..rest.find("</p>").unwrap()]
}

#[test]
fn each_confirmation_counts_the_last_24_hours_requests_it_touches() {
    let mut w = World::new();
    let site = w.site("live.example");
    let home = w.fragment(site, "/home", true);
    let quiet = w.fragment(site, "/quiet", true);
    let card = w.card(CardSpec::default(), &[&home]);
    let other = World::new();
    harness::sync_cache();
    let page_url = "&page_url=https%3A%2F%2Flive.example%2F";
    for _ in 0..3 {
        assert_eq!(w.fetch(&home, page_url).status, 200);
    }
    assert_eq!(w.fetch(&quiet, page_url).status, 204);
    let owner = signed_in(&w, Role::Owner);
    let fragment_page = format!("/fragments/{home}/delete");
    // The counters reach the database with the next flush: wait for it.
    let started = Instant::now();
    while traffic(&page(&owner, &fragment_page)).contains("no request") {
        assert!(started.elapsed() < Duration::from_secs(60), "never counted");
        std::thread::sleep(Duration::from_millis(50));
    }
    let cases = [
        (
            fragment_page,
            "Live traffic: 3 requests resolved to it in the last 24 hours.",
        ),
        (
            format!("/fragments/{quiet}/delete"),
            "Live traffic: 1 request resolved to it in the last 24 hours.",
        ),
        (
            "/sites/live.example/delete".to_string(),
            "Live traffic: 4 requests to its pages in the last 24 hours.",
        ),
        (
            format!("/cards/{card}/delete"),
            "Live traffic: it was served on 3 requests in the last 24 hours.",
        ),
        (
            format!("/keys/{}/revoke", w.key_id),
            "Live traffic: 4 requests sent with it in the last 24 hours.",
        ),
    ];
    for (path, sentence) in cases {
        assert_eq!(traffic(&page(&owner, &path)), sentence, "{path}");
    }
    // Another organisation's key, of the same requests' kind, touches none of these.
    let theirs = signed_in(&other, Role::Owner);
    let path = format!("/keys/{}/revoke", other.key_id);
    assert_eq!(
        traffic(&page(&theirs, &path)),
        "Live traffic: no request sent with it in the last 24 hours."
    );
    // A management token: no request to `/fragment` goes through it.
    let (token, _) = harness::new_token(&mut db(), &w.org_id, false);
    assert_eq!(
        traffic(&page(&owner, &format!("/tokens/{token}/revoke"))),
        "No request to /fragment goes through it: delivery is not touched."
    );
}

/// The site legends and the choices' labels of the eligibility page, in order.
fn choices(page: &str) -> Vec<String> {
    let mut found = Vec::new();
    for piece in page.split('<').skip(1) {
        if let Some(text) = piece.strip_prefix("legend>") {
            found.push(format!("# {text}"));
        }
        if piece.starts_with("label for=\"fragment-") {
            found.push(piece[piece.find('>').unwrap() + 1..].to_string());
        }
    }
    found
}

#[test]
fn eligibility_groups_fragments_by_site_ticked_first_with_a_filter() {
    let mut w = World::new();
    let (a, b, c) = (
        w.site("a.example"),
        w.site("b.example"),
        w.site("c.example"),
    );
    w.fragment(a, "/z", true);
    let x = w.fragment(b, "/x", true);
    let y = w.fragment(b, "/y", true);
    w.fragment(c, "/w", true);
    let card = w.card(CardSpec::default(), &[&y]);
    let member = signed_in(&w, Role::Member);
    let path = format!("/cards/{card}/eligibility");
    let shown = page(&member, &path);
    assert_eq!(
        choices(&shown),
        [
            "# b.example",
            "/y (f)",
            "/x (f)",
            "# a.example",
            "/z (f)",
            "# c.example",
            "/w (f)"
        ]
    );
    assert!(shown.contains(&format!(
        "id=\"fragment-{y}\" name=\"fragment\" value=\"{y}\" checked"
    )));
    assert!(shown.contains("method=\"get\""), "{shown}");

    // By site, by reference, whatever the case; a ticked fragment hidden is sent again.
    let filtered = page(&member, &format!("{path}?q=A.EXAM"));
    assert_eq!(choices(&filtered), ["# a.example", "/z (f)"]);
    assert!(filtered.contains(&format!(
        "<input type=\"hidden\" name=\"fragment\" value=\"{y}\">"
    )));
    assert!(filtered.contains("value=\"A.EXAM\""), "{filtered}");
    let by_reference = page(&member, &format!("{path}?q=%2Fx"));
    assert_eq!(choices(&by_reference), ["# b.example", "/x (f)"]);
    let none = page(&member, &format!("{path}?q=nothing"));
    assert!(none.contains("No fragment matches “nothing”."), "{none}");

    // What a browser sends from the filtered page keeps the hidden tick.
    let resp = member.write(&path, &[("fragment", &y), ("fragment", &x)]);
    assert_eq!(
        redirected(&resp),
        format!("{path}?notice=eligibility-saved")
    );
    let listed = db()
        .query(
            "SELECT fragment_id FROM card_eligibility WHERE card_id = $1 ORDER BY fragment_id",
            &[&card],
        )
        .unwrap()
        .iter()
        .map(|row| row.get::<_, String>(0))
        .collect::<Vec<_>>();
    let mut expected = vec![x.clone(), y.clone()];
    expected.sort();
    assert_eq!(listed, expected);
    let viewer = page(&signed_in(&w, Role::Viewer), &path);
    for write in ["name=\"fragment\"", "method=\"get\""] {
        assert!(!viewer.contains(write), "{write}: {viewer}");
    }
}
