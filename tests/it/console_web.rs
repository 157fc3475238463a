//! The web console over real HTTP: hosts, security headers, sign-in and sessions, the form
//! token and origin checks, one-time links, members and their owners-only rules.

use crate::console_fixtures::{
    admin_people, assert_labelled, assert_refusal, assert_secured, console, new_org, org_id,
    person, role_of, session_cookie, support_person, Browser, COOKIE, ORIGIN, PASSWORD,
};
use crate::harness::{db, server, start_server, tenant, Client, Resp, LEGACY_HOST};
use agentcard::db::people;
use agentcard::domain::{Email, Role};
use agentcard::ops::{self, members, Actor, Caller};
use agentcard::{auth, ids};

/// The limits on failed sign-ins: per email, and per address (shared with `/v1`).
const FAILED_SIGN_IN_PER_EMAIL: usize = 10;
const FAILED_AUTH_PER_IP: usize = 30;
/// The refusal of a form without the session's form token.
const STALE_FORM: &str = "this form is out of date or not from your session: reload the page \
                          and send it again (nothing was changed)";
/// The refusal of a form sent from another origin.
const FOREIGN_FORM: &str =
    "this form was not sent from the console&#39;s own pages: nothing was changed";
/// The refusal of a one-time link unknown, used or expired.
const DEAD_LINK: &str = "this link is unknown, used or expired: ask for a new one";
/// The refusal of the sign-ins beyond the failures of an address or an email.
const TOO_MANY: &str = "Too many failed attempts came from your address, or for this email, in \
                        the last minute: nothing was done. Wait a minute, then try again.";
/// The refusal of an object absent or of another organisation.
/// The 404 page's sentence (its heading is "Not found": the sentence says more).
const NOT_FOUND: &str =
    "There is no such page, or it is not open to you: check the address, or start again from the console.";
/// The refusal a member meets on an owners' page.
const OWNERS_ONLY: &str = "this is for the organisation&#39;s owners only: ask an owner";

/// Asserts the sign-in page's answer to a wrong email or password: `422`, said at the password.
#[track_caller]
fn assert_wrong_password(resp: &Resp) {
    assert_eq!(resp.status, 422, "{}", resp.text());
    let said = "<span class=\"error\" id=\"password-error\">wrong email or password</span>";
    assert!(resp.text().contains(said), "{}", resp.text());
}

/// The CLI acting in an organisation the tests hold as text.
fn cli_in(org: &str) -> Caller {
    ops::orgs::open(&mut db(), &org_id(org), Actor::Cli).unwrap()
}

#[test]
fn the_console_is_served_on_the_console_host_only() {
    let page = console().get("/sign-in");
    assert_eq!(page.status, 200);
    assert!(page
        .text()
        .contains("<form method=\"post\" action=\"/sign-in\""));
    for host in ["api.test", LEGACY_HOST] {
        for path in ["/sign-in", "/", "/console.css", "/members"] {
            let other = Client::new(server().addr).host(host).get(path);
            assert_eq!(
                (other.status, other.code()),
                (404, "not_found".to_string()),
                "{host}{path}"
            );
            assert!(
                other.header("Content-Security-Policy").is_none(),
                "{host}{path}"
            );
        }
    }
    // The console host still refuses the management API and the fragment endpoint.
    assert_eq!(console().get("/v1/me").code(), "not_found");
    let fragment = console().get("/fragment");
    assert_eq!(
        (fragment.status, fragment.code()),
        (404, "not_found".to_string())
    );
}

#[test]
fn every_console_answer_is_secured() {
    let answers = [
        ("sign-in page", console().get("/sign-in")),
        ("home, signed out", console().get("/")),
        ("style sheet", console().get("/console.css")),
        ("script", console().get("/console.js")),
        ("unknown page", console().get("/nothing/here")),
        (
            "wrong method",
            console().request("DELETE", "/sign-in", &[], None),
        ),
    ];
    for (what, resp) in &answers {
        assert_secured(resp, what);
    }
    let [_, home, css, script, unknown, wrong] = answers.map(|(_, r)| r);
    assert_eq!(
        (home.status, home.header("Location")),
        (303, Some("/sign-in"))
    );
    assert_eq!(css.header("Content-Type"), Some("text/css; charset=utf-8"));
    assert_eq!(
        script.header("Content-Type"),
        Some("text/javascript; charset=utf-8")
    );
    assert!(script.text().contains("data-copy"));
    assert_refusal(&unknown, 404, NOT_FOUND);
    assert_eq!(
        (wrong.status, wrong.header("Allow")),
        (405, Some("GET, HEAD, POST"))
    );
}

#[test]
fn pages_label_every_input() {
    let page = console().get("/sign-in").text();
    for id in ["email", "password"] {
        assert!(page.contains(&format!("<label for=\"{id}\">")), "{id}");
        assert!(page.contains(&format!("<input id=\"{id}\"")), "{id}");
    }
    // No inline script: only our own file (the passkey's button); the form works without it.
    for (at, _) in page.match_indices("<script") {
        assert!(
            page[at..].starts_with("<script src=\"/console.js\""),
            "{page}"
        );
    }
}

