//! The console's people pages and forms as a person meets them: confirmations before a
//! revocation or a removal, the members page read by every member, viewers invited and made,
//! the email and password rules where an email or a password is set, sessions named by browser
//! and moving with use, the set-password page naming its account, every refused card field at
//! once, a new card's language, times in words, and the pages' looks (notices, error pages,
//! tables that scroll inside themselves).

use crate::console_fixtures::{
    admin_people, assert_secured, new_org, org_id, person, role_of, Browser,
};
use crate::harness::db;
use agentcard::domain::{CardStatus, Role};
use agentcard::ops::{self, Actor, Scope};

fn person_id(email: &str) -> String {
    db().query_one(
        "SELECT id FROM persons WHERE lower(email) = lower($1)",
        &[&email],
    )
    .unwrap()
    .get(0)
}

fn is_member(org: &str, email: &str) -> bool {
    db().query_opt(
        "SELECT 1 FROM memberships m JOIN persons p ON p.id = m.person_id
          WHERE m.org_id = $1 AND lower(p.email) = lower($2)",
        &[&org, &email],
    )
    .unwrap()
    .is_some()
}

/// `(id, prefix, revoked)` of the organisation's key or token named `name`.
fn secret_row(table: &str, org: &str, name: &str) -> (String, String, bool) {
    let row = db()
        .query_one(
            &format!(
                "SELECT id, prefix, revoked_at IS NOT NULL FROM {table}
                  WHERE org_id = $1 AND name = $2"
            ),
            &[&org, &name],
        )
        .unwrap();
    (row.get(0), row.get(1), row.get(2))
}

#[test]
fn revoking_a_key_or_a_token_asks_first_and_the_notice_names_it() {
    let org = new_org();
    let owner = Browser::signed_in(&person(Some(&org), Role::Owner));
    for (page, table, thing) in [
        ("/keys", "delivery_keys", "key"),
        ("/tokens", "mgmt_tokens", "token"),
    ] {
        let name = format!("front {thing}");
        assert_eq!(owner.create(page, page, &[("name", &name)]).status, 200);
        let (id, prefix, _) = secret_row(table, &org, &name);
        let list = owner.get(page).text();
        let confirm_path = format!("{page}/{id}/revoke");
        assert!(list.contains(&format!("href=\"{confirm_path}\"")), "{list}");
        assert!(
            !list.contains(&format!("action=\"{confirm_path}\"")),
            "no one-click revocation: {list}"
        );

        let confirm = owner.get(&confirm_path);
        assert_eq!(confirm.status, 200, "{confirm_path}: {}", confirm.text());
        assert_secured(&confirm, &confirm_path);
        let text = confirm.text();
        assert!(text.contains(&format!("Revoke the {thing} {name} ({prefix}…)")));
        assert!(text.contains(&format!("<form method=\"post\" action=\"{confirm_path}\"")));
        assert!(
            !secret_row(table, &org, &name).2,
            "reading the page revokes nothing"
        );

        let done = owner.write(&confirm_path, &[]);
        let location = format!("{page}?notice={thing}-revoked&about={id}");
        assert_eq!(done.header("Location"), Some(location.as_str()));
        assert!(secret_row(table, &org, &name).2);
        let after = owner.get(&location).text();
        assert!(
            after.contains(&format!(
                "<p role=\"status\" class=\"notice\">The {thing} {name} ({prefix}…) was revoked"
            )),
            "{after}"
        );
        // A crafted link names nothing it was not about.
        let crafted = owner
            .get(&format!("{page}?notice={thing}-revoked&about=evil"))
            .text();
        assert!(
            crafted.contains(&format!("The {thing} was revoked")),
            "{crafted}"
        );
    }
}

#[test]
fn removing_a_member_asks_first() {
    let org = new_org();
    let owner = Browser::signed_in(&person(Some(&org), Role::Owner));
    let leaving = person(Some(&org), Role::Member);
    let id = person_id(&leaving);
    let page = owner.get("/members").text();
    let path = format!("/members/{id}/remove");
    assert!(page.contains(&format!("href=\"{path}\"")), "{page}");
    assert!(!page.contains(&format!("action=\"{path}\"")), "{page}");
    let confirm = owner.get(&path);
    assert_eq!(confirm.status, 200, "{}", confirm.text());
    assert!(confirm
        .text()
        .contains(&format!("Remove {leaving} (member)")));
    assert!(is_member(&org, &leaving), "reading the page removes nobody");
    let done = owner.write(&path, &[]);
    assert_eq!(done.header("Location"), Some("/members?notice=removed"));
    assert!(!is_member(&org, &leaving));
    assert_eq!(owner.get(&path).status, 404, "no longer a member");
    let member = Browser::signed_in(&person(Some(&org), Role::Member));
    assert_eq!(member.get(&path).status, 403, "owners only");
}

