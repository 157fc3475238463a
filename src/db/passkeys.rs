//! Passkeys (WebAuthn credentials) of the console's people. What a credential holds is stored as
//! the relying party library encodes it. (Ceremonies under way are not stored: they travel
//! sealed, `ops::passkeys`; the table `webauthn_ceremonies` of migration 014 is unused and goes
//! in a later release, as removals wait one.)

use crate::ids::PersonId;
use postgres::GenericClient;

/// A passkey as stored.
pub struct StoredPasskey {
    pub credential_id: Vec<u8>,
    pub person: PersonId,
    pub user_handle: Vec<u8>,
    pub static_state: Vec<u8>,
    pub dynamic_state: Vec<u8>,
}

/// A passkey as the person's page lists it.
#[derive(Debug, Clone)]
pub struct PasskeyListed {
    /// The credential id, base64url, naming it in the page's forms.
    pub id: Vec<u8>,
    pub created_at: String,
    pub last_used_at: Option<String>,
}

/// The user handle of the person's passkeys, if they have one.
pub fn user_handle_of(
    db: &mut impl GenericClient,
    person: &PersonId,
) -> Result<Option<Vec<u8>>, postgres::Error> {
    let row = db.query_opt(
        "SELECT user_handle FROM passkeys WHERE person_id = $1 LIMIT 1",
        &[person],
    )?;
    Ok(row.map(|r| r.get(0)))
}

pub fn create_passkey(
    db: &mut impl GenericClient,
    passkey: &StoredPasskey,
) -> Result<(), postgres::Error> {
    db.execute(
        "INSERT INTO passkeys (credential_id, person_id, user_handle, static_state, dynamic_state)
         VALUES ($1, $2, $3, $4, $5)",
        &[
            &passkey.credential_id,
            &passkey.person,
            &passkey.user_handle,
            &passkey.static_state,
            &passkey.dynamic_state,
        ],
    )?;
    Ok(())
}

pub fn find_passkey(
    db: &mut impl GenericClient,
    credential_id: &[u8],
) -> Result<Option<StoredPasskey>, postgres::Error> {
    let row = db.query_opt(
        "SELECT credential_id, person_id, user_handle, static_state, dynamic_state
           FROM passkeys WHERE credential_id = $1",
        &[&credential_id],
    )?;
    Ok(row.map(|r| StoredPasskey {
        credential_id: r.get(0),
        person: r.get(1),
        user_handle: r.get(2),
        static_state: r.get(3),
        dynamic_state: r.get(4),
    }))
}

/// Records a use of the passkey, with the authenticator's state after it.
pub fn used_passkey(
    db: &mut impl GenericClient,
    credential_id: &[u8],
    dynamic_state: &[u8],
) -> Result<(), postgres::Error> {
    db.execute(
        "UPDATE passkeys SET dynamic_state = $2, last_used_at = now() WHERE credential_id = $1",
        &[&credential_id, &dynamic_state],
    )?;
    Ok(())
}

pub fn passkeys_of(
    db: &mut impl GenericClient,
    person: &PersonId,
) -> Result<Vec<PasskeyListed>, postgres::Error> {
    let rows = db.query(
        "SELECT credential_id, rfc3339(created_at), rfc3339(last_used_at)
           FROM passkeys WHERE person_id = $1 ORDER BY created_at, credential_id",
        &[person],
    )?;
    Ok(rows
        .iter()
        .map(|r| PasskeyListed {
            id: r.get(0),
            created_at: r.get(1),
            last_used_at: r.get(2),
        })
        .collect())
}

/// Removes one passkey of the person; whether there was one.
pub fn delete_passkey(
    db: &mut impl GenericClient,
    person: &PersonId,
    credential_id: &[u8],
) -> Result<bool, postgres::Error> {
    let deleted = db.execute(
        "DELETE FROM passkeys WHERE person_id = $1 AND credential_id = $2",
        &[person, &credential_id],
    )?;
    Ok(deleted == 1)
}
