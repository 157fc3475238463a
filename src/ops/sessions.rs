//! A person's console sessions and the fleet's proofs of work, as the console reads and writes
//! them (`db::sessions` stores them). Sessions are no organisation's data: nothing here is
//! audited.

use crate::db::sessions::{self, Session, SessionListed};
use crate::error::ApiError;
use crate::ids::{OrgId, PersonId};
use postgres::GenericClient;

/// Starts a session of `person` under the cookie's hash, looking at `org` (`None`: their
/// first); their ended sessions are forgotten first.
pub fn start(
    db: &mut impl GenericClient,
    secret_hash: &[u8],
    person: &PersonId,
    org: Option<&OrgId>,
    user_agent: &str,
) -> Result<(), ApiError> {
    sessions::delete_expired(db, person)?;
    sessions::create_session(db, secret_hash, person, org, user_agent)?;
    Ok(())
}

/// The live session of the cookie's hash, seen now; `None` when there is none or it ended.
pub fn live(db: &mut impl GenericClient, secret_hash: &[u8]) -> Result<Option<Session>, ApiError> {
    Ok(sessions::live_session(db, secret_hash)?)
}

/// The live sessions of `person`, for their account page.
pub fn of_person(
    db: &mut impl GenericClient,
    person: &PersonId,
) -> Result<Vec<SessionListed>, ApiError> {
    Ok(sessions::sessions_of(db, person)?)
}

/// Ends the session `id` (signing out).
pub fn end(db: &mut impl GenericClient, id: i64) -> Result<(), ApiError> {
    Ok(sessions::end_session(db, id)?)
}

/// Ends every session of `person` but `keep`; how many ended.
pub fn end_others(
    db: &mut impl GenericClient,
    person: &PersonId,
    keep: i64,
) -> Result<u64, ApiError> {
    Ok(sessions::end_others(db, person, keep)?)
}

/// The session `id` looks at `org` from now on.
pub fn choose_org(db: &mut impl GenericClient, id: i64, org: &OrgId) -> Result<(), ApiError> {
    Ok(sessions::choose_org(db, id, org)?)
}

/// The fleet's secret for the sign-in's proofs of work: the stored one, or `fresh` stored now.
pub fn proof_of_work_key(db: &mut impl GenericClient, fresh: &[u8]) -> Result<Vec<u8>, ApiError> {
    Ok(sessions::proof_of_work_key(db, fresh)?)
}

/// Spends the challenge of this hash until it expires (Unix seconds); `false` when it was
/// spent already, on any instance.
pub fn spend_proof(
    db: &mut impl GenericClient,
    challenge_hash: &[u8],
    expires_at: i64,
) -> Result<bool, ApiError> {
    Ok(sessions::spend_proof(db, challenge_hash, expires_at)?)
}
