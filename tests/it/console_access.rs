//! The console's access rules, walked from its page table (`agentcard::console::page_table`),
//! so that a page added later is covered without anyone listing it here; and the rule on a
//! NUL byte or invalid UTF-8 in a form or a query, and the audit of a password change.

use crate::console_fixtures::{
    assert_secured, new_org, person, session_cookie, Browser, ORIGIN, PASSWORD,
};
use crate::harness::{db, Resp};
use agentcard::console::{page_table, Access, PageSample};
use agentcard::domain::Role;

/// The sentence of the owners-only refusal.
const OWNERS_ONLY: &str = "this is for the organisation&#39;s owners only: ask an owner";
/// The per-address limit on failed authentications (shared with `/v1`).
const FAILED_AUTH_PER_IP: usize = 30;

fn audit_entries(org: &str) -> i64 {
    db().query_one("SELECT count(*) FROM audit_log WHERE org_id = $1", &[&org])
        .unwrap()
        .get(0)
}

fn ask(browser: &Browser, page: &PageSample, with_token: bool) -> Resp {
    match (page.method, with_token) {
        ("GET", _) => browser.get(&page.path),
        (_, true) => browser.write(&page.path, &[]),
        (_, false) => browser.post(&page.path, &[]),
    }
}

#[test]
fn the_table_lists_every_kind_of_page() {
    let table = page_table();
    for access in [Access::Public, Access::Member, Access::Owner] {
        assert!(table.iter().any(|page| page.access == access), "{access:?}");
    }
    assert!(table.iter().all(|page| !page.path.contains('{')));
}

#[test]
fn a_visitor_not_signed_in_is_refused_every_page_but_the_public_ones() {
    let org = new_org();
    let before = audit_entries(&org);
    let visitor = Browser::new();
    for page in page_table() {
        if page.access == Access::Public {
            continue;
        }
        let what = format!("{} {}", page.method, page.path);
        let resp = ask(&visitor, &page, false);
        assert_secured(&resp, &what);
        match page.method {
            "GET" => {
                assert_eq!(resp.status, 303, "{what}");
                assert_eq!(resp.header("Location"), Some("/sign-in"), "{what}");
            }
            _ => {
                assert_eq!(resp.status, 403, "{what}");
                assert!(resp.text().contains("your session has ended"), "{what}");
            }
        }
    }
    assert_eq!(audit_entries(&org), before, "nothing was written");
}

#[test]
fn a_member_is_refused_every_owners_page_by_get_and_by_post() {
    let org = new_org();
    let member = Browser::signed_in(&person(Some(&org), Role::Member));
    let before = audit_entries(&org);
    let owners_pages: Vec<PageSample> = page_table()
        .into_iter()
        .filter(|page| page.access == Access::Owner)
        .collect();
    assert!(owners_pages.iter().any(|page| page.method == "GET"));
    assert!(owners_pages.iter().any(|page| page.method == "POST"));
    for page in &owners_pages {
        let what = format!("{} {}", page.method, page.path);
        // A POST carries the session's form token, from the console's origin: the refusal is
        // the access rule's, not the form token's.
        let resp = ask(&member, page, true);
        assert_secured(&resp, &what);
        assert_eq!(resp.status, 403, "{what}");
        assert!(resp.text().contains(OWNERS_ONLY), "{what}: {}", resp.text());
    }
    assert_eq!(audit_entries(&org), before, "nothing was written");
}

#[test]
fn an_owner_passes_the_access_rule_of_every_page() {
    let org = new_org();
    let owner = Browser::signed_in(&person(Some(&org), Role::Owner));
    for page in page_table().iter().filter(|p| p.method == "GET") {
        let resp = ask(&owner, page, true);
        assert_ne!(resp.status, 403, "{} {}", page.method, page.path);
    }
}

/// A raw form body, its bytes as given (a browser never sends invalid UTF-8 on its own).
fn post_bytes(browser: &Browser, path: &str, body: &[u8]) -> Resp {
    let mut headers: Vec<(&str, String)> = browser.headers();
    headers.push(("Content-Type", "application/x-www-form-urlencoded".into()));
    headers.push(("Origin", ORIGIN.into()));
    let headers: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
    browser.client.request("POST", path, &headers, Some(body))
}

fn assert_refused_field(resp: &Resp, field: &str, what: &str) {
    assert_eq!(resp.status, 422, "{what}: {}", resp.text());
    assert_secured(resp, what);
    let said = format!("{field}: a value may hold neither a NUL byte nor bytes that are not UTF-8");
    assert!(resp.text().contains(&said), "{what}: {}", resp.text());
}

