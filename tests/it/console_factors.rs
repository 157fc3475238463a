//! Second factors (issue 41 item 1): an authenticator app added with a code computed here from
//! the secret the page shows, asked for after the password at every sign-in, each code accepted
//! once, a wrong one counted as a failed sign-in; recovery codes, once each; removal with the
//! password or a code; an owner's "require a second factor"; the operator's reset.

use crate::console_fixtures::{
    admin_people, new_org, person, set_cookie, Browser, Device, ORIGIN, PASSWORD,
};
use crate::harness::db;
use agentcard::domain::Role;
use std::time::{SystemTime, UNIX_EPOCH};
use totp_rs::{Algorithm, Secret, TOTP};

const PENDING_COOKIE: &str = "agentcard_sign_in";

/// The person's app: the codes it shows for the secret the page gave.
struct App(TOTP);

impl App {
    fn of(secret: &str) -> App {
        let bytes = Secret::Encoded(secret.to_string()).to_bytes().unwrap();
        App(TOTP::new(Algorithm::SHA1, 6, 0, 30, bytes, None, String::new()).unwrap())
    }

    /// The code of the step `offset` steps from now.
    fn code(&self, offset: i64) -> String {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs();
        self.0.generate(now.saturating_add_signed(offset * 30))
    }
}

/// Adds an app to the signed-in browser's person: its codes and the recovery codes shown.
fn add_app(browser: &Browser) -> (App, Vec<String>) {
    let page = browser.get("/second-factors/app").text();
    assert!(page.contains("<svg role=\"img\""), "{page}");
    assert!(!page.contains("<?xml"), "{page}");
    let at = page.find("id=\"totp-secret\">").unwrap() + 17;
    let app = App::of(&page[at..at + page[at..].find('<').unwrap()]);
    let resp = browser.write("/second-factors/app", &[("code", &app.code(0))]);
    assert_eq!(resp.status, 200, "{}", resp.text());
    (app, recovery_codes(&resp.text()))
}

fn recovery_codes(page: &str) -> Vec<String> {
    page.split("<li><code>")
        .skip(1)
        .map(|rest| rest[..rest.find('<').unwrap()].to_string())
        .collect()
}

/// A sign-in from a new browser whose password matched: waiting for its factor.
struct Waiting {
    device: Device,
    cookie: String,
}

impl Waiting {
    fn start(email: &str) -> Waiting {
        Waiting::start_with(email, PASSWORD)
    }

    fn start_with(email: &str, password: &str) -> Waiting {
        let mut device = Device::new();
        let resp = device.sign_in(email, password);
        assert_eq!(resp.status, 303, "{}", resp.text());
        assert_eq!(resp.header("Location"), Some("/sign-in/second-factor"));
        assert_eq!(device.browser.cookie, None, "no session before the factor");
        let cookie = set_cookie(&resp, PENDING_COOKIE).expect("a waiting sign-in's cookie");
        Waiting { device, cookie }
    }

    fn cookie(&self) -> String {
        format!("{PENDING_COOKIE}={}", self.cookie)
    }

    fn page(&self) -> crate::harness::Resp {
        let cookie = self.cookie();
        let browser = &self.device.browser;
        browser.client.request(
            "GET",
            "/sign-in/second-factor",
            &[("Cookie", &cookie)],
            None,
        )
    }

    fn give(&mut self, code: &str) -> crate::harness::Resp {
        let cookie = self.cookie();
        let extra = [("Origin", ORIGIN), ("Cookie", cookie.as_str())];
        let browser = &mut self.device.browser;
        let resp = browser.post_with("/sign-in/second-factor", &[("code", code)], &extra);
        if let Some(session) = set_cookie(&resp, "agentcard_session") {
            browser.cookie = Some(session);
        }
        resp
    }
}

fn audited(email: &str, operation: &str) -> i64 {
    db().query_one(
        "SELECT count(*) FROM audit_log WHERE actor = $1 AND operation = $2",
        &[&email, &operation],
    )
    .unwrap()
    .get(0)
}