#[test]
fn members_read_the_members_page_and_only_owners_change_it() {
    let org = new_org();
    let owner_email = person(Some(&org), Role::Owner);
    let owner = Browser::signed_in(&owner_email);
    let member_email = person(Some(&org), Role::Member);
    let member = Browser::signed_in(&member_email);
    assert!(member.get("/").text().contains("href=\"/members\""));
    let read = member.get("/members");
    assert_eq!(read.status, 200, "{}", read.text());
    let page = read.text();
    assert!(page.contains(&owner_email) && page.contains(&member_email));
    for form in ["action=\"/members/", "action=\"/invitations/", "/remove\""] {
        assert!(!page.contains(form), "{form} offered to a member: {page}");
    }
    assert!(page.contains("ask an owner"));

    // The only owner's removal is not offered; with two owners, both are.
    let me = person_id(&owner_email);
    let alone = owner.get("/members").text();
    assert!(!alone.contains(&format!("/members/{me}/remove")), "{alone}");
    assert!(alone.contains(&format!("/members/{}/remove", person_id(&member_email))));
    assert!(alone.contains("action=\"/members/invite\""));
    let second = person(Some(&org), Role::Owner);
    let two = owner.get("/members").text();
    assert!(two.contains(&format!("/members/{me}/remove")), "{two}");
    assert!(two.contains(&format!("/members/{}/remove", person_id(&second))));
}

#[test]
fn sessions_are_named_by_browser_and_their_last_request_moves() {
    let org = new_org();
    let email = person(Some(&org), Role::Member);
    let browser = Browser::signed_in(&email);
    let chrome = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) \
                  Chrome/120.0.0.0 Safari/537.36";
    db().execute(
        "UPDATE sessions SET user_agent = $2,
                created_at = now() - interval '3 hours',
                last_seen_at = now() - interval '3 hours'
          WHERE person_id = (SELECT id FROM persons WHERE email = $1)",
        &[&email, &chrome],
    )
    .unwrap();
    let page = browser.get("/sessions").text();
    assert!(page.contains(">Chrome on Linux</td>"), "{page}");
    assert!(!page.contains("AppleWebKit"), "no raw User-Agent: {page}");
    let moved: bool = db()
        .query_one(
            "SELECT bool_and(last_seen_at > created_at + interval '2 hours') FROM sessions
              WHERE person_id = (SELECT id FROM persons WHERE email = $1)",
            &[&email],
        )
        .unwrap()
        .get(0);
    assert!(moved, "the session's use is its last request");
    let times: Vec<&str> = page.split("<time datetime=\"").skip(1).collect();
    assert_eq!(times.len(), 2, "{page}");
    assert_ne!(
        times[0], times[1],
        "signed in and last request differ: {page}"
    );
}

#[test]
fn the_set_password_page_names_the_account_for_password_managers() {
    let org = new_org();
    let email = format!("{}@example.org", agentcard::ids::new_id("new_"));
    let (ok, made, stderr) = admin_people(&[
        "user", "create", "--email", &email, "--org", &org, "--role", "member",
    ]);
    assert!(ok, "{stderr}");
    let link = made["link"].as_str().unwrap();
    let path = &link[link.find("/link/").unwrap()..];
    let page = Browser::new().get(path).text();
    assert!(
        page.contains(&format!(
            "<input id=\"email\" name=\"email\" type=\"email\" autocomplete=\"username\" \
             value=\"{email}\" readonly>"
        )),
        "{page}"
    );
    assert!(page.contains("<label for=\"email\">Email</label>"));
    assert!(page.contains("autocomplete=\"new-password\""));
}

/// Every `(data-field, message)` refusal a card form's answer shows.
fn refusals(page: &str) -> Vec<(String, String)> {
    page.split("<span class=\"error\"")
        .skip(1)
        .map(|span| {
            let field_at = span.find("data-field=\"").unwrap() + 12;
            let field = &span[field_at..field_at + span[field_at..].find('"').unwrap()];
            let message = &span[span.find('>').unwrap() + 1..span.find("</span>").unwrap()];
            (field.to_string(), message.to_string())
        })
        .collect()
}

