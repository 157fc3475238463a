//! Second factors: a person's authenticator app (TOTP, RFC 6238: SHA-1, 6 digits, 30-second
//! steps, one step either side, each code accepted once), their ten one-time recovery codes,
//! the sign-in that waits for a factor after the password, an owner's "require a second factor"
//! and the operator's removal of a person's factors. Each change is in the audit log.
//!
//! An app's secret is stored as it is (the server computes the codes from it, so it cannot be
//! hashed) and never logged; recovery codes and the waiting sign-in's cookie as SHA-256.

use super::audit::{self, AuditEntry, Operation};
use super::{Actor, Caller};
use crate::auth;
use crate::db::people::Person;
use crate::db::second_factors::{self as stored, PendingSignIn};
use crate::error::ApiError;
use crate::ids::PersonId;
use postgres::GenericClient;
use rand::RngCore;
use std::time::{SystemTime, UNIX_EPOCH};
use totp_rs::{Algorithm, TOTP};

/// RFC 4226's recommended length of a secret: 160 bits.
const SECRET_BYTES: usize = 20;
const DIGITS: usize = 6;
const STEP_SECONDS: u64 = 30;
/// The name an authenticator app shows beside the person's email.
const ISSUER: &str = "agentcard";
/// Recovery codes made at once; each 16 characters of base32 (80 bits).
const RECOVERY_CODES: usize = 10;
const RECOVERY_CODE_CHARS: usize = 16;
const BASE32: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";
/// The waiting sign-in's cookie: 256 random bits as hex.
pub const PENDING_COOKIE: &str = "agentcard_sign_in";
const PENDING_SECRET_BYTES: usize = 32;
/// How long a sign-in waits for its factor (the stored row's own end is the same).
pub const PENDING_MAX_AGE: u32 = 5 * 60;

/// What the person's app needs to be set up: the `otpauth://` link its QR code carries and the
/// secret in base32 for typing by hand. Never logged: `Debug` hides both.
pub struct AppSetup {
    pub url: String,
    pub secret_base32: String,
}

impl std::fmt::Debug for AppSetup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AppSetup(…)")
    }
}

/// The TOTP of a stored secret, named for the person's app.
fn totp(secret: &[u8], email: &str) -> Result<TOTP, ApiError> {
    // The link's label may not hold a colon; an email never needs one.
    let account = email.replace(':', "");
    TOTP::new(
        Algorithm::SHA1,
        DIGITS,
        0,
        STEP_SECONDS,
        secret.to_vec(),
        Some(ISSUER.into()),
        account,
    )
    .map_err(|error| ApiError::internal(format!("TOTP refused its secret: {error:?}")))
}

/// The person's app being set up: a new secret, or the one already being set up (a reload of
/// the page shows the same). `None`: the person has an app set up already.
pub fn start_app(
    db: &mut impl GenericClient,
    person: &Person,
) -> Result<Option<AppSetup>, ApiError> {
    let mut secret = [0u8; SECRET_BYTES];
    rand::thread_rng().fill_bytes(&mut secret);
    let app = stored::start_totp(db, &person.id, &secret)?;
    if app.confirmed {
        return Ok(None);
    }
    let totp = totp(&app.secret, &person.email)?;
    Ok(Some(AppSetup {
        url: totp.get_url(),
        secret_base32: totp.get_secret_base32(),
    }))
}

/// The code as typed, if it has the form of an app's code (6 digits, spaces ignored).
fn app_code(typed: &str) -> Option<String> {
    let code: String = typed.chars().filter(|c| !c.is_whitespace()).collect();
    (code.len() == DIGITS && code.bytes().all(|b| b.is_ascii_digit())).then_some(code)
}

/// Whether what a person typed has the form of their app's code (else a recovery code or a
/// password).
pub fn is_app_code(typed: &str) -> bool {
    app_code(typed).is_some()
}

/// The time step (now's, or one either side) whose code `code` is.
fn matching_step(totp: &TOTP, code: &str) -> Option<i64> {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).ok()?.as_secs() / STEP_SECONDS;
    [now, now - 1, now + 1]
        .into_iter()
        .find(|step| totp.check(code, step * STEP_SECONDS))
        .and_then(|step| i64::try_from(step).ok())
}

/// Accepts `typed` as a code of the person's app, set up (`confirmed`) or being set up: a code
/// of now's step or one either side, of a step later than the last accepted.
fn accept_app_code(
    db: &mut impl GenericClient,
    person: &PersonId,
    email: &str,
    typed: &str,
    confirmed: bool,
) -> Result<bool, ApiError> {
    let (Some(code), Some(app)) = (app_code(typed), stored::totp_of(db, person)?) else {
        return Ok(false);
    };
    if app.confirmed != confirmed {
        return Ok(false);
    }
    match matching_step(&totp(&app.secret, email)?, &code) {
        Some(step) => Ok(stored::accept_totp_step(db, person, step, confirmed)?),
        None => Ok(false),
    }
}

