//! The audit log: every write through `/v1`, the console and the CLI recorded with who, what
//! and which object, newest first, never a secret; a refused write records nothing. Each entry
//! keeps what it saw (the object's name, each change before → after) whatever becomes of the
//! object; the log pages back to its first entry, filters by actor whatever the case, and gives
//! any range as CSV.

use crate::console_admin::shown_secret;
use crate::console_fixtures::{person_in, Browser};
use crate::console_wiring::parse_csv;
use crate::fixtures::{admin, card, put_fragment, CARD_FLAGS};
use crate::harness::{db, next_client_ip, server, tenant, TestServer};
use agentcard::domain::{CardStatus, Role};
use serde_json::{json, Value};
use std::sync::Arc;

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

/// An organisation on the test's server: a `/v1` token, its owner signed in to the console,
/// and the log read back as the console's CSV.
struct Journal {
    server: Arc<TestServer>,
    api: crate::harness::Tenant,
    owner: Browser,
    owner_email: String,
}

impl Journal {
    fn new() -> Journal {
        let server = server();
        let api = server.tenant();
        let owner_email = person_in(&mut server.db(), Some(&api.org_id), Role::Owner);
        let owner = Browser::signed_in_to(&server, &owner_email);
        Journal {
            server,
            api,
            owner,
            owner_email,
        }
    }

    /// A console form sent with the session's form token; it must succeed: `303`, the
    /// redirect after a write.
    #[track_caller]
    fn write(&self, path: &str, fields: &[(&str, &str)]) {
        let resp = self.owner.write(path, fields);
        assert_eq!(resp.status, 303, "{path}: {}", resp.text());
    }

    /// A key or a token named `name`, made through its console page `page`: the secret shown.
    #[track_caller]
    fn create(&self, page: &str, name: &str) -> String {
        let made = self.owner.create(page, page, &[("name", name)]);
        assert_eq!(made.status, 200, "{page}: {}", made.text());
        shown_secret(&made.text())
    }

    /// The entries `admin audit` prints for the organisation with `extra` arguments.
    #[track_caller]
    fn cli_audit(&self, extra: &[&str]) -> Vec<Value> {
        let args = [&["admin", "audit", "--org", &self.api.org_id], extra].concat();
        let (ok, out, stderr) =
            crate::fixtures::agentcard(&args, &[("DATABASE_URL", &self.server.database_url)]);
        assert!(ok, "{stderr}");
        let out: Value = serde_json::from_str(&out).unwrap();
        out["items"].as_array().unwrap().clone()
    }

    /// A `/v1` call; it must answer `status`.
    #[track_caller]
    fn api(&self, method: &str, path: &str, body: &Value, status: u16) -> Value {
        let resp = self.api.client.send_json(method, path, body);
        assert_eq!(resp.status, status, "{method} {path}: {}", resp.text());
        resp.json()
    }

    /// One value of the organisation's database.
    fn one(&self, sql: &str) -> String {
        self.server
            .db()
            .query_one(sql, &[&self.api.org_id])
            .unwrap()
            .get(0)
    }

    /// The log's rows as the console's CSV gives them (its header aside), newest first: when,
    /// who, what, object kind, id and name.
    fn log(&self, query: &str) -> Vec<Vec<String>> {
        let resp = self.owner.get(&format!("/audit.csv?{query}"));
        assert_eq!(resp.status, 200, "{}", resp.text());
        let mut records = parse_csv(&resp.text());
        assert_eq!(records.remove(0)[0], "at");
        records
    }
}

/// The `what` of the entries of an object, oldest first.
fn what_of(log: &[Vec<String>], object: &str) -> Vec<String> {
    let mut words: Vec<String> = log
        .iter()
        .filter(|row| row[4] == object)
        .map(|row| row[2].clone())
        .collect();
    words.reverse();
    words
}

/// The object as the log names it, in the entries of `object`.
fn names_of(log: &[Vec<String>], object: &str) -> Vec<String> {
    log.iter()
        .filter(|row| row[4] == object)
        .map(|row| row[5].clone())
        .collect()
}