/// The person's sessions in the database, oldest first.
fn sessions_of(email: &str) -> Vec<i64> {
    db().query(
        "SELECT s.id FROM sessions s JOIN persons p ON p.id = s.person_id
          WHERE lower(p.email) = lower($1) ORDER BY s.id",
        &[&email],
    )
    .unwrap()
    .iter()
    .map(|r| r.get(0))
    .collect()
}

#[test]
fn sign_in_sets_a_safe_cookie_stored_as_a_hash_and_sign_out_ends_it() {
    let org = new_org();
    let email = person(Some(&org), Role::Member);
    let mut browser = Browser::new();
    let signed = browser.sign_in(&email, PASSWORD);
    assert_secured(&signed, "sign-in");
    assert_eq!((signed.status, signed.header("Location")), (303, Some("/")));
    let cookie = signed.header("Set-Cookie").unwrap();
    for attribute in [
        "Path=/",
        "HttpOnly",
        "SameSite=Lax",
        "Secure",
        "Max-Age=2592000",
    ] {
        assert!(cookie.contains(attribute), "{cookie} lacks {attribute}");
    }
    let secret = browser.cookie.clone().unwrap();
    let stored: Vec<u8> = db()
        .query_one(
            "SELECT secret_hash FROM sessions s JOIN persons p ON p.id = s.person_id
              WHERE p.email = $1",
            &[&email],
        )
        .unwrap()
        .get(0);
    assert_eq!(stored, auth::hash(&secret).to_vec());

    let home = browser.get("/");
    assert_eq!(home.status, 200);
    assert!(home.text().contains(&email) && home.text().contains("Your role: member"));
    assert_eq!(browser.get("/sign-in").header("Location"), Some("/"));

    let out = browser.write("/sign-out", &[]);
    assert_eq!(
        (out.status, out.header("Location")),
        (303, Some("/sign-in?notice=signed-out"))
    );
    assert!(out.header("Set-Cookie").unwrap().contains("Max-Age=0"));
    assert!(sessions_of(&email).is_empty());
    let said = browser.get("/sign-in?notice=signed-out").text();
    assert!(said.contains("You are signed out."), "{said}");
    assert_eq!(browser.get("/").header("Location"), Some("/sign-in"));
}

#[test]
fn a_wrong_password_and_an_unknown_email_get_the_same_answer() {
    let email = person(None, Role::Member);
    let answers: Vec<Resp> = [
        (email.as_str(), "wrong password!"),
        ("nobody@example.org", PASSWORD),
    ]
    .iter()
    .map(|(e, p)| {
        let mut browser = Browser::new();
        let resp = browser.sign_in(e, p);
        assert!(resp.header("Set-Cookie").is_none());
        resp
    })
    .collect();
    let shown = |r: &Resp| {
        r.text()
            .replace(&email, "EMAIL")
            .replace("nobody@example.org", "EMAIL")
    };
    assert_wrong_password(&answers[0]);
    assert_eq!(answers[0].status, answers[1].status);
    assert_eq!(shown(&answers[0]), shown(&answers[1]));
    let page = answers[0].text();
    assert!(
        page.contains("aria-describedby=\"password-error\""),
        "{page}"
    );
    assert!(page.contains("id=\"password-error\">wrong email or password<"));
    assert!(sessions_of(&email).is_empty());
}

#[test]
fn failed_sign_ins_are_limited_per_email_from_any_address() {
    let email = person(None, Role::Member);
    for _ in 0..FAILED_SIGN_IN_PER_EMAIL {
        assert_wrong_password(&Browser::new().sign_in(&email, "wrong password!"));
    }
    // From yet another address, even with the right password: refused without a check.
    let refused = Browser::new().sign_in(&email.to_uppercase(), PASSWORD);
    assert_eq!(
        (refused.status, refused.header("Retry-After")),
        (429, Some("60"))
    );
    assert_refusal(&refused, 429, TOO_MANY);
    let other = person(None, Role::Member);
    assert_eq!(Browser::new().sign_in(&other, PASSWORD).status, 303);
}

#[test]
fn failed_sign_ins_count_toward_the_address_failed_authentications_of_v1() {
    let mut browser = Browser::new();
    for n in 0..FAILED_AUTH_PER_IP {
        let resp = browser.sign_in(&format!("nobody{n}@example.org"), "wrong password!");
        assert_wrong_password(&resp);
    }
    assert_refusal(
        &browser.sign_in("else@example.org", PASSWORD),
        429,
        TOO_MANY,
    );
    // The same address on /v1, with a token of the right form, is refused as well.
    let api = browser
        .client
        .clone()
        .host("api.test")
        .token(&format!("svc_mgmt_{}", "0".repeat(40)));
    assert_eq!(api.get("/v1/me").code(), "rate_limited");
}

#[test]
fn a_session_ends_after_12_hours_idle_or_30_days_in_all() {
    let org = new_org();
    for (column, age, ends) in [
        ("last_seen_at", "11 hours 58 minutes", false),
        ("last_seen_at", "12 hours 1 minute", true),
        ("created_at", "29 days 23 hours", false),
        ("created_at", "30 days 1 minute", true),
    ] {
        let email = person(Some(&org), Role::Member);
        let browser = Browser::signed_in(&email);
        db().execute(
            &format!(
                "UPDATE sessions SET {column} = now() - interval '{age}'
                  WHERE person_id = (SELECT id FROM persons WHERE email = $1)"
            ),
            &[&email],
        )
        .unwrap();
        assert_eq!(browser.is_signed_in(), !ends, "{column} {age}");
    }
}

