//! The management API's rate limits, and the console's sign-in limits and budgets of hashes,
//! kept in the process over a sliding 60-second window.
//!
//! Each limit keeps the log of its recent hits (at most its `max` instants), so "the 121st
//! request within 60 seconds" is exact on one instance. Several limits can be checked and
//! charged together: a request charges its token's and its writes' limits only if both have
//! room.

use crate::ids::TokenId;
use ipnet::IpNet;
use parking_lot::Mutex;
use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::time::{Duration, Instant};

pub const WINDOW: Duration = Duration::from_secs(60);
pub const REQUESTS_PER_TOKEN: usize = 120;
pub const WRITES_PER_TOKEN: usize = 60;
pub const FAILED_AUTH_PER_IP: usize = 30;
pub const REQUESTS_PER_IP_WITH_TOKEN: usize = 600;
/// Contact-form messages accepted per client IP (a spam guard, not a contract limit).
pub const CONTACT_PER_IP: usize = 5;
/// The console's failed sign-ins per email address, from any client address: guesses spread
/// over many addresses still meet this one.
pub const FAILED_SIGN_IN_PER_EMAIL: usize = 10;
/// Password hashes that sign-ins from browsers unknown to the person may cause, per email
/// (as many as its failed sign-ins) and per client address block ([`address_block`]), whatever
/// their answer: what one network, or guesses at one person, take of the global rate. The
/// block's is a setting (`AGENTCARD_UNKNOWN_BROWSER_SIGN_INS_PER_BLOCK_PER_MINUTE`), this its
/// default.
pub const UNKNOWN_BROWSER_HASHES_PER_EMAIL: usize = FAILED_SIGN_IN_PER_EMAIL;
pub const UNKNOWN_BROWSER_HASHES_PER_BLOCK: usize = 30;
/// The header every management response carries.
pub const POLICY_HEADER: &str = "\"token\";q=120;w=60, \"write\";q=60;w=60";

/// Sweep idle limits' logs after this many charges, so memory follows the active clients only.
const SWEEP_EVERY: u32 = 1024;

/// A rate limit and what it applies to.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Limit {
    Token(TokenId),
    TokenWrites(TokenId),
    FailedAuth(IpAddr),
    IpWithToken(IpAddr),
    Contact(IpAddr),
    /// An email address, lowercased, as typed into the console's sign-in form.
    FailedSignIn(String),
    /// Hashes for sign-ins from unknown browsers: to an email (lowercased), from a block.
    UnknownBrowserHashes(String),
    UnknownBrowserHashesFrom(IpNet),
}

impl Limit {
    /// The most hits it allows within the window, the address block's budget being `per_block`.
    fn max(&self, per_block: usize) -> usize {
        match self {
            Limit::Token(_) => REQUESTS_PER_TOKEN,
            Limit::TokenWrites(_) => WRITES_PER_TOKEN,
            Limit::FailedAuth(_) => FAILED_AUTH_PER_IP,
            Limit::IpWithToken(_) => REQUESTS_PER_IP_WITH_TOKEN,
            Limit::Contact(_) => CONTACT_PER_IP,
            Limit::FailedSignIn(_) => FAILED_SIGN_IN_PER_EMAIL,
            Limit::UnknownBrowserHashes(_) => UNKNOWN_BROWSER_HASHES_PER_EMAIL,
            Limit::UnknownBrowserHashesFrom(_) => per_block,
        }
    }
}

/// The limits a console sign-in is held to: the client address's failed authentications, and
/// the email's failed sign-ins unless the browser holds a device cookie of the person with that
/// email (`known_device`, OWASP's device cookies), so that a stranger who fills the email's
/// count keeps no browser out that the person signed in from before. The same list is checked
/// before the password and charged after a failure.
pub fn sign_in_limits(client: IpAddr, email: &str, known_device: bool) -> Vec<Limit> {
    let address = Limit::FailedAuth(client);
    match known_device {
        true => vec![address],
        false => vec![address, Limit::FailedSignIn(email.trim().to_lowercase())],
    }
}

/// The budgets of hashes a sign-in from a browser unknown to the person takes one from, taken
/// before the hash ([`RateLimiter::try_charge`]): its email's and its address block's.
pub fn unknown_browser_budgets(client: IpAddr, email: &str) -> [Limit; 2] {
    [
        Limit::UnknownBrowserHashes(email.trim().to_lowercase()),
        Limit::UnknownBrowserHashesFrom(address_block(client)),
    ]
}

