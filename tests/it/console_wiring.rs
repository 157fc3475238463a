//! Issue 34's rules on the console's pages, through real HTTP: secrets made once, invitations
//! accepted by their invitee signed in, device cookies at sign-in, mail, the audit log in words.

use crate::console_fixtures::{
    hidden, new_org, person, set_cookie_header, Browser, Device, DEVICE_COOKIE, ORIGIN, PASSWORD,
};
use crate::harness::db;
use agentcard::domain::Role;
/// The console's failed sign-ins per email a minute (decisions.md).
const FAILED_SIGN_IN_PER_EMAIL: usize = 10;
/// The hashes sign-ins from browsers unknown to the person may cause per email, a minute.
const UNKNOWN_BROWSER_HASHES_PER_EMAIL: usize = FAILED_SIGN_IN_PER_EMAIL;

fn count(sql: &str, org: &str) -> i64 {
    db().query_one(sql, &[&org]).unwrap().get(0)
}

#[test]
fn a_creating_form_sent_twice_makes_one_secret_and_says_it_was_shown() {
    let org = new_org();
    let owner = Browser::signed_in(&person(Some(&org), Role::Owner));
    for (page, action, fields, thing, made) in [
        (
            "/tokens",
            "/tokens",
            vec![("name", "reloaded")],
            "token",
            "SELECT count(*) FROM mgmt_tokens WHERE org_id = $1",
        ),
        (
            "/keys",
            "/keys",
            vec![("name", "reloaded")],
            "key",
            "SELECT count(*) FROM delivery_keys WHERE org_id = $1",
        ),
        (
            "/members",
            "/members/invite",
            vec![("email", "reloaded@example.org"), ("role", "member")],
            "invitation",
            "SELECT count(*) FROM one_time_links WHERE org_id = $1",
        ),
    ] {
        let form = owner.get(page).text();
        let once = hidden(&form, "once");
        let mut sent = vec![("csrf", owner.token()), ("once", once.clone())];
        sent.extend(fields.iter().map(|(n, v)| (*n, v.to_string())));
        let sent: Vec<(&str, &str)> = sent.iter().map(|(n, v)| (*n, v.as_str())).collect();
        let first = owner.post(action, &sent);
        assert_eq!(first.status, 200, "{thing}: {}", first.text());
        assert!(first.text().contains("class=\"secret\""), "{thing}");
        assert_ne!(hidden(&first.text(), "once"), once, "{thing}: a new value");
        // A reload of the answer posts the same form again.
        let again = owner.post(action, &sent);
        assert_eq!(again.status, 409, "{thing}: {}", again.text());
        let text = again.text();
        assert!(text.contains("sent already"), "{thing}: {text}");
        assert!(!text.contains("class=\"secret\""), "{thing}: {text}");
        assert_eq!(again.header("Cache-Control"), Some("no-store"));
        assert_eq!(count(made, &org), 1, "{thing}: one secret for one form");
        // Without a value, or with one of another form's, nothing is made either.
        let mut forged = sent.clone();
        forged.retain(|(n, _)| *n != "once");
        assert_eq!(owner.post(action, &forged).status, 409, "{thing}");
        assert_eq!(count(made, &org), 1, "{thing}");
    }
}

#[test]
fn a_browser_the_person_signed_in_from_is_not_locked_out_by_strangers() {
    let email = person(None, Role::Member);
    let mut own = Device::new();
    let resp = own.sign_in(&email, PASSWORD);
    assert_eq!(resp.status, 303);
    let issued = set_cookie_header(&resp, DEVICE_COOKIE)
        .expect("a device cookie at sign-in")
        .to_string();
    for attribute in [
        "Path=/",
        "Max-Age=31536000",
        "HttpOnly",
        "SameSite=Strict",
        "Secure",
    ] {
        assert!(issued.contains(attribute), "{issued}");
    }
    // Strangers, from addresses of their own, fill the email's budget of hashes for browsers
    // unknown to the person for this minute (its first was the person's sign-in above).
    for _ in 1..UNKNOWN_BROWSER_HASHES_PER_EMAIL {
        assert_eq!(
            Browser::new().sign_in(&email, "wrong password!").status,
            422
        );
    }
    let stranger = Browser::new().sign_in(&email, PASSWORD);
    assert_eq!(stranger.status, 429, "a browser without the cookie");
    let mut forged = Device::new();
    forged.cookie = Some("ab".repeat(32));
    assert_eq!(
        forged.sign_in(&email, PASSWORD).status,
        429,
        "a cookie of no one"
    );
    // The person's own browser still signs in, and its failures are not the email's.
    own.browser.cookie = None;
    assert_eq!(own.sign_in(&email, "wrong password!").status, 422);
    let back = own.sign_in(&email, PASSWORD);
    assert_eq!(back.status, 303, "{}", back.text());
    assert!(own.browser.is_signed_in());
    // Its device cookie is its person's only: another person's email is still limited.
    let other = person(None, Role::Member);
    for _ in 0..FAILED_SIGN_IN_PER_EMAIL {
        assert_eq!(
            Browser::new().sign_in(&other, "wrong password!").status,
            422
        );
    }
    assert_eq!(own.sign_in(&other, PASSWORD).status, 429);
}