#[test]
fn a_person_lists_their_sessions_and_signs_out_the_others() {
    let org = new_org();
    let email = person(Some(&org), Role::Member);
    let (here, elsewhere, third) = (
        Browser::signed_in(&email),
        Browser::signed_in(&email),
        Browser::signed_in(&email),
    );
    let page = here.get("/sessions").text();
    assert_eq!(page.matches(">Unknown browser</td>").count(), 3, "{page}");
    assert_eq!(page.matches("this session").count(), 1);
    let done = here.write("/sessions/end-others", &[]);
    assert_eq!(
        done.header("Location"),
        Some("/sessions?notice=others-ended")
    );
    assert!(here.is_signed_in());
    assert!(!elsewhere.is_signed_in() && !third.is_signed_in());
    assert_eq!(sessions_of(&email).len(), 1);
    assert!(here
        .get("/sessions?notice=others-ended")
        .text()
        .contains("Your other sessions have ended."));
}

#[test]
fn a_password_change_ends_every_session() {
    let org = new_org();
    let email = person(Some(&org), Role::Member);
    let mut here = Browser::signed_in(&email);
    let elsewhere = Browser::signed_in(&email);
    let new = "a brand new password";

    let wrong = here.write(
        "/password",
        &[("current_password", "not it at all"), ("new_password", new)],
    );
    assert_eq!(wrong.status, 422);
    assert!(wrong
        .text()
        .contains("aria-describedby=\"current_password-error\""));
    let short = here.write(
        "/password",
        &[("current_password", PASSWORD), ("new_password", "short")],
    );
    assert_eq!(short.status, 422);
    assert!(short
        .text()
        .contains("id=\"new_password-error\">a password has 10 to 128 characters<"));
    assert!(elsewhere.is_signed_in(), "a refused change changes nothing");

    let old_cookie = here.cookie.clone();
    let changed = here.write(
        "/password",
        &[("current_password", PASSWORD), ("new_password", new)],
    );
    assert_eq!(changed.status, 303, "{}", changed.text());
    here.cookie = session_cookie(&changed);
    assert_ne!(here.cookie, old_cookie);
    assert!(here.is_signed_in());
    assert!(!elsewhere.is_signed_in());
    assert_eq!(sessions_of(&email).len(), 1);
    assert_wrong_password(&Browser::new().sign_in(&email, PASSWORD));
    assert_eq!(Browser::new().sign_in(&email, new).status, 303);
}

#[test]
fn v1_never_reads_the_console_cookie() {
    let t = tenant();
    let email = person(Some(&t.org_id), Role::Owner);
    let browser = Browser::signed_in(&email);
    let cookie = format!("{COOKIE}={}", browser.cookie.clone().unwrap());
    let api = Client::new(server().addr).ip(&crate::harness::next_client_ip());
    let resp = api.request("GET", "/v1/me", &[("Cookie", &cookie)], None);
    assert_eq!(resp.code(), "missing_token");
    // With a token of another organisation, the cookie's person changes nothing either.
    let other = tenant();
    let resp = other
        .client
        .request("GET", "/v1/me", &[("Cookie", &cookie)], None);
    assert_eq!(resp.status, 200);
    assert_eq!(resp.json()["account"]["id"], other.org_id.as_str());
}

#[test]
fn the_cookie_is_not_secure_on_a_plain_http_localhost_console_only() {
    let own = start_server(
        &server().database_url,
        &[
            ("AGENTCARD_CONSOLE_HOST", "console.localhost"),
            ("AGENTCARD_CONSOLE_URL", "http://console.localhost:8080"),
        ],
    );
    let addr = own.addr;
    let email = person(None, Role::Member);
    let form = format!(
        "email={}&password={}",
        email.replace('@', "%40"),
        PASSWORD.replace(' ', "+")
    );
    let resp = Client::new(addr).host("console.localhost").request(
        "POST",
        "/sign-in",
        &[
            ("Origin", "http://console.localhost:8080"),
            ("Content-Type", "application/x-www-form-urlencoded"),
        ],
        Some(form.as_bytes()),
    );
    let cookie = resp.header("Set-Cookie").unwrap();
    assert!(
        cookie.contains("HttpOnly") && !cookie.contains("Secure"),
        "{cookie}"
    );
}

#[test]
fn an_https_console_keeps_browsers_to_https_a_plain_http_one_does_not() {
    // The test's server's console is https://console.test.
    for path in ["/sign-in", "/console.css", "/nothing/here"] {
        let resp = console().get(path);
        assert_eq!(
            resp.header("Strict-Transport-Security"),
            Some("max-age=31536000"),
            "{path}"
        );
    }
    let own = start_server(
        &server().database_url,
        &[("AGENTCARD_CONSOLE_HOST", "console.localhost")],
    );
    for path in ["/sign-in", "/console.css", "/nothing/here"] {
        let resp = Client::new(own.addr).host("console.localhost").get(path);
        assert_secured(&resp, path);
        assert_eq!(resp.header("Strict-Transport-Security"), None, "{path}");
    }
}

