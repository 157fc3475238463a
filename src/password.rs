//! The console's passwords: Argon2id with OWASP's parameters (19 MiB, 2 passes, 1 lane),
//! stored as PHC strings, and a cap on how many hashes run at once.
//!
//! A hash takes tens of milliseconds and 19 MiB on purpose. Callers run on the blocking pool;
//! the gate lets `RUNNING` hashes work at a time and `WAITING` more wait for a turn, and
//! refuses the rest at once ([`Busy`]), so a burst of sign-ins gets a clear "try again" instead
//! of holding every blocking thread and the memory of every hash.

use crate::domain::NewPassword;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::{Algorithm, Argon2, Params, Version};
use parking_lot::{Condvar, Mutex};
use rand::rngs::OsRng;
use rand::RngCore;
use std::sync::OnceLock;

/// OWASP's Password Storage Cheat Sheet, Argon2id: m=19456 KiB, t=2, p=1.
const MEMORY_KIB: u32 = 19_456;
const PASSES: u32 = 2;
const LANES: u32 = 1;

/// Too many hashes are running or waiting: answered `503`, nothing done.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("too many passwords are being checked at once")]
pub struct Busy;

pub struct Passwords {
    gate: Gate,
    /// Checked when the email is unknown, so that the answer takes the time of a real check.
    dummy: OnceLock<String>,
}

impl Passwords {
    /// `running` hashes at a time, `waiting` more queued.
    pub fn new(running: usize, waiting: usize) -> Passwords {
        Passwords {
            gate: Gate::new(running.max(1), waiting),
            dummy: OnceLock::new(),
        }
    }

    /// The PHC string to store for a new password.
    pub fn hash(&self, password: &NewPassword) -> Result<String, Busy> {
        let _turn = self.gate.enter()?;
        Ok(hash_now(password.expose()))
    }

    /// Whether `candidate` is the password of `stored`. Without a stored hash (unknown email, or
    /// no password set yet) the same work is done against a dummy hash, and the answer is no.
    pub fn verify(&self, stored: Option<&str>, candidate: &str) -> Result<bool, Busy> {
        let dummy = self.dummy.get_or_init(|| {
            let mut random = [0u8; 16];
            OsRng.fill_bytes(&mut random);
            hash_now(&hex::encode(random))
        });
        let _turn = self.gate.enter()?;
        let matches = verify_now(stored.unwrap_or(dummy), candidate);
        Ok(stored.is_some() && matches)
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

/// A counting semaphore with a bounded queue.
struct Gate {
    state: Mutex<GateState>,
    turn: Condvar,
    running: usize,
    waiting: usize,
}

struct GateState {
    running: usize,
    waiting: usize,
}

/// A turn at the gate, given back when dropped.
struct Turn<'a>(&'a Gate);

impl Gate {
    fn new(running: usize, waiting: usize) -> Gate {
        Gate {
            state: Mutex::new(GateState {
                running: 0,
                waiting: 0,
            }),
            turn: Condvar::new(),
            running,
            waiting,
        }
    }

    fn enter(&self) -> Result<Turn<'_>, Busy> {
        let mut state = self.state.lock();
        if state.running >= self.running {
            if state.waiting >= self.waiting {
                return Err(Busy);
            }
            state.waiting += 1;
            while state.running >= self.running {
                self.turn.wait(&mut state);
            }
            state.waiting -= 1;
        }
        state.running += 1;
        Ok(Turn(self))
    }
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        self.0.state.lock().running -= 1;
        self.0.turn.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_hash_verifies_its_password_only() {
        let passwords = Passwords::new(1, 0);
        let password = NewPassword::parse("correct horse").unwrap();
        let stored = passwords.hash(&password).unwrap();
        assert!(stored.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"));
        assert!(passwords.verify(Some(&stored), "correct horse").unwrap());
        assert!(!passwords.verify(Some(&stored), "correct horsE").unwrap());
        assert!(!passwords.verify(None, "correct horse").unwrap());
        assert!(!passwords
            .verify(Some("not a hash"), "correct horse")
            .unwrap());
    }

    #[test]
    fn the_gate_queues_a_bounded_number_then_refuses() {
        let gate = Arc::new(Gate::new(1, 1));
        let first = gate.enter().unwrap();
        let waiter = {
            let gate = Arc::clone(&gate);
            std::thread::spawn(move || gate.enter().map(|_| ()))
        };
        // The waiter is queued once the state says so (polled: no timed assert).
        while gate.state.lock().waiting == 0 {
            std::thread::yield_now();
        }
        assert_eq!(gate.enter().err(), Some(Busy));
        drop(first);
        assert_eq!(waiter.join().unwrap(), Ok(()));
        assert!(gate.enter().is_ok());
    }
}
