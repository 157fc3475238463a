//! The console's access rules, walked from its page table (`agentcard::console::page_table`),
//! so that a page added later is covered without anyone listing it here: a visitor, a viewer,
//! a member, an owner; and the rule on a NUL byte or invalid UTF-8 in a form or a query, and
//! the audit of a password change.

use crate::console_fixtures::{
    assert_secured, new_org, org_id, person, session_cookie, site_with_front_page, Browser, ORIGIN,
    PASSWORD,
};
use crate::fixtures::card_in;
use crate::harness::{db, Resp};
use agentcard::console::{page_table, Access, PageSample};
use agentcard::db::orgs::Creator;
use agentcard::domain::{
    CanonicalPath, CardStatus, DomainName, Email, FragmentRef, MatchMode, Role, TokenName,
};
use agentcard::ops::{self, routes::RouteWrite, Actor, Scope};

/// The sentence of the owners-only refusal.
const OWNERS_ONLY: &str = "this is for the organisation&#39;s owners only: ask an owner";
/// The sentence of the refusal a viewer meets on a page for members.
const MEMBERS_ONLY: &str = "a viewer reads the organisation&#39;s pages but changes nothing: \
                            ask an owner to make you a member (nothing was changed)";
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
    for access in [
        Access::Public,
        Access::Viewer,
        Access::Member,
        Access::Owner,
    ] {
        assert!(table.iter().any(|page| page.access == access), "{access:?}");
    }
    assert!(table.iter().all(|page| !page.path.contains('{')));
}

/// The writes of a person's own account: the only ones a viewer may send.
const OWN_ACCOUNT: &[&str] = &[
    "/second-factors/app",
    "/second-factors/app/remove",
    "/second-factors/recovery-codes",
    "/second-factors/passkey/options",
    "/second-factors/passkey",
    "/second-factors/passkey/remove",
    "/sign-out",
    "/sessions/end-others",
    "/password",
    "/time-zone",
    "/subscriptions",
    "/org",
    "/alerts/mail",
];

