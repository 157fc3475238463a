//! The console's owner and member tasks over real HTTP: management tokens (owners only, even
//! by direct `POST`), delivery keys, site and fragment deletions after their confirmation pages,
//! and the audit log of console, `/v1` and CLI writes.

use crate::console_fixtures::{admin_people, new_org, person, support_person, Browser};
use crate::harness::{db, server, Client};
use agentcard::domain::{CardStatus, Role};
use serde_json::json;

/// The secret a page shows once, in its element of class `secret`.
pub fn shown_secret(page: &str) -> String {
    let at = page.find("class=\"secret\"").expect("a secret shown");
    let start = at + page[at..].find('>').unwrap() + 1;
    let end = start + page[start..].find('<').unwrap();
    page[start..end].trim().to_string()
}

/// An organisation with an owner and a member, each signed in.
fn organisation() -> (String, Browser, Browser) {
    let org = new_org();
    let owner = Browser::signed_in(&person(Some(&org), Role::Owner));
    let member = Browser::signed_in(&person(Some(&org), Role::Member));
    (org, owner, member)
}

fn me(token: &str) -> u16 {
    Client::new(server().addr).token(token).get("/v1/me").status
}

/// The tokens of an organisation in the database: (id, revoked, expires in days).
fn tokens_of(org: &str) -> Vec<(String, bool, Option<i32>)> {
    db().query(
        "SELECT id, revoked_at IS NOT NULL,
                extract(day FROM expires_at - created_at)::int
           FROM mgmt_tokens WHERE org_id = $1 ORDER BY created_at, id",
        &[&org],
    )
    .unwrap()
    .iter()
    .map(|r| (r.get(0), r.get(1), r.get(2)))
    .collect()
}

/// Creates a token through the console; answers its id and the token.
fn create_token(owner: &Browser, org: &str, name: &str) -> (String, String) {
    let page = owner.create("/tokens", "/tokens", &[("name", name)]);
    assert_eq!(page.status, 200, "{}", page.text());
    let token = shown_secret(&page.text());
    assert!(page.text().contains(name));
    let id = tokens_of(org).last().unwrap().0.clone();
    (id, token)
}

#[test]
fn an_owner_creates_revokes_and_deletes_a_token_that_works_on_v1() {
    let (org, owner, _) = organisation();
    let (id, token) = create_token(&owner, &org, "deploy script");
    assert!(token.starts_with("svc_mgmt_"), "{token}");
    assert_eq!(me(&token), 200);
    assert_eq!(
        tokens_of(&org),
        [(id.clone(), false, None)],
        "an owner's never expires"
    );
    let list = owner.get("/tokens").text();
    assert!(
        list.contains("deploy script") && !list.contains(&token),
        "shown once only"
    );

    let revoked = owner.write(&format!("/tokens/{id}/revoke"), &[]);
    assert_eq!(
        revoked.header("Location"),
        Some(format!("/tokens?notice=token-revoked&about={id}").as_str())
    );
    assert_eq!(me(&token), 401);
    assert_eq!(tokens_of(&org), [(id.clone(), true, None)]);

    let confirm = owner.get(&format!("/tokens/{id}/delete"));
    assert_eq!(confirm.status, 200);
    assert!(confirm.text().contains("deploy script"));
    assert_eq!(
        tokens_of(&org).len(),
        1,
        "the confirmation page changes nothing"
    );
    let deleted = owner.write(&format!("/tokens/{id}/delete"), &[]);
    assert_eq!(
        deleted.header("Location"),
        Some("/tokens?notice=token-deleted")
    );
    assert!(tokens_of(&org).is_empty());
}

#[test]
fn a_token_made_by_support_expires_after_90_days() {
    let org = new_org();
    let email = support_person();
    let support = Browser::signed_in(&email);
    assert_eq!(support.write("/org", &[("org", &org)]).status, 303);
    let (_, token) = create_token(&support, &org, "support token");
    assert_eq!(me(&token), 200);
    assert_eq!(tokens_of(&org)[0].2, Some(90));
}