#[test]
fn every_entry_reads_the_same_after_its_object_is_renamed_or_deleted() {
    let j = Journal::new();
    j.api(
        "PUT",
        "/v1/sites/kept.example",
        &json!({"name": "Alpha"}),
        201,
    );
    j.write("/sites/kept.example", &[("name", "Alpha news")]);
    let home = j.api(
        "PUT",
        "/v1/sites/kept.example/fragments/%2Fhome",
        &json!({"name": "Home"}),
        201,
    );
    let home = home["id"].as_str().unwrap().to_owned();
    j.api(
        "PUT",
        "/v1/sites/kept.example/fragments/%2Fside",
        &json!({"name": "Side", "lang": "fr"}),
        201,
    );
    j.write("/sites/kept.example/default", &[("ref", "/home")]);
    let rule = j.api(
        "POST",
        "/v1/sites/kept.example/routes",
        &json!({"path_prefix": "/news/", "match": "prefix", "ref": "/home"}),
        201,
    );
    let rule = rule["id"].as_str().unwrap().to_owned();
    let edit = [
        ("path_prefix", "/news/"),
        ("match", "exact"),
        ("ref", "/side"),
    ];
    j.write(&format!("/sites/kept.example/rules/{rule}"), &edit);
    let fragment_edit = [
        ("name", "Home page"),
        ("lang", "en"),
        ("description", "Top"),
    ];
    j.write(&format!("/fragments/{home}"), &fragment_edit);

    j.write("/cards/new", &card_form("Spring card"));
    let card = j.one("SELECT id FROM cards WHERE org_id = $1");
    j.write(&format!("/cards/{card}"), &card_form("Summer card"));
    j.write(&format!("/cards/{card}/status"), &[("status", "active")]);
    let list = json!({"fragments": [{"domain": "kept.example", "ref": "/home"}]});
    j.api("PUT", &format!("/v1/cards/{card}/eligibility"), &list, 200);

    j.create("/keys", "CDN staging");
    let key = j.one("SELECT id FROM delivery_keys WHERE org_id = $1");
    j.write(&format!("/keys/{key}/revoke"), &[]);
    let secret = j.create("/tokens", "ci");
    let token = j.one("SELECT id FROM mgmt_tokens WHERE org_id = $1 AND name = 'ci'");
    let ci = j.server.client().ip(&next_client_ip()).token(&secret);
    assert_eq!(ci.put("/v1/sites/ci.example", &json!({})).status, 201);
    j.write(&format!("/tokens/{token}/revoke"), &[]);
    let member_email = person_in(&mut j.server.db(), Some(&j.api.org_id), Role::Member);
    let member = j.one(&format!(
        "SELECT p.id FROM persons p JOIN memberships m ON m.person_id = p.id
          WHERE m.org_id = $1 AND p.email = '{member_email}'"
    ));
    j.write(&format!("/members/{member}/role"), &[("role", "owner")]);

    let before = j.log("");
    // Each change before → after, each object by its name.
    assert_eq!(
        what_of(&before, "kept.example"),
        [
            "site saved",
            "site renamed: name Alpha → Alpha news",
            "site default set: default none → /home",
        ]
    );
    assert_eq!(
        names_of(&before, "kept.example")[0],
        "Alpha news",
        "{before:?}"
    );
    assert_eq!(
        what_of(&before, &rule),
        [
            "rule added",
            "rule edited: match prefix → exact; target /home → /side",
        ]
    );
    assert_eq!(
        names_of(&before, &rule),
        [
            "/news/ (exact) on kept.example",
            "/news/ (prefix) on kept.example"
        ]
    );
    assert_eq!(
        what_of(&before, &home),
        [
            "fragment saved",
            "fragment edited: name Home → Home page; lang fr → en; description none → Top",
        ]
    );
    assert_eq!(
        names_of(&before, &home)[0],
        "Home page on kept.example /home"
    );
    assert_eq!(
        what_of(&before, &card),
        [
            "card created",
            "card edited: name Spring card → Summer card",
            "card status changed: status draft → active",
            "eligibility replaced: fragments everywhere → kept.example /home",
        ]
    );
    assert_eq!(
        what_of(&before, &key),
        ["key created", "key revoked: status live → revoked"]
    );
    assert_eq!(names_of(&before, &key), ["CDN staging", "CDN staging"]);
    assert_eq!(
        what_of(&before, &token),
        ["token created", "token revoked: status live → revoked"]
    );
    assert_eq!(names_of(&before, &token), ["ci", "ci"]);
    let by_ci = before.iter().find(|row| row[4] == "ci.example").unwrap();
    assert_eq!(by_ci[1], format!("token ci ({})", &secret[..12]));
    assert_eq!(
        what_of(&before, &member),
        ["role changed: role member → owner"]
    );
    assert_eq!(names_of(&before, &member), [member_email.as_str()]);

    // Everything renamed, then deleted.
    j.write("/sites/kept.example", &[("name", "Beta")]);
    let renamed = [("name", "Renamed"), ("lang", "en"), ("description", "Top")];
    j.write(&format!("/fragments/{home}"), &renamed);
    j.write(&format!("/cards/{card}"), &card_form("Autumn card"));
    j.write(&format!("/sites/kept.example/rules/{rule}/delete"), &[]);
    j.write(&format!("/cards/{card}/delete"), &[]);
    j.write(&format!("/keys/{key}/delete"), &[]);
    j.write(&format!("/tokens/{token}/delete"), &[]);
    j.write(&format!("/members/{member}/remove"), &[]);
    j.write(&format!("/fragments/{home}/delete"), &[]);
    j.write("/sites/kept.example/delete", &[]);

    let after = j.log("");
    assert!(after.len() > before.len() + 9, "{after:?}");
    assert_eq!(after[after.len() - before.len()..], before[..]);
    // The deletions name what they deleted, as it was then.
    let last = |object: &str| after.iter().find(|row| row[4] == object).unwrap().clone();
    assert_eq!(
        last(&rule)[2..],
        [
            "rule deleted",
            "route",
            &rule,
            "/news/ (exact) on kept.example"
        ]
    );
    assert_eq!(last(&card)[2], "card deleted");
    assert_eq!(last(&card)[5], "Autumn card");
    assert_eq!(last(&key)[5], "CDN staging");
    assert_eq!(last(&token)[5], "ci");
    assert_eq!(
        last(&member)[2..],
        [
            "member removed: role owner → none",
            "person",
            &member,
            &member_email
        ]
    );
    assert_eq!(last(&home)[5], "Renamed on kept.example /home");
    assert_eq!(last("kept.example")[2..4], ["site deleted", "site"]);
    assert_eq!(last("kept.example")[5], "Beta");
    assert!(
        after
            .iter()
            .all(|row| row[1] == j.owner_email || row[1].starts_with("token ")),
        "{after:?}"
    );
}