/// An invitation of a new organisation for `email`, made by an owner in the console: the
/// organisation and the link's path.
fn invitation(email: &str) -> (String, String) {
    let org = new_org();
    let owner = Browser::signed_in(&person(Some(&org), Role::Owner));
    let made = owner.create(
        "/members",
        "/members/invite",
        &[("email", email), ("role", "member")],
    );
    assert_eq!(made.status, 200, "{}", made.text());
    let text = made.text();
    let at = text.find("/link/").expect("a link");
    (org, text[at..at + 6 + 64].to_string())
}

fn member_of(org: &str, email: &str) -> bool {
    let found = db()
        .query_opt(
            "SELECT 1 FROM memberships m JOIN persons p ON p.id = m.person_id
              WHERE m.org_id = $1 AND lower(p.email) = lower($2)",
            &[&org, &email],
        )
        .unwrap();
    found.is_some()
}

#[test]
fn an_invitation_for_a_person_with_a_password_asks_them_to_sign_in_and_return() {
    let invitee = person(None, Role::Member);
    let (org, link) = invitation(&invitee);

    // Not signed in: no button; a link to sign in that comes back here.
    let visitor = Browser::new();
    let page = visitor.get(&link).text();
    assert!(!page.contains("<button type=\"submit\">Join"), "{page}");
    let sign_in = format!("/sign-in?next={link}");
    assert!(page.contains(&format!("href=\"{sign_in}\"")), "{page}");
    let posted = visitor.post(&link, &[]);
    assert_eq!(
        posted.status,
        422,
        "whoever holds the link: {}",
        posted.text()
    );
    assert!(!member_of(&org, &invitee));

    // Signed in as someone else: said so, nothing joined, even by a direct post.
    let stranger = Browser::signed_in(&person(None, Role::Member));
    let page = stranger.get(&link).text();
    assert!(
        page.contains("You are signed in as") && !page.contains("Join</button>"),
        "{page}"
    );
    let token = stranger.token();
    let refused = stranger.post(&link, &[("csrf", &token)]);
    assert_eq!(refused.status, 422, "{}", refused.text());
    assert!(!member_of(&org, &invitee));

    // The invitee signs in from the link's sign-in page and comes back to it.
    let mut invited = Browser::new();
    let form = invited.get(&sign_in).text();
    assert_eq!(hidden(&form, "next"), link);
    let signed = invited.post(
        "/sign-in",
        &[("email", &invitee), ("password", PASSWORD), ("next", &link)],
    );
    assert_eq!(signed.status, 303);
    assert_eq!(signed.header("Location"), Some(link.as_str()));
    invited.cookie = crate::console_fixtures::session_cookie(&signed);
    let page = invited.get(&link).text();
    assert!(page.contains("Join</button>"), "{page}");
    // Without the session's form token, nothing.
    assert_eq!(invited.post(&link, &[]).status, 403);
    assert!(!member_of(&org, &invitee));
    let joined = invited.post(&link, &[("csrf", &invited.token())]);
    assert_eq!(joined.status, 303, "{}", joined.text());
    assert_eq!(joined.header("Location"), Some("/?notice=joined-org"));
    assert!(member_of(&org, &invitee));
    let home = invited.get("/?notice=joined-org").text();
    assert!(home.contains("You have joined the organisation"), "{home}");
    assert_eq!(invited.get(&link).status, 410, "used once");
}

