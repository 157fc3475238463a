//! The management API's rate limits, kept in the process over a sliding 60-second window.
//!
//! Each counter is the log of its recent hits (at most `limit` instants), so "the 121st
//! request within 60 seconds" is exact on one instance. Several counters can be checked and
//! charged together: a request charges its token and its write counter only if both have room.

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
/// The header every management response carries.
pub const POLICY_HEADER: &str = "\"token\";q=120;w=60, \"write\";q=60;w=60";

/// Sweep idle counters after this many charges, so memory follows the active clients only.
const SWEEP_EVERY: u32 = 1024;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Counter {
    Token(String),
    TokenWrites(String),
    FailedAuth(IpAddr),
    IpWithToken(IpAddr),
    Contact(IpAddr),
    /// An email address, lowercased, as typed into the console's sign-in form.
    FailedSignIn(String),
}

impl Counter {
    pub fn limit(&self) -> usize {
        match self {
            Counter::Token(_) => REQUESTS_PER_TOKEN,
            Counter::TokenWrites(_) => WRITES_PER_TOKEN,
            Counter::FailedAuth(_) => FAILED_AUTH_PER_IP,
            Counter::IpWithToken(_) => REQUESTS_PER_IP_WITH_TOKEN,
            Counter::Contact(_) => CONTACT_PER_IP,
            Counter::FailedSignIn(_) => FAILED_SIGN_IN_PER_EMAIL,
        }
    }
}

#[derive(Default)]
pub struct RateLimiter {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    logs: HashMap<Counter, VecDeque<Instant>>,
    charges_since_sweep: u32,
    /// Checks answered "no room" since start: each is a `429` (operator metrics).
    refusals: u64,
}

impl RateLimiter {
    /// Is there room in every counter? Charges none. `false` is answered `429`.
    pub fn has_room(&self, counters: &[Counter]) -> bool {
        let now = Instant::now();
        let mut state = self.state.lock();
        state.room_in_all(counters, now)
    }

    /// Charges every counter if each has room; otherwise charges none and returns false,
    /// which is answered `429`.
    pub fn try_charge(&self, counters: &[Counter]) -> bool {
        let now = Instant::now();
        let mut state = self.state.lock();
        if !state.room_in_all(counters, now) {
            return false;
        }
        for counter in counters {
            state
                .logs
                .entry(counter.clone())
                .or_default()
                .push_back(now);
        }
        state.after_charge(now);
        true
    }

    /// Records a hit whatever the count (failed authentications are counted, never refused
    /// here; the refusal comes from `has_room` on the next attempt).
    pub fn charge(&self, counter: Counter) {
        let now = Instant::now();
        let mut state = self.state.lock();
        let limit = counter.limit();
        let log = state.logs.entry(counter).or_default();
        log.push_back(now);
        while log.len() > limit {
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
    fn room_in_all(&mut self, counters: &[Counter], now: Instant) -> bool {
        let room = counters.iter().all(|c| self.room(c, now));
        if !room {
            self.refusals += 1;
        }
        room
    }

    fn room(&mut self, counter: &Counter, now: Instant) -> bool {
        match self.logs.get_mut(counter) {
            Some(log) => {
                prune(log, now);
                log.len() < counter.limit()
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
        let token = || Counter::Token("mgt_a".into());
        let writes = || Counter::TokenWrites("mgt_a".into());
        for _ in 0..60 {
            assert!(limiter.try_charge(&[token(), writes()]));
        }
        assert!(!limiter.try_charge(&[token(), writes()]));
        for _ in 60..120 {
            assert!(limiter.try_charge(&[token()]));
        }
        assert!(!limiter.try_charge(&[token()]));
        assert!(limiter.try_charge(&[Counter::Token("mgt_b".into())]));
        assert_eq!(limiter.refusals(), 2);
    }

    #[test]
    fn a_refused_charge_charges_nothing() {
        let limiter = RateLimiter::default();
        let writes = Counter::TokenWrites("t".into());
        for _ in 0..60 {
            limiter.charge(writes.clone());
        }
        let token = Counter::Token("t".into());
        assert!(!limiter.try_charge(&[token.clone(), writes]));
        assert!(limiter.has_room(&[token]));
    }

    #[test]
    fn failed_authentications_fill_their_ip_counter() {
        let limiter = RateLimiter::default();
        let ip: IpAddr = "192.0.2.1".parse().unwrap();
        for _ in 0..30 {
            assert!(limiter.has_room(&[Counter::FailedAuth(ip)]));
            limiter.charge(Counter::FailedAuth(ip));
        }
        assert!(!limiter.has_room(&[Counter::FailedAuth(ip)]));
    }
}
