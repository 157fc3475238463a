//! Known browsers (OWASP's device cookies): a successful sign-in gives the browser a cookie of
//! 256 random bits, of which only the SHA-256 is stored with the person, for a year. A sign-in
//! from a browser that presents one of the person's is held to the client address's limit
//! only, not the email's (`limits::sign_in_limits`): strangers who fail with that email keep
//! no browser out that the person used before.

use crate::auth;
use crate::db::sessions;
use crate::error::ApiError;
use crate::ids::PersonId;
use crate::limits::{self, Limit};
use postgres::GenericClient;
use std::net::IpAddr;

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

/// The limits a sign-in as `email` from `client` is held to (checked before the password,
/// charged on a failure), given the person with that email (`None`: nobody) and the device
/// cookie the browser presented, if any.
pub fn sign_in_limits(
    db: &mut impl GenericClient,
    client: IpAddr,
    email: &str,
    person: Option<&PersonId>,
    cookie: Option<&str>,
) -> Result<Vec<Limit>, ApiError> {
    let known = is_known(db, person, cookie)?;
    Ok(limits::sign_in_limits(client, email, known))
}

/// Whether the browser presenting `cookie` (its value, if any) is a known browser of
/// `person` (`None`: no one has the email typed, so no browser is theirs).
fn is_known(
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