fn card_form<'a>(changes: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    let mut fields = vec![
        ("name", "Card"),
        ("lang", "en"),
        ("brand", "Brand"),
        ("brand_domain", ""),
        ("title", "Title"),
        ("body", "Body"),
        ("link_url", ""),
        ("link_label", ""),
        ("key_values", ""),
        ("action", "save"),
    ];
    for (name, value) in changes {
        fields.iter_mut().find(|(n, _)| n == name).unwrap().1 = value;
    }
    fields
}

#[test]
fn the_card_form_shows_every_refused_field_at_once() {
    let org = new_org();
    let member = Browser::signed_in(&person(Some(&org), Role::Member));
    let bad = [
        ("name", ""),
        ("lang", "pt"),
        ("brand_domain", "localhost"),
        ("link_label", "Terms"),
        ("key_values", "section"),
    ];
    // Each alone: one refusal, the one the existing per-field rules give (those are /v1's).
    let mut one_by_one = Vec::new();
    for change in bad {
        let resp = member.write("/cards/new", &card_form(&[change]));
        assert_eq!(resp.status, 422, "{change:?}");
        let shown = refusals(&resp.text());
        assert_eq!(shown.len(), 1, "{change:?}: {shown:?}");
        one_by_one.extend(shown);
    }
    let all = member.write("/cards/new", &card_form(&bad));
    assert_eq!(all.status, 422);
    let page = all.text();
    assert_eq!(refusals(&page), one_by_one, "{page}");
    assert_eq!(page.matches("aria-invalid=\"true\"").count(), bad.len());
    let cards: i64 = db()
        .query_one("SELECT count(*) FROM cards WHERE org_id = $1", &[&org])
        .unwrap()
        .get(0);
    assert_eq!(cards, 0);
}

#[test]
fn a_new_card_is_in_the_language_the_organisation_uses_most() {
    let org = new_org();
    let member = Browser::signed_in(&person(Some(&org), Role::Member));
    let selected = |lang: &str| format!("<option value=\"{lang}\" selected>");
    assert!(member.get("/cards/new").text().contains(&selected("en")));
    let cli = ops::orgs::open(&mut db(), &org_id(&org), Actor::Cli).unwrap();
    for (name, lang) in [("a", "de"), ("b", "de"), ("c", "fr")] {
        let pairs = Vec::new();
        let content = ops::cards::CardForm {
            name,
            lang,
            brand: "Brand",
            brand_domain: None,
            title: "Title",
            body: "Body",
            link_url: None,
            link_label: None,
            key_values: &pairs,
        }
        .parse()
        .unwrap();
        ops::cards::create_card(&mut db(), Scope::Org(&cli), CardStatus::Draft, &content).unwrap();
    }
    let page = member.get("/cards/new").text();
    assert!(page.contains(&selected("de")), "{page}");
    assert_eq!(page.matches(" selected>").count(), 1);
}

/// A moment as the console writes it: `27 Nov 2026, 20:41 UTC`.
fn in_words(text: &str) -> bool {
    let parts: Vec<&str> = text.split(' ').collect();
    let month = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    parts.len() == 5
        && parts[0]
            .parse::<u8>()
            .is_ok_and(|day| (1..=31).contains(&day))
        && month.contains(&parts[1])
        && parts[2].len() == 5
        && parts[2].ends_with(',')
        && parts[3].len() == 5
        && parts[3].as_bytes()[2] == b':'
        && parts[4] == "UTC"
}

#[test]
fn times_are_in_words_whole_with_their_exact_value() {
    let org = new_org();
    let owner = Browser::signed_in(&person(Some(&org), Role::Owner));
    assert_eq!(
        owner.create("/tokens", "/tokens", &[("name", "ci")]).status,
        200
    );
    for path in ["/tokens", "/sessions", "/audit", "/reports"] {
        let page = owner.get(path).text();
        let times: Vec<&str> = page.split("<time datetime=\"").skip(1).collect();
        assert!(!times.is_empty(), "{path}: {page}");
        for time in times {
            let (exact, rest) = time.split_once("\">").unwrap();
            let shown = &rest[..rest.find("</time>").unwrap()];
            assert!(exact.parse::<jiff::Timestamp>().is_ok(), "{path}: {exact}");
            assert!(in_words(shown), "{path}: {shown:?}");
        }
    }
    let css = owner.get("/console.css").text();
    assert!(css.contains("time { white-space: nowrap; }"), "{css}");
}

