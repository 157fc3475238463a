//! Console sessions, stored by the SHA-256 of the cookie's value. A session ends after 12 hours
//! without a request or 30 days after sign-in, whichever comes first: both limits are written
//! here once, in `LIVE`.

use crate::ids::{OrgId, PersonId};
use postgres::GenericClient;

/// A session still in force: seen within 12 hours, started within 30 days.
const LIVE: &str =
    "s.last_seen_at > now() - interval '12 hours' AND s.created_at > now() - interval '30 days'";
/// A session's `last_seen_at` is written again once it is this old, not on every request.
const SEEN_GRANULARITY: &str = "interval '1 minute'";

/// The session behind a request, with its person.
#[derive(Debug, Clone)]
pub struct Session {
    pub id: i64,
    pub person: PersonId,
    pub email: String,
    pub support: bool,
    /// The organisation last chosen; `None`: the first one open to the person.
    pub org_id: Option<OrgId>,
    /// The person has a second factor set up.
    pub second_factor: bool,
    /// The IANA name of the time zone the person reads times in; `None`: UTC.
    pub time_zone: Option<String>,
}

pub fn create_session(
    db: &mut impl GenericClient,
    secret_hash: &[u8],
    person: &PersonId,
    org_id: Option<&OrgId>,
    user_agent: &str,
) -> Result<i64, postgres::Error> {
    let row = db.query_one(
        "INSERT INTO sessions (secret_hash, person_id, org_id, user_agent) VALUES ($1, $2, $3, $4)
         RETURNING id",
        &[&secret_hash, person, &org_id, &user_agent],
    )?;
    Ok(row.get(0))
}

/// The live session with this hash, its `last_seen_at` moved to now; `None` when there is
/// none or it has ended.
pub fn live_session(
    db: &mut impl GenericClient,
    secret_hash: &[u8],
) -> Result<Option<Session>, postgres::Error> {
    let has_factor = super::second_factors::has_factor_sql("p.id");
    let sql = format!(
        "WITH found AS (
             SELECT s.id FROM sessions s WHERE s.secret_hash = $1 AND {LIVE}),
         seen AS (
             UPDATE sessions SET last_seen_at = now()
              WHERE id IN (SELECT id FROM found) AND last_seen_at < now() - {SEEN_GRANULARITY})
         SELECT s.id, p.id, p.email, p.support, s.org_id, {has_factor}, p.time_zone
           FROM sessions s JOIN persons p ON p.id = s.person_id
          WHERE s.id IN (SELECT id FROM found)"
    );
    let row = db.query_opt(&sql, &[&secret_hash])?;
    Ok(row.map(|r| Session {
        id: r.get(0),
        person: r.get(1),
        email: r.get(2),
        support: r.get(3),
        org_id: r.get(4),
        second_factor: r.get(5),
        time_zone: r.get(6),
    }))
}

/// A session as its person's sessions page lists it.
#[derive(Debug, Clone)]
pub struct SessionListed {
    pub id: i64,
    pub created_at: String,
    pub last_seen_at: String,
    pub user_agent: String,
}

/// A person's live sessions, the most recently seen first.
pub fn sessions_of(
    db: &mut impl GenericClient,
    person: &PersonId,
) -> Result<Vec<SessionListed>, postgres::Error> {
    let sql = format!(
        "SELECT s.id, rfc3339(s.created_at), rfc3339(s.last_seen_at), s.user_agent
           FROM sessions s WHERE s.person_id = $1 AND {LIVE}
          ORDER BY s.last_seen_at DESC, s.id DESC"
    );
    let rows = db.query(&sql, &[person])?;
    Ok(rows
        .iter()
        .map(|r| SessionListed {
            id: r.get(0),
            created_at: r.get(1),
            last_seen_at: r.get(2),
            user_agent: r.get(3),
        })
        .collect())
}

/// Ends one session (sign-out).
pub fn end_session(db: &mut impl GenericClient, id: i64) -> Result<(), postgres::Error> {
    db.execute("DELETE FROM sessions WHERE id = $1", &[&id])?;
    Ok(())
}

/// Ends every session of the person but `keep`, and those of theirs that have expired;
/// returns how many live ones ended.
pub fn end_others(
    db: &mut impl GenericClient,
    person: &PersonId,
    keep: i64,
) -> Result<u64, postgres::Error> {
    let sql = format!(
        "WITH ended AS (
             DELETE FROM sessions s WHERE s.person_id = $1 AND s.id <> $2 RETURNING {LIVE} AS live)
         SELECT count(*) FILTER (WHERE live) FROM ended"
    );
    let row = db.query_one(&sql, &[person, &keep])?;
    Ok(row.get::<_, i64>(0).unsigned_abs())
}

