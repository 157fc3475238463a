//! The console's passwords: Argon2id with OWASP's parameters (19 MiB, 2 passes, 1 lane),
//! stored as PHC strings, computed on threads of their own, at the lowest scheduling priority,
//! under two global rates.
//!
//! A hash takes tens of milliseconds of a core and 19 MiB on purpose. So that sign-ins never
//! take cores from the workers serving `/fragment`, every hash runs on a few threads of this
//! module at `SCHED_IDLE` (nice 19 where that is refused): the kernel runs them only on time
//! no other thread of the process wants. The caller, a blocking-pool thread (never a
//! coroutine), waits for its answer on a channel. As many hashes as there are threads run at
//! once, `waiting` more wait in the queue, the rest are refused at once ([`Refused::Busy`]).
//!
//! The idle priority orders the threads of one process only: the kernel shares the cores
//! between groups of processes first, and the process's group pays for its hashes. So the
//! rates bound what a flood costs, whatever the client addresses: beyond its rate a hash is
//! refused at once ([`Refused::TooMany`]), a refusal each, not a hash. Who asks decides the
//! rate ([`Caller`]): anyone can send sign-ins from browsers the person never used, so those
//! have a small rate of their own, which a flood empties without touching the rate of the
//! people the service knows (a browser they signed in from before, their session, their link).

use crate::domain::NewPassword;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::{Algorithm, Argon2, Params, Version};
use crossbeam::channel::{self, Sender};
use parking_lot::Mutex;
use rand::rngs::OsRng;
use rand::RngCore;
use std::fmt;
use std::panic::{self, AssertUnwindSafe};
use std::sync::{Arc, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

/// OWASP's Password Storage Cheat Sheet, Argon2id: m=19456 KiB, t=2, p=1.
const MEMORY_KIB: u32 = 19_456;
const PASSES: u32 = 2;
const LANES: u32 = 1;

/// Why a password was neither hashed nor checked: nothing was done.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    /// Every hashing thread is busy and the queue is full: answered `503`.
    #[error("too many passwords are being checked at once")]
    Busy,
    /// Beyond the caller's global rate of hashes, from all addresses together: answered `429`.
    #[error("too many passwords were checked in the last moments")]
    TooMany(Caller),
}

type Job = Box<dyn FnOnce() + Send + 'static>;

/// Who asks for a hash, which decides the rate it is held to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caller {
    /// A person shown to be who they are: a sign-in from a browser they signed in from before
    /// (its device cookie), a password change in their session, their set-password link.
    Known,
    /// A sign-in from a browser not known to be the person's: what a flood sends.
    Unknown,
}

impl Caller {
    /// Who signs in: known when the browser is one the person signed in from before.
    pub fn signing_in(from_a_known_browser: bool) -> Caller {
        match from_a_known_browser {
            true => Caller::Known,
            false => Caller::Unknown,
        }
    }
}

/// The global rates of hashes, a minute, by [`Caller`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rates {
    pub known_per_minute: u64,
    pub unknown_per_minute: u64,
}

pub struct Passwords {
    /// Work for the hashing threads; a full queue is [`Refused::Busy`].
    jobs: Sender<Job>,
    known: Mutex<Rate>,
    unknown: Mutex<Rate>,
    /// Checked when the email is unknown, so that the answer takes the time of a real check.
    dummy: Arc<OnceLock<String>>,
}

impl Passwords {
    /// `threads` hashing threads, `waiting` more hashes queued, at most `rates` hashes a
    /// minute (each in bursts of up to [`BURST`]'s worth).
    pub fn new(threads: usize, waiting: usize, rates: Rates) -> Passwords {
        let threads = threads.max(1);
        let (jobs, incoming) = channel::bounded::<Job>(waiting);
        let (told, priorities) = channel::bounded(threads);
        for index in 0..threads {
            let (incoming, told) = (incoming.clone(), told.clone());
            thread::Builder::new()
                .name(format!("password-{index}"))
                .spawn(move || {
                    let _ = told.send(Priority::lower_own());
                    for job in incoming {
                        // A job hands its panic to its caller (its reply is dropped): this
                        // thread goes on.
                        let _ = panic::catch_unwind(AssertUnwindSafe(job));
                    }
                })
                .expect("cannot start a password-hashing thread");
        }
        if let Ok(priority) = priorities.recv() {
            log::info!(
                "password hashing: {threads} thread(s) at {priority}, at most {} hashes a minute \
                 for known people and {} for sign-ins from unknown browsers",
                rates.known_per_minute,
                rates.unknown_per_minute
            );
        }
        let now = Instant::now();
        Passwords {
            jobs,
            known: Mutex::new(Rate::new(rates.known_per_minute, now)),
            unknown: Mutex::new(Rate::new(rates.unknown_per_minute, now)),
            dummy: Arc::new(OnceLock::new()),
        }
    }