/// A card form's fields, every one filled, with this name.
fn card_form(name: &str) -> Vec<(&str, &str)> {
    vec![
        ("name", name),
        ("lang", "en"),
        ("brand", "Le Quotidien"),
        ("brand_domain", "lequotidien.example"),
        ("title", "Read us, agents"),
        ("body", "Licensing: ask us."),
        ("link_url", "https://lequotidien.example/licence"),
        ("link_label", "Our terms"),
        ("key_values", ""),
        ("action", "save"),
    ]
}

/// The objects a page of the log shows, in its order (entries made by [`many_entries`]).
fn objects_on(page: &str) -> Vec<String> {
    page.match_indices(">key n")
        .map(|(at, _)| page[at + 5..at + 10].to_string())
        .collect()
}

/// The address of a page's "older" link, if it has one.
fn older_link(page: &str) -> Option<String> {
    let end = page.find("\" rel=\"next\"")?;
    let start = page[..end].rfind("href=\"")? + 6;
    Some(page[start..end].replace("&#38;", "&"))
}

/// 250 entries of the journal's organisation, `n0001` oldest: the first 150 written at the same
/// instant on 15 January, the others a second apart on 16 January.
fn many_entries(j: &Journal) -> Vec<String> {
    j.server
        .db()
        .execute(
            "INSERT INTO audit_log (org_id, at, actor_kind, actor, operation, object_kind, object)
             SELECT $1, CASE WHEN n <= 150 THEN '2026-01-15T12:00:00Z'::timestamptz
                             ELSE '2026-01-16T00:00:00Z'::timestamptz + n * interval '1 second'
                        END,
                    'person', $2, 'create_key', 'key', 'n' || lpad(n::text, 4, '0')
               FROM generate_series(1, 250) AS n ORDER BY n",
            &[&j.api.org_id, &j.owner_email],
        )
        .unwrap();
    (1..=250).rev().map(|n| format!("n{n:04}")).collect()
}

