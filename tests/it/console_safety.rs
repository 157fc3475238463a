//! The console's safety rules below its pages (issue 34), through the CLI, `/v1`, `/fragment`
//! and, where no HTTP surface exists yet, the library: a deletion never widens a card, the
//! audit log in words, secrets made once, invitations accepted by the invitee, device cookies,
//! mail.

use crate::console_fixtures::{link_in, SmtpSink};
use crate::fixtures::{admin, CardSpec, World};
use crate::harness::{self, server, Client};
use serde_json::Value;

fn ok(args: &[&str]) -> Value {
    let (success, out, stderr) = admin(args);
    assert!(success, "{args:?}: {stderr}");
    out
}

/// A card's record through `/v1` (`GET /v1/cards` lists every card the organisation sees).
fn api_card(api: &Client, id: &str) -> Value {
    let resp = api.get("/v1/cards");
    assert_eq!(resp.status, 200, "{}", resp.text());
    let items = resp.json()["items"].clone();
    let found = items.as_array().unwrap().iter().find(|c| c["id"] == id);
    found.cloned().expect("the card is listed")
}

/// The organisation's audit entries about `object`, newest first.
fn audit_of(org: &str, object: &str) -> Vec<Value> {
    let out = ok(&["audit", "--org", org]);
    out["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|entry| entry["object"] == object)
        .cloned()
        .collect()
}

/// A world whose site `domain` has the fragments `/only` and `/other`, and whose site
/// `kept.{domain}` has `/kept`; a card of the organisation eligible on `/only` alone, a platform
/// card listed there on `/only` alone, and a draft card on `/only` alone. Nothing is eligible
/// on `/other` or `/kept`.
struct Narrow {
    w: World,
    api: Client,
    only: String,
    other: String,
    kept: String,
    narrow: String,
    platform: String,
    draft: String,
}

fn narrow_world(domain: &str) -> Narrow {
    let mut w = World::new();
    let site = w.site(domain);
    let only = w.fragment(site, "/only", true);
    let other = w.fragment(site, "/other", true);
    let kept = w.site(&format!("kept.{domain}"));
    let kept = w.fragment(kept, "/kept", true);
    let narrow = w.card(CardSpec::default(), &[&only]);
    let platform = CardSpec {
        platform: true,
        ..CardSpec::default()
    };
    let platform = w.card(platform, &[&only]);
    let draft = w.card(CardSpec::default(), &[&only]);
    w.sql("UPDATE cards SET status = 'draft' WHERE id = $1", &draft);
    let api = Client::new(server().addr).token(&w.management_token());
    harness::sync_cache();
    assert_eq!(w.fetch(&other, "").status, 204, "nothing on /other yet");
    assert_eq!(w.fetch(&kept, "").status, 204, "nothing on /kept yet");
    assert_eq!(w.fetch(&only, "").status, 200);
    Narrow {
        w,
        api,
        only,
        other,
        kept,
        narrow,
        platform,
        draft,
    }
}

/// What a deletion that emptied `n.narrow`'s list must leave: the card a draft, served nowhere
/// (`/kept` still answers no card), its change in the audit log by name; the platform card
/// (whose empty list there means nowhere) and the draft untouched.
fn assert_not_widened(n: &Narrow, warnings: &Value) {
    let warnings = warnings.as_array().unwrap();
    let about: Vec<&str> = warnings
        .iter()
        .filter_map(Value::as_str)
        .filter(|w| w.contains(&n.narrow))
        .collect();
    assert_eq!(about.len(), 1, "{warnings:?}");
    assert!(about[0].contains("it is a draft now"), "{about:?}");
    assert!(
        !warnings.iter().any(|w| {
            let w = w.as_str().unwrap();
            w.contains(&n.platform) || w.contains(&n.draft)
        }),
        "{warnings:?}"
    );
    assert_eq!(api_card(&n.api, &n.narrow)["status"], "draft");
    assert_eq!(api_card(&n.api, &n.platform)["status"], "active");
    assert_eq!(api_card(&n.api, &n.draft)["status"], "draft");
    let entries = audit_of(&n.w.org_id, &n.narrow);
    assert_eq!(entries.len(), 1, "{entries:?}");
    let entry = &entries[0];
    assert_eq!(entry["operation"], "draft_after_deletion");
    assert_eq!(entry["object_kind"], "card");
    assert_eq!(entry["object_name"], "card");
    assert_eq!(entry["who"], "command line");
    assert!(entry["what"]
        .as_str()
        .unwrap()
        .starts_with("card set to draft"));
    assert!(audit_of(&n.w.org_id, &n.draft).is_empty());
    harness::sync_cache();
    assert_eq!(
        n.w.fetch(&n.kept, "").status,
        204,
        "the card an empty list would serve everywhere is served nowhere"
    );
}

#[test]
fn deleting_the_last_fragment_of_a_cards_list_sets_it_to_draft_and_serves_it_nowhere() {
    let n = narrow_world("narrow-fragment.example");
    let out = ok(&[
        "fragment",
        "delete",
        "--org",
        &n.w.org_id,
        "--fragment",
        &n.only,
    ]);
    assert_not_widened(&n, &out["warnings"]);
    assert_eq!(n.w.fetch(&n.other, "").status, 204);
}

#[test]
fn deleting_the_site_of_a_cards_whole_list_sets_it_to_draft() {
    let n = narrow_world("narrow-site.example");
    let out = ok(&[
        "site",
        "delete",
        "--org",
        &n.w.org_id,
        "--domain",
        "narrow-site.example",
    ]);
    assert_not_widened(&n, &out["warnings"]);
}

#[test]
fn pausing_a_fragment_changes_no_eligibility_or_status() {
    let n = narrow_world("narrow-pause.example");
    let put = n.api.put(
        "/v1/sites/narrow-pause.example/fragments/%2Fonly",
        &serde_json::json!({"name": "f", "status": "paused"}),
    );
    assert_eq!(put.status, 200, "{}", put.text());
    assert_eq!(api_card(&n.api, &n.narrow)["status"], "active");
    let list = n.api.get(&format!("/v1/cards/{}/eligibility", n.narrow));
    assert_eq!(list.json()["items"].as_array().unwrap().len(), 1);
}

#[test]
fn the_audit_log_says_who_did_what_to_which_object_in_words_within_a_window() {
    let (_, org, _) = admin(&["org", "create", "--name", "Audited in words"]);
    let org = org["id"].as_str().unwrap().to_owned();
    let token = ok(&["token", "create", "--org", &org, "--name", "ci"]);
    let prefix = token["prefix"].as_str().unwrap().to_owned();
    let api = Client::new(server().addr).token(token["token"].as_str().unwrap());
    let key = api.post("/v1/keys", &serde_json::json!({"name": "edge"}));
    assert_eq!(key.status, 201, "{}", key.text());
    let key = key.json()["id"].as_str().unwrap().to_owned();
    assert_eq!(api.delete(&format!("/v1/keys/{key}")).status, 200);
    let card = crate::fixtures::card(Some(&org), agentcard::domain::CardStatus::Draft).id;
    ok(&["card", "set-status", &card, "active"]);

    let words = |entry: &Value| {
        let text = |member: &str| entry[member].as_str().unwrap_or("").to_owned();
        (text("who"), text("what"), text("object_name"))
    };
    let status = audit_of(&org, &card);
    assert_eq!(status.len(), 1, "{status:?}");
    assert_eq!(
        status[0]["operation"], "set_card_status",
        "the stored name stays"
    );
    assert_eq!(
        words(&status[0]),
        (
            "command line".into(),
            "card status changed: status draft → active".into(),
            "Subscription offer".into()
        )
    );
    let by_token = format!("token ci ({prefix})");
    let key_entries: Vec<_> = audit_of(&org, &key).iter().map(words).collect();
    assert_eq!(
        key_entries,
        [
            (
                by_token.clone(),
                "key revoked: status live → revoked".into(),
                "edge".into()
            ),
            (by_token, "key created".into(), "edge".into()),
        ]
    );

    let count = |extra: &[&str]| {
        let out = ok(&[&["audit", "--org", &org], extra].concat());
        out["items"].as_array().unwrap().len()
    };
    let all = count(&[]);
    assert_eq!(all, 5, "organisation, token, key twice, card status");
    assert_eq!(count(&["--since", "2000-01-01T00:00:00Z"]), all);
    assert_eq!(count(&["--until", "2000-01-01T00:00:00Z"]), 0);
    assert_eq!(count(&["--since", "2999-01-01T00:00:00Z"]), 0);
    let (refused, _, stderr) = admin(&["audit", "--org", &org, "--since", "yesterday"]);
    assert!(!refused && stderr.contains("--since"), "{stderr}");
}

/// An invitation to a new organisation for `email`, as the CLI makes it; the live link.
fn invitation(email: &str) -> (String, agentcard::db::people::OneTimeLink) {
    use agentcard::domain::{Email, Role};
    use agentcard::ops::{self, members, Actor};
    let org = crate::console_fixtures::new_org();
    let org_id = crate::console_fixtures::org_id(&org);
    let caller = ops::orgs::open(&mut harness::db(), &org_id, Actor::Cli).unwrap();
    let url = server().app.config.console_url.clone().unwrap();
    let email = Email::parse(email).unwrap();
    let link = members::invite(&mut harness::db(), &caller, &url, &email, Role::Member).unwrap();
    let secret = link.rsplit('/').next().unwrap();
    let live = members::live_link(&mut harness::db(), secret).unwrap();
    (org, live.expect("a live link"))
}

fn role_in(org: &str, email: &str) -> Option<String> {
    let row = harness::db()
        .query_opt(
            "SELECT m.role FROM memberships m JOIN persons p ON p.id = m.person_id
              WHERE m.org_id = $1 AND lower(p.email) = lower($2)",
            &[&org, &email],
        )
        .unwrap();
    row.map(|r| r.get(0))
}

#[test]
fn an_invitation_for_a_person_with_a_password_is_accepted_only_by_them_signed_in() {
    use crate::console_fixtures::person;
    use agentcard::db::people;
    use agentcard::domain::Role;
    use agentcard::ops::members;
    let invitee = person(None, Role::Member);
    let stranger = person(None, Role::Member);
    let (org, link) = invitation(&invitee.to_uppercase());
    let id_of = |email: &str| {
        let found = people::find_by_email(&mut harness::db(), email).unwrap();
        found.expect("a person")
    };

    // Whoever holds the link, not signed in: the link-using path refuses it.
    let refused = members::use_link(&mut harness::db(), &link, Some(id_of(&invitee)), None);
    let refused = refused.expect_err("refused without the invitee signed in");
    assert_eq!(refused.field(), Some("email"));
    assert!(
        refused.message().contains("sign in as"),
        "{}",
        refused.message()
    );
    // Signed in as someone else: refused too.
    let other = members::join(&mut harness::db(), &link, &id_of(&stranger).id);
    let other = other.expect_err("refused to anyone but the invitee");
    assert_eq!(
        (other.field(), other.message()),
        (refused.field(), refused.message())
    );
    assert_eq!(role_in(&org, &invitee), None);
    assert_eq!(role_in(&org, &stranger), None);

    // The invitee, signed in, joins; the link is then used up.
    let joined = members::join(&mut harness::db(), &link, &id_of(&invitee).id).unwrap();
    assert_eq!(joined.map(|p| p.email), Some(invitee.clone()));
    assert_eq!(role_in(&org, &invitee).as_deref(), Some("member"));
    let again = members::join(&mut harness::db(), &link, &id_of(&invitee).id).unwrap();
    assert!(again.is_none(), "used once");
}

#[test]
fn an_invitation_for_a_new_person_still_sets_their_password() {
    use agentcard::ops::members;
    let email = format!("{}@example.org", agentcard::ids::new_id("new_"));
    let (org, link) = invitation(&email);
    let made = members::use_link(&mut harness::db(), &link, None, Some("$argon2id$stub"));
    assert_eq!(made.unwrap().map(|p| p.email), Some(email.clone()));
    assert_eq!(role_in(&org, &email).as_deref(), Some("member"));
    let invited = audit_of(&org, &link.id.to_string());
    assert_eq!(invited[0]["what"], "member invited: role none → member");
    assert_eq!(
        invited[0]["object_name"],
        email.as_str(),
        "named by the invitee's email"
    );
}

/// A session of a new person of `org` (as signing in makes one); its id.
fn session_in(org: &str) -> i64 {
    use agentcard::db::{people, sessions};
    let email = crate::console_fixtures::person(Some(org), agentcard::domain::Role::Owner);
    let person = people::find_by_email(&mut harness::db(), &email)
        .unwrap()
        .unwrap();
    let secret = agentcard::auth::random_hex(32);
    let hash = agentcard::auth::hash(&secret);
    sessions::create_session(&mut harness::db(), &hash, &person.id, None, "test").unwrap()
}

#[test]
fn a_creating_form_posted_twice_makes_one_secret_and_then_says_it_was_shown() {
    use agentcard::error::ApiError;
    use agentcard::ops::once::{issue, made_once, Made};
    use agentcard::ops::{self, keys, Actor};
    let org = crate::console_fixtures::new_org();
    let caller = ops::orgs::open(
        &mut harness::db(),
        &crate::console_fixtures::org_id(&org),
        Actor::Cli,
    )
    .unwrap();
    let (session, other_session) = (session_in(&org), session_in(&org));
    let nonce = issue(&mut harness::db(), session).unwrap();
    let create = |tx: &mut postgres::Transaction| keys::create_key(tx, &caller, None, "svc");
    let keys_made = || keys::list_keys(&mut harness::db(), &caller).unwrap().len();

    // Refused creations keep the value, and write nothing; so does another session's post.
    let refused = made_once(&mut harness::db(), session, &nonce, |tx| {
        create(tx)?;
        Err::<(), _>(ApiError::validation("name", "refused after the write"))
    });
    let refused = refused.expect_err("the write's refusal");
    assert_eq!(refused.field(), Some("name"));
    assert_eq!(keys_made(), 0, "the refused creation rolled back");
    let foreign = made_once(&mut harness::db(), other_session, &nonce, create).unwrap();
    assert_eq!(foreign, Made::ShownAlready);

    let first = made_once(&mut harness::db(), session, &nonce, create).unwrap();
    assert!(matches!(first, Made::New(ref key) if key.secret.starts_with("svc_")));
    let again = made_once(&mut harness::db(), session, &nonce, create).unwrap();
    assert_eq!(again, Made::ShownAlready);
    assert_eq!(keys_made(), 1, "one key for one form");
    let forged = made_once(&mut harness::db(), session, "not-a-nonce", create).unwrap();
    assert_eq!(forged, Made::ShownAlready);
    let stored: i64 = harness::db()
        .query_one(
            "SELECT count(*) FROM form_nonces WHERE secret_hash = $1",
            &[&agentcard::auth::hash(&nonce).to_vec()],
        )
        .unwrap()
        .get(0);
    assert_eq!(stored, 0, "used up, and only its hash was ever stored");
}

#[test]
fn a_browser_is_known_by_a_live_device_cookie_of_the_person_only() {
    use agentcard::db::people;
    use agentcard::ops::devices::{is_known, issue};
    let org = crate::console_fixtures::new_org();
    let email = crate::console_fixtures::person(Some(&org), agentcard::domain::Role::Member);
    let other = crate::console_fixtures::person(Some(&org), agentcard::domain::Role::Member);
    let id = |email: &str| {
        let person = people::find_by_email(&mut harness::db(), email).unwrap();
        person.unwrap().id
    };
    let (person, other) = (id(&email), id(&other));
    let own = issue(&mut harness::db(), &person).unwrap();
    let theirs = issue(&mut harness::db(), &other).unwrap();
    let expired = issue(&mut harness::db(), &person).unwrap();
    harness::db()
        .execute(
            "UPDATE device_cookies SET expires_at = now() - interval '1 second'
              WHERE secret_hash = $1",
            &[&agentcard::auth::hash(&expired).to_vec()],
        )
        .unwrap();
    let unknown = |person: Option<&agentcard::ids::PersonId>, cookie: Option<&str>| {
        !is_known(&mut harness::db(), person, cookie).unwrap()
    };
    assert!(
        !unknown(Some(&person), Some(&own)),
        "the person's own browser"
    );
    assert!(unknown(Some(&person), None), "no cookie");
    assert!(
        unknown(Some(&person), Some(&theirs)),
        "another person's cookie"
    );
    assert!(
        unknown(Some(&person), Some(&expired)),
        "a cookie past its year"
    );
    assert!(
        unknown(Some(&person), Some("forged")),
        "not a cookie of ours"
    );
    assert!(unknown(None, Some(&own)), "an email nobody has");
    let stored: i64 = harness::db()
        .query_one(
            "SELECT count(*) FROM device_cookies WHERE person_id = $1
                AND secret_hash = $2 AND expires_at > now() + interval '364 days'",
            &[&person, &agentcard::auth::hash(&own).to_vec()],
        )
        .unwrap()
        .get(0);
    assert_eq!(stored, 1, "only the hash, for a year");
    issue(&mut harness::db(), &person).unwrap();
    let expired_kept: i64 = harness::db()
        .query_one(
            "SELECT count(*) FROM device_cookies WHERE secret_hash = $1",
            &[&agentcard::auth::hash(&expired).to_vec()],
        )
        .unwrap()
        .get(0);
    assert_eq!(expired_kept, 0, "the next sign-in forgets the expired one");
}

#[test]
fn with_smtp_set_the_clis_invitation_and_reset_links_are_mailed_and_work() {
    let mut sink = SmtpSink::start();
    let org = crate::console_fixtures::new_org();
    let email = format!("{}@example.org", agentcard::ids::new_id("mailed_"));
    let with_mail = [
        ("AGENTCARD_CONSOLE_HOST", crate::harness::CONSOLE_HOST),
        ("AGENTCARD_SMTP_URL", &sink.url()),
    ];
    let run = |args: &[&str]| {
        let (ok, stdout, stderr) =
            crate::fixtures::agentcard(&[&["admin"], args].concat(), &with_mail);
        assert!(ok, "{args:?}: {stderr}");
        serde_json::from_str::<Value>(&stdout).unwrap()
    };
    let invited = run(&["member", "invite", "--org", &org, "--email", &email]);
    assert_eq!(invited["mailed"], true);
    let link = invited["link"].as_str().unwrap();
    let printed = sink.until(link);
    assert!(printed.contains(&format!("\nTo: {email}\n")), "{printed}");
    assert!(printed.contains("Subject: You are invited to"), "{printed}");
    assert_eq!(link_in(&printed), link);
    let path = link.strip_prefix("https://console.test").unwrap();
    let page = crate::console_fixtures::Browser::new().get(path);
    assert_eq!(page.status, 200, "the mailed link works");

    let person = crate::console_fixtures::person(Some(&org), agentcard::domain::Role::Member);
    let reset = run(&["user", "reset", "--email", &person]);
    assert_eq!(reset["mailed"], true);
    let link = reset["link"].as_str().unwrap();
    let printed = sink.until(link);
    assert!(printed.contains(&format!("\nTo: {person}\n")), "{printed}");
    let path = link.strip_prefix("https://console.test").unwrap();
    assert_eq!(
        crate::console_fixtures::Browser::new().get(path).status,
        200
    );

    // Without AGENTCARD_SMTP_URL nothing is mailed, and the link is printed as before.
    let (ok, out, _) =
        crate::console_fixtures::admin_people(&["user", "reset", "--email", &person]);
    assert!(
        ok && out["mailed"] == false && out["link"].is_string(),
        "{out}"
    );
}

#[test]
fn forgot_your_password_mails_a_known_person_and_answers_the_same_for_anyone() {
    use agentcard::config::Config;
    use agentcard::mail::Mailer;
    use agentcard::ops::members::request_reset;
    let mut sink = SmtpSink::start();
    let url = sink.url();
    let mut config = server().app.config.clone();
    config.smtp_url = Config::from_lookup(|var| match var {
        "DATABASE_URL" => Some("postgres://x".into()),
        "AGENTCARD_SMTP_URL" => Some(url.clone()),
        _ => None,
    })
    .unwrap()
    .smtp_url;
    let mailer = Mailer::configured(&config).expect("a mailer");
    let console = config.console_url.clone().unwrap();
    let person = crate::console_fixtures::person(None, agentcard::domain::Role::Member);
    let nobody = format!("{}@example.org", agentcard::ids::new_id("nobody_"));
    let mut db = harness::db();
    assert!(request_reset(&mut db, &mailer, &console, &nobody).is_ok());
    let known = request_reset(&mut db, &mailer, &console, &person.to_uppercase());
    assert!(known.is_ok());
    drop(mailer); // sends what is queued, then returns
    let printed = sink.until("END MESSAGE");
    assert!(printed.contains(&format!("\nTo: {person}\n")), "{printed}");
    let link = link_in(&printed);
    assert!(
        !printed.contains(&nobody),
        "nothing for an unknown email: {printed}"
    );
    assert_eq!(printed.matches("MESSAGE FOLLOWS").count(), 1, "{printed}");
    let path = link.strip_prefix("https://console.test").unwrap();
    assert_eq!(
        crate::console_fixtures::Browser::new().get(path).status,
        200
    );
}

/// A person who signs in through their link (setting their password) or changes it gets a
/// device cookie, as a sign-in by password does: that browser is theirs from then on.
#[test]
fn every_way_of_signing_in_makes_the_browser_a_known_one() {
    use crate::console_fixtures::{new_org, person, set_cookie, Browser, ORIGIN, PASSWORD};
    use agentcard::db::people;
    use agentcard::ops::{members, Actor};
    let email = person(Some(&new_org()), agentcard::domain::Role::Member);
    let found = people::find_by_email(&mut harness::db(), &email)
        .unwrap()
        .unwrap();
    let known = |resp: &crate::harness::Resp, what: &str| {
        assert_eq!(resp.status, 303, "{what}: {}", resp.text());
        let cookie = set_cookie(resp, agentcard::ops::devices::COOKIE).expect(what);
        let stored: i64 = harness::db()
            .query_one(
                "SELECT count(*) FROM device_cookies WHERE person_id = $1 AND secret_hash = $2",
                &[&found.id, &agentcard::auth::hash(&cookie).to_vec()],
            )
            .unwrap()
            .get(0);
        assert_eq!(stored, 1, "{what}: a device of the person's, by its hash");
    };

    let url = server().app.config.console_url.clone().unwrap();
    let link = members::password_link(&mut harness::db(), &Actor::Cli, &url, &found).unwrap();
    let path = link.strip_prefix(ORIGIN).unwrap().to_string();
    let new = "the password of the link";
    known(
        &Browser::new().post(&path, &[("new_password", new)]),
        "link",
    );

    let mut browser = Browser::new();
    known(&browser.sign_in(&email, new), "sign-in");
    let fields = [("current_password", new), ("new_password", PASSWORD)];
    known(&browser.write("/password", &fields), "password change");
}
