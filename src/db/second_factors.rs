//! A person's second factors: their authenticator app (TOTP; its secret stored as it is, since
//! the server computes the codes from it), their one-time recovery codes (by SHA-256), the
//! sign-ins waiting for a factor (by the SHA-256 of their cookie), and an organisation's
//! "require a second factor".

use crate::ids::{OrgId, PersonId};
use postgres::GenericClient;

/// A person's authenticator app: its secret, and whether a code made from it was typed yet.
pub struct StoredTotp {
    pub secret: Vec<u8>,
    pub confirmed: bool,
}

/// The person's authenticator app, set up or being set up.
pub fn totp_of(
    db: &mut impl GenericClient,
    person: &PersonId,
) -> Result<Option<StoredTotp>, postgres::Error> {
    let row = db.query_opt(
        "SELECT secret, confirmed_at IS NOT NULL FROM totp_factors WHERE person_id = $1",
        &[person],
    )?;
    Ok(row.map(|r| StoredTotp {
        secret: r.get(0),
        confirmed: r.get(1),
    }))
}

/// Starts setting up an authenticator app with `secret`, unless the person has one (set up or
/// being set up); answers the one they have now.
pub fn start_totp(
    db: &mut impl GenericClient,
    person: &PersonId,
    secret: &[u8],
) -> Result<StoredTotp, postgres::Error> {
    db.execute(
        "INSERT INTO totp_factors (person_id, secret) VALUES ($1, $2) ON CONFLICT DO NOTHING",
        &[person, &secret],
    )?;
    let row = db.query_one(
        "SELECT secret, confirmed_at IS NOT NULL FROM totp_factors WHERE person_id = $1",
        &[person],
    )?;
    Ok(StoredTotp {
        secret: row.get(0),
        confirmed: row.get(1),
    })
}

/// Records that a code of time step `step` was accepted: `false` when this step or a later one
/// was accepted already (the code was used), or the app is not set up (`confirmed` says which
/// state it must be in). Setting it up confirms it.
pub fn accept_totp_step(
    db: &mut impl GenericClient,
    person: &PersonId,
    step: i64,
    confirmed: bool,
) -> Result<bool, postgres::Error> {
    let accepted = db.execute(
        "UPDATE totp_factors SET last_step = $2, confirmed_at = coalesce(confirmed_at, now())
          WHERE person_id = $1 AND (confirmed_at IS NOT NULL) = $3
            AND (last_step IS NULL OR last_step < $2)",
        &[person, &step, &confirmed],
    )?;
    Ok(accepted == 1)
}

/// Removes the person's authenticator app, set up or being set up; whether there was one.
pub fn delete_totp(
    db: &mut impl GenericClient,
    person: &PersonId,
) -> Result<bool, postgres::Error> {
    let deleted = db.execute("DELETE FROM totp_factors WHERE person_id = $1", &[person])?;
    Ok(deleted == 1)
}

/// The SQL of "the person whose id is `person` (an expression) has a second factor set up".
pub(super) fn has_factor_sql(person: &str) -> String {
    format!(
        "(EXISTS (SELECT 1 FROM totp_factors t
                   WHERE t.person_id = {person} AND t.confirmed_at IS NOT NULL)
          OR EXISTS (SELECT 1 FROM passkeys k WHERE k.person_id = {person}))"
    )
}

/// Whether the person has a second factor set up.
pub fn has_factor(db: &mut impl GenericClient, person: &PersonId) -> Result<bool, postgres::Error> {
    let row = db.query_one(&format!("SELECT {}", has_factor_sql("$1")), &[person])?;
    Ok(row.get(0))
}

/// The person's recovery codes from now on: these (by hash), the earlier ones gone.
pub fn replace_recovery_codes(
    db: &mut impl GenericClient,
    person: &PersonId,
    hashes: &[[u8; 32]],
) -> Result<(), postgres::Error> {
    db.execute("DELETE FROM recovery_codes WHERE person_id = $1", &[person])?;
    let hashes: Vec<&[u8]> = hashes.iter().map(|h| h.as_slice()).collect();
    db.execute(
        "INSERT INTO recovery_codes (code_hash, person_id) SELECT unnest($2::bytea[]), $1",
        &[person, &hashes],
    )?;
    Ok(())
}

