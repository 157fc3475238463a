//! The proof of work a sign-in from a browser unknown to the person pays for its password hash
//! with, once the global rate of such hashes is spent (`password::Caller::Proven`): a flood
//! may slow sign-ins from new browsers, it may not stop them. The fleet's key also seals a
//! ceremony's state for a few minutes ([`seal`]) and signs for good what a mail carries
//! ([`sign`]: a report's one-click unsubscribe).
//!
//! A challenge is `ISSUED.BITS.RANDOM.MAC`: the Unix second it was made, the number of leading
//! zero bits its solution needs, 128 random bits, and an HMAC-SHA256 of the three under the
//! fleet's [`Key`] (kept in the database, so that every instance behind a balancer accepts the
//! challenges of every other). A solution is a decimal nonce such that
//! `SHA-256(CHALLENGE ":" NONCE)` begins with `BITS` zero bits: the browser tries about
//! `2^BITS` nonces (`console.js` in a Web Worker), the server checks it with one hash. A
//! challenge is good for [`VALID`] and once: the caller records it spent (in the database, for
//! the whole fleet) before letting its hash through.
//!
//! The work asked rises with the flood ([`Demand`]): one bit more each time the sign-ins asked
//! for a proof in the last minute reach four times more of the global rate.

use hmac::{Hmac, Mac};
use parking_lot::Mutex;
use rand::rngs::OsRng;
use rand::RngCore;
use sha2::{Digest, Sha256};
use std::sync::OnceLock;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How long a challenge may be solved and used.
pub const VALID: Duration = Duration::from_secs(300);
/// The work asked when the flood is no more than the global rate: 65 536 tries on average,
/// a second or two of a browser's Web Worker.
pub const BASE_BITS: u32 = 16;
/// The most work ever asked: about 262 000 tries, a few seconds of a browser on a slow
/// machine. More would make the unlucky draws (the tries needed vary as much as their mean)
/// keep a person waiting beyond ten seconds.
pub const MAX_BITS: u32 = 18;
/// How far ahead of this instance's clock another instance's may be.
const CLOCK_SKEW: u64 = 30;
/// The secret's length, in bytes.
pub const KEY_BYTES: usize = 32;

/// The key challenges are signed and values sealed with: one for the fleet, made by the first
/// instance that needs it and read by every other (`db::sessions::proof_of_work_key`).
#[derive(Clone)]
pub struct Key(Vec<u8>);

impl Key {
    pub fn new(secret: Vec<u8>) -> Key {
        Key(secret)
    }

    /// A random secret for a key no instance made yet.
    pub fn random_secret() -> Vec<u8> {
        let mut secret = vec![0u8; KEY_BYTES];
        OsRng.fill_bytes(&mut secret);
        secret
    }

    fn mac(&self, signed: &str) -> Hmac<Sha256> {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.0).expect("HMAC takes any key");
        mac.update(signed.as_bytes());
        mac
    }
}

/// Why a proof is not accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Invalid {
    /// Not a challenge of ours: its form or its signature.
    #[error("not a challenge this service made")]
    Forged,
    /// Older than [`VALID`] (or from further ahead than clocks of a fleet differ).
    #[error("the challenge expired")]
    Expired,
    /// The nonce does not give the leading zero bits the challenge asks.
    #[error("the challenge is not solved")]
    Unsolved,
}

/// A proof that passed its check: what to record as spent, and until when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    /// SHA-256 of the challenge: what the spent challenges remember.
    pub spent: Vec<u8>,
    /// Unix second after which the challenge is refused anyway, so need not be remembered.
    pub expires_at: i64,
}

/// Seconds since the Unix epoch.
pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs())
}

/// A new challenge, made at `now` (Unix seconds), asking `bits`.
pub fn challenge(key: &Key, now: u64, bits: u32) -> String {
    let mut random = [0u8; 16];
    OsRng.fill_bytes(&mut random);
    let signed = format!("{now}.{bits}.{}", hex::encode(random));
    let mac = hex::encode(key.mac(&signed).finalize().into_bytes());
    format!("{signed}.{mac}")
}