/// The block of addresses one client likely holds many of: its /24 (IPv4, an IPv4-mapped IPv6
/// address as its IPv4), its /56 (IPv6, a home's or a small site's usual delegation).
pub fn address_block(client: IpAddr) -> IpNet {
    let (address, prefix) = match client.to_canonical() {
        IpAddr::V4(v4) => (IpAddr::V4(v4), 24),
        v6 => (v6, 56),
    };
    IpNet::new(address, prefix)
        .expect("24 and 56 are prefix lengths of their families")
        .trunc()
}

pub struct RateLimiter {
    state: Mutex<State>,
}

impl Default for RateLimiter {
    fn default() -> RateLimiter {
        RateLimiter::new(UNKNOWN_BROWSER_HASHES_PER_BLOCK)
    }
}

#[derive(Default)]
struct State {
    /// The budget of an address block's hashes for unknown browsers, a minute.
    per_block: usize,
    logs: HashMap<Limit, VecDeque<Instant>>,
    charges_since_sweep: u32,
    /// Checks answered "no room" since start: each is a `429` (operator metrics).
    refusals: u64,
}

impl RateLimiter {
    /// The limits, an address block's budget of hashes for unknown browsers being `per_block`.
    pub fn new(per_block: usize) -> RateLimiter {
        RateLimiter {
            state: Mutex::new(State {
                per_block,
                ..State::default()
            }),
        }
    }

    /// Is there room in every limit? Charges none. `false` is answered `429`.
    pub fn has_room(&self, limits: &[Limit]) -> bool {
        let now = Instant::now();
        let mut state = self.state.lock();
        state.room_in_all(limits, now)
    }

    /// Charges every limit if each has room; otherwise charges none and returns false,
    /// which is answered `429`.
    pub fn try_charge(&self, limits: &[Limit]) -> bool {
        let now = Instant::now();
        let mut state = self.state.lock();
        if !state.room_in_all(limits, now) {
            return false;
        }
        for limit in limits {
            state.logs.entry(limit.clone()).or_default().push_back(now);
        }
        state.after_charge(now);
        true
    }

    /// Records a hit whatever the count (failed authentications are counted, never refused
    /// here; the refusal comes from `has_room` on the next attempt).
    pub fn charge(&self, limit: Limit) {
        let now = Instant::now();
        let mut state = self.state.lock();
        let max = limit.max(state.per_block);
        let log = state.logs.entry(limit).or_default();
        log.push_back(now);
        while log.len() > max {
            log.pop_front();
        }
        state.after_charge(now);
    }

    /// Requests refused so far (every `429` of the management API and the contact form).
    pub fn refusals(&self) -> u64 {
        self.state.lock().refusals
    }
}

impl State {
    fn room_in_all(&mut self, limits: &[Limit], now: Instant) -> bool {
        let room = limits.iter().all(|limit| self.room(limit, now));
        if !room {
            self.refusals += 1;
        }
        room
    }

    fn room(&mut self, limit: &Limit, now: Instant) -> bool {
        match self.logs.get_mut(limit) {
            Some(log) => {
                prune(log, now);
                log.len() < limit.max(self.per_block)
            }
            None => true,
        }
    }

    fn after_charge(&mut self, now: Instant) {
        self.charges_since_sweep += 1;
        if self.charges_since_sweep >= SWEEP_EVERY {
            self.charges_since_sweep = 0;
            self.logs.retain(|_, log| {
                prune(log, now);
                !log.is_empty()
            });
        }
    }
}

