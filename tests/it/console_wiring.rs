//! Issue 34's rules on the console's pages, through real HTTP: secrets made once, invitations
//! accepted by their invitee signed in, device cookies at sign-in, mail, the audit log in words.

use crate::console_fixtures::{hidden, new_org, person, Browser};
use crate::harness::db;
use agentcard::domain::Role;

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
