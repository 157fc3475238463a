//! The console's forms answering a refusal in place: a NUL byte or bytes that are not UTF-8 in
//! a value, and a long refused value, each answered by the same form (`422`) with the field's
//! message next to its input, the value cut in the message, and nothing written.

use crate::console_fixtures::{person_in, Browser, ORIGIN};
use crate::harness::{new_org, own_server, Resp, TestServer};
use agentcard::domain::Role;

/// A member signed in to a server of their own, with the site `news.example` and its
/// fragment `/sport`; an owner of the same organisation.
struct Desk {
    server: TestServer,
    member: Browser,
    owner: Browser,
}

fn desk() -> Desk {
    let server = own_server();
    let org = new_org(&mut server.db(), "Forms Publisher");
    let email = person_in(&mut server.db(), Some(org.as_str()), Role::Member);
    let member = Browser::signed_in_to(&server, &email);
    let email = person_in(&mut server.db(), Some(org.as_str()), Role::Owner);
    let owner = Browser::signed_in_to(&server, &email);
    let desk = Desk {
        server,
        member,
        owner,
    };
    let site = desk.member.write("/sites", &[("domain", "news.example")]);
    assert_eq!(site.status, 303, "{}", site.text());
    let fragment = [("ref", "/sport"), ("name", "Sport"), ("lang", "en")];
    let made = desk
        .member
        .write("/sites/news.example/fragments", &fragment);
    assert_eq!(made.status, 303, "{}", made.text());
    desk
}

impl Desk {
    /// What the forms below could change: the site's name, its fragments, rules and cards,
    /// the audit log, invitations.
    fn state(&self) -> Vec<String> {
        let mut db = self.server.db();
        let queries = [
            "SELECT coalesce(string_agg(name, ',' ORDER BY name), '') FROM sites",
            "SELECT string_agg(name || ':' || coalesce(ref, '') || ':' || key_values::text, \
             ',' ORDER BY name) FROM fragments",
            "SELECT count(*)::text FROM routes",
            "SELECT count(*)::text FROM cards WHERE org_id IS NOT NULL",
            "SELECT count(*)::text FROM audit_log",
            "SELECT count(*)::text FROM one_time_links",
        ];
        queries
            .iter()
            .map(|sql| {
                let row = db.query_one(*sql, &[]).expect(sql);
                row.get::<_, Option<String>>(0).unwrap_or_default()
            })
            .collect()
    }
}

/// A form posted by `browser` with its bytes as given after the session's form token (a
/// browser never sends invalid UTF-8 on its own).
fn post_raw(browser: &Browser, path: &str, fields: &[u8]) -> Resp {
    let mut body = format!("csrf={}&", browser.token()).into_bytes();
    body.extend_from_slice(fields);
    let mut headers = browser.headers();
    headers.push(("Content-Type", "application/x-www-form-urlencoded".into()));
    headers.push(("Origin", ORIGIN.into()));
    let headers: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
    browser.client.request("POST", path, &headers, Some(&body))
}

/// The refusal of `input` as its form shows it: `422`, the form again with the message next to
/// the input (`aria-invalid`, `data-field` naming the field).
#[track_caller]
fn assert_refused_in_place(resp: &Resp, input_id: &str, field: &str, message: &str) -> String {
    let page = resp.text();
    assert_eq!(resp.status, 422, "{page}");
    assert!(
        page.contains("<form method=\"post\""),
        "not a form page: {page}"
    );
    let error = format!(
        "<span class=\"error\" id=\"{input_id}-error\" data-field=\"{field}\">{message}</span>"
    );
    assert!(page.contains(&error), "{error} not in {page}");
    let described = format!("aria-describedby=\"{input_id}-hint {input_id}-error\"");
    let only_error = format!("aria-describedby=\"{input_id}-error\"");
    assert!(
        page.contains(&described) || page.contains(&only_error),
        "{page}"
    );
    page
}

fn unreadable(field: &str) -> String {
    format!("{field}: a value may hold neither a NUL byte nor bytes that are not UTF-8")
}