#[test]
fn a_sign_in_returns_only_to_a_path_of_the_console() {
    for (next, location) in [
        ("/sessions", "/sessions"),
        ("https://evil.example/", "/"),
        ("//evil.example/x", "/"),
        ("/\\evil.example", "/"),
        ("/x?y=https://evil.example", "/"),
        ("javascript:alert(1)", "/"),
        ("%2F%2Fevil.example", "/"),
        ("/%2F%2Fevil.example", "/"),
        ("/%5Cevil.example", "/"),
        ("///evil.example", "/"),
        ("/\tevil.example", "/"),
        ("", "/"),
    ] {
        // A person each: the sign-ins of one email are limited per minute.
        let email = person(None, Role::Member);
        let mut browser = Browser::new();
        let page = browser
            .get(&format!("/sign-in?next={}", urlencode(next)))
            .text();
        assert_eq!(
            page.contains("name=\"next\""),
            location != "/",
            "{next}: {page}"
        );
        let resp = browser.post(
            "/sign-in",
            &[("email", &email), ("password", PASSWORD), ("next", next)],
        );
        assert_eq!(resp.status, 303, "{next}");
        assert_eq!(resp.header("Location"), Some(location), "{next}");
        browser.cookie = crate::console_fixtures::session_cookie(&resp);
        // Signed in already, the sign-in page goes on to the same place.
        let again = browser.get(&format!("/sign-in?next={}", urlencode(next)));
        assert_eq!(again.header("Location"), Some(location), "{next}");
    }
}

#[test]
fn a_page_asked_for_before_signing_in_is_where_the_sign_in_returns() {
    let email = person(None, Role::Member);
    let mut browser = Browser::new();
    for (asked, sign_in) in [
        ("/sessions", "/sign-in?next=/sessions"),
        ("/", "/sign-in"),
        // A path the sign-in would not return to is not carried.
    ] {
        let resp = browser.get(asked);
        assert_eq!(resp.status, 303, "{asked}");
        assert_eq!(resp.header("Location"), Some(sign_in), "{asked}");
    }
    let form = browser.get("/sign-in?next=/sessions").text();
    assert!(form.contains("name=\"next\""), "{form}");
    let resp = browser.post(
        "/sign-in",
        &[
            ("email", &email),
            ("password", PASSWORD),
            ("next", "/sessions"),
        ],
    );
    assert_eq!(resp.header("Location"), Some("/sessions"));
    browser.cookie = crate::console_fixtures::session_cookie(&resp);
    assert_eq!(browser.get("/sessions").status, 200);
}

fn urlencode(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

#[test]
fn an_invitation_for_a_new_person_still_sets_the_password() {
    let email = format!("{}@example.org", agentcard::ids::new_id("fresh_"));
    let (org, link) = invitation(&email);
    let visitor = Browser::new();
    let page = visitor.get(&link).text();
    assert!(page.contains("name=\"new_password\""), "{page}");
    let set = visitor.post(&link, &[("new_password", PASSWORD)]);
    assert_eq!(set.status, 303, "{}", set.text());
    assert!(member_of(&org, &email));
    assert_eq!(Browser::new().sign_in(&email, PASSWORD).status, 303);
}

/// The records of an RFC 4180 text (quoted cells may hold commas, quotes and line breaks).
pub fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let (mut records, mut record, mut cell) = (Vec::new(), Vec::new(), String::new());
    let (mut quoted, mut chars) = (false, text.chars().peekable());
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                cell.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => cell.push(c),
            (false, '"') => quoted = true,
            (false, ',') => record.push(std::mem::take(&mut cell)),
            (false, '\n') => {
                record.push(std::mem::take(&mut cell));
                records.push(std::mem::take(&mut record));
            }
            (false, c) => cell.push(c),
        }
    }
    records
}