fn stored_app(email: &str) -> Option<bool> {
    db().query_opt(
        "SELECT t.confirmed_at IS NOT NULL FROM totp_factors t JOIN persons p ON p.id = t.person_id
          WHERE p.email = $1",
        &[&email],
    )
    .unwrap()
    .map(|r| r.get(0))
}

/// How many rows of `table` (one with a `person_id`) are the person's.
fn rows_of(table: &str, email: &str) -> i64 {
    let sql = format!(
        "SELECT count(*) FROM {table} t JOIN persons p ON p.id = t.person_id WHERE p.email = $1"
    );
    db().query_one(&sql, &[&email]).unwrap().get(0)
}

fn codes_stored(email: &str) -> i64 {
    rows_of("recovery_codes", email)
}

#[test]
fn an_app_added_with_its_code_is_asked_for_after_the_password_and_each_code_works_once() {
    let org = new_org();
    let email = person(Some(&org), Role::Member);
    let browser = Browser::signed_in(&email);
    let page = browser.get("/second-factors").text();
    assert!(page.contains("href=\"/second-factors/app\""), "{page}");

    let wrong = browser.write("/second-factors/app", &[("code", "000000")]);
    assert_eq!(wrong.status, 422);
    assert!(wrong.text().contains("not the code your app shows now"));
    assert_eq!(
        stored_app(&email),
        Some(false),
        "not a factor until confirmed"
    );

    let (app, codes) = add_app(&browser);
    assert_eq!(stored_app(&email), Some(true));
    assert_eq!(codes.len(), 10);
    assert_eq!(codes_stored(&email), 10);
    let stored: Vec<Vec<u8>> = db()
        .query("SELECT code_hash FROM recovery_codes", &[])
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert!(stored.iter().all(|h| h.len() == 32), "only hashes stored");
    assert_eq!(audited(&email, "add_authenticator_app"), 1);
    assert!(browser.is_signed_in(), "adding keeps the session");

    let mut waiting = Waiting::start(&email);
    assert_eq!(waiting.page().status, 200);
    let replayed = waiting.give(&app.code(0));
    assert_eq!(replayed.status, 422, "the code that added the app was used");
    assert!(!waiting.device.browser.is_signed_in());
    let resp = waiting.give(&app.code(1));
    assert_eq!(resp.status, 303, "{}", resp.text());
    assert_eq!(resp.header("Location"), Some("/"));
    assert!(waiting.device.browser.is_signed_in());
    let removed = crate::console_fixtures::set_cookie_header(&resp, PENDING_COOKIE).unwrap();
    assert!(removed.contains("Max-Age=0"), "{removed}");

    // The wait ended with the session: its cookie leads nowhere now.
    assert_eq!(waiting.page().status, 303);
    assert_eq!(waiting.give(&app.code(1)).status, 410);
    // A known browser is asked too.
    let mut known = waiting.device;
    let again = known.sign_in(&email, PASSWORD);
    assert_eq!(again.header("Location"), Some("/sign-in/second-factor"));
}

#[test]
fn a_wrong_code_counts_as_a_failed_sign_in_of_the_email() {
    let email = person(Some(&new_org()), Role::Member);
    let (app, _) = add_app(&Browser::signed_in(&email));
    let mut waiting = Waiting::start(&email);
    for _ in 0..10 {
        assert_eq!(waiting.give("123456").status, 422);
    }
    let refused = waiting.give(&app.code(1));
    assert_eq!(refused.status, 429, "{}", refused.text());
    let mut elsewhere = Device::new();
    let resp = elsewhere.sign_in(&email, PASSWORD);
    assert_eq!(resp.status, 429, "the email's failed sign-ins are full");
}