/// Whether the browsers' sessions are still there: what a refused write must not change.
fn still_signed_in(browsers: &[&Browser]) -> bool {
    browsers.iter().all(|b| b.is_signed_in())
}

#[test]
fn a_write_without_this_session_form_token_is_refused_and_changes_nothing() {
    let org = new_org();
    let email = person(Some(&org), Role::Member);
    let here = Browser::signed_in(&email);
    let elsewhere = Browser::signed_in(&email);
    let other_person = Browser::signed_in(&person(Some(&org), Role::Member));
    let foreign_token = other_person.token();
    let cases: [(&str, Vec<(&str, &str)>); 4] = [
        ("no token", vec![]),
        ("empty token", vec![("csrf", "")]),
        ("another session's token", vec![("csrf", &foreign_token)]),
        (
            "a token of the wrong length",
            vec![("csrf", &foreign_token[..63])],
        ),
    ];
    for (what, fields) in cases {
        let resp = here.post("/sessions/end-others", &fields);
        assert_refusal(&resp, 403, STALE_FORM);
        assert!(still_signed_in(&[&here, &elsewhere]), "{what}");
    }
    // Even the own session's token of another browser of the same person.
    let resp = here.post("/sessions/end-others", &[("csrf", &elsewhere.token())]);
    assert_refusal(&resp, 403, STALE_FORM);
    assert!(still_signed_in(&[&here, &elsewhere]));
    // A password change, refused likewise, leaves the password as it was.
    let fields = [
        ("current_password", PASSWORD),
        ("new_password", "another new password"),
    ];
    assert_refusal(&here.post("/password", &fields), 403, STALE_FORM);
    assert_eq!(Browser::new().sign_in(&email, PASSWORD).status, 303);
}

#[test]
fn a_write_from_another_origin_is_refused_and_changes_nothing() {
    let org = new_org();
    let email = person(Some(&org), Role::Member);
    let here = Browser::signed_in(&email);
    let elsewhere = Browser::signed_in(&email);
    let token = here.token();
    let fields = [("csrf", token.as_str())];
    let refused: [&[(&str, &str)]; 7] = [
        &[("Origin", "https://evil.example")],
        &[("Origin", "http://console.test")],
        &[("Origin", "null")],
        &[],
        &[("Sec-Fetch-Site", "cross-site")],
        &[("Origin", "null"), ("Sec-Fetch-Site", "cross-site")],
        &[
            ("Origin", "https://evil.example"),
            ("Sec-Fetch-Site", "same-origin"),
        ],
    ];
    for headers in refused {
        let resp = here.post_with("/sessions/end-others", &fields, headers);
        assert_refusal(&resp, 403, FOREIGN_FORM);
        assert!(still_signed_in(&[&here, &elsewhere]), "{headers:?}");
    }
    // A foreign origin cannot sign anyone in either (login CSRF).
    let resp = Browser::new().post_with(
        "/sign-in",
        &[("email", &email), ("password", PASSWORD)],
        &[("Origin", "https://evil.example")],
    );
    assert_eq!((resp.status, resp.header("Set-Cookie")), (403, None));
    // A browser that hides the origin (none, or `null` as Chromium sends under the console's
    // `Referrer-Policy: no-referrer`) but says the request is same-origin is let through.
    for hidden in [None, Some("null")] {
        let elsewhere = Browser::signed_in(&email);
        let mut headers = vec![("Sec-Fetch-Site", "same-origin")];
        headers.extend(hidden.map(|origin| ("Origin", origin)));
        let resp = here.post_with("/sessions/end-others", &fields, &headers);
        assert_eq!(resp.status, 303, "{headers:?}");
        assert!(!elsewhere.is_signed_in(), "{headers:?}");
    }
}

#[test]
fn writes_are_posts_only() {
    let email = person(Some(&new_org()), Role::Member);
    let browser = Browser::signed_in(&email);
    for path in ["/sign-out", "/sessions/end-others", "/org"] {
        let resp = browser.get(path);
        assert_eq!(
            (resp.status, resp.header("Allow")),
            (405, Some("POST")),
            "{path}"
        );
    }
    assert!(browser.is_signed_in());
}

/// The secret of a link (the last segment of its URL).
fn link_secret(link: &str) -> String {
    let origin_and_path = format!("{ORIGIN}/link/");
    link.strip_prefix(&origin_and_path)
        .unwrap_or_else(|| panic!("a console link: {link}"))
        .to_string()
}

/// The link an answer shows in its "shown once" box.
fn shown_link(resp: &Resp) -> String {
    let page = resp.text();
    let at = page.find("id=\"new-link\">").expect("a link shown") + 14;
    let end = page[at..].find('<').unwrap();
    page[at..at + end].to_string()
}

fn console_url() -> agentcard::config::ConsoleUrl {
    server().app.config.console_url.clone().unwrap()
}

fn person_id(email: &str) -> String {
    db().query_one(
        "SELECT id FROM persons WHERE lower(email) = lower($1)",
        &[&email],
    )
    .unwrap()
    .get(0)
}