#[test]
fn a_token_name_is_refused_with_the_api_message_and_nothing_is_made() {
    let (org, owner, _) = organisation();
    let long = "n".repeat(101);
    let page = owner.write("/tokens", &[("name", &long)]);
    assert_eq!(page.status, 422);
    let message = agentcard::domain::TokenName::parse(&long)
        .unwrap_err()
        .message;
    assert!(page.text().contains(&message), "{message}: {}", page.text());
    assert!(
        page.text().contains("aria-describedby=\"name-error\""),
        "{}",
        page.text()
    );
    assert!(tokens_of(&org).is_empty());
}

#[test]
fn a_member_reaches_no_token_action_even_by_direct_post() {
    let (org, owner, member) = organisation();
    let (id, token) = create_token(&owner, &org, "owner's");
    let home = member.get("/").text();
    assert!(!home.contains("href=\"/tokens\""), "{home}");
    for path in ["/tokens".to_string(), format!("/tokens/{id}/delete")] {
        let page = member.get(&path);
        assert_eq!(page.status, 403, "{path}");
        assert!(page.text().contains("owners"), "{path}");
        assert!(!page.text().contains("Create token"), "{path}");
    }
    for path in [
        "/tokens".to_string(),
        format!("/tokens/{id}/revoke"),
        format!("/tokens/{id}/delete"),
    ] {
        let refused = member.write(&path, &[("name", "member's")]);
        assert_eq!(refused.status, 403, "{path}");
    }
    assert_eq!(tokens_of(&org), [(id, false, None)], "nothing changed");
    assert_eq!(me(&token), 200);
}

#[test]
fn an_owner_cannot_reach_another_organisation_s_token() {
    let (org, owner, _) = organisation();
    let (other_org, other_owner, _) = organisation();
    let (id, token) = create_token(&other_owner, &other_org, "theirs");
    for path in [
        format!("/tokens/{id}/revoke"),
        format!("/tokens/{id}/delete"),
    ] {
        assert_eq!(owner.write(&path, &[]).status, 404, "{path}");
    }
    assert_eq!(me(&token), 200);
    assert!(tokens_of(&org).is_empty());
}

/// The delivery keys of an organisation: (id, revoked).
fn keys_of(org: &str) -> Vec<(String, bool)> {
    db().query(
        "SELECT id, revoked_at IS NOT NULL FROM delivery_keys WHERE org_id = $1
          ORDER BY created_at, id",
        &[&org],
    )
    .unwrap()
    .iter()
    .map(|r| (r.get(0), r.get(1)))
    .collect()
}

/// A site with one fragment, written through `/v1` with a token of the organisation; answers
/// the fragment's id.
fn site_with_fragment(token: &str, domain: &str, reference: &str) -> String {
    let api = Client::new(server().addr).token(token);
    let site = api.put(&format!("/v1/sites/{domain}"), &json!({"name": "A site"}));
    assert_eq!(site.status, 201, "{}", site.text());
    let path = format!(
        "/v1/sites/{domain}/fragments/{}",
        reference.replace('/', "%2F")
    );
    let fragment = api.put(&path, &json!({"name": "News", "lang": "en"}));
    assert_eq!(fragment.status, 201, "{}", fragment.text());
    fragment.json()["id"].as_str().unwrap().to_string()
}

/// `/fragment`'s status for this key, asked right after the console's write: this instance
/// serves what the console wrote from the next call on, as after a write through `/v1`.
fn fragment_status(org: &str, fragment: &str, key: &str) -> u16 {
    let path = format!("/fragment?partner_id={org}&fragment_id={fragment}&lang=en");
    Client::new(server().addr)
        .request("GET", &path, &[("X-API-Key", key)], None)
        .status
}