#[test]
fn a_recovery_code_signs_in_once_and_new_codes_replace_the_old() {
    let email = person(Some(&new_org()), Role::Member);
    let browser = Browser::signed_in(&email);
    let (_, codes) = add_app(&browser);
    let code = codes[3].to_uppercase();
    let mut waiting = Waiting::start(&email);
    assert_eq!(waiting.give(&code).status, 303);
    assert!(waiting.device.browser.is_signed_in());
    assert_eq!(codes_stored(&email), 9);
    assert_eq!(audited(&email, "use_recovery_code"), 1);
    assert_eq!(Waiting::start(&email).give(&code).status, 422, "used");

    let fresh = browser.write("/second-factors/recovery-codes", &[]);
    assert_eq!(fresh.status, 200);
    let fresh = recovery_codes(&fresh.text());
    assert_eq!(fresh.len(), 10);
    assert!(browser.get("/second-factors").text().contains("10 of 10"));
    assert_eq!(
        Waiting::start(&email).give(&codes[0]).status,
        422,
        "replaced"
    );
    assert_eq!(Waiting::start(&email).give(&fresh[0]).status, 303);
    assert_eq!(audited(&email, "new_recovery_codes"), 1);
}

#[test]
fn removing_the_app_asks_for_the_password_or_a_code() {
    let email = person(Some(&new_org()), Role::Member);
    let browser = Browser::signed_in(&email);
    let (app, _) = add_app(&browser);
    let remove = |proof: &str| browser.write("/second-factors/app/remove", &[("proof", proof)]);
    assert_eq!(remove("not the password").status, 422);
    assert_eq!(remove("999999").status, 422);
    assert_eq!(stored_app(&email), Some(true));
    let resp = remove(&app.code(1));
    assert_eq!(resp.status, 303, "{}", resp.text());
    assert_eq!(stored_app(&email), None);
    assert_eq!(
        codes_stored(&email),
        0,
        "recovery codes go with the last factor"
    );
    assert_eq!(audited(&email, "remove_authenticator_app"), 1);
    let mut device = Device::new();
    assert_eq!(
        device.sign_in(&email, PASSWORD).header("Location"),
        Some("/")
    );

    let (_, _) = add_app(&browser);
    assert_eq!(remove(PASSWORD).status, 303);
    assert_eq!(stored_app(&email), None);
}

#[test]
fn a_person_without_a_factor_reaches_only_its_page_when_the_owner_requires_one() {
    let org = new_org();
    let owner = Browser::signed_in(&person(Some(&org), Role::Owner));
    let member_email = person(Some(&org), Role::Member);
    let member = Browser::signed_in(&member_email);
    assert_eq!(member.get("/org/security").status, 403, "owners only");
    assert_eq!(
        member
            .write("/org/security", &[("second_factor_required", "on")])
            .status,
        403
    );

    let resp = owner.write("/org/security", &[("second_factor_required", "on")]);
    assert_eq!(resp.status, 303, "{}", resp.text());
    assert_eq!(
        owner.get("/org/security").status,
        303,
        "the owner lacks a factor too"
    );
    let kept: bool = db()
        .query_one(
            "SELECT second_factor_required FROM orgs WHERE id = $1",
            &[&org],
        )
        .unwrap()
        .get(0);
    assert!(kept);
    assert_eq!(
        db().query_one(
            "SELECT count(*) FROM audit_log WHERE org_id = $1 AND operation = 'require_second_factor'",
            &[&org],
        )
        .unwrap()
        .get::<_, i64>(0),
        1
    );

    for path in ["/", "/cards", "/keys", "/password", "/members"] {
        let resp = member.get(path);
        assert_eq!(resp.status, 303, "{path}");
        assert_eq!(
            resp.header("Location"),
            Some("/second-factors?notice=second-factor-required"),
            "{path}"
        );
    }
    assert_eq!(member.write("/keys", &[("name", "x")]).status, 403);
    let page = member.get("/second-factors");
    assert_eq!(page.status, 200);
    assert!(page.text().contains("requires a second factor"));
    add_app(&member);
    assert_eq!(
        member.get("/cards").status,
        200,
        "a factor opens the console"
    );
    add_app(&owner);
    assert!(owner.get("/org/security").text().contains(" checked"));
    let off = owner.write("/org/security", &[]);
    assert_eq!(off.status, 303);
    assert_eq!(
        off.header("Location"),
        Some("/org/security?notice=security-saved")
    );
    assert!(!owner.get("/org/security").text().contains(" checked"));
    assert_eq!(
        member.write("/sign-out", &[]).status,
        303,
        "signing out stays open"
    );
}