#[test]
fn a_nul_or_invalid_utf8_in_a_query_is_its_field_422() {
    let org = new_org();
    let member = Browser::signed_in(&person(Some(&org), Role::Member));
    for (query, field) in [
        ("actor=%00", "actor"),
        ("actor=a%00b&limit=100", "actor"),
        ("limit=%FF", "limit"),
        ("actor=%C3", "actor"),
    ] {
        let resp = member.get(&format!("/audit?{query}"));
        assert_refused_field(&resp, field, query);
    }
    assert_eq!(member.get("/audit?actor=cli").status, 200);
}

#[test]
fn a_nul_or_invalid_utf8_in_a_form_is_its_field_422_and_writes_nothing() {
    let org = new_org();
    let member = Browser::signed_in(&person(Some(&org), Role::Member));
    let token = member.token();
    let before = audit_entries(&org);
    for (name, field) in [(&b"a%00b"[..], "name"), (b"%FF%FE", "name")] {
        let mut body = format!("csrf={token}&name=").into_bytes();
        body.extend_from_slice(name);
        let resp = post_bytes(&member, "/keys", &body);
        assert_refused_field(&resp, field, &String::from_utf8_lossy(&body));
    }
    let raw = post_bytes(
        &member,
        "/keys",
        format!("csrf={token}&name=\u{0}").as_bytes(),
    );
    assert_refused_field(&raw, "name", "a raw NUL");
    assert_eq!(audit_entries(&org), before, "no key was made");
    assert_eq!(
        member.create("/keys", "/keys", &[("name", "fine")]).status,
        200
    );
}

#[test]
fn a_refused_sign_in_counts_as_a_failure_of_the_address_whatever_refused_it() {
    let email = person(Some(&new_org()), Role::Member);
    let mut browser = Browser::new();
    let nul = browser.post(
        "/sign-in",
        &[("email", "a\u{0}@example.org"), ("password", "x")],
    );
    assert_refused_field(&nul, "email", "a NUL in the email");
    let invalid = post_bytes(&browser, "/sign-in", b"email=%FF&password=x");
    assert_refused_field(&invalid, "email", "invalid UTF-8 in the email");
    for n in 2..FAILED_AUTH_PER_IP {
        let email = format!("nul{n}\u{0}@example.org");
        let resp = browser.post("/sign-in", &[("email", &email), ("password", PASSWORD)]);
        assert_eq!(resp.status, 422, "{n}");
    }
    assert_eq!(browser.sign_in(&email, PASSWORD).status, 429);
    assert_eq!(Browser::new().sign_in(&email, PASSWORD).status, 303);
}

#[test]
fn a_password_change_is_in_the_audit_log() {
    let org = new_org();
    let email = person(Some(&org), Role::Member);
    let mut browser = Browser::signed_in(&email);
    let new = "another fine password";
    let changed = browser.write(
        "/password",
        &[("current_password", PASSWORD), ("new_password", new)],
    );
    assert_eq!(changed.status, 303, "{}", changed.text());
    browser.cookie = session_cookie(&changed);
    let rows = db()
        .query(
            "SELECT actor_kind, actor, operation, object_kind FROM audit_log
              WHERE org_id = $1 ORDER BY id",
            &[&org],
        )
        .unwrap();
    let entries: Vec<(String, String, String, String)> = rows
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3)))
        .collect();
    let expected = (
        "person".into(),
        email.clone(),
        "change_password".into(),
        "person".into(),
    );
    assert_eq!(entries, [expected]);
    let page = browser.get("/audit").text();
    assert!(page.contains("password changed"), "{page}");
    assert!(!page.contains(new), "the log holds no secret");
}

#[test]
fn the_layout_says_the_notice_a_redirect_names_once_on_any_page() {
    let joined = Browser::new().get("/sign-in?notice=joined").text();
    let said =
        "<p role=\"status\" class=\"notice\">You have joined the organisation: sign in with your password.</p>";
    assert_eq!(joined.matches(said).count(), 1, "{joined}");
    let member = Browser::signed_in(&person(Some(&new_org()), Role::Member));
    let saved = member.get("/cards?notice=card-saved").text();
    assert_eq!(saved.matches("The card was saved.").count(), 1, "{saved}");
    assert!(!member
        .get("/cards?notice=nope")
        .text()
        .contains("role=\"status\""));
}