/// Deletes the person's sessions that have ended by time (kept tidy at each sign-in).
pub fn delete_expired(
    db: &mut impl GenericClient,
    person: &PersonId,
) -> Result<(), postgres::Error> {
    let sql = format!("DELETE FROM sessions s WHERE s.person_id = $1 AND NOT ({LIVE})");
    db.execute(&sql, &[person])?;
    Ok(())
}

/// The organisation a session looks at from now on.
pub fn choose_org(
    db: &mut impl GenericClient,
    id: i64,
    org_id: &OrgId,
) -> Result<(), postgres::Error> {
    db.execute(
        "UPDATE sessions SET org_id = $2 WHERE id = $1",
        &[&id, &org_id],
    )?;
    Ok(())
}

/// Stores the hash of a one-time value a form of `session` carries; forgets the session's
/// values older than a day (a form left open that long is posted again from a fresh page).
pub fn create_form_nonce(
    db: &mut impl GenericClient,
    session: i64,
    secret_hash: &[u8],
) -> Result<(), postgres::Error> {
    db.execute(
        "WITH stale AS (DELETE FROM form_nonces
                         WHERE session_id = $1 AND created_at < now() - interval '1 day')
         INSERT INTO form_nonces (secret_hash, session_id) VALUES ($2, $1)",
        &[&session, &secret_hash],
    )?;
    Ok(())
}

/// Uses up the session's one-time value with this hash; `false` when it was used already (or
/// never issued to this session). A concurrent use of the same value waits for this
/// transaction and then finds nothing.
pub fn use_form_nonce(
    db: &mut impl GenericClient,
    session: i64,
    secret_hash: &[u8],
) -> Result<bool, postgres::Error> {
    let used = db.execute(
        "DELETE FROM form_nonces WHERE session_id = $1 AND secret_hash = $2",
        &[&session, &secret_hash],
    )?;
    Ok(used == 1)
}

/// Remembers a browser the person signed in from, by the hash of its device cookie, for a
/// year; forgets the person's cookies past theirs.
pub fn create_device_cookie(
    db: &mut impl GenericClient,
    person: &PersonId,
    secret_hash: &[u8],
) -> Result<(), postgres::Error> {
    db.execute(
        "WITH expired AS (DELETE FROM device_cookies
                           WHERE person_id = $2 AND expires_at <= now())
         INSERT INTO device_cookies (secret_hash, person_id) VALUES ($1, $2)",
        &[&secret_hash, person],
    )?;
    Ok(())
}

/// Whether the device cookie with this hash is the person's and has not expired.
pub fn is_device_of(
    db: &mut impl GenericClient,
    person: &PersonId,
    secret_hash: &[u8],
) -> Result<bool, postgres::Error> {
    let row = db.query_opt(
        "SELECT 1 FROM device_cookies
          WHERE secret_hash = $1 AND person_id = $2 AND expires_at > now()",
        &[&secret_hash, person],
    )?;
    Ok(row.is_some())
}

/// The fleet's secret for the sign-in's proofs of work: the stored one, or `fresh` stored now
/// when no instance made one yet (two instances racing store one; both read it).
pub fn proof_of_work_key(
    db: &mut impl GenericClient,
    fresh: &[u8],
) -> Result<Vec<u8>, postgres::Error> {
    let row = db.query_one(
        "WITH made AS (INSERT INTO proof_of_work_key (secret) VALUES ($1)
                        ON CONFLICT (only_one) DO NOTHING RETURNING secret)
         SELECT secret FROM made UNION ALL SELECT secret FROM proof_of_work_key LIMIT 1",
        &[&fresh],
    )?;
    Ok(row.get(0))
}

/// Records a challenge spent (by its hash) until it expires (Unix seconds); `false` when it was
/// spent already, on any instance. Forgets the spent challenges that have expired.
pub fn spend_proof(
    db: &mut impl GenericClient,
    challenge_hash: &[u8],
    expires_at: i64,
) -> Result<bool, postgres::Error> {
    let spent = db.execute(
        "WITH expired AS (DELETE FROM spent_proofs WHERE expires_at < now())
         INSERT INTO spent_proofs (challenge_hash, expires_at)
         VALUES ($1, to_timestamp($2::bigint)) ON CONFLICT DO NOTHING",
        &[&challenge_hash, &expires_at],
    )?;
    Ok(spent == 1)
}
