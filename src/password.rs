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
//! Beyond it, a sign-in pays for its hash with a proof of work instead ([`Caller::Proven`],
//! `proof_of_work`), held to no global rate.
//!
//! A password checked against no stored hash (an email that belongs to no one) costs no hash:
//! the caller waits as long as one of the recent real checks took ([`Recent`]), on its own
//! thread, so that neither the answer nor its time tells the email is unknown.

use crate::domain::NewPassword;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::{Algorithm, Argon2, Params, Version};
use crossbeam::channel::{self, Sender};
use parking_lot::Mutex;
use rand::rngs::OsRng;
use rand::Rng;
use rand::RngCore;
use std::fmt;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
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
    /// A sign-in from an unknown browser beyond its rate that paid for its hash with a proof
    /// of work (`proof_of_work`): held to no global rate, its cost being the browser's work.
    Proven,
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
    /// How long the last real checks took, for the answers to unknown emails.
    recent: Mutex<Recent>,
    /// Argon2id computations since start.
    hashes: Arc<AtomicU64>,
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
        let passwords = Passwords {
            jobs,
            known: Mutex::new(Rate::new(rates.known_per_minute, now)),
            unknown: Mutex::new(Rate::new(rates.unknown_per_minute, now)),
            recent: Mutex::new(Recent::default()),
            hashes: Arc::new(AtomicU64::new(0)),
        };
        passwords.calibrate();
        passwords
    }

    /// One hash of a random password, timed as a check is, so that an unknown email's answer
    /// has a duration to take before the first real check (not counted in [`Passwords::hashes`]:
    /// no request caused it).
    fn calibrate(&self) {
        let mut random = [0u8; 16];
        OsRng.fill_bytes(&mut random);
        let password = hex::encode(random);
        let started = Instant::now();
        let _ = self.queued(move || hash_now(&password));
        self.recent.lock().record(started.elapsed());
    }

    /// The PHC string to store for a new password, which only a known person chooses (in
    /// their session or through their link).
    pub fn hash(&self, password: &NewPassword) -> Result<String, Refused> {
        let password = password.expose().to_string();
        let hashes = Arc::clone(&self.hashes);
        self.run(Caller::Known, move || {
            counted(&hashes, || hash_now(&password))
        })
    }

    /// Whether `candidate` is the password of `stored`. Without a stored hash (unknown email, or
    /// no password set yet) the answer is no, after the same rate and queue and as long a wait
    /// as a real check (one of the recent ones' durations, drawn at random), but no hash.
    pub fn verify(
        &self,
        caller: Caller,
        stored: Option<&str>,
        candidate: &str,
    ) -> Result<bool, Refused> {
        let Some(stored) = stored else {
            self.admit(caller)?;
            if self.jobs.is_full() {
                return Err(Refused::Busy);
            }
            let wait = self.recent.lock().draw();
            thread::sleep(wait);
            return Ok(false);
        };
        let (stored, candidate) = (stored.to_string(), candidate.to_string());
        let hashes = Arc::clone(&self.hashes);
        let started = Instant::now();
        let matches = self.run(caller, move || {
            counted(&hashes, || verify_now(&stored, &candidate))
        })?;
        self.recent.lock().record(started.elapsed());
        Ok(matches)
    }

    /// Argon2id computations since start (hashes and checks), for tests and the operator.
    pub fn hashes(&self) -> u64 {
        self.hashes.load(Ordering::Relaxed)
    }

    /// Whether `caller`'s rate has room for a hash now (a caller refuses at once, before any
    /// other work, when it has not; the hash itself may still be refused).
    pub fn has_room(&self, caller: Caller) -> bool {
        self.rate(caller)
            .is_none_or(|rate| rate.lock().has_room(Instant::now()))
    }

    fn rate(&self, caller: Caller) -> Option<&Mutex<Rate>> {
        match caller {
            Caller::Known => Some(&self.known),
            Caller::Unknown => Some(&self.unknown),
            Caller::Proven => None,
        }
    }

    /// Takes a hash from `caller`'s rate, if it has one.
    fn admit(&self, caller: Caller) -> Result<(), Refused> {
        match self.rate(caller) {
            Some(rate) if !rate.lock().take(Instant::now()) => Err(Refused::TooMany(caller)),
            _ => Ok(()),
        }
    }

    /// Runs `work` on a hashing thread, within `caller`'s rate and the queue, and waits for
    /// its answer. The caller is an OS thread (the blocking pool's): the wait blocks it.
    fn run<T: Send + 'static>(
        &self,
        caller: Caller,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, Refused> {
        self.admit(caller)?;
        self.queued(work)
    }

    /// Runs `work` on a hashing thread, if the queue has room, and waits for its answer.
    fn queued<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, Refused> {
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

/// How long the last [`Recent::KEPT`] real checks took, from the caller's request to its
/// answer (the queue's wait included): what an unknown email's answer waits, one drawn at random.
#[derive(Default)]
struct Recent {
    durations: Vec<Duration>,
    next: usize,
}

impl Recent {
    const KEPT: usize = 16;

    fn record(&mut self, took: Duration) {
        if self.durations.len() < Self::KEPT {
            self.durations.push(took);
        } else {
            self.durations[self.next] = took;
        }
        self.next = (self.next + 1) % Self::KEPT;
    }

    fn draw(&self) -> Duration {
        match self.durations.len() {
            0 => Duration::ZERO,
            kept => self.durations[rand::thread_rng().gen_range(0..kept)],
        }
    }
}

/// `work`, counted as one Argon2id computation.
fn counted<T>(hashes: &AtomicU64, work: impl FnOnce() -> T) -> T {
    hashes.fetch_add(1, Ordering::Relaxed);
    work()
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
    use Caller::{Known, Proven, Unknown};

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

    /// The stored hash of "correct horse", made by `passwords` (one of its known people's hashes).
    fn correct_horse(passwords: &Passwords) -> String {
        passwords
            .hash(&NewPassword::parse("correct horse").unwrap())
            .unwrap()
    }

    #[test]
    fn unknown_callers_spend_their_own_rate_only() {
        let passwords = at_rates(12, 1);
        let stored = correct_horse(&passwords);
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

    #[test]
    fn an_unknown_email_costs_no_hash_but_takes_from_the_rate_as_a_check_does() {
        let passwords = at_rates(60, 1);
        let stored = correct_horse(&passwords);
        assert_eq!(passwords.hashes(), 1, "the new password's hash");
        assert_eq!(passwords.verify(Unknown, None, "correct horse"), Ok(false));
        assert_eq!(passwords.hashes(), 1, "no hash for no stored password");
        assert_eq!(
            passwords.verify(Unknown, None, "correct horse"),
            Err(Refused::TooMany(Unknown)),
            "the unknown browsers' one hash a minute was taken"
        );
        // A proof of work pays for a hash beyond the rate.
        assert_eq!(
            passwords.verify(Proven, Some(&stored), "correct horse"),
            Ok(true)
        );
        assert!(passwords.has_room(Proven));
        assert_eq!(passwords.hashes(), 2);
    }

    #[test]
    fn an_unknown_emails_wait_is_one_of_the_recent_checks_durations() {
        let mut recent = Recent::default();
        assert_eq!(recent.draw(), Duration::ZERO);
        let kept: Vec<Duration> = (1..=Recent::KEPT as u64 + 4)
            .map(Duration::from_millis)
            .collect();
        for took in &kept {
            recent.record(*took);
        }
        let newest = &kept[4..];
        for _ in 0..100 {
            assert!(newest.contains(&recent.draw()));
        }
    }
}