#[test]
fn an_owner_invites_and_the_link_works_once_for_a_new_person() {
    let org = new_org();
    let owner = Browser::signed_in(&person(Some(&org), Role::Owner));
    let newcomer = format!("{}@example.org", ids::new_id("new_"));
    let made = owner.create(
        "/members",
        "/members/invite",
        &[("email", &newcomer), ("role", "member")],
    );
    assert_eq!(made.status, 200, "{}", made.text());
    assert_secured(&made, "invitation shown");
    let link = shown_link(&made);
    let secret = link_secret(&link);
    // Shown once: the members page lists the invitation, never its link; only a hash is kept.
    let members = owner.get("/members").text();
    assert!(members.contains(&newcomer) && !members.contains(&secret));
    let stored: Vec<u8> = db()
        .query_one(
            "SELECT secret_hash FROM one_time_links WHERE email = $1",
            &[&newcomer],
        )
        .unwrap()
        .get(0);
    assert_eq!(stored, auth::hash(&secret).to_vec());

    let visitor = Browser::new();
    let path = format!("/link/{secret}");
    let form = visitor.get(&path);
    assert_eq!(form.status, 200);
    assert!(form.text().contains("<label for=\"new_password\">"));
    assert_eq!(
        visitor.get(&path).status,
        200,
        "reading the page uses nothing"
    );
    let short = visitor.post(&path, &[("new_password", "short")]);
    assert_eq!(short.status, 422);
    assert!(short
        .text()
        .contains("aria-describedby=\"new_password-error\""));
    let used = visitor.post(&path, &[("new_password", "my own new password")]);
    assert_eq!(used.status, 303, "{}", used.text());
    let mut joined = Browser::new();
    joined.cookie = session_cookie(&used);
    let home = joined.get("/");
    assert!(home.text().contains("Your role: member"), "{}", home.text());
    assert_eq!(role_of(&org, &newcomer).as_deref(), Some("member"));

    for resp in [
        visitor.get(&path),
        visitor.post(&path, &[("new_password", "another password!")]),
    ] {
        assert_refusal(&resp, 410, DEAD_LINK);
    }
    assert_eq!(
        Browser::new()
            .sign_in(&newcomer, "my own new password")
            .status,
        303
    );
}

#[test]
fn an_invitation_for_a_person_who_has_a_password_is_not_accepted_by_whoever_holds_the_link() {
    let (first, second) = (new_org(), new_org());
    let email = person(Some(&first), Role::Member);
    let link = members::invite(
        &mut db(),
        &cli_in(&second),
        &console_url(),
        &Email::parse(&email.to_uppercase()).unwrap(),
        Role::Owner,
    )
    .unwrap();
    let path = format!("/link/{}", link_secret(&link));
    let visitor = Browser::new();
    let refused = visitor.post(&path, &[]);
    assert_eq!(refused.status, 422, "{}", refused.text());
    let invited = email.to_uppercase();
    let said = format!(
        "<h1>Not done: a value was refused</h1>\n<p role=\"alert\">this invitation is for \
         {invited}, who has a password: sign in as {invited}, then open the link again</p>"
    );
    assert!(refused.text().contains(&said), "{}", refused.text());
    assert_eq!(role_of(&second, &email), None, "nobody joined");
    // The link stays live for its invitee, who accepts it signed in (ops::members::join).
    assert_eq!(visitor.get(&path).status, 200);
}

#[test]
fn links_expire_after_7_days() {
    let org = new_org();
    let url = console_url();
    let address = format!("{}@example.org", ids::new_id("later_"));
    let email = Email::parse(&address).unwrap();
    for (age, works) in [("7 days 1 minute", false), ("6 days 23 hours", true)] {
        let link = members::invite(&mut db(), &cli_in(&org), &url, &email, Role::Member).unwrap();
        let secret = link_secret(&link);
        let hash = auth::hash(&secret).to_vec();
        let lifetime: String = db()
            .query_one(
                "UPDATE one_time_links SET created_at = created_at - $2::text::interval,
                        expires_at = expires_at - $2::text::interval
                  WHERE secret_hash = $1 RETURNING (expires_at - created_at)::text",
                &[&hash, &age],
            )
            .unwrap()
            .get(0);
        assert_eq!(lifetime, "7 days");
        let page = Browser::new().get(&format!("/link/{secret}"));
        assert_eq!(page.status == 200, works, "{age}");
        let used = Browser::new().post(
            &format!("/link/{secret}"),
            &[("new_password", "a password of mine")],
        );
        assert_eq!(used.status == 303, works, "{age}");
    }
    assert_eq!(role_of(&org, &address).as_deref(), Some("member"));
}

#[test]
fn a_reset_link_sets_a_new_password_and_ends_every_session() {
    let org = new_org();
    let email = person(Some(&org), Role::Member);
    let before = Browser::signed_in(&email);
    let found = people::find_by_email(&mut db(), &email).unwrap().unwrap();
    let link = members::password_link(&mut db(), &Actor::Cli, &console_url(), &found).unwrap();
    let path = format!("/link/{}", link_secret(&link));
    let used = Browser::new().post(&path, &[("new_password", "the reset password")]);
    assert_eq!(used.header("Location"), Some("/?notice=password-set"));
    assert!(!before.is_signed_in());
    assert_wrong_password(&Browser::new().sign_in(&email, PASSWORD));
    assert_eq!(
        Browser::new().sign_in(&email, "the reset password").status,
        303
    );
    let again = Browser::new().post(&path, &[("new_password", "x1234567890")]);
    assert_refusal(&again, 410, DEAD_LINK);
    assert_refusal(&Browser::new().get("/link/not-a-secret"), 410, DEAD_LINK);
}