/// The refusal of a code that is not the app's code of now (or was used already).
fn wrong_code() -> ApiError {
    ApiError::validation(
        "code",
        "this is not the code your app shows now, or it was used already: type the code it \
         shows now (if it never works, check your device's clock)",
    )
}

/// Confirms the app being set up with a code it shows; the person's first factor comes with
/// ten recovery codes, shown once (`Some`).
pub fn confirm_app(
    db: &mut impl GenericClient,
    person: &Person,
    code: &str,
) -> Result<Option<Vec<String>>, ApiError> {
    let mut tx = db.transaction()?;
    let first = !stored::has_factor(&mut tx, &person.id)?;
    if !accept_app_code(&mut tx, &person.id, &person.email, code, false)? {
        return Err(wrong_code());
    }
    let codes = match first {
        true => Some(replace_recovery_codes(&mut tx, &person.id)?),
        false => None,
    };
    audit::record_about_person(
        &mut tx,
        person,
        &actor_of(person),
        Operation::AddAuthenticatorApp,
    )?;
    tx.commit()?;
    Ok(codes)
}

/// Removes the person's app; without another factor their recovery codes go too.
pub fn remove_app(db: &mut impl GenericClient, person: &Person) -> Result<(), ApiError> {
    let mut tx = db.transaction()?;
    if !stored::delete_totp(&mut tx, &person.id)? {
        return Err(ApiError::NotFound);
    }
    if !stored::has_factor(&mut tx, &person.id)? {
        stored::replace_recovery_codes(&mut tx, &person.id, &[])?;
    }
    audit::record_about_person(
        &mut tx,
        person,
        &actor_of(person),
        Operation::RemoveAuthenticatorApp,
    )?;
    tx.commit()?;
    Ok(())
}

/// Ten new recovery codes, shown once, the earlier ones no longer valid; refused to a person
/// without a second factor.
pub fn new_recovery_codes(
    db: &mut impl GenericClient,
    person: &Person,
) -> Result<Vec<String>, ApiError> {
    let mut tx = db.transaction()?;
    if !stored::has_factor(&mut tx, &person.id)? {
        return Err(ApiError::conflict(
            "second_factor",
            "recovery codes come with a second factor: add one first",
        ));
    }
    let codes = replace_recovery_codes(&mut tx, &person.id)?;
    audit::record_about_person(
        &mut tx,
        person,
        &actor_of(person),
        Operation::NewRecoveryCodes,
    )?;
    tx.commit()?;
    Ok(codes)
}

/// How many unused recovery codes the person has.
pub fn recovery_codes_left(
    db: &mut impl GenericClient,
    person: &PersonId,
) -> Result<i64, ApiError> {
    Ok(stored::recovery_codes_left(db, person)?)
}

/// Whether the person has an authenticator app set up.
pub fn has_app(db: &mut impl GenericClient, person: &PersonId) -> Result<bool, ApiError> {
    Ok(stored::totp_of(db, person)?.is_some_and(|app| app.confirmed))
}

/// Whether the person has a second factor set up (an app or a passkey).
pub fn has_factor(db: &mut impl GenericClient, person: &PersonId) -> Result<bool, ApiError> {
    Ok(stored::has_factor(db, person)?)
}

pub(super) fn replace_recovery_codes(
    db: &mut impl GenericClient,
    person: &PersonId,
) -> Result<Vec<String>, ApiError> {
    let codes: Vec<String> = (0..RECOVERY_CODES).map(|_| recovery_code()).collect();
    let hashes: Vec<[u8; 32]> = codes.iter().map(|c| recovery_hash(c)).collect();
    stored::replace_recovery_codes(db, person, &hashes)?;
    Ok(codes)
}

/// A recovery code as shown: `abcd-efgh-ijkl-mnop`.
fn recovery_code() -> String {
    let mut random = [0u8; RECOVERY_CODE_CHARS];
    rand::thread_rng().fill_bytes(&mut random);
    let chars: Vec<char> = random
        .iter()
        .map(|b| char::from(BASE32[usize::from(b % 32)]))
        .collect();
    let groups: Vec<String> = chars.chunks(4).map(|g| g.iter().collect()).collect();
    groups.join("-")
}