    /// The PHC string to store for a new password, which only a known person chooses (in
    /// their session or through their link).
    pub fn hash(&self, password: &NewPassword) -> Result<String, Refused> {
        let password = password.expose().to_string();
        self.run(Caller::Known, move || hash_now(&password))
    }

    /// Whether `candidate` is the password of `stored`. Without a stored hash (unknown email, or
    /// no password set yet) the same work is done against a dummy hash, and the answer is no.
    pub fn verify(
        &self,
        caller: Caller,
        stored: Option<&str>,
        candidate: &str,
    ) -> Result<bool, Refused> {
        let (stored, candidate) = (stored.map(str::to_string), candidate.to_string());
        let dummy = Arc::clone(&self.dummy);
        self.run(caller, move || {
            let dummy = dummy.get_or_init(|| {
                let mut random = [0u8; 16];
                OsRng.fill_bytes(&mut random);
                hash_now(&hex::encode(random))
            });
            let matches = verify_now(stored.as_deref().unwrap_or(dummy), &candidate);
            stored.is_some() && matches
        })
    }

    /// Whether `caller`'s rate has room for a hash now (a caller refuses at once, before any
    /// other work, when it has not; the hash itself may still be refused).
    pub fn has_room(&self, caller: Caller) -> bool {
        self.rate(caller).lock().has_room(Instant::now())
    }

    fn rate(&self, caller: Caller) -> &Mutex<Rate> {
        match caller {
            Caller::Known => &self.known,
            Caller::Unknown => &self.unknown,
        }
    }

    /// Runs `work` on a hashing thread, within `caller`'s rate and the queue, and waits for
    /// its answer. The caller is an OS thread (the blocking pool's): the wait blocks it.
    fn run<T: Send + 'static>(
        &self,
        caller: Caller,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, Refused> {
        if !self.rate(caller).lock().take(Instant::now()) {
            return Err(Refused::TooMany(caller));
        }
        let (reply, answer) = channel::bounded(1);
        let job: Job = Box::new(move || {
            let _ = reply.send(work());
        });
        self.jobs.try_send(job).map_err(|_| Refused::Busy)?;
        Ok(answer
            .recv()
            .expect("a hashing job answers (Argon2id hashes any password of bounded length)"))
    }
}

/// A global rate of hashes: a bucket that holds [`BURST`]'s worth (at least one) and fills
/// at `per_minute`; a hash takes one from it, an empty bucket refuses. People signing in come
/// a few at a time (a team at the start of its day): the burst lets them in at once, while a
/// flood gets the sustained rate only.
struct Rate {
    per_second: f64,
    capacity: f64,
    tokens: f64,
    at: Instant,
}

/// How long a full bucket lasts at the rate.
const BURST: Duration = Duration::from_secs(10);

impl Rate {
    fn new(per_minute: u64, now: Instant) -> Rate {
        let per_second = per_minute as f64 / 60.0;
        let capacity = (per_second * BURST.as_secs_f64()).max(1.0);
        Rate {
            per_second,
            capacity,
            tokens: capacity,
            at: now,
        }
    }

    fn has_room(&mut self, now: Instant) -> bool {
        let refill = now.saturating_duration_since(self.at).as_secs_f64() * self.per_second;
        self.tokens = (self.tokens + refill).min(self.capacity);
        self.at = now;
        self.tokens >= 1.0
    }

    fn take(&mut self, now: Instant) -> bool {
        let room = self.has_room(now);
        if room {
            self.tokens -= 1.0;
        }
        room
    }
}