#[test]
fn every_write_open_to_a_viewer_is_of_their_own_account() {
    let open_to_viewers: Vec<&str> = page_table()
        .into_iter()
        .filter(|page| page.method == "POST" && page.access == Access::Viewer)
        .map(|page| page.pattern)
        .collect();
    assert_eq!(open_to_viewers, OWN_ACCOUNT);
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
                // Back to the page asked for once signed in, when it is a plain path.
                let plain =
                    (page.path.bytes()).all(|b| b.is_ascii_alphanumeric() || b"/-_.".contains(&b));
                let sign_in = match page.path.as_str() {
                    "/" => "/sign-in".to_string(),
                    path if plain => format!("/sign-in?next={path}"),
                    _ => "/sign-in".to_string(),
                };
                assert_eq!(resp.header("Location"), Some(sign_in.as_str()), "{what}");
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
fn an_owner_reads_every_page_of_the_organisation() {
    let place = furnished();
    let owner = Browser::signed_in(&person(Some(&place.org), Role::Owner));
    let pages = page_table();
    let reads = pages
        .iter()
        .filter(|page| page.method == "GET" && page.access != Access::Public);
    for page in reads {
        let path = place.path(page);
        let resp = owner.get(&path);
        assert_secured(&resp, &path);
        assert_eq!(resp.status, 200, "{path}: {}", resp.text());
    }
}

/// Someone of another organisation, even its owner, asking for a page that names an object of
/// this one: `404`, the page an absent object gets, by `GET` and by `POST` with the form token
/// and values a write would take (a refused value would be answered first, as on `/v1`).
#[test]
fn a_stranger_is_answered_not_found_on_every_page_naming_the_organisations_objects() {
    let place = furnished();
    let stranger = Browser::signed_in(&person(Some(&new_org()), Role::Owner));
    let before = place.state();
    let naming = page_table()
        .into_iter()
        .filter(|page| page.access != Access::Public && page.pattern.contains('{'));
    for page in naming {
        let path = place.path(&page);
        let what = format!("{} {path}", page.method);
        let resp = match page.method {
            "GET" => stranger.get(&path),
            _ => stranger.write(&path, &place.written()),
        };
        assert_secured(&resp, &what);
        assert_eq!(resp.status, 404, "{what}: {}", resp.text());
        assert!(
            resp.text().contains("<h1>Not found</h1>"),
            "{what}: {}",
            resp.text()
        );
    }
    assert_eq!(place.state(), before, "nothing was written");
}

/// An organisation with one object of each kind a page's path names, a member and a pending
/// invitation; a live and a revoked key and token (a deletion page names the revoked one).
struct Furnished {
    org: String,
    site: String,
    fragment: String,
    route: String,
    card: String,
    keys: [String; 2],
    tokens: [String; 2],
    invitation: String,
    member: String,
}

fn furnished() -> Furnished {
    let mut db = db();
    let org = new_org();
    let caller = ops::orgs::open(&mut db, &org_id(&org), Actor::Cli).unwrap();
    let site = DomainName::parse("viewed.example").unwrap();
    let front = FragmentRef::parse("front").unwrap();
    let fragment = site_with_front_page(&mut db, &caller, &site, &front);
    let rule = RouteWrite {
        path: CanonicalPath::parse("/news", "path").unwrap(),
        mode: MatchMode::Prefix,
        fragment_ref: front,
    };
    let route = ops::routes::create_route(&mut db, &caller, &site, &rule).unwrap();
    let key = |db: &mut postgres::Client| {
        let made = ops::keys::create_key(db, &caller, None, "test").unwrap();
        made.key.id
    };
    let keys = [key(&mut db), key(&mut db)];
    ops::keys::revoke_key(&mut db, &caller, &keys[1]).unwrap();
    let name = TokenName::parse("script").unwrap();
    let token = |db: &mut postgres::Client| {
        let made = ops::tokens::create_token(db, &caller, &name, Creator::Owner, "test");
        made.unwrap().token.id
    };
    let tokens = [token(&mut db), token(&mut db)];
    ops::tokens::revoke_token(&mut db, Scope::Org(&caller), &tokens[1]).unwrap();
    let url = crate::harness::server()
        .app
        .config
        .console_url
        .clone()
        .unwrap();
    let invited = Email::parse("invited@example.org").unwrap();
    ops::members::invite(&mut db, &caller, &url, &invited, Role::Member).unwrap();
    let invitation: i64 = db
        .query_one(
            "SELECT id FROM one_time_links WHERE org_id = $1 AND kind = 'invitation'",
            &[&org],
        )
        .unwrap()
        .get(0);
    // The site's icon, as the background fetch stores it.
    db.execute(
        "INSERT INTO site_icons (site_id, tried_at, source_url, content_type, bytes)
         SELECT id, now(), 'https://viewed.example/favicon.png', 'image/png', '\\x89504e47'
           FROM sites WHERE org_id = $1",
        &[&org],
    )
    .unwrap();
    let member = person(Some(&org), Role::Member);
    let member = agentcard::db::people::find_by_email(&mut db, &member)
        .unwrap()
        .unwrap()
        .id;
    Furnished {
        card: card_in(&mut db, Some(&org), CardStatus::Draft).id,
        org,
        site: site.to_string(),
        fragment: fragment.to_string(),
        route: route.id.to_string(),
        keys: keys.map(|key| key.to_string()),
        tokens: tokens.map(|token| token.to_string()),
        invitation: invitation.to_string(),
        member: member.to_string(),
    }
}

impl Furnished {
    /// The page's path, each capture naming this organisation's object.
    fn path(&self, page: &PageSample) -> String {
        let revoked = usize::from(page.pattern.ends_with("/delete"));
        let parts = page.pattern.split('/').zip(page.path.split('/'));
        let segments = parts.map(|(part, sample)| match part {
            "{card}" => self.card.clone(),
            "{domain}" => self.site.clone(),
            "{fragment}" => self.fragment.clone(),
            "{route}" => self.route.clone(),
            "{key}" => self.keys[revoked].clone(),
            "{token}" => self.tokens[revoked].clone(),
            "{person}" => self.member.clone(),
            "{invitation}" => self.invitation.clone(),
            _ => sample.to_string(),
        });
        segments.collect::<Vec<_>>().join("/")
    }

    /// The values a form of any write page asks for ([`WRITTEN`]), the fragment this
    /// organisation's.
    fn written(&self) -> Vec<(&str, &str)> {
        let mut fields = WRITTEN.to_vec();
        fields.push(("fragment", &self.fragment));
        fields
    }

    /// Every row of the organisation that a console write may change, as text.
    fn state(&self) -> String {
        let of_org = |table: &str| {
            format!(
                "(SELECT string_agg(t::text, E'\\n' ORDER BY t::text) FROM {table} t
                   WHERE org_id = $1)"
            )
        };
        let of_sites = |table: &str| {
            format!(
                "(SELECT string_agg(t::text, E'\\n' ORDER BY t::text) FROM {table} t
                   JOIN sites s ON s.id = t.site_id WHERE s.org_id = $1)"
            )
        };
        let mut parts = vec!["(SELECT o::text FROM orgs o WHERE id = $1)".to_string()];
        parts.extend(
            [
                "mgmt_tokens",
                "sites",
                "cards",
                "card_eligibility",
                "delivery_keys",
                "memberships",
                "one_time_links",
                "audit_log",
            ]
            .map(of_org),
        );
        parts.extend(["fragments", "routes", "site_icons"].map(of_sites));
        let sql = format!("SELECT concat_ws(E'\\n--\\n', {})", parts.join(", "));
        db().query_one(&sql, &[&self.org]).unwrap().get(0)
    }
}

