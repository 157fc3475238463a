//! A sign-in flood from many addresses. An email that belongs to no one costs no hash. The
//! hashes of sign-ins from browsers unknown to the person are budgeted per email and per address
//! block (`429` beyond), and beyond the global rate for unknown browsers the sign-in page asks
//! for a proof of work, which a browser (here the test, in Rust) solves: a solution signs in
//! once, on any instance of the fleet; a reused, forged, expired or wrong one is refused. The
//! browsers a person signed in from before are held up by none of it. Beyond the rate for known
//! people, their sign-ins, password changes and set-password links are refused without a hash.

use crate::console_fixtures::{
    assert_secured, hidden, new_org, person, session_cookie, Browser, Device, ORIGIN, PASSWORD,
};
use crate::harness::{
    db, next_client_ip, server, start_server, Client, OwnServer, Resp, CLIENT_IP_HEADER,
    CONSOLE_HOST,
};
use agentcard::db::people;
use agentcard::domain::Role;
use agentcard::ops::{members, Actor};
use agentcard::proof_of_work::{self, Key};
use sha2::{Digest, Sha256};
use std::sync::atomic::{AtomicU32, Ordering};

/// A server of its own on the shared database, with `settings`.
fn own_with(settings: &[(&str, &str)]) -> OwnServer {
    let mut all = vec![
        ("AGENTCARD_CLIENT_IP_HEADER", CLIENT_IP_HEADER),
        ("AGENTCARD_TRUSTED_PROXIES", "127.0.0.0/8"),
    ];
    all.extend_from_slice(settings);
    start_server(&server().database_url, &all)
}

/// A server of its own whose rate `variable` is one hash a minute: its first hash is allowed,
/// and the requests of a test that follow it fall within the same minute.
fn one_hash_a_minute(variable: &str) -> OwnServer {
    own_with(&[(variable, "1")])
}

/// A browser of `own`, from an address of its own.
fn browser_of(own: &OwnServer) -> Browser {
    browser_at(own, &next_client_ip())
}

fn browser_at(own: &OwnServer, ip: &str) -> Browser {
    Browser {
        client: Client::new(own.addr).host(CONSOLE_HOST).ip(ip),
        cookie: None,
    }
}

/// An address block (/24) no other test uses, and its `host`th address.
fn new_block() -> impl Fn(u8) -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    move |host| format!("100.{}.{}.{host}", 64 + (n >> 8) % 64, n % 256)
}

