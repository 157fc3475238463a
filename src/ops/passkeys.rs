//! Passkeys (WebAuthn, user verification required), through the `webauthn_rp` relying party:
//! a person registers one signed in; anyone signs in with one alone (it proves possession and
//! the person's gesture), which also serves as the second factor after a password. The relying
//! party is the console: its host is the id, its origin the only one accepted. A ceremony's
//! state travels with the browser, sealed under the fleet's key for five minutes (a
//! registration's for its person): starting one, which anyone may do for a sign-in, costs no
//! row. A sign-in's ceremony is used once: it is recorded spent, fleet-wide, once its answer
//! verified.

use super::audit::{self, Operation};
use super::second_factors::{actor_of, replace_recovery_codes};
use crate::config::ConsoleUrl;
use crate::db::passkeys::{self as stored, PasskeyListed, StoredPasskey};
use crate::db::people::Person;
use crate::db::second_factors as factors;
use crate::db::sessions;
use crate::error::ApiError;
use crate::ids::PersonId;
use crate::proof_of_work::{self, Checked, Key};
use postgres::GenericClient;
use serde::Serialize;
use webauthn_rp::bin::{Decode, Encode};
use webauthn_rp::request::auth::AuthenticationVerificationOptions;
use webauthn_rp::request::register::{
    CredProtect, PublicKeyCredentialUserEntity, RegistrationVerificationOptions, UserHandle64,
    Username,
};
use webauthn_rp::request::{AsciiDomain, ExtensionInfo, RpId};
use webauthn_rp::response::register::{DynamicState, StaticState};
use webauthn_rp::response::CredentialId;
use webauthn_rp::{
    AuthenticatedCredential, DiscoverableAuthentication64, DiscoverableAuthenticationServerState,
    DiscoverableCredentialRequestOptions, PublicKeyCredentialCreationOptions, Registration,
    RegistrationServerState,
};

/// The refusal of a passkey's answer that does not verify (or came too late).
fn refused() -> ApiError {
    ApiError::validation(
        "credential",
        "the passkey's answer was not accepted (or the 5 minutes to give it had passed): try again",
    )
}

/// The relying party: the console's host.
fn rp_id(url: &ConsoleUrl) -> Result<RpId, ApiError> {
    let origin = url::Url::parse(url.origin()).map_err(internal)?;
    let host = origin.host_str().unwrap_or_default();
    let domain = AsciiDomain::try_from(host.to_owned())
        .map_err(|error| ApiError::internal(format!("the console's host as an RP id: {error}")))?;
    Ok(RpId::Domain(domain))
}

fn internal(error: impl std::fmt::Debug) -> ApiError {
    ApiError::internal(format!("passkey: {error:?}"))
}

/// What a sign-in's ceremony is sealed for.
const SIGN_IN: &str = "passkey sign-in";

/// What a registration's ceremony is sealed for: the person's, whom it binds.
fn registration_of(person: &PersonId) -> String {
    format!("passkey registration of {person}")
}

/// A ceremony's start as the page's script receives it: WebAuthn's options as JSON, and the
/// server's state sealed, which the form posts back with the browser's answer.
fn started(
    options: &impl Serialize,
    state: &[u8],
    key: &Key,
    purpose: &str,
) -> Result<String, ApiError> {
    let ceremony = proof_of_work::seal(key, purpose, proof_of_work::now(), state);
    let started = serde_json::json!({ "publicKey": options, "ceremony": ceremony });
    Ok(started.to_string())
}

/// The server's state a ceremony sealed for `purpose`, if still valid.
fn reopened(key: &Key, purpose: &str, ceremony: &str) -> Result<(Vec<u8>, Checked), ApiError> {
    proof_of_work::open(key, purpose, proof_of_work::now(), ceremony).map_err(|_| refused())
}

/// Starts a registration of a passkey of `person`: the options for `navigator.credentials.
/// create()` as JSON (`PublicKeyCredentialCreationOptionsJSON`).
pub fn start_registration(
    db: &mut impl GenericClient,
    url: &ConsoleUrl,
    key: &Key,
    person: &Person,
) -> Result<String, ApiError> {
    let rp = rp_id(url)?;
    let handle = match stored::user_handle_of(db, &person.id)? {
        Some(bytes) => {
            UserHandle64::decode(bytes.try_into().map_err(internal)?).map_err(internal)?
        }
        None => UserHandle64::new(),
    };
    let user = PublicKeyCredentialUserEntity {
        name: Username::try_from(person.email.as_str()).map_err(internal)?,
        id: &handle,
        display_name: None,
    };
    let mut options = PublicKeyCredentialCreationOptions::passkey(&rp, user, Vec::new());
    // Many authenticators do not know credProtect: a browser told to enforce it refuses them.
    // Asked for, not enforced; the ceremonies themselves require user verification.
    options.extensions.cred_protect =
        CredProtect::UserVerificationRequired(ExtensionInfo::AllowDontEnforceValue);
    let (server, client) = options.start_ceremony().map_err(internal)?;
    let state = server.encode().map_err(internal)?;
    started(&client, &state, key, &registration_of(&person.id))
}