fn prune(log: &mut VecDeque<Instant>, now: Instant) {
    while log
        .front()
        .is_some_and(|&hit| now.duration_since(hit) >= WINDOW)
    {
        log.pop_front();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_121st_request_and_the_61st_write_are_refused() {
        let limiter = RateLimiter::default();
        let (a, b) = (TokenId::generate(), TokenId::generate());
        let token = || Limit::Token(a.clone());
        let writes = || Limit::TokenWrites(a.clone());
        for _ in 0..60 {
            assert!(limiter.try_charge(&[token(), writes()]));
        }
        assert!(!limiter.try_charge(&[token(), writes()]));
        for _ in 60..120 {
            assert!(limiter.try_charge(&[token()]));
        }
        assert!(!limiter.try_charge(&[token()]));
        assert!(limiter.try_charge(&[Limit::Token(b)]));
        assert_eq!(limiter.refusals(), 2);
    }

    #[test]
    fn a_refused_charge_charges_nothing() {
        let limiter = RateLimiter::default();
        let id = TokenId::generate();
        let writes = Limit::TokenWrites(id.clone());
        for _ in 0..60 {
            limiter.charge(writes.clone());
        }
        let token = Limit::Token(id);
        assert!(!limiter.try_charge(&[token.clone(), writes]));
        assert!(limiter.has_room(&[token]));
    }

    /// What the console's sign-in does with `sign_in_limits`: room in every limit, then a
    /// failure charged to each.
    fn failed_sign_in(limiter: &RateLimiter, client: IpAddr, email: &str, known: bool) -> bool {
        let limits = sign_in_limits(client, email, known);
        if !limiter.has_room(&limits) {
            return false;
        }
        for limit in limits {
            limiter.charge(limit);
        }
        true
    }

    #[test]
    fn a_stranger_filling_an_emails_count_keeps_out_no_browser_of_that_person() {
        let limiter = RateLimiter::default();
        let email = "Owner@Example.org ";
        for n in 0..FAILED_SIGN_IN_PER_EMAIL {
            let stranger: IpAddr = format!("192.0.2.{n}").parse().unwrap();
            assert!(failed_sign_in(&limiter, stranger, email, false));
        }
        let another: IpAddr = "192.0.2.200".parse().unwrap();
        assert!(!failed_sign_in(
            &limiter,
            another,
            "owner@example.org",
            false
        ));
        // The person's own browser is neither blocked nor counted by the email's limit...
        let own: IpAddr = "198.51.100.7".parse().unwrap();
        for _ in 0..FAILED_AUTH_PER_IP {
            assert!(failed_sign_in(&limiter, own, email, true));
        }
        // ...while its address's limit still holds.
        assert!(!failed_sign_in(&limiter, own, email, true));
        assert_eq!(
            limiter.state.lock().logs[&Limit::FailedSignIn("owner@example.org".into())].len(),
            FAILED_SIGN_IN_PER_EMAIL
        );
    }

    #[test]
    fn an_address_block_is_a_slash_24_or_a_slash_56() {
        let block = |ip: &str| address_block(ip.parse().unwrap()).to_string();
        assert_eq!(block("192.0.2.77"), "192.0.2.0/24");
        assert_eq!(block("::ffff:192.0.2.77"), "192.0.2.0/24");
        assert_eq!(block("2001:db8:1:2ff:1::9"), "2001:db8:1:200::/56");
    }

    #[test]
    fn unknown_browsers_hashes_are_budgeted_per_email_and_per_block() {
        let limiter = RateLimiter::default();
        let client = |n: u8| IpAddr::from([198, 51, 100, n]);
        for n in 0..UNKNOWN_BROWSER_HASHES_PER_EMAIL as u8 {
            assert!(limiter.try_charge(&unknown_browser_budgets(client(n), "Person@Example.org")));
        }
        let refused = unknown_browser_budgets(client(200), " person@example.org");
        assert!(!limiter.try_charge(&refused));
        // The block took ten (the eleventh was refused whole), and takes twenty more for other
        // emails, then none; another block is not held up.
        for n in UNKNOWN_BROWSER_HASHES_PER_EMAIL..UNKNOWN_BROWSER_HASHES_PER_BLOCK {
            let email = format!("p{n}@example.org");
            assert!(limiter.try_charge(&unknown_browser_budgets(client(n as u8), &email)));
        }
        let next = unknown_browser_budgets(client(250), "new@example.org");
        assert!(!limiter.try_charge(&next));
        let elsewhere = unknown_browser_budgets(IpAddr::from([198, 51, 101, 1]), "new@example.org");
        assert!(limiter.try_charge(&elsewhere));
    }

    #[test]
    fn failed_authentications_fill_their_ip_counter() {
        let limiter = RateLimiter::default();
        let ip: IpAddr = "192.0.2.1".parse().unwrap();
        for _ in 0..30 {
            assert!(limiter.has_room(&[Limit::FailedAuth(ip)]));
            limiter.charge(Limit::FailedAuth(ip));
        }
        assert!(!limiter.has_room(&[Limit::FailedAuth(ip)]));
    }
}