/// A browser of `own` in an address block of its own.
fn browser_in_new_block(own: &OwnServer) -> Browser {
    browser_at(own, &new_block()(1))
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

/// What the refusal page says to a known person, and beyond an unknown browser's budgets.
const KNOWN_WAIT: &str = "Many passwords are being checked at this moment: nothing was done. \
                          Wait a minute, then do it again.";
const BUDGET_WAIT: &str = "in the last minute: nothing was done. Wait a minute, then sign in \
                           again. A browser you signed in from before is not held up";
/// What the sign-in page says when it asks for a proof of work, and when it refused one.
const ASKED: &str = "this browser must first do a few seconds of work";
const PROOF_REFUSED: &str = "the proof of work this browser sent was not accepted";

/// A `429` of a rate or budget of hashes, its page saying `says`.
fn assert_refused(resp: &Resp, says: &str, what: &str) {
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

/// Argon2id computations of `own` so far.
fn hashes(own: &OwnServer) -> u64 {
    own.app.passwords.hashes()
}

#[test]
fn an_unknown_email_costs_no_hash_and_is_answered_as_a_wrong_password() {
    let own = own_with(&[]);
    let email = person(Some(&new_org()), Role::Member);
    let before = hashes(&own);
    let wrong = browser_of(&own).sign_in(&email, "not the password");
    assert_eq!(hashes(&own), before + 1, "a wrong password is checked");
    let nobody = format!("nobody-{}", email);
    let unknown = browser_of(&own).sign_in(&nobody, "not the password");
    assert_eq!(hashes(&own), before + 1, "an unknown email costs no hash");
    assert_eq!((wrong.status, unknown.status), (422, 422));
    let shown = |resp: &Resp| {
        resp.text()
            .replace(&nobody, "EMAIL")
            .replace(&email, "EMAIL")
    };
    assert_eq!(shown(&wrong), shown(&unknown));
    assert!(unknown.text().contains("wrong email or password"));
    assert!(session_cookie(&unknown).is_none());
}

#[test]
fn unknown_browsers_hashes_are_budgeted_per_email_and_known_browsers_are_not_held_up() {
    let own = own_with(&[]);
    let email = person(Some(&new_org()), Role::Member);
    let mut known = Device::of(browser_in_new_block(&own));
    assert_eq!(known.sign_in(&email, PASSWORD).status, 303);
    // Nine more sign-ins with the right password, each from a new browser of another block:
    // every one a hash of the email's budget of ten a minute, then none.
    for n in 1..10 {
        let resp = browser_in_new_block(&own).sign_in(&email, PASSWORD);
        assert_eq!(resp.status, 303, "sign-in {n}: {}", resp.text());
    }
    let before = hashes(&own);
    let refused = browser_in_new_block(&own).sign_in(&email, PASSWORD);
    assert_refused(&refused, BUDGET_WAIT, "the email's eleventh hash");
    assert_eq!(hashes(&own), before, "refused without a hash");
    assert_eq!(sessions_of(&email), 10);
    // The browser the person signed in from first is not held to it.
    known.browser.cookie = None;
    let again = known.sign_in(&email, PASSWORD);
    assert_eq!(again.status, 303, "{}", again.text());
    assert_eq!(sessions_of(&email), 11);
}

#[test]
fn unknown_browsers_hashes_are_budgeted_per_address_block() {
    let own = own_with(&[(
        "AGENTCARD_UNKNOWN_BROWSER_SIGN_INS_PER_BLOCK_PER_MINUTE",
        "3",
    )]);
    let email = person(Some(&new_org()), Role::Member);
    let block = new_block();
    // Three sign-ins from three addresses of one /24, for emails no one has: each counts as
    // the hash it would have been.
    for host in 1..=3 {
        let resp = browser_at(&own, &block(host)).sign_in(&format!("x{host}{email}"), "wrong!");
        assert_eq!(resp.status, 422, "{host}: {}", resp.text());
    }
    let before = hashes(&own);
    let refused = browser_at(&own, &block(200)).sign_in(&email, PASSWORD);
    assert_refused(&refused, BUDGET_WAIT, "the block's fourth");
    assert_eq!(hashes(&own), before, "refused without a hash");
    assert_eq!(sessions_of(&email), 0);
    let elsewhere = browser_in_new_block(&own).sign_in(&email, PASSWORD);
    assert_eq!(elsewhere.status, 303, "{}", elsewhere.text());
}

/// The challenge a sign-in page asks to be solved, if it asks one.
fn challenge_of(resp: &Resp) -> Option<String> {
    let page = resp.text();
    page.contains("name=\"challenge\"")
        .then(|| hidden(&page, "challenge"))
}

/// What a browser's Web Worker finds: the first nonce giving the leading zero bits asked.
fn solve(challenge: &str) -> String {
    let bits: u32 = challenge.split('.').nth(1).unwrap().parse().unwrap();
    (0u64..)
        .map(|n| n.to_string())
        .find(|nonce| zero_bits(challenge, nonce) >= bits)
        .unwrap()
}

fn zero_bits(challenge: &str, nonce: &str) -> u32 {
    let digest = Sha256::digest(format!("{challenge}:{nonce}"));
    let zero_bytes = digest.iter().take_while(|b| **b == 0).count();
    let next = digest.get(zero_bytes).map_or(0, |b| b.leading_zeros());
    8 * zero_bytes as u32 + next
}

/// A sign-in from `browser` with a proof of work.
fn sign_in_with_proof(browser: &mut Browser, email: &str, challenge: &str, nonce: &str) -> Resp {
    let fields = [
        ("email", email),
        ("password", PASSWORD),
        ("challenge", challenge),
        ("proof", nonce),
    ];
    let resp = browser.post("/sign-in", &fields);
    if let Some(secret) = session_cookie(&resp) {
        browser.cookie = Some(secret);
    }
    resp
}

/// The sign-in page again, asking for a new proof (`status`), nothing checked or started.
fn assert_asked(resp: &Resp, status: u16, what: &str) -> String {
    assert_eq!(resp.status, status, "{what}: {}", resp.text());
    let page = resp.text();
    assert!(page.contains(ASKED), "{what}: {page}");
    assert!(
        page.contains("<script src=\"/console.js\" defer></script>"),
        "{what}"
    );
    assert!(session_cookie(resp).is_none(), "{what}");
    assert_secured(resp, what);
    challenge_of(resp).unwrap_or_else(|| panic!("{what}: no challenge in {page}"))
}

#[test]
fn beyond_the_global_rate_a_solved_proof_of_work_signs_in_once_on_any_instance() {
    let own = one_hash_a_minute("AGENTCARD_UNKNOWN_BROWSER_SIGN_INS_PER_MINUTE");
    let other = own_with(&[("AGENTCARD_UNKNOWN_BROWSER_SIGN_INS_PER_MINUTE", "1")]);
    let email = person(Some(&new_org()), Role::Member);
    let mut known = Device::of(browser_of(&own));
    assert_eq!(
        known.sign_in(&email, PASSWORD).status,
        303,
        "the minute's one"
    );
    let form = browser_of(&own).get("/sign-in");
    assert_eq!(form.status, 200);
    let offered = challenge_of(&form).expect("in a flood the form carries a challenge");
    assert!(form
        .text()
        .contains(&format!("data-challenge=\"{offered}\"")));
    let worker = browser_of(&own).get("/proof-worker.js");
    assert_eq!(
        (worker.status, worker.header("Content-Type")),
        (200, Some("text/javascript; charset=utf-8"))
    );
    assert!(worker.text().contains("crypto.subtle.digest(\"SHA-256\""));

    // Without a proof: the page asks for one, whatever the address; no hash, no session.
    let before = hashes(&own);
    for n in 0..3 {
        assert_asked(
            &browser_of(&own).sign_in(&email, PASSWORD),
            200,
            &format!("{n}"),
        );
    }
    let mut forged_cookie = Device::of(browser_of(&own));
    forged_cookie.cookie = Some("ab".repeat(32));
    assert_asked(
        &forged_cookie.sign_in(&email, PASSWORD),
        200,
        "a device cookie of no one",
    );
    assert_eq!(hashes(&own), before);

    // Solved: the sign-in's hash goes through, once.
    let nonce = solve(&offered);
    let mut solver = browser_of(&own);
    let solved = sign_in_with_proof(&mut solver, &email, &offered, &nonce);
    assert_eq!(solved.status, 303, "{}", solved.text());
    assert!(solver.is_signed_in());
    assert_eq!(hashes(&own), before + 1);
    let reused = sign_in_with_proof(&mut browser_of(&own), &email, &offered, &nonce);
    let fresh = assert_asked(&reused, 422, "a proof used already");
    assert!(reused.text().contains(PROOF_REFUSED));
    assert_ne!(fresh, offered);

    // Another instance of the fleet accepts this one's challenge, once for the fleet.
    let nonce = solve(&fresh);
    let there = sign_in_with_proof(&mut browser_of(&other), &email, &fresh, &nonce);
    assert_eq!(there.status, 303, "{}", there.text());
    let back = sign_in_with_proof(&mut browser_of(&own), &email, &fresh, &nonce);
    assert_asked(&back, 422, "spent on the other instance");

    // Forged, expired, or not solved: refused, nothing checked.
    let before = hashes(&own);
    let challenge = challenge_of(&browser_of(&own).get("/sign-in")).unwrap();
    let [issued, bits, random, mac]: [&str; 4] =
        challenge.split('.').collect::<Vec<_>>().try_into().unwrap();
    let easier = format!("{issued}.1.{random}.{mac}");
    let forged = format!("{issued}.{bits}.{random}.{}", "0".repeat(64));
    let old = proof_of_work::challenge(&fleet_key(), proof_of_work::now() - 301, 1);
    let wrong_nonce = (0u64..)
        .map(|n| n.to_string())
        .find(|nonce| zero_bits(&challenge, nonce) < bits.parse::<u32>().unwrap())
        .unwrap();
    let tries = [
        ("a challenge made easier", easier.clone(), solve(&easier)),
        ("another key's", forged.clone(), solve(&forged)),
        ("expired", old.clone(), solve(&old)),
        ("not solved", challenge.clone(), wrong_nonce),
    ];
    for (what, challenge, nonce) in tries {
        let resp = sign_in_with_proof(&mut browser_of(&own), &email, &challenge, &nonce);
        assert_asked(&resp, 422, what);
    }
    assert_eq!(hashes(&own), before);

    // The person's own browser was never held up.
    known.browser.cookie = None;
    assert_eq!(known.sign_in(&email, PASSWORD).status, 303);
    assert_eq!(sessions_of(&email), 4);
}

/// The fleet's key of proofs of work, as the database keeps it.
fn fleet_key() -> Key {
    let row = db()
        .query_one("SELECT secret FROM proof_of_work_key", &[])
        .unwrap();
    Key::new(row.get(0))
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
    assert_refused(&again, KNOWN_WAIT, "a known browser's sign-in");
    let change = known.browser.write(
        "/password",
        &[
            ("current_password", PASSWORD),
            ("new_password", "a brand new password"),
        ],
    );
    assert_refused(&change, KNOWN_WAIT, "password change");
    let found = people::find_by_email(&mut db(), &email).unwrap().unwrap();
    let url = server().app.config.console_url.clone().unwrap();
    let link = members::password_link(&mut db(), &Actor::Cli, &url, &found).unwrap();
    let path = link.strip_prefix(ORIGIN).unwrap().to_string();
    let set = browser_of(&own).post(&path, &[("new_password", "the reset password")]);
    assert_refused(&set, KNOWN_WAIT, "set-password link");

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
