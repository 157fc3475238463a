//! A sign-in flood from many addresses: beyond the rate of hashes for unknown browsers, their
//! sign-ins are refused (`429`) at once, without hashing, whatever the client address, and
//! nothing changes, while the browsers a person signed in from before still sign in; and
//! beyond the rate for known people, their sign-ins, password changes and set-password links
//! are refused the same way.

use crate::console_fixtures::{
    assert_secured, new_org, person, session_cookie, Browser, Device, ORIGIN, PASSWORD,
};
use crate::harness::{
    db, next_client_ip, server, start_server, Client, OwnServer, Resp, CLIENT_IP_HEADER,
    CONSOLE_HOST,
};
use agentcard::db::people;
use agentcard::domain::Role;
use agentcard::ops::{members, Actor};

/// A server of its own whose rate `variable` is one hash a minute: its first hash is allowed,
/// and the requests of a test that follow it fall within the same minute.
fn one_hash_a_minute(variable: &str) -> OwnServer {
    start_server(
        &server().database_url,
        &[
            ("AGENTCARD_CLIENT_IP_HEADER", CLIENT_IP_HEADER),
            ("AGENTCARD_TRUSTED_PROXIES", "127.0.0.0/8"),
            (variable, "1"),
        ],
    )
}

/// A browser of `own`, from an address of its own.
fn browser_of(own: &OwnServer) -> Browser {
    Browser {
        client: Client::new(own.addr)
            .host(CONSOLE_HOST)
            .ip(&next_client_ip()),
        cookie: None,
    }
}

fn stored_hash(email: &str) -> String {
    db().query_one(
        "SELECT password_hash FROM persons WHERE lower(email) = lower($1)",
        &[&email],
    )
    .unwrap()
    .get(0)
}

fn sessions_of(email: &str) -> i64 {
    db().query_one(
        "SELECT count(*) FROM sessions s JOIN persons p ON p.id = s.person_id
          WHERE lower(p.email) = lower($1)",
        &[&email],
    )
    .unwrap()
    .get(0)
}

/// What the refusal page says to an unknown browser and to a known person.
const UNKNOWN_WAIT: &str = "A browser you signed in from before is not held up.";
const KNOWN_WAIT: &str = "Many passwords are being checked at this moment: nothing was done.";

/// A `429` of the rate of hashes, its page saying `says`.
fn assert_flooded(resp: &Resp, says: &str, what: &str) {
    assert_eq!(
        (resp.status, resp.header("Retry-After")),
        (429, Some("60")),
        "{what}: {}",
        resp.text()
    );
    assert!(resp.text().contains(says), "{what}: {}", resp.text());
    assert!(session_cookie(resp).is_none(), "{what}");
    assert_secured(resp, what);
}

#[test]
fn a_flood_from_unknown_browsers_is_refused_without_a_hash_and_known_browsers_sign_in() {
    let own = one_hash_a_minute("AGENTCARD_UNKNOWN_BROWSER_SIGN_INS_PER_MINUTE");
    let email = person(Some(&new_org()), Role::Member);
    let mut known = Device::of(browser_of(&own));
    assert_eq!(
        known.sign_in(&email, PASSWORD).status,
        303,
        "the minute's one"
    );

    // A burst from as many addresses, each under its own limit, with the right password: no
    // check, so no session; a device cookie of no one is no way round.
    for n in 0..8 {
        let refused = browser_of(&own).sign_in(&email, PASSWORD);
        assert_flooded(&refused, UNKNOWN_WAIT, &format!("sign-in {n}"));
    }
    let mut forged = Device::of(browser_of(&own));
    forged.cookie = Some("ab".repeat(32));
    let forged = forged.sign_in(&email, PASSWORD);
    assert_flooded(&forged, UNKNOWN_WAIT, "a device cookie of no one");
    assert_eq!(sessions_of(&email), 1);

    // The browser the person signed in from, back after its session ended, signs in again,
    // held to the known people's rate.
    known.browser.cookie = None;
    let again = known.sign_in(&email, PASSWORD);
    assert_eq!(again.status, 303, "{}", again.text());
    assert!(known.browser.is_signed_in());
    assert_eq!(sessions_of(&email), 2);
}

#[test]
fn beyond_the_rate_of_hashes_for_known_people_each_of_their_hashes_is_refused() {
    let own = one_hash_a_minute("AGENTCARD_PASSWORD_HASHES_PER_MINUTE");
    let email = person(Some(&new_org()), Role::Member);
    let stored = stored_hash(&email);
    let mut known = Device::of(browser_of(&own));
    assert_eq!(
        known.sign_in(&email, PASSWORD).status,
        303,
        "an unknown browser"
    );
    known.browser.cookie = None;
    assert_eq!(
        known.sign_in(&email, PASSWORD).status,
        303,
        "the minute's one"
    );

    // Whatever hashes for a known person is held to the same rate: a sign-in from their
    // browser, a password change, a set-password link.
    let again = known.sign_in(&email, PASSWORD);
    assert_flooded(&again, KNOWN_WAIT, "a known browser's sign-in");
    let change = known.browser.write(
        "/password",
        &[
            ("current_password", PASSWORD),
            ("new_password", "a brand new password"),
        ],
    );
    assert_flooded(&change, KNOWN_WAIT, "password change");
    let found = people::find_by_email(&mut db(), &email).unwrap().unwrap();
    let url = server().app.config.console_url.clone().unwrap();
    let link = members::password_link(&mut db(), &Actor::Cli, &url, &found).unwrap();
    let path = link.strip_prefix(ORIGIN).unwrap().to_string();
    let set = browser_of(&own).post(&path, &[("new_password", "the reset password")]);
    assert_flooded(&set, KNOWN_WAIT, "set-password link");

    // Nothing changed: the password, the sessions, the link (still usable where hashes are);
    // unknown browsers have a rate of their own.
    assert_eq!(stored_hash(&email), stored);
    assert_eq!(sessions_of(&email), 2);
    assert!(known.browser.is_signed_in());
    assert_eq!(browser_of(&own).sign_in(&email, PASSWORD).status, 303);
    let used = Browser::new().post(&path, &[("new_password", "the reset password")]);
    assert_eq!(
        used.header("Location"),
        Some("/?notice=password-set"),
        "{}",
        used.text()
    );
}