#[test]
fn the_audit_page_reads_in_words_within_dates_and_downloads_as_csv() {
    use crate::fixtures::admin;
    let org = new_org();
    let owner_email = person(Some(&org), Role::Owner);
    let owner = Browser::signed_in(&owner_email);
    let made = owner.create("/keys", "/keys", &[("name", "edge, \"north\"")]);
    assert_eq!(made.status, 200);
    let card = crate::fixtures::card(Some(&org), agentcard::domain::CardStatus::Draft).id;
    let (ok, _, err) = admin(&["card", "set-status", &card, "active"]);
    assert!(ok, "{err}");
    // The key's creation happened on 15 January.
    db().execute(
        "UPDATE audit_log SET at = '2026-01-15T12:00:00Z'
          WHERE org_id = $1 AND operation = 'create_key'",
        &[&org],
    )
    .unwrap();

    let page = owner.get("/audit").text();
    let row = |what: &str| {
        let at = page.find(what).unwrap_or_else(|| panic!("{what}: {page}"));
        let start = page[..at].rfind("<tr>").unwrap();
        page[start..start + page[start..].find("</tr>").unwrap()].to_string()
    };
    let status = row("card status changed: status draft → active");
    assert!(status.contains("command line"), "{status}");
    let link = format!("<a href=\"/cards/{card}\">card Subscription offer ({card})</a>");
    assert!(status.contains(&link), "{status}");
    let key = row("key created");
    assert!(key.contains(&owner_email), "{key}");
    assert!(
        key.contains("<a href=\"/keys\">key edge, &#34;north&#34;"),
        "{key}"
    );
    assert!(!page.contains("set_card_status") && !page.contains("create_key"));
    // A deleted card keeps its entries as written, without a link to a page it no longer has.
    let gone = crate::fixtures::card(Some(&org), agentcard::domain::CardStatus::Draft).id;
    let (ok, _, err) = admin(&["card", "set-status", &gone, "active"]);
    assert!(ok, "{err}");
    db().execute("DELETE FROM cards WHERE id = $1", &[&gone])
        .unwrap();
    let page_now = owner.get("/audit").text();
    let kept = format!("card Subscription offer ({gone})");
    assert!(page_now.contains(&kept), "{page_now}");
    assert!(!page_now.contains(&format!("href=\"/cards/{gone}\"")));

    // A range of days, both included.
    let january = owner.get("/audit?from=2026-01-15&to=2026-01-15").text();
    assert!(
        january.contains("key created")
            && !january.contains("card status changed: status draft → active")
    );
    let after = owner.get("/audit?from=2026-01-16").text();
    assert!(
        !after.contains("key created")
            && after.contains("card status changed: status draft → active")
    );
    let before = owner.get("/audit?to=2026-01-14").text();
    assert!(before.contains("No entry."), "{before}");
    for edge in [
        "from=0001-01-01&to=9999-12-31",
        "from=2026-01-15&to=2026-01-15&actor=cli",
    ] {
        assert_eq!(owner.get(&format!("/audit?{edge}")).status, 200, "{edge}");
    }

    // Refused next to the field, and nothing read.
    for (query, field, says) in [
        ("from=2026-13-01", "from", "a date, as YYYY-MM-DD"),
        ("to=15/01/2026", "to", "a date, as YYYY-MM-DD"),
        (
            "from=2026-01-16&to=2026-01-15",
            "to",
            "the end is before the start",
        ),
    ] {
        let resp = owner.get(&format!("/audit?{query}"));
        assert_eq!(resp.status, 422, "{query}");
        let text = resp.text();
        let error = format!("<span class=\"error\" id=\"{field}-error\">{says}</span>");
        assert!(text.contains(&error), "{query}: {text}");
        assert!(
            !text.contains("card status changed: status draft → active"),
            "{query}"
        );
        let csv = owner.get(&format!("/audit.csv?{query}"));
        assert_eq!(csv.status, 422, "{query}");
    }

    // The CSV of the page's dates: what `admin audit` reads, in the same words.
    let page = owner.get("/audit?from=2026-01-01").text();
    let href = "/audit.csv?actor=&#38;from=2026-01-01&#38;to=";
    assert!(page.contains(&format!("href=\"{href}\"")), "{page}");
    let csv = owner.get(&href.replace("&#38;", "&"));
    assert_eq!(csv.status, 200, "{}", csv.text());
    assert_eq!(csv.header("Content-Type"), Some("text/csv; charset=utf-8"));
    assert_eq!(
        csv.header("Content-Disposition"),
        Some(format!("attachment; filename=\"audit-{org}.csv\"").as_str())
    );
    let records = parse_csv(&csv.text());
    assert_eq!(
        records[0],
        [
            "at",
            "who",
            "operation",
            "object_kind",
            "object_id",
            "object"
        ]
    );
    let (ok, cli, err) = admin(&["audit", "--org", &org]);
    assert!(ok, "{err}");
    let expected: Vec<Vec<String>> = cli["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let text = |m: &str| e[m].as_str().unwrap_or("").to_string();
            vec![
                text("who"),
                text("what"),
                text("object_kind"),
                text("object"),
                text("object_name"),
            ]
        })
        .collect();
    let got: Vec<Vec<String>> = records[1..].iter().map(|r| r[1..].to_vec()).collect();
    assert_eq!(got, expected);
    assert!(got.iter().any(|r| r[4] == "edge, \"north\""), "{got:?}");
}