/// The scheduling priority a hashing thread got for itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Priority {
    /// `SCHED_IDLE`: runs only when no other thread of the machine wants the core.
    Idle,
    /// `SCHED_IDLE` was refused; nice 19, the lowest of the normal policy.
    Nice19,
    /// Both were refused: the priority of the process.
    Unchanged,
}

impl Priority {
    /// Lowers the calling thread's priority (Linux sets it per thread), as low as allowed.
    #[cfg(target_os = "linux")]
    fn lower_own() -> Priority {
        let param = libc::sched_param { sched_priority: 0 };
        // SAFETY: plain system calls on the calling thread (0, its own id), with a valid param.
        if unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) } == 0 {
            return Priority::Idle;
        }
        // SAFETY: as above.
        let thread = unsafe { libc::gettid() } as libc::id_t;
        // SAFETY: as above.
        if unsafe { libc::setpriority(libc::PRIO_PROCESS, thread, 19) } == 0 {
            return Priority::Nice19;
        }
        Priority::Unchanged
    }

    #[cfg(not(target_os = "linux"))]
    fn lower_own() -> Priority {
        Priority::Unchanged
    }
}

impl fmt::Display for Priority {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Priority::Idle => "SCHED_IDLE",
            Priority::Nice19 => "nice 19 (SCHED_IDLE refused)",
            Priority::Unchanged => "normal priority (SCHED_IDLE and nice 19 refused)",
        })
    }
}

fn argon2() -> Argon2<'static> {
    let params = Params::new(MEMORY_KIB, PASSES, LANES, None).expect("OWASP's Argon2 parameters");
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
}

fn hash_now(password: &str) -> String {
    let salt = SaltString::generate(&mut OsRng);
    argon2()
        .hash_password(password.as_bytes(), &salt)
        .expect("Argon2id hashes any password of bounded length")
        .to_string()
}