/// Every page of the table a viewer may not use: those for members and owners.
fn writing_pages() -> Vec<PageSample> {
    page_table()
        .into_iter()
        .filter(|page| matches!(page.access, Access::Member | Access::Owner))
        .collect()
}

/// The refusal of the access rule: `403` and its page, with the person's header.
fn assert_refused(resp: &Resp, page: &PageSample, what: &str) {
    let sentence = match page.access {
        Access::Owner => OWNERS_ONLY,
        _ => MEMBERS_ONLY,
    };
    assert_secured(resp, what);
    assert_eq!(resp.status, 403, "{what}: {}", resp.text());
    let text = resp.text();
    assert!(text.contains("<h1>Not allowed</h1>"), "{what}: {text}");
    let said = format!("<p role=\"alert\">{sentence}</p>");
    assert!(text.contains(&said), "{what}: {text}");
    assert!(text.contains("Sign out"), "{what}: the person's header");
}

#[test]
fn a_viewer_is_refused_every_page_of_members_and_owners_by_get_and_by_post() {
    let place = furnished();
    let viewer = Browser::signed_in(&person(Some(&place.org), Role::Viewer));
    let before = place.state();
    let pages = writing_pages();
    for method in ["GET", "POST"] {
        for access in [Access::Member, Access::Owner] {
            let walked = pages
                .iter()
                .any(|p| p.method == method && p.access == access);
            assert!(walked, "{method} {access:?}");
        }
    }
    for page in &pages {
        let path = place.path(page);
        let what = format!("{} {path}", page.method);
        // With the session's form token, from the console's origin: the access rule refuses.
        let resp = match page.method {
            "GET" => viewer.get(&path),
            _ => viewer.write(&path, &[]),
        };
        assert_refused(&resp, page, &what);
    }
    assert_eq!(place.state(), before, "nothing was written");
}