#[test]
fn members_manage_nothing_of_the_members_even_by_direct_post() {
    let org = new_org();
    let owner_email = person(Some(&org), Role::Owner);
    let owner = Browser::signed_in(&owner_email);
    let member = Browser::signed_in(&person(Some(&org), Role::Member));
    let invited = owner.create(
        "/members",
        "/members/invite",
        &[("email", "pending@example.org"), ("role", "member")],
    );
    assert_eq!(invited.status, 200);
    let invitation: i64 = db()
        .query_one("SELECT id FROM one_time_links WHERE org_id = $1", &[&org])
        .unwrap()
        .get(0);
    let owner_id = person_id(&owner_email);
    let page = member.get(&format!("/members/{owner_id}/remove"));
    assert_refusal(&page, 403, OWNERS_ONLY);
    let refused = [
        (
            "/members/invite".to_string(),
            vec![("email", "x@example.org"), ("role", "owner")],
        ),
        (
            format!("/members/{owner_id}/role"),
            vec![("role", "member")],
        ),
        (format!("/members/{owner_id}/remove"), vec![]),
        (format!("/invitations/{invitation}/revoke"), vec![]),
    ];
    for (path, fields) in &refused {
        assert_refusal(&member.write(path, fields), 403, OWNERS_ONLY);
    }
    assert_eq!(role_of(&org, &owner_email).as_deref(), Some("owner"));
    let links: i64 = db()
        .query_one(
            "SELECT count(*) FROM one_time_links WHERE org_id = $1",
            &[&org],
        )
        .unwrap()
        .get(0);
    assert_eq!(links, 1, "no invitation made, none revoked");
}

#[test]
fn an_organisation_keeps_its_last_owner() {
    let org = new_org();
    let owner_email = person(Some(&org), Role::Owner);
    let owner = Browser::signed_in(&owner_email);
    let me = person_id(&owner_email);
    for (path, fields) in [
        (format!("/members/{me}/role"), vec![("role", "member")]),
        (format!("/members/{me}/remove"), vec![]),
    ] {
        let resp = owner.write(&path, &fields);
        assert_eq!(resp.status, 409, "{path}");
        assert!(resp.text().contains("keeps at least one owner"));
    }
    assert_eq!(role_of(&org, &owner_email).as_deref(), Some("owner"));

    // Two owners demoting each other at once: one of them stays owner.
    let other_email = person(Some(&org), Role::Owner);
    let other = Browser::signed_in(&other_email);
    let other_id = person_id(&other_email);
    let (a, b) = (owner.token(), other.token());
    let demote = |browser: &Browser, token: &str, whom: &str| {
        browser.post(
            &format!("/members/{whom}/role"),
            &[("csrf", token), ("role", "member")],
        )
    };
    std::thread::scope(|scope| {
        let first = scope.spawn(|| demote(&owner, &a, &other_id).status);
        let second = scope.spawn(|| demote(&other, &b, &me).status);
        let mut statuses = [first.join().unwrap(), second.join().unwrap()];
        statuses.sort();
        assert!(
            statuses == [303, 403] || statuses == [303, 409],
            "{statuses:?}"
        );
    });
    let owners: i64 = db()
        .query_one(
            "SELECT count(*) FROM memberships WHERE org_id = $1 AND role = 'owner'",
            &[&org],
        )
        .unwrap()
        .get(0);
    assert_eq!(owners, 1);
}

