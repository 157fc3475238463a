//! Known browsers (OWASP's device cookies): a successful sign-in gives the browser a cookie of
//! 256 random bits, of which only the SHA-256 is stored with the person, for a year. A sign-in
//! from a browser that presents one of the person's is held to the client address's limit
//! only, not the email's (`limits::sign_in_limits`), and to the rate of hashes of known people,
//! not to the budgets, rate and proof of work of unknown browsers (`password::Caller`,
//! `console::unknown_browser`): strangers who fail with that email, or flood the sign-in from
//! many addresses, keep no browser out that the person used before.

use crate::auth;
use crate::db::sessions;
use crate::error::ApiError;
use crate::ids::PersonId;
use postgres::GenericClient;

/// The cookie's name; it is `HttpOnly`, `SameSite=Strict`, `Secure` as the session cookie.
pub const COOKIE: &str = "agentcard_device";
/// How long a browser stays known: a year, in seconds (the cookie's `Max-Age`).
pub const MAX_AGE: u64 = 365 * 24 * 60 * 60;
const SECRET_BYTES: usize = 32;

/// A new device cookie's value for the browser `person` just signed in from.
pub fn issue(db: &mut impl GenericClient, person: &PersonId) -> Result<String, ApiError> {
    let value = auth::random_hex(SECRET_BYTES);
    sessions::create_device_cookie(db, person, &auth::hash(&value))?;
    Ok(value)
}

/// Whether the browser presenting `cookie` (its value, if any) is a known browser of
/// `person` (`None`: no one has the email typed, so no browser is theirs): its sign-ins are
/// held to the client address's limit only (`limits::sign_in_limits`) and to the rate of
/// hashes of known people (`password::Caller`).
pub fn is_known(
    db: &mut impl GenericClient,
    person: Option<&PersonId>,
    cookie: Option<&str>,
) -> Result<bool, ApiError> {
    let (Some(person), Some(cookie)) = (person, cookie) else {
        return Ok(false);
    };
    if !auth::is_random_hex(cookie, SECRET_BYTES) {
        return Ok(false);
    }
    Ok(sessions::is_device_of(db, person, &auth::hash(cookie))?)
}
