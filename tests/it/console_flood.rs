//! A sign-in flood from many addresses: beyond the global rate of password hashes, a sign-in,
//! a password change and a set-password link are refused (`429`) at once, without hashing,
//! whatever the client address, and nothing changes.

use crate::console_fixtures::{
    assert_secured, new_org, person, session_cookie, Browser, ORIGIN, PASSWORD,
};
use crate::harness::{
    db, next_client_ip, server, start_server, Client, OwnServer, Resp, CLIENT_IP_HEADER,
    CONSOLE_HOST,
};
use agentcard::db::people;
use agentcard::domain::Role;
use agentcard::ops::{members, Actor};

/// A server of its own whose rate of hashes is one a minute: its first hash is allowed, and
/// the requests of a test that follow it fall within the same minute.
fn one_hash_a_minute() -> OwnServer {
    start_server(
        &server().database_url,
        &[
            ("AGENTCARD_CLIENT_IP_HEADER", CLIENT_IP_HEADER),
            ("AGENTCARD_TRUSTED_PROXIES", "127.0.0.0/8"),
            ("AGENTCARD_PASSWORD_HASHES_PER_MINUTE", "1"),
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

fn assert_flooded(resp: &Resp, what: &str) {
    assert_eq!(
        (resp.status, resp.header("Retry-After")),
        (429, Some("60")),
        "{what}: {}",
        resp.text()
    );
    assert!(session_cookie(resp).is_none(), "{what}");
    assert_secured(resp, what);
}

#[test]
fn beyond_the_global_rate_of_hashes_every_address_is_refused_without_a_hash() {
    let own = one_hash_a_minute();
    let email = person(Some(&new_org()), Role::Member);
    let stored = stored_hash(&email);
    let mut signed_in = browser_of(&own);
    assert_eq!(signed_in.sign_in(&email, PASSWORD).status, 303);

    // A burst from as many addresses, each under its own limit, with the right password: no
    // check, so no session.
    for n in 0..8 {
        let refused = browser_of(&own).sign_in(&email, PASSWORD);
        assert_flooded(&refused, &format!("sign-in {n}"));
    }
    assert_eq!(sessions_of(&email), 1);

    // Whatever hashes is held to the same rate: a password change, a set-password link.
    let change = signed_in.write(
        "/password",
        &[
            ("current_password", PASSWORD),
            ("new_password", "a brand new password"),
        ],
    );
    assert_flooded(&change, "password change");
    let found = people::find_by_email(&mut db(), &email).unwrap().unwrap();
    let url = server().app.config.console_url.clone().unwrap();
    let link = members::password_link(&mut db(), &Actor::Cli, &url, &found).unwrap();
    let path = link.strip_prefix(ORIGIN).unwrap().to_string();
    let set = browser_of(&own).post(&path, &[("new_password", "the reset password")]);
    assert_flooded(&set, "set-password link");

    // Nothing changed: the password, the session, the link (still usable where hashes are).
    assert_eq!(stored_hash(&email), stored);
    assert!(signed_in.is_signed_in());
    assert_eq!(browser_of(&own).get("/sign-in").status, 200);
    let used = Browser::new().post(&path, &[("new_password", "the reset password")]);
    assert_eq!(
        used.header("Location"),
        Some("/?notice=password-set"),
        "{}",
        used.text()
    );
}