/// The hash of a recovery code however it was typed (case, dashes and spaces aside).
fn recovery_hash(typed: &str) -> [u8; 32] {
    let code: String = typed
        .chars()
        .filter(|c| *c != '-' && !c.is_whitespace())
        .flat_map(char::to_lowercase)
        .collect();
    auth::hash(&code)
}

/// Whether `typed` is a second factor of the person: a code of their app (accepted once) or one
/// of their recovery codes (used up, in the audit log).
pub fn check_factor(
    db: &mut impl GenericClient,
    person: &Person,
    typed: &str,
) -> Result<bool, ApiError> {
    if is_app_code(typed) {
        return accept_app_code(db, &person.id, &person.email, typed, true);
    }
    let mut tx = db.transaction()?;
    if !stored::use_recovery_code(&mut tx, &person.id, &recovery_hash(typed))? {
        return Ok(false);
    }
    audit::record_about_person(
        &mut tx,
        person,
        &actor_of(person),
        Operation::UseRecoveryCode,
    )?;
    tx.commit()?;
    Ok(true)
}

/// Removes every second factor of the person and their recovery codes (the operator's
/// `admin user reset --second-factors`); whether they had one.
pub fn remove_all(
    db: &mut impl GenericClient,
    actor: &Actor,
    person: &Person,
) -> Result<bool, ApiError> {
    let mut tx = db.transaction()?;
    let had = stored::delete_all(&mut tx, &person.id)?;
    audit::record_about_person(&mut tx, person, actor, Operation::RemoveSecondFactors)?;
    tx.commit()?;
    Ok(had)
}

/// Sets whether the caller's organisation requires a second factor of its people.
pub fn set_required(
    db: &mut impl GenericClient,
    caller: &Caller,
    required: bool,
) -> Result<(), ApiError> {
    let mut tx = db.transaction()?;
    stored::set_required(&mut tx, &caller.org.id, required)?;
    let operation = match required {
        true => Operation::RequireSecondFactor,
        false => Operation::StopRequiringSecondFactor,
    };
    let entry = AuditEntry::new(operation, "org", caller.org.id.as_str()).named(&caller.org.name);
    audit::record(&mut tx, caller, entry)?;
    tx.commit()?;
    Ok(())
}

pub(super) fn actor_of(person: &Person) -> Actor {
    Actor::Person {
        email: person.email.clone(),
    }
}

/// A new sign-in waiting for its factor; answers its cookie's value.
pub fn start_pending(
    db: &mut impl GenericClient,
    pending: &PendingSignIn,
) -> Result<String, ApiError> {
    let secret = auth::random_hex(PENDING_SECRET_BYTES);
    stored::create_pending(db, &auth::hash(&secret), pending)?;
    Ok(secret)
}

/// The live sign-in waiting under the browser's cookie (its value, if any).
pub fn pending(
    db: &mut impl GenericClient,
    cookie: Option<&str>,
) -> Result<Option<PendingSignIn>, ApiError> {
    match cookie.filter(|c| auth::is_random_hex(c, PENDING_SECRET_BYTES)) {
        Some(cookie) => Ok(stored::live_pending(db, &auth::hash(cookie))?),
        None => Ok(None),
    }
}

/// Ends the waiting sign-in of this cookie, once: `false` when it had ended already.
pub fn end_pending(db: &mut impl GenericClient, cookie: &str) -> Result<bool, ApiError> {
    Ok(stored::end_pending(db, &auth::hash(cookie))?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recovery_codes_read_the_same_however_typed() {
        let code = recovery_code();
        assert_eq!(code.len(), 19);
        assert_eq!(recovery_hash(&code), recovery_hash(&code.to_uppercase()));
        assert_eq!(
            recovery_hash(&code),
            recovery_hash(&format!(" {} ", code.replace('-', "")))
        );
        assert_ne!(recovery_hash(&code), recovery_hash(&recovery_code()));
    }

    #[test]
    fn only_six_digits_are_an_app_code() {
        assert!(is_app_code("123 456"));
        assert!(!is_app_code("12345"));
        assert!(!is_app_code("12345a"));
        assert!(!is_app_code("1234567"));
    }

    #[test]
    fn a_code_of_now_matches_now_and_a_later_step_does_not() {
        let totp = totp(&[7u8; SECRET_BYTES], "a@example.org").unwrap();
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let step = i64::try_from(now / STEP_SECONDS).unwrap();
        let code = totp.generate(now);
        assert!(matching_step(&totp, &code).is_some_and(|s| (s - step).abs() <= 1));
        let far = totp.generate(now + 10 * STEP_SECONDS);
        assert_eq!(matching_step(&totp, &far), None);
    }
}