#[test]
fn a_nul_or_invalid_utf8_answers_the_same_form_with_the_fields_message_and_writes_nothing() {
    let desk = desk();
    let before = desk.state();
    let fragment = "/sites/news.example/fragments";
    let cases: [(&str, &[u8], &str, &str); 6] = [
        (
            fragment,
            b"ref=/b&name=a%00b&lang=en",
            "fragment-name",
            "name",
        ),
        (
            fragment,
            b"ref=/b&name=B&lang=en&description=%FF%FE",
            "fragment-description",
            "description",
        ),
        ("/sites/news.example", b"name=a\0b", "site-name", "name"),
        (
            "/sites/news.example/rules",
            b"path_prefix=/a%00&match=exact&ref=/sport",
            "rule-path_prefix",
            "path_prefix",
        ),
        ("/sites", b"domain=a%00.example", "site-domain", "domain"),
        (
            "/cards/new",
            b"name=N&lang=en&brand=B&title=T%C3&body=Text",
            "title",
            "title",
        ),
    ];
    for (path, fields, input_id, field) in cases {
        let resp = post_raw(&desk.member, path, fields);
        assert_refused_in_place(&resp, input_id, field, &unreadable(field));
        assert_eq!(desk.state(), before, "{path}: nothing was written");
    }
    let card = post_raw(
        &desk.member,
        "/cards/new",
        b"name=N&lang=en&brand=B&title=T%00&body=Text",
    );
    let page = assert_refused_in_place(&card, "title", "title", &unreadable("title"));
    assert!(
        page.contains("id=\"brand\" name=\"brand\" type=\"text\" value=\"B\""),
        "the other values are shown as sent: {page}"
    );
    assert!(
        page.contains("id=\"title\" name=\"title\" type=\"text\" value=\"T\u{fffd}\""),
        "the refused value is shown, its NUL a replacement character: {page}"
    );
    let key = post_raw(&desk.member, "/keys", b"name=k%00");
    assert_eq!(key.status, 422, "{}", key.text());
    assert!(key
        .text()
        .contains("id=\"name-error\">name: a value may hold"));
    assert!(key
        .text()
        .contains("<form method=\"post\" action=\"/keys\""));
    assert_eq!(desk.state(), before, "no key was made");
    let invite = post_raw(
        &desk.owner,
        "/members/invite",
        b"email=a%00@example.org&role=member",
    );
    assert_eq!(invite.status, 422, "{}", invite.text());
    let said = format!(
        "<span class=\"error\" id=\"email-error\" data-field=\"email\">{}</span>",
        unreadable("email")
    );
    assert!(invite.text().contains(&said), "{}", invite.text());
    assert!(invite.text().contains("value=\"a\u{fffd}@example.org\""));
    assert_eq!(desk.state(), before, "no invitation was made");
    let password = post_raw(
        &desk.member,
        "/password",
        b"current_password=x%00y&new_password=another+fine+password",
    );
    assert_eq!(password.status, 422, "{}", password.text());
    let said = format!(
        "<span class=\"error\" id=\"current_password-error\">{}</span>",
        unreadable("current_password")
    );
    assert!(password.text().contains(&said), "{}", password.text());
    assert!(
        !password.text().contains("x\u{fffd}y"),
        "a password is never shown back"
    );
    assert_eq!(
        desk.member.get("/password").status,
        200,
        "the password did not change: the session goes on"
    );
    assert_eq!(desk.state(), before, "no password change in the audit log");
    let visitor = Browser::of(&desk.server);
    let sign_in = visitor.post(
        "/sign-in",
        &[("email", "a\u{0}@example.org"), ("password", "x")],
    );
    assert_eq!(sign_in.status, 422, "{}", sign_in.text());
    let said = format!(
        "<span class=\"error\" id=\"email-error\">{}</span>",
        unreadable("email")
    );
    assert!(sign_in.text().contains(&said), "{}", sign_in.text());
    assert!(sign_in
        .text()
        .contains("<form method=\"post\" action=\"/sign-in\""));
    assert!(crate::console_fixtures::session_cookie(&sign_in).is_none());
}

#[test]
fn a_long_refused_value_is_cut_in_the_message_and_nothing_is_written() {
    let desk = desk();
    let before = desk.state();
    let line = "x".repeat(2000);
    let cut = format!("&#34;{}…&#34; is not of the form key=value", "x".repeat(60));
    for (path, input_id, mut fields) in [
        (
            "/sites/news.example/fragments",
            "fragment-key_values",
            vec![("ref", "/long"), ("name", "Long"), ("lang", "en")],
        ),
        (
            "/cards/new",
            "key_values",
            vec![
                ("name", "N"),
                ("lang", "en"),
                ("brand", "B"),
                ("title", "T"),
                ("body", "Text"),
            ],
        ),
    ] {
        fields.push(("key_values", &line));
        let resp = desk.member.write(path, &fields);
        let page = assert_refused_in_place(&resp, input_id, "key_values", &cut);
        assert_eq!(
            page.matches(&line).count(),
            1,
            "{path}: the value is shown once, in its input, never in the message"
        );
        assert_eq!(desk.state(), before, "{path}: nothing was written");
    }
}