/// The values a form of any write page asks for, valid where a write would take them.
const WRITTEN: &[(&str, &str)] = &[
    ("name", "Changed by a viewer"),
    ("domain", "viewer.example"),
    ("ref", "front"),
    ("lang", "en"),
    ("status", "active"),
    ("path", "/viewer"),
    ("mode", "exact"),
    ("email", "viewer-invited@example.org"),
    ("role", "owner"),
    ("brand", "Viewer"),
    ("title", "A viewer's card"),
    ("body", "Written by a viewer."),
    ("action", "save"),
];

#[test]
fn a_viewer_posting_every_write_with_its_values_changes_nothing() {
    let place = furnished();
    let viewer = Browser::signed_in(&person(Some(&place.org), Role::Viewer));
    let before = place.state();
    for page in writing_pages().iter().filter(|p| p.method == "POST") {
        let path = place.path(page);
        let resp = viewer.write(&path, &place.written());
        assert_refused(&resp, page, &format!("POST {path}"));
    }
    assert_eq!(place.state(), before);
    let page = viewer.get("/sites/viewed.example").text();
    assert!(!page.contains("viewer.example") && !page.contains("Changed by a viewer"));
}

/// The page of the table a link or a form of the console leads to (the first that matches, as
/// the console finds it).
fn page_at<'a>(table: &'a [PageSample], method: &str, target: &str) -> Option<&'a PageSample> {
    let path = target.split(['?', '#']).next().unwrap_or_default();
    let segments: Vec<&str> = path.split('/').collect();
    table
        .iter()
        .filter(|page| page.method == method)
        .find(|page| {
            let parts: Vec<&str> = page.pattern.split('/').collect();
            parts.len() == segments.len()
                && parts
                    .iter()
                    .zip(&segments)
                    .all(|(part, segment)| part.starts_with('{') || part == segment)
        })
}

/// Each `(method, target)` a page's links and forms lead to within the console.
fn destinations(page: &str) -> Vec<(&'static str, String)> {
    let quoted = |rest: &str, attribute: &str| -> Option<String> {
        let at = rest.find(&format!("{attribute}=\""))? + attribute.len() + 2;
        Some(rest[at..at + rest[at..].find('"')?].to_string())
    };
    let links = page.split("href=\"").skip(1).map(|rest| {
        let target = rest[..rest.find('"').unwrap_or(0)].to_string();
        ("GET", target)
    });
    let forms = page.split("<form ").skip(1).filter_map(|rest| {
        let tag = &rest[..rest.find('>')?];
        let method = match quoted(tag, "method")?.as_str() {
            "post" => "POST",
            _ => "GET",
        };
        Some((method, quoted(tag, "action")?))
    });
    links
        .chain(forms)
        .filter(|(_, target)| target.starts_with('/'))
        .collect()
}

#[test]
fn a_viewer_reads_every_page_a_member_reads_and_is_offered_no_write() {
    let place = furnished();
    let member = Browser::signed_in(&person(Some(&place.org), Role::Member));
    let viewer = Browser::signed_in(&person(Some(&place.org), Role::Viewer));
    let table = page_table();
    let reads: Vec<&PageSample> = table
        .iter()
        .filter(|page| page.method == "GET" && page.access == Access::Viewer)
        .collect();
    for path in [
        "/cards",
        "/sites/{domain}",
        "/audit",
        "/members",
        "/reports",
    ] {
        assert!(reads.iter().any(|page| page.pattern == path), "{path}");
    }
    let before = place.state();
    for page in reads {
        let path = place.path(page);
        assert_eq!(member.get(&path).status, 200, "a member reads {path}");
        let read = viewer.get(&path);
        assert_secured(&read, &path);
        assert_eq!(read.status, 200, "a viewer reads {path}: {}", read.text());
        for (method, target) in destinations(&read.text()) {
            let Some(led_to) = page_at(&table, method, &target) else {
                continue;
            };
            assert!(
                matches!(led_to.access, Access::Public | Access::Viewer),
                "{path} offers a viewer {method} {target}"
            );
        }
    }
    assert_eq!(place.state(), before, "reading changes nothing");
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