#[test]
fn an_owner_changes_roles_removes_members_and_revokes_invitations() {
    let org = new_org();
    let owner = Browser::signed_in(&person(Some(&org), Role::Owner));
    let member_email = person(Some(&org), Role::Member);
    let member = Browser::signed_in(&member_email);
    let member_id = person_id(&member_email);

    let promoted = owner.write(&format!("/members/{member_id}/role"), &[("role", "owner")]);
    assert_eq!(
        promoted.header("Location"),
        Some("/members?notice=role-changed")
    );
    assert_eq!(role_of(&org, &member_email).as_deref(), Some("owner"));
    assert_eq!(member.get("/members").status, 200, "an owner now");
    let bad_role = owner.write(&format!("/members/{member_id}/role"), &[("role", "admin")]);
    let roles = "role must be &#34;owner&#34;, &#34;member&#34; or &#34;viewer&#34;";
    assert_refusal(&bad_role, 422, roles);

    let removed = owner.write(&format!("/members/{member_id}/remove"), &[]);
    assert_eq!(removed.header("Location"), Some("/members?notice=removed"));
    assert_eq!(role_of(&org, &member_email), None);
    let no_organisation = "you belong to no organisation: ask an owner for an invitation";
    assert_refusal(&member.get("/members"), 403, no_organisation);
    let again = owner.write(&format!("/members/{member_id}/remove"), &[]);
    assert_refusal(&again, 404, NOT_FOUND);

    let made = owner.create(
        "/members",
        "/members/invite",
        &[("email", "revoked@example.org"), ("role", "owner")],
    );
    let secret = link_secret(&shown_link(&made));
    let id: i64 = db()
        .query_one(
            "SELECT id FROM one_time_links WHERE email = 'revoked@example.org' AND org_id = $1",
            &[&org],
        )
        .unwrap()
        .get(0);
    // Revoking goes through a confirmation page first, which names the invitation and
    // changes nothing.
    let members_page = owner.get("/members").text();
    assert!(
        members_page.contains(&format!("href=\"/invitations/{id}/revoke\"")),
        "{members_page}"
    );
    let confirm = owner.get(&format!("/invitations/{id}/revoke"));
    assert_eq!(confirm.status, 200, "{}", confirm.text());
    let text = confirm.text();
    assert!(
        text.contains("Revoke the invitation of revoked@example.org (owner)"),
        "{text}"
    );
    assert!(
        text.contains(&format!("action=\"/invitations/{id}/revoke\"")),
        "{text}"
    );
    assert_eq!(Browser::new().get(&format!("/link/{secret}")).status, 200);
    let revoked = owner.write(&format!("/invitations/{id}/revoke"), &[]);
    assert_eq!(
        revoked.header("Location"),
        Some("/members?notice=invitation-revoked")
    );
    assert_refusal(
        &Browser::new().get(&format!("/link/{secret}")),
        410,
        DEAD_LINK,
    );
    let again = owner.write(&format!("/invitations/{id}/revoke"), &[]);
    assert_refusal(&again, 404, NOT_FOUND);
}

#[test]
fn the_invite_form_shows_each_refusal_next_to_its_field() {
    let org = new_org();
    let owner_email = person(Some(&org), Role::Owner);
    let owner = Browser::signed_in(&owner_email);
    for (email, role, field, message) in [
        (
            "not an email",
            "member",
            "email",
            "enter an email address: a name, one @, and a domain with a dot, without spaces, \
             like name@example.com",
        ),
        (
            "x@example.org",
            "boss",
            "role",
            "role must be &#34;owner&#34;, &#34;member&#34; or &#34;viewer&#34;",
        ),
        (
            owner_email.as_str(),
            "member",
            "email",
            "this person is already a member of the organisation",
        ),
    ] {
        let resp = owner.create(
            "/members",
            "/members/invite",
            &[("email", email), ("role", role)],
        );
        assert_eq!(resp.status, 422, "{email} {role}");
        let page = resp.text();
        assert!(
            page.contains(&format!("aria-describedby=\"{field}-error\"")),
            "{page}"
        );
        assert!(
            page.contains(&format!(
                "id=\"{field}-error\" data-field=\"{field}\">{message}<"
            )),
            "{page}"
        );
    }
}

#[test]
fn a_person_in_several_organisations_switches_between_them() {
    let (first, second, foreign) = (new_org(), new_org(), new_org());
    let email = person(Some(&first), Role::Member);
    people::add_membership(
        &mut db(),
        &org_id(&second),
        &agentcard::ids::PersonId::parse(&person_id(&email)).unwrap(),
        Role::Owner,
    )
    .unwrap();
    let browser = Browser::signed_in(&email);
    let chosen = browser.write("/org", &[("org", &second)]);
    assert_eq!(chosen.header("Location"), Some("/"));
    let home = browser.get("/").text();
    assert!(home.contains(&format!("<code>{second}</code>")) && home.contains("Your role: owner"));
    let refused = browser.write("/org", &[("org", &foreign)]);
    assert_refusal(&refused, 404, NOT_FOUND);
    assert!(browser.get("/").text().contains(&second));
}