/// Finishes a registration with the browser's answer (`RegistrationResponseJSON`); the
/// person's first factor comes with ten recovery codes, shown once (`Some`).
pub fn finish_registration(
    db: &mut impl GenericClient,
    url: &ConsoleUrl,
    key: &Key,
    person: &Person,
    (answer, ceremony): (&str, &str),
) -> Result<Option<Vec<String>>, ApiError> {
    let rp = rp_id(url)?;
    let registration = Registration::from_json_relaxed(answer.as_bytes()).map_err(|_| refused())?;
    let (state, _) = reopened(key, &registration_of(&person.id), ceremony)?;
    let mut tx = db.transaction()?;
    let server = RegistrationServerState::<64>::decode(&state).map_err(internal)?;
    let origins = [url.origin()];
    let options = RegistrationVerificationOptions::<&str, &str> {
        allowed_origins: &origins,
        ..RegistrationVerificationOptions::default()
    };
    let credential = server
        .verify(&rp, &registration, &options)
        .map_err(|_| refused())?;
    let first = !factors::has_factor(&mut tx, &person.id)?;
    let passkey = StoredPasskey {
        credential_id: credential.id().as_ref().to_vec(),
        person: person.id.clone(),
        user_handle: credential.user_id().encode().map_err(internal)?.to_vec(),
        static_state: credential.static_state().encode().map_err(internal)?,
        dynamic_state: credential
            .dynamic_state()
            .encode()
            .map_err(internal)?
            .to_vec(),
    };
    stored::create_passkey(&mut tx, &passkey).map_err(super::conflict_on_unique(
        "credential",
        "this passkey is added already",
    ))?;
    let codes = match first {
        true => Some(replace_recovery_codes(&mut tx, &person.id)?),
        false => None,
    };
    audit::record_about_person(&mut tx, person, &actor_of(person), Operation::AddPasskey)?;
    tx.commit()?;
    Ok(codes)
}

/// Starts a sign-in with a passkey: the options for `navigator.credentials.get()` as JSON
/// (`PublicKeyCredentialRequestOptionsJSON`), any passkey of this console allowed.
pub fn start_sign_in(url: &ConsoleUrl, key: &Key) -> Result<String, ApiError> {
    let rp = rp_id(url)?;
    let (server, client) = DiscoverableCredentialRequestOptions::passkey(&rp)
        .start_ceremony()
        .map_err(internal)?;
    let state = server.encode().map_err(internal)?;
    started(&client, &state, key, SIGN_IN)
}

/// Finishes a sign-in with the browser's answer (`AuthenticationResponseJSON`): the person
/// whose passkey signed the challenge, with their gesture verified.
pub fn finish_sign_in(
    db: &mut impl GenericClient,
    url: &ConsoleUrl,
    key: &Key,
    (answer, ceremony): (&str, &str),
) -> Result<PersonId, ApiError> {
    let rp = rp_id(url)?;
    let authentication = DiscoverableAuthentication64::from_json_relaxed(answer.as_bytes())
        .map_err(|_| refused())?;
    let (state, spent) = reopened(key, SIGN_IN, ceremony)?;
    let server = DiscoverableAuthenticationServerState::decode(&state).map_err(internal)?;
    let passkey =
        stored::find_passkey(db, authentication.raw_id().as_ref())?.ok_or_else(refused)?;
    let handle_bytes: [u8; 64] = passkey.user_handle.clone().try_into().map_err(internal)?;
    let handle = UserHandle64::decode(handle_bytes).map_err(internal)?;
    let dynamic: [u8; 7] = passkey.dynamic_state.clone().try_into().map_err(internal)?;
    let mut credential = AuthenticatedCredential::new(
        CredentialId::<&[u8]>::decode(passkey.credential_id.as_slice()).map_err(internal)?,
        &handle,
        StaticState::decode(passkey.static_state.as_slice()).map_err(internal)?,
        DynamicState::decode(dynamic).map_err(internal)?,
    )
    .map_err(internal)?;
    let origins = [url.origin()];
    let options = AuthenticationVerificationOptions::<&str, &str> {
        allowed_origins: &origins,
        ..AuthenticationVerificationOptions::default()
    };
    server
        .verify(&rp, &authentication, &mut credential, &options)
        .map_err(|_| refused())?;
    // Only an answer that verified writes: the ceremony spent, so that it signs in once.
    if !sessions::spend_proof(db, &spent.spent, spent.expires_at)? {
        return Err(refused());
    }
    let dynamic = credential.dynamic_state().encode().map_err(internal)?;
    stored::used_passkey(db, &passkey.credential_id, &dynamic)?;
    Ok(passkey.person)
}

/// The person's passkeys, oldest first.
pub fn passkeys_of(
    db: &mut impl GenericClient,
    person: &PersonId,
) -> Result<Vec<PasskeyListed>, ApiError> {
    Ok(stored::passkeys_of(db, person)?)
}

/// Removes one passkey of the person; without another factor their recovery codes go too.
pub fn remove(
    db: &mut impl GenericClient,
    person: &Person,
    credential_id: &[u8],
) -> Result<(), ApiError> {
    let mut tx = db.transaction()?;
    if !stored::delete_passkey(&mut tx, &person.id, credential_id)? {
        return Err(ApiError::NotFound);
    }
    if !factors::has_factor(&mut tx, &person.id)? {
        factors::replace_recovery_codes(&mut tx, &person.id, &[])?;
    }
    audit::record_about_person(&mut tx, person, &actor_of(person), Operation::RemovePasskey)?;
    tx.commit()?;
    Ok(())
}
