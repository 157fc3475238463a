//! Management tokens, a console action (owners only there): create (the token shown once),
//! revoke, delete, list (never the token itself).

use super::audit::{self, revocation_words, AuditEntry, Operation};
use super::{Caller, Scope};
use crate::auth::{self, SecretKind};
use crate::db::orgs::{self, Creator, TokenRow};
use crate::domain::TokenName;
use crate::error::ApiError;
use crate::ids::TokenId;
use postgres::{GenericClient, Transaction};

/// A token just made, with the full token: the only time it is shown.
#[derive(Debug, Clone)]
pub struct CreatedToken {
    pub token: TokenRow,
    pub secret: String,
}

/// A new token of the caller's organisation, of the service `prefix` (`svc_mgmt_…`): one made
/// by support expires after 90 days, an owner's never.
pub fn create_token(
    db: &mut impl GenericClient,
    caller: &Caller,
    name: &TokenName,
    creator: Creator,
    prefix: &str,
) -> Result<CreatedToken, ApiError> {
    let secret = auth::generate(SecretKind::ManagementToken, prefix);
    let mut tx = db.transaction()?;
    let org_id = &caller.org.id;
    let token = orgs::create_token(&mut tx, org_id, name, &secret.hash, &secret.prefix, creator)?;
    audit::record(&mut tx, caller, token_entry(Operation::CreateToken, &token))?;
    tx.commit()?;
    Ok(CreatedToken {
        token,
        secret: secret.value,
    })
}

/// Revokes a token once (its next call answers `401`); a second call keeps the first date.
pub fn revoke_token(
    db: &mut impl GenericClient,
    scope: Scope,
    id: &TokenId,
) -> Result<TokenRow, ApiError> {
    change_token(db, scope, id, Operation::RevokeToken, |tx, id| {
        orgs::revoke_token(tx, id)
    })
}

/// Deletes a token; answers what it was.
pub fn delete_token(
    db: &mut impl GenericClient,
    scope: Scope,
    id: &TokenId,
) -> Result<TokenRow, ApiError> {
    change_token(db, scope, id, Operation::DeleteToken, |tx, id| {
        orgs::delete_token(tx, id)
    })
}

/// Applies `change` to a token within reach of `scope` and records it.
fn change_token(
    db: &mut impl GenericClient,
    scope: Scope,
    id: &TokenId,
    operation: Operation,
    change: fn(&mut Transaction, &TokenId) -> Result<Option<TokenRow>, postgres::Error>,
) -> Result<TokenRow, ApiError> {
    let mut tx = db.transaction()?;
    let before = orgs::find_token(&mut tx, id)?
        .filter(|token| scope.reaches(Some(&token.org_id)))
        .ok_or(ApiError::NotFound)?;
    let token = change(&mut tx, id)?.ok_or(ApiError::NotFound)?;
    let entry = token_entry(operation, &before).change(
        "status",
        revocation_words(before.revoked_at.as_ref()),
        revocation_words(token.revoked_at.as_ref()),
    );
    audit::record_by(&mut tx, Some(&token.org_id), scope.actor(), entry)?;
    tx.commit()?;
    Ok(token)
}

pub fn list_tokens(
    db: &mut impl GenericClient,
    caller: &Caller,
) -> Result<Vec<TokenRow>, ApiError> {
    Ok(orgs::list_tokens(db, &caller.org.id)?)
}

/// A token's entry, named by its name (never the token itself).
fn token_entry(operation: Operation, token: &TokenRow) -> AuditEntry<'_> {
    AuditEntry::new(operation, "token", token.id.as_str()).named(token.name.as_str())
}