#[test]
fn with_mail_invitations_are_mailed_and_a_forgotten_password_gets_a_link() {
    use crate::console_fixtures::{link_in, SmtpSink};
    use crate::harness::{server, start_server, CLIENT_IP_HEADER};
    let mut sink = SmtpSink::start();
    let url = sink.url();
    let own = start_server(
        &server().database_url,
        &[
            ("AGENTCARD_SMTP_URL", &url),
            ("AGENTCARD_CLIENT_IP_HEADER", CLIENT_IP_HEADER),
            ("AGENTCARD_TRUSTED_PROXIES", "127.0.0.0/8"),
        ],
    );
    let sign_in = Browser::on(own.addr).get("/sign-in").text();
    assert!(sign_in.contains("href=\"/forgot-password\""), "{sign_in}");

    // An invitation made in the console is mailed to its person, and shown as before.
    let org = new_org();
    let mut owner = Browser::on(own.addr);
    assert_eq!(
        owner
            .sign_in(&person(Some(&org), Role::Owner), PASSWORD)
            .status,
        303
    );
    let invitee = format!("{}@example.org", agentcard::ids::new_id("mailed_"));
    let made = owner.create(
        "/members",
        "/members/invite",
        &[("email", &invitee), ("role", "member")],
    );
    assert_eq!(made.status, 200, "{}", made.text());
    assert!(
        made.text().contains("It was also mailed"),
        "{}",
        made.text()
    );
    let text = made.text();
    let at = text
        .find("https://console.test/link/")
        .expect("the link shown");
    let link = &text[at..at + "https://console.test/link/".len() + 64];
    let printed = sink.until(link);
    assert!(printed.contains(&format!("\nTo: {invitee}\n")), "{printed}");

    // "Forgot your password?": the same answer for a known and an unknown email.
    let known = person(Some(&org), Role::Member);
    let nobody = format!("{}@example.org", agentcard::ids::new_id("nobody_"));
    let ask = |email: &str| Browser::on(own.addr).post("/forgot-password", &[("email", email)]);
    let (for_known, for_nobody) = (ask(&known), ask(&nobody));
    assert_eq!((for_known.status, for_nobody.status), (200, 200));
    assert_eq!(for_known.text(), for_nobody.text());
    assert!(
        for_known.text().contains("on its way"),
        "{}",
        for_known.text()
    );
    let to = format!("\nTo: {known}\n");
    sink.until(&to);
    let printed = sink.until("If you did not ask for it");
    let reset = link_in(&printed[printed.find(&to).unwrap()..]);
    let path = reset.strip_prefix(ORIGIN).unwrap();
    let page = Browser::on(own.addr).get(path);
    assert_eq!(page.status, 200);
    assert!(
        page.text().contains("name=\"new_password\""),
        "{}",
        page.text()
    );
    assert!(!sink.until(&to).contains(&format!("To: {nobody}")));
    let refused = ask("not an email");
    assert_eq!(refused.status, 422);
    assert!(refused.text().contains("id=\"email-error\""));

    // Each request counts against the email's sign-in limit, as a failed sign-in does.
    for _ in 1..FAILED_SIGN_IN_PER_EMAIL {
        assert_eq!(ask(&known).status, 200);
    }
    assert_eq!(ask(&known).status, 429);
    assert_eq!(Browser::on(own.addr).sign_in(&known, PASSWORD).status, 429);
}

#[test]
fn without_mail_the_sign_in_page_says_to_ask_an_owner_and_offers_no_form() {
    let sign_in = Browser::new().get("/sign-in").text();
    assert!(
        sign_in.contains("Ask an owner of your organisation"),
        "{sign_in}"
    );
    assert!(!sign_in.contains("href=\"/forgot-password\""), "{sign_in}");
    let page = Browser::new().get("/forgot-password");
    assert_eq!(page.status, 200);
    let text = page.text();
    assert!(
        text.contains("sends no mail")
            && !text.contains("<form method=\"post\" action=\"/forgot-password\""),
        "{text}"
    );
    let posted = Browser::new().post("/forgot-password", &[("email", "a@example.org")]);
    assert_eq!(posted.status, 404);
}