/// A stored string that is not a PHC hash never matches (and is not an error for the caller).
fn verify_now(stored: &str, candidate: &str) -> bool {
    PasswordHash::new(stored).is_ok_and(|parsed| {
        argon2()
            .verify_password(candidate.as_bytes(), &parsed)
            .is_ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// As many a minute as the tests may ever need.
    const UNHURRIED: Rates = Rates {
        known_per_minute: 60_000,
        unknown_per_minute: 60_000,
    };
    use Caller::{Known, Unknown};

    #[test]
    fn a_hash_verifies_its_password_only() {
        let passwords = Passwords::new(1, 1, UNHURRIED);
        let password = NewPassword::parse("correct horse").unwrap();
        let stored = passwords.hash(&password).unwrap();
        assert!(stored.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"));
        assert!(passwords
            .verify(Unknown, Some(&stored), "correct horse")
            .unwrap());
        assert!(!passwords
            .verify(Unknown, Some(&stored), "correct horsE")
            .unwrap());
        assert!(!passwords.verify(Unknown, None, "correct horse").unwrap());
        assert!(!passwords
            .verify(Known, Some("not a hash"), "correct horse")
            .unwrap());
    }

    #[test]
    fn hashing_threads_run_at_the_lowest_priority() {
        let passwords = Passwords::new(2, 2, UNHURRIED);
        // SAFETY: plain system calls reading the calling (hashing) thread's own settings.
        let (policy, nice) = passwords
            .run(Known, || unsafe {
                let thread = libc::gettid() as libc::id_t;
                (
                    libc::sched_getscheduler(0),
                    libc::getpriority(libc::PRIO_PROCESS, thread),
                )
            })
            .unwrap();
        assert!(
            policy == libc::SCHED_IDLE || nice == 19,
            "policy {policy}, nice {nice}"
        );
        // SAFETY: as above, on the test's own thread, which keeps the process's priority.
        assert_ne!(unsafe { libc::sched_getscheduler(0) }, libc::SCHED_IDLE);
    }

    #[test]
    fn a_full_queue_refuses_and_a_panic_reaches_its_caller_only() {
        let passwords = Arc::new(Passwords::new(1, 1, UNHURRIED));
        let (release, held) = channel::bounded::<()>(0);
        let (started, running) = channel::bounded::<()>(0);
        let holder = {
            let passwords = Arc::clone(&passwords);
            thread::spawn(move || {
                passwords.run(Known, move || {
                    started.send(()).unwrap();
                    held.recv().unwrap();
                })
            })
        };
        running.recv().unwrap();
        // The one thread is held: one more job waits in the queue, the next is refused.
        let queued = {
            let passwords = Arc::clone(&passwords);
            thread::spawn(move || passwords.run(Known, || "queued"))
        };
        while passwords.jobs.is_empty() {
            thread::yield_now();
        }
        assert_eq!(passwords.run(Unknown, || ()).err(), Some(Refused::Busy));
        release.send(()).unwrap();
        assert_eq!(holder.join().unwrap(), Ok(()));
        assert_eq!(queued.join().unwrap(), Ok("queued"));
        let panicked = {
            let passwords = Arc::clone(&passwords);
            thread::spawn(move || passwords.run(Known, || panic!("boom")))
        };
        assert!(panicked.join().is_err());
        assert_eq!(passwords.run(Known, || 42), Ok(42));
    }

    #[test]
    fn the_rate_gives_ten_seconds_worth_then_refills() {
        let start = Instant::now();
        let mut rate = Rate::new(12, start);
        assert!(rate.take(start) && rate.take(start));
        assert!(!rate.take(start));
        assert!(!rate.take(start + Duration::from_secs(4)));
        assert!(rate.take(start + Duration::from_secs(6)));
        assert!(!rate.take(start + Duration::from_secs(6)));
        // Idle for long, it holds no more than ten seconds' worth.
        let later = start + Duration::from_secs(600);
        assert!(rate.take(later) && rate.take(later));
        assert!(!rate.take(later));
    }

    #[test]
    fn a_slow_rate_still_allows_one_at_a_time() {
        let start = Instant::now();
        let mut rate = Rate::new(1, start);
        assert!(rate.take(start));
        assert!(!rate.take(start + Duration::from_secs(59)));
        assert!(rate.take(start + Duration::from_secs(61)));
    }

    #[test]
    fn a_slow_rate_lets_its_burst_through_at_once() {
        let passwords = at_rates(24, 24);
        let password = NewPassword::parse("correct horse").unwrap();
        let stored = passwords.hash(&password).unwrap();
        assert!(passwords.has_room(Known));
        assert_eq!(
            passwords.verify(Known, Some(&stored), "correct horse"),
            Ok(true)
        );
        assert_eq!(
            passwords.verify(Known, Some(&stored), "wrong horse"),
            Ok(false)
        );
        takes_the_last_of_the_burst(&passwords, &stored, "four hashes: the burst of 24 a minute");
    }

    /// The known people's rate has room for one more check of `stored`, and none after it.
    fn takes_the_last_of_the_burst(passwords: &Passwords, stored: &str, what: &str) {
        assert!(passwords.has_room(Known), "{what}");
        assert_eq!(
            passwords.verify(Known, Some(stored), "correct horse"),
            Ok(true)
        );
        assert!(!passwords.has_room(Known), "{what}");
    }

    fn at_rates(known_per_minute: u64, unknown_per_minute: u64) -> Passwords {
        let rates = Rates {
            known_per_minute,
            unknown_per_minute,
        };
        Passwords::new(1, 4, rates)
    }

    #[test]
    fn refused_by_the_rate_nothing_is_hashed() {
        let passwords = at_rates(1, 1);
        let password = NewPassword::parse("correct horse").unwrap();
        let stored = passwords.hash(&password).unwrap();
        assert_eq!(
            passwords.verify(Known, Some(&stored), "correct horse"),
            Err(Refused::TooMany(Known))
        );
        assert_eq!(
            passwords.hash(&password).err(),
            Some(Refused::TooMany(Known))
        );
    }

    #[test]
    fn unknown_callers_spend_their_own_rate_only() {
        let passwords = at_rates(12, 1);
        let stored = passwords
            .hash(&NewPassword::parse("correct horse").unwrap())
            .unwrap();
        assert_eq!(
            passwords.verify(Unknown, Some(&stored), "wrong horse"),
            Ok(false)
        );
        assert!(!passwords.has_room(Unknown));
        assert_eq!(
            passwords.verify(Unknown, Some(&stored), "correct horse"),
            Err(Refused::TooMany(Unknown))
        );
        // The known's burst of two gave one to the new password, none to the unknowns.
        takes_the_last_of_the_burst(&passwords, &stored, "the burst of 12 a minute is two");
    }
}