#[test]
fn support_staff_open_every_organisation_as_owners() {
    let org = new_org();
    let owner_email = person(Some(&org), Role::Owner);
    let mut db = db();
    let email = support_person();
    let browser = Browser::signed_in(&email);
    assert_eq!(browser.write("/org", &[("org", &org)]).status, 303);
    let home = browser.get("/").text();
    assert!(home.contains("as the service's support"), "{home}");
    let members = browser.get("/members");
    assert_eq!(members.status, 200);
    assert!(members.text().contains(&owner_email));
    let invited = browser.create(
        "/members",
        "/members/invite",
        &[("email", "by-support@example.org"), ("role", "member")],
    );
    assert_eq!(invited.status, 200);
    let by: String = db
        .query_one(
            "SELECT created_by FROM one_time_links WHERE email = 'by-support@example.org'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(by, email);
}

#[test]
fn the_cli_makes_people_and_prints_their_links() {
    let org = new_org();
    let owner = format!("{}@example.org", ids::new_id("cli_"));
    let (ok, made, err) = admin_people(&[
        "user", "create", "--email", &owner, "--org", &org, "--role", "owner",
    ]);
    assert!(ok, "{err}");
    assert_eq!(
        (made["email"].as_str(), made["role"].as_str()),
        (Some(owner.as_str()), Some("owner"))
    );
    let path = format!("/link/{}", link_secret(made["link"].as_str().unwrap()));
    let set = Browser::new().post(&path, &[("new_password", "the owner's password")]);
    assert_eq!(set.status, 303, "{}", set.text());
    assert_eq!(role_of(&org, &owner).as_deref(), Some("owner"));

    let newcomer = format!("{}@example.org", ids::new_id("cli_"));
    let (ok, invited, err) =
        admin_people(&["member", "invite", "--org", &org, "--email", &newcomer]);
    assert!(ok, "{err}");
    assert_eq!(invited["role"], "member");
    let path = format!("/link/{}", link_secret(invited["link"].as_str().unwrap()));
    assert_eq!(
        Browser::new()
            .post(&path, &[("new_password", "the member's password")])
            .status,
        303
    );
    assert_eq!(role_of(&org, &newcomer).as_deref(), Some("member"));

    let (ok, reset, err) = admin_people(&["user", "reset", "--email", &owner.to_uppercase()]);
    assert!(ok, "{err}");
    let path = format!("/link/{}", link_secret(reset["link"].as_str().unwrap()));
    assert_eq!(
        Browser::new()
            .post(&path, &[("new_password", "a reset password")])
            .status,
        303
    );
    assert_eq!(
        Browser::new().sign_in(&owner, "a reset password").status,
        303
    );

    let support = format!("{}@support.example", ids::new_id("cli_"));
    let (ok, staff, err) = admin_people(&["user", "create", "--email", &support, "--support"]);
    assert!(ok, "{err}");
    assert_eq!(staff["support"], true);
}

#[test]
fn the_cli_refuses_what_the_console_refuses() {
    let org = new_org();
    let member = person(Some(&org), Role::Member);
    let cases: [(Vec<&str>, &str); 6] = [
        (
            vec!["user", "create", "--email", &member, "--support"],
            "exists already",
        ),
        (
            vec!["user", "create", "--email", "nope", "--support"],
            "enter an email address",
        ),
        (
            vec!["user", "create", "--email", "a@example.org"],
            "required",
        ),
        (
            vec!["user", "create", "--email", "a@example.org", "--org", &org],
            "--role",
        ),
        (
            vec!["member", "invite", "--org", &org, "--email", &member],
            "already a member",
        ),
        (
            vec![
                "member",
                "invite",
                "--org",
                "acc_none",
                "--email",
                "a@example.org",
            ],
            "not found",
        ),
    ];
    for (args, said) in cases {
        let (ok, _, err) = admin_people(&args);
        assert!(!ok && err.contains(said), "{args:?}: {err}");
    }
    let (ok, _, err) =
        crate::fixtures::agentcard(&["admin", "user", "reset", "--email", &member], &[]);
    assert!(!ok && err.contains("AGENTCARD_CONSOLE_HOST"), "{err}");
}

#[test]
fn every_page_is_secured_labelled_and_without_inline_script() {
    let org = new_org();
    let owner = Browser::signed_in(&person(Some(&org), Role::Owner));
    let invited = owner.create(
        "/members",
        "/members/invite",
        &[("email", "pages@example.org"), ("role", "member")],
    );
    let link = format!("/link/{}", link_secret(&shown_link(&invited)));
    let pages = [
        ("home", owner.get("/")),
        ("sessions", owner.get("/sessions")),
        ("password", owner.get("/password")),
        ("members", owner.get("/members")),
        ("invitation shown", invited),
        ("link", Browser::new().get(&link)),
        ("sign-in", Browser::new().get("/sign-in")),
        (
            "refused form",
            owner.write("/members/invite", &[("email", "x"), ("role", "member")]),
        ),
        ("forbidden", owner.post("/sessions/end-others", &[])),
        ("gone", Browser::new().get("/link/0")),
    ];
    for (what, resp) in &pages {
        assert_secured(resp, what);
        // No inline script or style: a script is only our own file, empty in the page.
        let page = resp.text();
        let own_script = "<script src=\"/console.js\" defer></script>";
        let scripts = page.matches("<script").count();
        assert_eq!(scripts, page.matches(own_script).count(), "{what}");
        assert!(!page.contains(" style="), "{what}");
        assert!(page.contains("<main id=\"main\""), "{what}");
        assert_labelled(&page, what);
    }
}

#[test]
fn the_demo_makes_its_owner_with_a_link_to_sign_in() {
    let (ok, demo, err) = admin_people(&["demo", "--format", "json"]);
    assert!(ok, "{err}");
    let console = &demo["console"];
    assert_eq!(console["url"], ORIGIN);
    let owner = console["owner"].as_str().unwrap();
    let link = console["set_password_link"].as_str().unwrap();
    let path = format!("/link/{}", link_secret(link));
    let set = Browser::new().post(&path, &[("new_password", "the demo owner's password")]);
    assert_eq!(set.status, 303);
    let org = demo["organisation"]["id"].as_str().unwrap();
    assert_eq!(role_of(org, owner).as_deref(), Some("owner"));
    let mut browser = Browser::new();
    assert_eq!(
        browser.sign_in(owner, "the demo owner's password").status,
        303
    );
    assert_eq!(browser.get("/members").status, 200);
    // A second demo organisation has the same owner, and a new link.
    let (ok, again, err) = admin_people(&["demo", "--format", "json"]);
    assert!(ok, "{err}");
    assert_eq!(again["console"]["owner"], owner);
    assert_ne!(again["console"]["set_password_link"], link);
}
