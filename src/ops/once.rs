//! Secrets shown once are made once: each form that creates a token, a key or an invitation
//! carries a one-time value issued with the page ([`issue`]), bound to the session, of which
//! only the SHA-256 is stored. [`made_once`] uses it up in the transaction that creates the
//! secret, so the same form posted again (a reload of the page that shows the secret) creates
//! nothing and answers [`Made::ShownAlready`]. A refused creation keeps the value: the form,
//! corrected, can be posted again.

use crate::auth;
use crate::db::sessions;
use crate::error::ApiError;
use postgres::{GenericClient, Transaction};

/// 128 random bits: enough to be unguessable, short in a hidden field.
pub const NONCE_BYTES: usize = 16;

/// What the page answering [`Made::ShownAlready`] says.
pub const SHOWN_ALREADY: &str = "this form was sent already: the secret it made was shown then, \
     once, and is not made again; if it is lost, revoke it and make a new one";

/// What a form carrying a one-time value got.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Made<T> {
    New(T),
    /// The value was used already: the secret was made and shown by an earlier post.
    ShownAlready,
}

impl<T> Made<T> {
    /// What was made, seen through `f`.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Made<U> {
        match self {
            Made::New(made) => Made::New(f(made)),
            Made::ShownAlready => Made::ShownAlready,
        }
    }
}

/// A new one-time value for a creating form of `session`, to put in its hidden field.
pub fn issue(db: &mut impl GenericClient, session: i64) -> Result<String, ApiError> {
    let value = auth::random_hex(NONCE_BYTES);
    sessions::create_form_nonce(db, session, &auth::hash(&value))?;
    Ok(value)
}

/// Runs `create` (an operation that makes a secret) in one transaction with the use of
/// `nonce`, the value the posted form carried: both happen or neither does.
pub fn made_once<T>(
    db: &mut impl GenericClient,
    session: i64,
    nonce: &str,
    create: impl FnOnce(&mut Transaction) -> Result<T, ApiError>,
) -> Result<Made<T>, ApiError> {
    if !auth::is_random_hex(nonce, NONCE_BYTES) {
        return Ok(Made::ShownAlready);
    }
    let mut tx = db.transaction()?;
    if !sessions::use_form_nonce(&mut tx, session, &auth::hash(nonce))? {
        return Ok(Made::ShownAlready);
    }
    let made = create(&mut tx)?;
    tx.commit()?;
    Ok(Made::New(made))
}