/// The times a page shows, `(exact, shown)`.
fn times_of(page: &str) -> Vec<(String, String)> {
    let times = page.split("<time datetime=\"").skip(1);
    times
        .map(|time| {
            let (exact, rest) = time.split_once("\">").unwrap();
            let shown = &rest[..rest.find("</time>").unwrap()];
            (exact.to_string(), shown.to_string())
        })
        .collect()
}

fn time_zone_of(email: &str) -> Option<String> {
    db().query_one(
        "SELECT time_zone FROM persons WHERE lower(email) = lower($1)",
        &[&email],
    )
    .unwrap()
    .get(0)
}

#[test]
fn a_person_reads_times_in_the_time_zone_they_chose_and_the_reports_stay_in_utc() {
    let org = new_org();
    let email = person(Some(&org), Role::Member);
    let member = Browser::signed_in(&email);
    for name in ["Mars/Olympus", "../../etc/passwd", "Europe/Paris/", "UTC+2"] {
        let resp = member.write("/time-zone", &[("time_zone", name)]);
        let page = resp.text();
        assert_eq!(resp.status, 422, "{name}: {page}");
        assert!(
            page.contains("id=\"time_zone-error\">not a time zone&#x27;s IANA name")
                || page.contains("id=\"time_zone-error\">not a time zone&#39;s IANA name"),
            "{name}: {page}"
        );
        assert!(page.contains("aria-invalid=\"true\""), "{name}");
        assert_eq!(time_zone_of(&email), None, "{name}: nothing stored");
    }
    let saved = member.write("/time-zone", &[("time_zone", "Asia/Tokyo")]);
    assert_eq!(saved.status, 303, "{}", saved.text());
    assert_eq!(
        saved.header("Location"),
        Some("/time-zone?notice=time-zone-saved")
    );
    assert_eq!(time_zone_of(&email).as_deref(), Some("Asia/Tokyo"));
    let tokyo = jiff::tz::TimeZone::get("Asia/Tokyo").unwrap();
    let sessions = times_of(&member.get("/sessions").text());
    assert!(!sessions.is_empty());
    for (exact, shown) in sessions {
        let at: jiff::Timestamp = exact.parse().unwrap();
        let expected = at.to_zoned(tokyo.clone()).strftime("%-d %b %Y, %H:%M JST");
        assert_eq!(shown, expected.to_string());
    }
    let reports = times_of(&member.get("/reports").text());
    assert!(!reports.is_empty());
    assert!(
        reports.iter().all(|(_, shown)| shown.ends_with(" UTC")),
        "{reports:?}"
    );
    // Empty: UTC again.
    assert_eq!(member.write("/time-zone", &[("time_zone", "")]).status, 303);
    assert_eq!(time_zone_of(&email), None);
    let sessions = times_of(&member.get("/sessions").text());
    assert!(
        sessions.iter().all(|(_, shown)| in_words(shown)),
        "{sessions:?}"
    );
}

#[test]
fn notices_errors_and_tables_say_and_look_what_they_are() {
    let org = new_org();
    let owner = Browser::signed_in(&person(Some(&org), Role::Owner));
    for (path, status, title) in [
        ("/nothing/here", 404, "Not found"),
        ("/cards/crd_0000000000000000000000000", 404, "Not found"),
    ] {
        let page = owner.get(path);
        assert_eq!(page.status, status, "{path}");
        let text = page.text();
        assert!(
            text.contains(&format!("<h1>{title}</h1>")),
            "{path}: {text}"
        );
        assert!(text.contains(&format!("Status {status}.")), "{path}");
    }
    let notice = owner.get("/sessions?notice=others-ended").text();
    assert!(notice.contains("<p role=\"status\" class=\"notice\">Your other sessions"));
    assert_eq!(
        owner.create("/tokens", "/tokens", &[("name", "ci")]).status,
        200
    );
    // Every table scrolls inside its own region, which a keyboard reaches and a label names.
    for path in ["/members", "/sessions", "/tokens"] {
        let page = owner.get(path).text();
        let tables = page.matches("<table>").count();
        assert!(tables > 0, "{path}");
        assert_eq!(
            page.matches("<div class=\"scroll\" role=\"region\" aria-labelledby=\"")
                .count(),
            tables,
            "{path}: {page}"
        );
    }
    let css = owner.get("/console.css").text();
    for rule in [
        ".scroll { overflow-x: auto;",
        ".notice {",
        "button.danger",
        "flex-wrap: wrap",
    ] {
        assert!(css.contains(rule), "{rule}");
    }
    assert!(
        !css.contains("outline: 3px solid #b3261e"),
        "focus is not the error red"
    );
}