#[test]
fn the_operator_removes_a_persons_second_factors() {
    let email = person(Some(&new_org()), Role::Member);
    let (_, _) = add_app(&Browser::signed_in(&email));
    let (ok, out, stderr) = admin_people(&["user", "reset", "--email", &email, "--second-factors"]);
    assert!(ok, "{stderr}");
    assert_eq!(out["second_factors_removed"], true, "{out}");
    assert!(out.get("link").is_none(), "{out}");
    assert_eq!(stored_app(&email), None);
    assert_eq!(codes_stored(&email), 0);
    let count: i64 = db()
        .query_one(
            "SELECT count(*) FROM audit_log a JOIN persons p ON a.object = p.id
              WHERE p.email = $1 AND a.operation = 'remove_second_factors' AND a.actor = 'cli'",
            &[&email],
        )
        .unwrap()
        .get(0);
    assert_eq!(count, 1);
    let mut device = Device::new();
    assert_eq!(
        device.sign_in(&email, PASSWORD).header("Location"),
        Some("/")
    );
}

#[test]
fn a_password_link_of_a_person_with_a_factor_leads_to_the_sign_in_not_past_it() {
    let email = person(Some(&new_org()), Role::Member);
    let (app, _) = add_app(&Browser::signed_in(&email));
    let (ok, out, stderr) = admin_people(&["user", "reset", "--email", &email]);
    assert!(ok, "{stderr}");
    let link = out["link"].as_str().unwrap();
    let path = &link[link.find("/link/").unwrap()..];
    let new = "a new password of mine";
    let resp = Browser::new().post(path, &[("new_password", new)]);
    assert_eq!(resp.status, 303, "{}", resp.text());
    assert_eq!(
        resp.header("Location"),
        Some("/sign-in?notice=password-set-sign-in")
    );
    assert!(set_cookie(&resp, "agentcard_session").is_none());
    let mut waiting = Waiting::start_with(&email, new);
    assert_eq!(waiting.give(&app.code(1)).status, 303);
}

/// The options of a ceremony, as the page's script gets them.
/// A ceremony's start: WebAuthn's options, and the sealed ceremony the form sends back.
fn options(browser: &Browser, path: &str, fields: &[(&str, &str)]) -> (serde_json::Value, String) {
    let resp = browser.post(path, fields);
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_eq!(resp.header("Content-Type"), Some("application/json"));
    let started: serde_json::Value = resp.json();
    let ceremony = started["ceremony"]
        .as_str()
        .expect("a sealed ceremony")
        .to_string();
    (started["publicKey"].clone(), ceremony)
}

fn ceremonies_stored() -> i64 {
    db().query_one("SELECT count(*) FROM webauthn_ceremonies", &[])
        .unwrap()
        .get(0)
}

#[test]
fn passkey_ceremonies_name_the_console_and_require_the_persons_verification() {
    let email = person(Some(&new_org()), Role::Member);
    let browser = Browser::signed_in(&email);
    let token = browser.token();
    let (made, _) = options(
        &browser,
        "/second-factors/passkey/options",
        &[("csrf", &token)],
    );
    assert_eq!(made["rp"]["id"], "console.test", "{made}");
    assert_eq!(made["user"]["name"], email.as_str(), "{made}");
    assert_eq!(
        made["authenticatorSelection"]["userVerification"], "required",
        "{made}"
    );
    assert_eq!(made["authenticatorSelection"]["residentKey"], "required");
    assert!(made["challenge"].as_str().is_some_and(|c| c.len() >= 22));
    assert_eq!(
        browser.post("/second-factors/passkey/options", &[]).status,
        403,
        "a registration needs the session's form token"
    );

    let (asked, _) = options(&Browser::new(), "/sign-in/passkey/options", &[]);
    assert_eq!(asked["userVerification"], "required", "{asked}");
    assert_eq!(asked["rpId"], "console.test", "{asked}");
}