#[test]
fn a_member_creates_revokes_and_deletes_a_delivery_key() {
    let (org, owner, member) = organisation();
    let (_, token) = create_token(&owner, &org, "setup");
    let fragment = site_with_fragment(&token, "keys.example", "/news");
    let page = member.create("/keys", "/keys", &[("name", "edge")]);
    assert_eq!(page.status, 200, "{}", page.text());
    let key = shown_secret(&page.text());
    assert!(key.starts_with("svc_live_"), "{key}");
    let keys = keys_of(&org);
    assert_eq!(keys.len(), 1, "{keys:?}");
    let (id, revoked) = keys[0].clone();
    assert!(!revoked);
    assert_eq!(
        fragment_status(&org, &fragment, &key),
        204,
        "live: no card, no fill"
    );

    let refused = member.get(&format!("/keys/{id}/delete"));
    assert_eq!(refused.status, 422, "a live key is revoked first");
    assert_eq!(member.write(&format!("/keys/{id}/delete"), &[]).status, 422);
    assert_eq!(keys_of(&org), [(id.clone(), false)]);

    let revoked = member.write(&format!("/keys/{id}/revoke"), &[]);
    let location = format!("/keys?notice=key-revoked&about={id}");
    assert_eq!(revoked.header("Location"), Some(location.as_str()));
    assert_eq!(fragment_status(&org, &fragment, &key), 401);
    assert_eq!(member.get(&format!("/keys/{id}/delete")).status, 200);
    let deleted = member.write(&format!("/keys/{id}/delete"), &[]);
    assert_eq!(deleted.header("Location"), Some("/keys?notice=key-deleted"));
    assert!(keys_of(&org).is_empty());
}

fn count(sql: &str, value: &str) -> i64 {
    db().query_one(sql, &[&value]).unwrap().get(0)
}

#[test]
fn an_owner_deletes_a_site_with_its_rules_after_a_page_that_names_what_goes() {
    let (org, owner, member) = organisation();
    let (_, token) = create_token(&owner, &org, "setup");
    site_with_fragment(&token, "gone.example", "/world");
    let api = Client::new(server().addr).token(&token);
    let rule = api.put(
        "/v1/sites/gone.example/routes",
        &json!({"routes": [{"path_prefix": "/world/", "match": "prefix", "ref": "/world"}]}),
    );
    assert_eq!(rule.status, 200, "{}", rule.text());
    let rules = "SELECT count(*) FROM routes r JOIN sites s ON s.id = r.site_id
                  WHERE s.domain = $1";
    assert_eq!(count(rules, "gone.example"), 1);

    let listed = owner.get("/sites").text();
    assert!(listed.contains("/sites/gone.example/delete"), "{listed}");
    let offered = member.get("/sites").text();
    assert!(!offered.contains("/sites/gone.example/delete"), "{offered}");
    assert_eq!(member.get("/sites/gone.example/delete").status, 403);
    assert_eq!(member.write("/sites/gone.example/delete", &[]).status, 403);
    let confirm = owner.get("/sites/gone.example/delete").text();
    for named in [
        "gone.example",
        "Fragments: /world",
        "Rules: 1",
        "Eligibility entries: 0",
    ] {
        assert!(confirm.contains(named), "{named}: {confirm}");
    }
    assert_eq!(count(rules, "gone.example"), 1, "the page changes nothing");

    let deleted = owner.write("/sites/gone.example/delete", &[]);
    assert_eq!(
        deleted.header("Location"),
        Some("/sites?notice=site-deleted")
    );
    assert_eq!(api.get("/v1/sites/gone.example/fragments").status, 404);
    assert_eq!(count(rules, "gone.example"), 0);
    assert_eq!(owner.get("/sites/gone.example/delete").status, 404);
}