/// How many unused recovery codes the person has.
pub fn recovery_codes_left(
    db: &mut impl GenericClient,
    person: &PersonId,
) -> Result<i64, postgres::Error> {
    let row = db.query_one(
        "SELECT count(*) FROM recovery_codes WHERE person_id = $1",
        &[person],
    )?;
    Ok(row.get(0))
}

/// Uses up the person's recovery code with this hash; `false` when they have none such (or it
/// was used). A concurrent use of the same code waits for this one and then finds nothing.
pub fn use_recovery_code(
    db: &mut impl GenericClient,
    person: &PersonId,
    code_hash: &[u8],
) -> Result<bool, postgres::Error> {
    let used = db.execute(
        "DELETE FROM recovery_codes WHERE person_id = $1 AND code_hash = $2",
        &[person, &code_hash],
    )?;
    Ok(used == 1)
}

/// Removes every second factor of the person and their recovery codes; whether they had one.
pub fn delete_all(db: &mut impl GenericClient, person: &PersonId) -> Result<bool, postgres::Error> {
    let had = has_factor(db, person)?;
    db.execute("DELETE FROM totp_factors WHERE person_id = $1", &[person])?;
    db.execute("DELETE FROM passkeys WHERE person_id = $1", &[person])?;
    db.execute("DELETE FROM recovery_codes WHERE person_id = $1", &[person])?;
    Ok(had)
}

/// A sign-in waiting for its second factor.
#[derive(Debug, Clone)]
pub struct PendingSignIn {
    pub person: PersonId,
    pub email: String,
    pub next: String,
    pub known_device: bool,
}

/// Stores a sign-in waiting for a factor, by the hash of its cookie; forgets the person's
/// expired ones.
pub fn create_pending(
    db: &mut impl GenericClient,
    secret_hash: &[u8],
    pending: &PendingSignIn,
) -> Result<(), postgres::Error> {
    db.execute(
        "WITH expired AS (DELETE FROM pending_sign_ins
                           WHERE person_id = $2 AND expires_at <= now())
         INSERT INTO pending_sign_ins (secret_hash, person_id, next, known_device)
         VALUES ($1, $2, $3, $4)",
        &[
            &secret_hash,
            &pending.person,
            &pending.next,
            &pending.known_device,
        ],
    )?;
    Ok(())
}

/// The live sign-in waiting with this hash.
pub fn live_pending(
    db: &mut impl GenericClient,
    secret_hash: &[u8],
) -> Result<Option<PendingSignIn>, postgres::Error> {
    let row = db.query_opt(
        "SELECT p.id, p.email, s.next, s.known_device
           FROM pending_sign_ins s JOIN persons p ON p.id = s.person_id
          WHERE s.secret_hash = $1 AND s.expires_at > now()",
        &[&secret_hash],
    )?;
    Ok(row.map(|r| PendingSignIn {
        person: r.get(0),
        email: r.get(1),
        next: r.get(2),
        known_device: r.get(3),
    }))
}

/// Ends a waiting sign-in (its factor was given); `false` when it had ended already.
pub fn end_pending(
    db: &mut impl GenericClient,
    secret_hash: &[u8],
) -> Result<bool, postgres::Error> {
    let ended = db.execute(
        "DELETE FROM pending_sign_ins WHERE secret_hash = $1",
        &[&secret_hash],
    )?;
    Ok(ended == 1)
}

/// Sets the organisation's "require a second factor".
pub fn set_required(
    db: &mut impl GenericClient,
    org: &OrgId,
    required: bool,
) -> Result<(), postgres::Error> {
    db.execute(
        "UPDATE orgs SET second_factor_required = $2 WHERE id = $1",
        &[org, &required],
    )?;
    Ok(())
}