#[test]
fn starting_passkey_ceremonies_stores_nothing() {
    let mut ceremonies = Vec::new();
    for _ in 0..50 {
        let (_, ceremony) = options(&Browser::new(), "/sign-in/passkey/options", &[]);
        ceremonies.push(ceremony);
    }
    ceremonies.sort();
    ceremonies.dedup();
    assert_eq!(ceremonies.len(), 50, "each start its own ceremony");
    let email = person(Some(&new_org()), Role::Member);
    let browser = Browser::signed_in(&email);
    let token = browser.token();
    options(
        &browser,
        "/second-factors/passkey/options",
        &[("csrf", &token)],
    );
    assert_eq!(
        ceremonies_stored(),
        0,
        "a ceremony travels sealed, stored nowhere"
    );
}

#[test]
fn a_passkey_answer_that_does_not_verify_is_refused_and_counted_as_a_failed_sign_in() {
    let visitor = Browser::new();
    let (asked, ceremony) = options(&visitor, "/sign-in/passkey/options", &[]);
    let challenge = asked["challenge"].as_str().unwrap().to_string();
    let client_data = serde_json::json!({
        "type": "webauthn.get", "challenge": challenge, "origin": ORIGIN, "crossOrigin": false
    });
    let b64 = |bytes: &[u8]| {
        use base64::Engine;
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
    };
    let forged = serde_json::json!({
        "id": b64(b"no such passkey"), "rawId": b64(b"no such passkey"), "type": "public-key",
        "response": {
            "clientDataJSON": b64(client_data.to_string().as_bytes()),
            "authenticatorData": b64(&[0u8; 37]),
            "signature": b64(&[1u8; 64]),
            "userHandle": b64(&[2u8; 64]),
        },
        "clientExtensionResults": {}, "authenticatorAttachment": "platform"
    })
    .to_string();
    let mut statuses = Vec::new();
    let forged_ceremony = format!("{ceremony}0");
    let answers = [
        (forged.as_str(), ceremony.as_str()),
        (forged.as_str(), forged_ceremony.as_str()),
        (forged.as_str(), ""),
        ("not json", ceremony.as_str()),
        ("", ""),
    ];
    for (answer, ceremony) in answers {
        let resp = visitor.post(
            "/sign-in/passkey",
            &[("credential", answer), ("ceremony", ceremony)],
        );
        assert!(resp.text().contains("passkey"), "{}", resp.text());
        assert!(crate::console_fixtures::session_cookie(&resp).is_none());
        statuses.push(resp.status);
    }
    assert_eq!(statuses, [422; 5]);
    for _ in 5..30 {
        visitor.post("/sign-in/passkey", &[("credential", "x")]);
    }
    let resp = visitor.post("/sign-in/passkey", &[("credential", &forged)]);
    assert_eq!(resp.status, 429, "the address's failed sign-ins are full");
    let resp = visitor.post("/sign-in/passkey/options", &[]);
    assert_eq!(resp.status, 429, "nor does it start a ceremony");
}

#[test]
fn a_person_with_a_passkey_is_asked_for_a_factor_after_the_password() {
    let email = person(Some(&new_org()), Role::Member);
    let mut first = Device::new();
    assert_eq!(
        first.sign_in(&email, PASSWORD).header("Location"),
        Some("/")
    );
    db().execute(
        "INSERT INTO passkeys (credential_id, person_id, user_handle, static_state, dynamic_state)
         SELECT '\\x01'::bytea, id, '\\x02'::bytea, '\\x03'::bytea, '\\x04'::bytea
           FROM persons WHERE email = $1",
        &[&email],
    )
    .unwrap();
    let mut waiting = Waiting::start(&email);
    let page = waiting.page().text();
    assert!(page.contains("data-passkey=\"get\""), "{page}");
    assert_eq!(waiting.give("123456").status, 422);
    let (ok, out, stderr) = admin_people(&["user", "reset", "--email", &email, "--second-factors"]);
    assert!(ok, "{stderr}");
    assert_eq!(out["second_factors_removed"], true);
    assert_eq!(rows_of("passkeys", &email), 0);
}