#[test]
fn a_fragment_deletion_names_the_site_default_and_the_cards_it_widens() {
    let (org, owner, member) = organisation();
    let (_, token) = create_token(&owner, &org, "setup");
    let fragment = site_with_fragment(&token, "frag.example", "/only");
    let api = Client::new(server().addr).token(&token);
    let default = api.put(
        "/v1/sites/frag.example/default-fragment",
        &json!({"ref": "/only"}),
    );
    assert_eq!(default.status, 200, "{}", default.text());
    let card = crate::fixtures::card(Some(&org), CardStatus::Active).id;
    let eligible = api.put(
        &format!("/v1/cards/{card}/eligibility"),
        &json!({"fragments": [{"domain": "frag.example", "ref": "/only"}]}),
    );
    assert_eq!(eligible.status, 200, "{}", eligible.text());
    let confirm = member.get(&format!("/fragments/{fragment}/delete"));
    assert_eq!(confirm.status, 200);
    let text = confirm.text();
    assert!(
        text.contains("frag.example has no default fragment"),
        "{text}"
    );
    for named in [
        "Eligibility entries: 1",
        &format!("Card \u{201c}Subscription offer\u{201d} ({card}) is eligible only on"),
    ] {
        assert!(text.contains(named), "{named}: {text}");
    }
    let deleted = member.write(&format!("/fragments/{fragment}/delete"), &[]);
    assert_eq!(
        deleted.header("Location"),
        Some("/sites/frag.example?notice=fragment-deleted")
    );
    assert_eq!(
        count("SELECT count(*) FROM fragments WHERE id = $1", &fragment),
        0
    );
    let after = api.get(&format!("/v1/cards/{card}/eligibility"));
    assert_eq!(
        after.json()["items"],
        json!([]),
        "the list is empty (the card a draft now)"
    );
    assert_eq!(
        member.get(&format!("/fragments/{fragment}/delete")).status,
        404
    );
}

#[test]
fn the_audit_log_names_console_v1_and_cli_writes_and_holds_no_secret() {
    let (org, owner, member) = organisation();
    let (token_id, token) = create_token(&owner, &org, "audited");
    let key_page = member.create("/keys", "/keys", &[("name", "audited")]);
    let key = shown_secret(&key_page.text());
    site_with_fragment(&token, "audit.example", "/a");
    let (ok, _, err) = admin_people(&[
        "member",
        "invite",
        "--org",
        &org,
        "--email",
        "cli-invited@example.org",
    ]);
    assert!(ok, "{err}");

    let page = member.get("/audit").text();
    let owner_email = owner_email(&org);
    for (who, operation) in [
        (owner_email.as_str(), "token created"),
        (&token[..12], "site saved"),
        ("command line", "member invited"),
    ] {
        assert!(
            page.lines()
                .any(|l| l.contains(who) && l.contains(operation)),
            "{who} {operation}: {page}"
        );
    }
    assert!(page.contains(&token_id));
    let filtered = member.get(&format!("/audit?actor={}", &token[..12])).text();
    assert!(filtered.contains("site saved") && !filtered.contains("token created"));

    let rows: Vec<String> = db()
        .query(
            "SELECT audit_log::text FROM audit_log WHERE org_id = $1",
            &[&org],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    let operations: Vec<String> = db()
        .query(
            "SELECT operation FROM audit_log WHERE org_id = $1 ORDER BY id",
            &[&org],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    let written = [
        "create_token",
        "create_key",
        "put_site",
        "put_fragment",
        "invite_member",
    ];
    assert_eq!(operations, written, "{rows:?}");
    for secret in [&token, &key] {
        assert!(!rows.iter().any(|r| r.contains(secret.as_str())));
        assert!(!page.contains(secret.as_str()));
    }
}

fn owner_email(org: &str) -> String {
    db().query_one(
        "SELECT p.email FROM persons p JOIN memberships m ON m.person_id = p.id
          WHERE m.org_id = $1 AND m.role = 'owner'",
        &[&org],
    )
    .unwrap()
    .get(0)
}