/// Whether `nonce` solves `challenge`, a challenge of `key`'s still valid at `now`.
pub fn check(key: &Key, now: u64, challenge: &str, nonce: &str) -> Result<Checked, Invalid> {
    let (signed, mac) = challenge.rsplit_once('.').ok_or(Invalid::Forged)?;
    let mac = hex::decode(mac).map_err(|_| Invalid::Forged)?;
    key.mac(signed)
        .verify_slice(&mac)
        .map_err(|_| Invalid::Forged)?;
    let mut parts = signed.split('.');
    let (Some(issued), Some(bits)) = (parts.next(), parts.next()) else {
        return Err(Invalid::Forged);
    };
    let issued: u64 = issued.parse().map_err(|_| Invalid::Forged)?;
    let bits: u32 = bits.parse().map_err(|_| Invalid::Forged)?;
    if issued > now + CLOCK_SKEW || now.saturating_sub(issued) > VALID.as_secs() {
        return Err(Invalid::Expired);
    }
    let decimal =
        !nonce.is_empty() && nonce.len() <= 20 && nonce.bytes().all(|b| b.is_ascii_digit());
    if !decimal || zero_bits(challenge, nonce) < bits {
        return Err(Invalid::Unsolved);
    }
    Ok(Checked {
        spent: Sha256::digest(challenge.as_bytes()).to_vec(),
        expires_at: (issued + VALID.as_secs()) as i64,
    })
}

/// `value` sealed under `key` for `purpose` at `now`: `ISSUED.HEX.MAC`, an HMAC-SHA256 of the
/// purpose, the Unix second and the value, good for [`VALID`]. What a ceremony must find again
/// (a passkey's) travels with the browser this way instead of waiting in the database, so that
/// starting one costs the service no row; its purpose keeps one kind from passing for another.
pub fn seal(key: &Key, purpose: &str, now: u64, value: &[u8]) -> String {
    let sealed = format!("{now}.{}", hex::encode(value));
    let mac = hex::encode(
        key.mac(&format!("{purpose}:{sealed}"))
            .finalize()
            .into_bytes(),
    );
    format!("{sealed}.{mac}")
}

/// The value `sealed` holds, if `key` sealed it for `purpose` and it is still valid at `now`;
/// with what to record as spent, for a value that may be used once.
pub fn open(
    key: &Key,
    purpose: &str,
    now: u64,
    sealed: &str,
) -> Result<(Vec<u8>, Checked), Invalid> {
    let (signed, mac) = sealed.rsplit_once('.').ok_or(Invalid::Forged)?;
    let mac = hex::decode(mac).map_err(|_| Invalid::Forged)?;
    key.mac(&format!("{purpose}:{signed}"))
        .verify_slice(&mac)
        .map_err(|_| Invalid::Forged)?;
    let (issued, value) = signed.split_once('.').ok_or(Invalid::Forged)?;
    let issued: u64 = issued.parse().map_err(|_| Invalid::Forged)?;
    let value = hex::decode(value).map_err(|_| Invalid::Forged)?;
    if issued > now + CLOCK_SKEW || now.saturating_sub(issued) > VALID.as_secs() {
        return Err(Invalid::Expired);
    }
    let checked = Checked {
        spent: Sha256::digest(sealed.as_bytes()).to_vec(),
        expires_at: (issued + VALID.as_secs()) as i64,
    };
    Ok((value, checked))
}

/// `value` signed under `key` for `purpose`, for good: `HEX.MAC`, an HMAC-SHA256 of the
/// purpose and the value. What a mail carries that must work whenever it is used (a report's
/// one-click unsubscribe); its purpose keeps it from passing for anything else.
pub fn sign(key: &Key, purpose: &str, value: &[u8]) -> String {
    let signed = hex::encode(value);
    let mac = key.mac(&format!("{purpose}:{signed}")).finalize();
    format!("{signed}.{}", hex::encode(mac.into_bytes()))
}

/// The value `signed` holds, if `key` signed it for `purpose`.
pub fn verify(key: &Key, purpose: &str, signed: &str) -> Result<Vec<u8>, Invalid> {
    let (value, mac) = signed.split_once('.').ok_or(Invalid::Forged)?;
    let mac = hex::decode(mac).map_err(|_| Invalid::Forged)?;
    key.mac(&format!("{purpose}:{value}"))
        .verify_slice(&mac)
        .map_err(|_| Invalid::Forged)?;
    hex::decode(value).map_err(|_| Invalid::Forged)
}