fn invited_role(org: &str, email: &str) -> Option<String> {
    db().query_opt(
        "SELECT role FROM one_time_links WHERE org_id = $1 AND email = $2",
        &[&org, &email],
    )
    .unwrap()
    .map(|row| row.get(0))
}

/// The path of a link the CLI printed.
fn link_path(made: &serde_json::Value) -> String {
    let link = made["link"].as_str().unwrap();
    link[link.find("/link/").unwrap()..].to_string()
}

#[test]
fn an_owner_invites_a_viewer_and_makes_a_member_a_viewer_who_then_changes_nothing() {
    let org = new_org();
    let owner = Browser::signed_in(&person(Some(&org), Role::Owner));
    let form = owner.get("/members").text();
    assert!(
        form.contains("<option value=\"viewer\">viewer</option>"),
        "{form}"
    );
    let invited = format!("{}@example.org", agentcard::ids::new_id("v_"));
    let fields = [("email", invited.as_str()), ("role", "viewer")];
    let made = owner.create("/members", "/members/invite", &fields);
    assert_eq!(made.status, 200, "{}", made.text());
    assert_eq!(invited_role(&org, &invited).as_deref(), Some("viewer"));
    let link = hidden_link(&made.text());
    let intro = Browser::new().get(&link).text();
    assert!(intro.contains("is invited to join Console Publisher as viewer."));

    let member_email = person(Some(&org), Role::Member);
    let member = Browser::signed_in(&member_email);
    let id = person_id(&member_email);
    let changed = owner.write(&format!("/members/{id}/role"), &[("role", "viewer")]);
    assert_eq!(changed.status, 303, "{}", changed.text());
    assert_eq!(role_of(&org, &member_email).as_deref(), Some("viewer"));
    assert!(member.get("/").text().contains("Your role: viewer."));
    assert!(!member.get("/keys").text().contains("action=\"/keys\""));
    let refused = member.write("/keys", &[("name", "not made")]);
    assert_eq!(refused.status, 403, "{}", refused.text());
    let keys: i64 = db()
        .query_one(
            "SELECT count(*) FROM delivery_keys WHERE org_id = $1",
            &[&org],
        )
        .unwrap()
        .get(0);
    assert_eq!(keys, 0);
}

/// The invitation link an invite form's answer shows once.
fn hidden_link(page: &str) -> String {
    let marker = "<p class=\"secret\" id=\"new-link\">";
    let at = page.find(marker).expect("the link") + marker.len();
    let link = &page[at..at + page[at..].find('<').unwrap()];
    link[link.find("/link/").unwrap()..].to_string()
}

#[test]
fn the_cli_makes_and_invites_viewers() {
    let org = new_org();
    let email = format!("{}@example.org", agentcard::ids::new_id("cv_"));
    let (ok, made, stderr) = admin_people(&[
        "user", "create", "--email", &email, "--org", &org, "--role", "viewer",
    ]);
    assert!(ok, "{stderr}");
    assert_eq!(made["role"], "viewer");
    assert_eq!(role_of(&org, &email).as_deref(), Some("viewer"));
    let invited = format!("{}@example.org", agentcard::ids::new_id("ci_"));
    let (ok, made, stderr) = admin_people(&[
        "member", "invite", "--org", &org, "--email", &invited, "--role", "viewer",
    ]);
    assert!(ok, "{stderr}");
    assert_eq!(made["role"], "viewer");
    assert_eq!(invited_role(&org, &invited).as_deref(), Some("viewer"));
}

const EMAIL_REFUSED: &str = "enter an email address: a name, one @, and a domain with a dot, \
                             without spaces, like name@example.com";

fn people_named(email: &str) -> i64 {
    db().query_one(
        "SELECT count(*) FROM persons WHERE lower(email) = lower($1)",
        &[&email],
    )
    .unwrap()
    .get(0)
}