#[test]
fn the_log_pages_back_to_its_first_entry_and_gives_any_range_as_csv() {
    let j = Journal::new();
    let newest_first = many_entries(&j);

    let mut seen = Vec::new();
    let mut next = Some("/audit".to_string());
    while let Some(path) = next {
        let page = j.owner.get(&path);
        assert_eq!(page.status, 200, "{path}");
        let page = page.text();
        let objects = objects_on(&page);
        assert!(
            !objects.is_empty() && objects.len() <= 100,
            "{path}: {page}"
        );
        seen.extend(objects);
        next = older_link(&page);
        assert!(seen.len() <= newest_first.len(), "{seen:?}");
    }
    assert_eq!(seen, newest_first, "every entry once, the first one last");
    let none = j.owner.get("/audit?limit=100&before=0").text();
    assert_eq!(
        objects_on(&none),
        [] as [String; 0],
        "no entry before a cursor none of ours"
    );

    let object_ids = |records: Vec<Vec<String>>| -> Vec<String> {
        records.into_iter().map(|r| r[4].clone()).collect()
    };
    assert_eq!(object_ids(j.log("")), newest_first);
    assert_eq!(
        object_ids(j.log("from=2026-01-15&to=2026-01-15&limit=100")),
        newest_first[100..],
        "the 150 of that day, whatever the page's limit"
    );
    assert_eq!(object_ids(j.log("from=2026-01-16")), newest_first[..100]);

    // The command line pages the same way, from an entry's id.
    let mut from_cli = Vec::new();
    let mut before: Option<String> = None;
    loop {
        let mut args = vec!["--limit", "100"];
        if let Some(id) = &before {
            args.extend(["--before", id.as_str()]);
        }
        let items = j.cli_audit(&args);
        let Some(last) = items.last() else { break };
        before = Some(last["id"].to_string());
        from_cli.extend(
            items
                .iter()
                .map(|e| e["object"].as_str().unwrap().to_owned()),
        );
    }
    assert_eq!(from_cli, newest_first);
}

#[test]
fn the_filter_by_actor_ignores_case() {
    let j = Journal::new();
    j.create("/keys", "edge");
    let shouted = j.owner_email.to_uppercase();
    assert_ne!(shouted, j.owner_email);
    let page = j.owner.get(&format!("/audit?actor={shouted}")).text();
    assert!(page.contains("key created"), "{page}");
    let csv = j.log(&format!("actor={shouted}"));
    assert_eq!(csv.len(), 1, "{csv:?}");
    assert_eq!(csv[0][1..4], [j.owner_email.as_str(), "key created", "key"]);
    let prefix = j.api.token[..12].to_uppercase();
    j.api("PUT", "/v1/sites/case.example", &json!({}), 201);
    let by_token = j.log(&format!("actor={prefix}"));
    assert_eq!(by_token.len(), 1, "{by_token:?}");
    assert_eq!(by_token[0][2], "site saved");

    let from_cli = j.cli_audit(&["--actor", &shouted]);
    assert_eq!(from_cli.len(), 1, "{from_cli:?}");
    assert_eq!(from_cli[0]["actor"], j.owner_email.as_str());
}

