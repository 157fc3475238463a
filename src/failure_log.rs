//! A failure that repeats (the database down) said in the log once when it starts, at most
//! every `LOG_EVERY` while it lasts, and once when it ends: an operator reads one line per
//! outage, not one per request or per retry.

use parking_lot::Mutex;
use std::time::{Duration, Instant};

/// While a failure lasts, the log repeats it at most this often.
const LOG_EVERY: Duration = Duration::from_secs(10);

pub struct FailureLog {
    /// What fails, as the log names it ("the report's flush").
    what: &'static str,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// When the failure began, while it lasts.
    since: Option<Instant>,
    /// When the log last said it.
    said: Option<Instant>,
    /// Failures since the log last said it.
    unsaid: u64,
}

impl FailureLog {
    pub const fn new(what: &'static str) -> FailureLog {
        FailureLog {
            what,
            state: Mutex::new(State {
                since: None,
                said: None,
                unsaid: 0,
            }),
        }
    }

    /// One more failure, with its cause (never a secret: callers pass `db::describe`).
    pub fn failed(&self, cause: &str) {
        if let Some(line) = self.failure_at(Instant::now(), cause) {
            log::warn!("{line}");
        }
    }

    /// A success: ends the failure, if one was going on.
    pub fn succeeded(&self) {
        if let Some(line) = self.success_at(Instant::now()) {
            log::warn!("{line}");
        }
    }

    /// The line a failure at `now` writes, if any.
    fn failure_at(&self, now: Instant, cause: &str) -> Option<String> {
        let mut state = self.state.lock();
        let since = *state.since.get_or_insert(now);
        if state
            .said
            .is_some_and(|said| now.duration_since(said) < LOG_EVERY)
        {
            state.unsaid += 1;
            return None;
        }
        let (what, unsaid) = (self.what, std::mem::take(&mut state.unsaid));
        state.said = Some(now);
        Some(if now == since {
            format!("{what} failed: {cause}")
        } else {
            let lasted = now.duration_since(since).as_secs();
            format!("{what} still failing after {lasted}s ({unsaid} more failures): {cause}")
        })
    }

    /// The line a success at `now` writes, if a failure was going on.
    fn success_at(&self, now: Instant) -> Option<String> {
        let mut state = self.state.lock();
        let since = state.since?;
        *state = State::default();
        let lasted = now.duration_since(since).as_secs();
        Some(format!("{} works again after {lasted}s", self.what))
    }

    /// Whether a failure is going on.
    pub fn is_failing(&self) -> bool {
        self.state.lock().since.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_is_said_when_it_starts_every_ten_seconds_and_when_it_ends() {
        let log = FailureLog::new("the test's database");
        let start = Instant::now();
        let at = |seconds: u64| start + Duration::from_secs(seconds);
        let said: Vec<Option<String>> = vec![
            log.failure_at(at(0), "refused"),
            log.failure_at(at(1), "refused"),
            log.failure_at(at(9), "refused"),
            log.failure_at(at(10), "refused"),
            log.failure_at(at(12), "refused"),
            log.success_at(at(13)),
            log.success_at(at(14)),
            log.failure_at(at(15), "reset"),
        ];
        let said: Vec<Option<&str>> = said.iter().map(Option::as_deref).collect();
        assert_eq!(
            said,
            [
                Some("the test's database failed: refused"),
                None,
                None,
                Some("the test's database still failing after 10s (2 more failures): refused"),
                None,
                Some("the test's database works again after 13s"),
                None,
                Some("the test's database failed: reset"),
            ]
        );
        assert!(log.is_failing());
    }
}