/// The leading zero bits of `SHA-256(challenge ":" nonce)`.
pub fn zero_bits(challenge: &str, nonce: &str) -> u32 {
    let digest = Sha256::new()
        .chain_update(challenge)
        .chain_update(":")
        .chain_update(nonce)
        .finalize();
    let mut bits = 0;
    for byte in digest {
        bits += byte.leading_zeros();
        if byte != 0 {
            break;
        }
    }
    bits
}

/// How many sign-ins were asked for a proof in the last minute or so (a count that decays
/// with a time constant of a minute), beside the global rate, and the work that asks.
pub struct Demand {
    asked: Mutex<(f64, Instant)>,
}

impl Default for Demand {
    fn default() -> Demand {
        Demand {
            asked: Mutex::new((0.0, Instant::now())),
        }
    }
}

impl Demand {
    /// One more sign-in asked for a proof.
    pub fn asked(&self) {
        let mut asked = self.asked.lock();
        *asked = (decayed(*asked, Instant::now()) + 1.0, Instant::now());
    }

    /// The bits to ask now, when the global rate lets `rate_per_minute` hashes through.
    pub fn bits(&self, rate_per_minute: u64) -> u32 {
        let asked = decayed(*self.asked.lock(), Instant::now());
        bits_for(asked, rate_per_minute)
    }
}

fn decayed((count, at): (f64, Instant), now: Instant) -> f64 {
    count * (-now.saturating_duration_since(at).as_secs_f64() / 60.0).exp()
}

/// [`BASE_BITS`], one more each time `asked` reaches four times more of the rate.
fn bits_for(asked: f64, rate_per_minute: u64) -> u32 {
    let times = 1.0 + asked / rate_per_minute.max(1) as f64;
    let more = (times.log2() / 2.0).floor() as u32;
    (BASE_BITS + more).min(MAX_BITS)
}

/// What the console keeps for proofs of work: the fleet's key once read, and the demand.
#[derive(Default)]
pub struct Proofs {
    key: OnceLock<Key>,
    pub demand: Demand,
}