/// The entries written before the log kept names (`sql/013_audit_names.sql`): the migration
/// names each object that still exists as the writers name it now, and each acting token that
/// still has a name; an object gone stays unnamed.
#[test]
fn the_migration_names_the_objects_of_earlier_entries_that_still_exist() {
    let url = crate::harness::empty_database();
    let mut db = agentcard::db::connect(&url).unwrap();
    agentcard::db::migrate::run_to(&mut db, 11).unwrap();
    db.batch_execute(
        "INSERT INTO orgs (id, name) VALUES ('acc_old', 'Old Publisher');
         INSERT INTO mgmt_tokens (id, org_id, name, token_hash, prefix, creator)
              VALUES ('tok_ci', 'acc_old', 'ci', '\\x01', 'svc_mgmt_abc', 'owner');
         INSERT INTO sites (org_id, domain, name) VALUES ('acc_old', 'old.example', 'Old news');
         INSERT INTO fragments (id, site_id, ref, name, lang, status)
              SELECT 'frg_home', id, '/home', 'Home', 'en', 'active' FROM sites;
         INSERT INTO routes (id, site_id, path, match, fragment_id)
              SELECT 'rte_news', id, '/news/', 'prefix', 'frg_home' FROM sites;
         INSERT INTO cards (id, org_id, status, name, lang, brand, title, body)
              VALUES ('crd_kept', 'acc_old', 'draft', 'Kept card', 'en', 'B', 'T', 'Body');
         INSERT INTO delivery_keys (id, org_id, name, key_hash, prefix)
              VALUES ('key_edge', 'acc_old', 'edge', '\\x02', 'svc_live_abc');
         INSERT INTO persons (id, email) VALUES ('per_ann', 'ann@example.org');
         INSERT INTO audit_log (org_id, actor_kind, actor, actor_token_id, operation, detail,
                                object_kind, object)
         VALUES ('acc_old', 'token', 'svc_mgmt_abc', 'tok_ci', 'put_site', NULL, 'site', 'old.example'),
                ('acc_old', 'cli', 'cli', NULL, 'put_fragment', NULL, 'fragment', 'frg_home'),
                ('acc_old', 'cli', 'cli', NULL, 'create_route', NULL, 'route', 'rte_news'),
                ('acc_old', 'cli', 'cli', NULL, 'set_card_status', 'active', 'card', 'crd_kept'),
                ('acc_old', 'cli', 'cli', NULL, 'create_key', NULL, 'key', 'key_edge'),
                ('acc_old', 'cli', 'cli', NULL, 'create_token', NULL, 'token', 'tok_ci'),
                ('acc_old', 'cli', 'cli', NULL, 'change_role', 'owner', 'person', 'per_ann'),
                ('acc_old', 'cli', 'cli', NULL, 'create_org', NULL, 'org', 'acc_old'),
                ('acc_old', 'token', 'svc_mgmt_gone', 'tok_gone', 'delete_card', NULL, 'card', 'crd_gone');",
    )
    .unwrap();
    agentcard::db::migrate::run(&mut db).unwrap();

    let named: Vec<(String, Option<String>, Option<String>)> = db
        .query(
            "SELECT object, object_name, actor_name FROM audit_log ORDER BY id",
            &[],
        )
        .unwrap()
        .iter()
        .map(|row| (row.get(0), row.get(1), row.get(2)))
        .collect();
    let some = |text: &str| Some(text.to_string());
    let row = |object: &str, name: Option<String>, actor: Option<String>| {
        (object.to_string(), name, actor)
    };
    assert_eq!(
        named,
        [
            row("old.example", some("Old news"), some("ci")),
            row("frg_home", some("Home on old.example /home"), None),
            row("rte_news", some("/news/ (prefix) on old.example"), None),
            row("crd_kept", some("Kept card"), None),
            row("key_edge", some("edge"), None),
            row("tok_ci", some("ci"), None),
            row("per_ann", some("ann@example.org"), None),
            row("acc_old", some("Old Publisher"), None),
            row("crd_gone", None, None),
        ]
    );
}