#[test]
fn an_invitation_or_a_person_with_two_at_signs_is_refused_by_the_console_and_the_cli() {
    let org = new_org();
    let owner = Browser::signed_in(&person(Some(&org), Role::Owner));
    for bad in [
        "x@@y.example",
        "x@y@example.org",
        "x y@example.org",
        "x@example",
    ] {
        let fields = [("email", bad), ("role", "member")];
        let refused = owner.create("/members", "/members/invite", &fields);
        assert_eq!(refused.status, 422, "{bad}: {}", refused.text());
        let said = format!(
            "<span class=\"error\" id=\"email-error\" data-field=\"email\">{EMAIL_REFUSED}</span>"
        );
        assert!(refused.text().contains(&said), "{bad}: {}", refused.text());

        let (ok, _, stderr) = admin_people(&["member", "invite", "--org", &org, "--email", bad]);
        assert!(
            !ok && stderr.contains(&format!("email: {EMAIL_REFUSED}")),
            "{stderr}"
        );
        let (ok, _, stderr) = admin_people(&[
            "user", "create", "--email", bad, "--org", &org, "--role", "member",
        ]);
        assert!(
            !ok && stderr.contains(&format!("email: {EMAIL_REFUSED}")),
            "{stderr}"
        );
        assert_eq!(people_named(bad), 0, "{bad}");
    }
    let links: i64 = db()
        .query_one(
            "SELECT count(*) FROM one_time_links WHERE org_id = $1",
            &[&org],
        )
        .unwrap()
        .get(0);
    assert_eq!(links, 0, "no invitation was made");
}

/// Each refused new password, with the message its field shows: ten spaces, a common password
/// in another case, the person's own email.
fn weak_passwords(email: &str) -> [(String, &'static str); 3] {
    [
        (
            " ".repeat(10),
            "a password may not be only spaces: choose one with other characters",
        ),
        (
            "Password123".into(),
            "this is one of the 10 000 most common passwords, which are guessed first: \
             choose another",
        ),
        (
            email.to_uppercase(),
            "a password may not be your email address: choose another",
        ),
    ]
}

fn assert_password_refused(resp: &crate::harness::Resp, message: &str, what: &str) {
    assert_eq!(resp.status, 422, "{what}: {}", resp.text());
    assert_secured(resp, what);
    let said = format!("<span class=\"error\" id=\"new_password-error\">{message}</span>");
    assert!(resp.text().contains(&said), "{what}: {}", resp.text());
}

fn password_hash(email: &str) -> Option<String> {
    db().query_one(
        "SELECT password_hash FROM persons WHERE lower(email) = lower($1)",
        &[&email],
    )
    .unwrap()
    .get(0)
}

#[test]
fn a_weak_new_password_is_refused_when_changed_and_nothing_changes() {
    let org = new_org();
    let email = person(Some(&org), Role::Member);
    let browser = Browser::signed_in(&email);
    let before = password_hash(&email);
    for (weak, message) in weak_passwords(&email) {
        let fields = [
            ("current_password", crate::console_fixtures::PASSWORD),
            ("new_password", weak.as_str()),
        ];
        let refused = browser.write("/password", &fields);
        assert_password_refused(&refused, message, &weak);
    }
    assert_eq!(password_hash(&email), before);
    assert!(browser.is_signed_in(), "the session goes on");
    let entries: i64 = db()
        .query_one("SELECT count(*) FROM audit_log WHERE org_id = $1", &[&org])
        .unwrap()
        .get(0);
    assert_eq!(entries, 0);
}

#[test]
fn a_weak_password_is_refused_by_a_reset_link_and_an_invitation_which_stay_usable() {
    let org = new_org();
    let member = person(Some(&org), Role::Member);
    let (ok, reset, stderr) = admin_people(&["user", "reset", "--email", &member]);
    assert!(ok, "{stderr}");
    let invited = format!("{}@example.org", agentcard::ids::new_id("w_"));
    let (ok, invitation, stderr) =
        admin_people(&["member", "invite", "--org", &org, "--email", &invited]);
    assert!(ok, "{stderr}");
    let before = password_hash(&member);
    for (made, email) in [(&reset, &member), (&invitation, &invited)] {
        let path = link_path(made);
        let browser = Browser::new();
        for (weak, message) in weak_passwords(email) {
            let refused = browser.post(&path, &[("new_password", weak.as_str())]);
            assert_password_refused(&refused, message, &format!("{path} {weak:?}"));
        }
        assert_eq!(browser.get(&path).status, 200, "the link is not used");
    }
    assert_eq!(password_hash(&member), before);
    assert_eq!(people_named(&invited), 0, "no person was made");
    let path = link_path(&invitation);
    let set = Browser::new().post(&path, &[("new_password", "a long and uncommon one")]);
    assert_eq!(set.status, 303, "{}", set.text());
    assert_eq!(role_of(&org, &invited).as_deref(), Some("member"));
}