impl Proofs {
    /// The key, read by `load` the first time (from the database, which makes it if needed).
    pub fn key<E>(&self, load: impl FnOnce() -> Result<Key, E>) -> Result<&Key, E> {
        if let Some(key) = self.key.get() {
            return Ok(key);
        }
        let key = load()?;
        Ok(self.key.get_or_init(|| key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> Key {
        Key::new(b"a test key of the proofs of work".to_vec())
    }

    #[test]
    fn a_signed_value_verifies_for_its_purpose_only_and_unaltered() {
        let signed = sign(&key(), "unsubscribe", b"acc_1 org_1 weekly");
        let verified = verify(&key(), "unsubscribe", &signed);
        assert_eq!(verified.as_deref(), Ok(&b"acc_1 org_1 weekly"[..]));
        assert_eq!(verify(&key(), "other", &signed), Err(Invalid::Forged));
        let other_key = Key::new(b"another fleet's key".to_vec());
        assert_eq!(
            verify(&other_key, "unsubscribe", &signed),
            Err(Invalid::Forged)
        );
        let (value, mac) = signed.split_once('.').unwrap();
        let altered = format!("{}.{mac}", value.replacen("6", "7", 1));
        assert_eq!(
            verify(&key(), "unsubscribe", &altered),
            Err(Invalid::Forged)
        );
        for bad in ["", ".", "zz.zz", "abc", &format!("{value}.")] {
            assert_eq!(
                verify(&key(), "unsubscribe", bad),
                Err(Invalid::Forged),
                "{bad}"
            );
        }
    }

    fn solve(challenge: &str, bits: u32) -> String {
        (0u64..)
            .map(|n| n.to_string())
            .find(|nonce| zero_bits(challenge, nonce) >= bits)
            .unwrap()
    }

    #[test]
    fn a_solved_challenge_checks_and_anything_else_is_refused() {
        let now = 1_800_000_000;
        let made = challenge(&key(), now, 8);
        let nonce = solve(&made, 8);
        let checked = check(&key(), now + 10, &made, &nonce).unwrap();
        assert_eq!(checked.expires_at, (now + VALID.as_secs()) as i64);
        assert_eq!(checked.spent, Sha256::digest(made.as_bytes()).to_vec());

        let other = Key::new(b"another instance's key, not ours".to_vec());
        assert_eq!(check(&other, now, &made, &nonce), Err(Invalid::Forged));
        let easier = made.replacen(".8.", ".1.", 1);
        assert_eq!(check(&key(), now, &easier, &nonce), Err(Invalid::Forged));
        for forged in ["", "x", "1.2.3", "1.2.3.zz", &made[..made.len() - 1]] {
            assert_eq!(check(&key(), now, forged, &nonce), Err(Invalid::Forged));
        }
        let late = now + VALID.as_secs() + 1;
        assert_eq!(check(&key(), late, &made, &nonce), Err(Invalid::Expired));
        let ahead = now - CLOCK_SKEW - 1;
        assert_eq!(check(&key(), ahead, &made, &nonce), Err(Invalid::Expired));
        assert!(
            check(&key(), now - 1, &made, &nonce).is_ok(),
            "another instance's clock"
        );
        let wrong = (0u64..)
            .map(|n| n.to_string())
            .find(|nonce| zero_bits(&made, nonce) < 8)
            .unwrap();
        for unsolved in [wrong.as_str(), "", "-1", "1e3", "123456789012345678901"] {
            assert_eq!(check(&key(), now, &made, unsolved), Err(Invalid::Unsolved));
        }
    }

    #[test]
    fn a_sealed_value_opens_for_its_purpose_and_key_while_valid_only() {
        let now = 1_800_000_000;
        let sealed = seal(&key(), "passkey sign-in", now, b"state");
        let (value, checked) = open(&key(), "passkey sign-in", now + 10, &sealed).unwrap();
        assert_eq!(value, b"state");
        assert_eq!(checked.spent, Sha256::digest(sealed.as_bytes()).to_vec());
        assert_eq!(checked.expires_at, (now + VALID.as_secs()) as i64);

        let other = Key::new(b"another instance's key, not ours".to_vec());
        assert_eq!(
            open(&other, "passkey sign-in", now, &sealed),
            Err(Invalid::Forged)
        );
        let elsewhere = open(&key(), "passkey registration", now, &sealed);
        assert_eq!(
            elsewhere,
            Err(Invalid::Forged),
            "sealed for another purpose"
        );
        let changed = sealed.replacen(&hex::encode(b"state"), &hex::encode(b"other"), 1);
        for forged in [
            "",
            "x",
            "1.2",
            "1.zz.00",
            &changed,
            &sealed[..sealed.len() - 1],
        ] {
            let opened = open(&key(), "passkey sign-in", now, forged);
            assert_eq!(opened, Err(Invalid::Forged), "{forged}");
        }
        let late = now + VALID.as_secs() + 1;
        assert_eq!(
            open(&key(), "passkey sign-in", late, &sealed),
            Err(Invalid::Expired)
        );
        let challenge = challenge(&key(), now, 8);
        let as_sealed = open(&key(), "passkey sign-in", now, &challenge);
        assert_eq!(
            as_sealed,
            Err(Invalid::Forged),
            "a challenge is not a sealed value"
        );
    }

    #[test]
    fn the_work_rises_a_bit_each_time_the_flood_is_four_times_larger() {
        assert_eq!(bits_for(0.0, 12), BASE_BITS);
        assert_eq!(bits_for(30.0, 12), BASE_BITS);
        assert_eq!(bits_for(36.0, 12), BASE_BITS + 1);
        assert_eq!(bits_for(12.0 * 15.0, 12), BASE_BITS + 2);
        assert_eq!(bits_for(1e12, 12), MAX_BITS);
        let demand = Demand::default();
        for _ in 0..40 {
            demand.asked();
        }
        assert_eq!(demand.bits(12), BASE_BITS + 1);
        assert_eq!(demand.bits(1_000_000), BASE_BITS);
    }
}
