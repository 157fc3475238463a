//! Organisations: who a token acts for (`GET /v1/me`), an organisation opened by the operator
//! (the CLI's `--org`), and a new organisation.

use super::audit::{self, AuditEntry, Operation};
use super::{Actor, Caller};
use crate::db::orgs::{self, Org};
use crate::domain::OrgName;
use crate::error::ApiError;
use crate::ids::{OrgId, TokenId};
use postgres::GenericClient;

/// `GET /v1/me`: the organisation and the token that acts for it.
#[derive(Debug, Clone, Copy)]
pub struct Me<'a> {
    pub org: &'a Org,
    pub token_id: &'a TokenId,
    pub token_prefix: &'a str,
}

/// Who the caller's token acts for; a caller without a token has no such answer.
pub fn get_me(caller: &Caller) -> Result<Me<'_>, ApiError> {
    match &caller.actor {
        Actor::Token { id, prefix } => Ok(Me {
            org: &caller.org,
            token_id: id,
            token_prefix: prefix,
        }),
        Actor::Person { .. } | Actor::Cli => Err(ApiError::NotFound),
    }
}

/// The organisation `id`; it must exist.
pub fn find_org(db: &mut impl GenericClient, id: &OrgId) -> Result<Org, ApiError> {
    orgs::find_org(db, id)?.ok_or(ApiError::NotFound)
}

/// The organisation `id` as `actor` works in it; it must exist.
pub fn open(db: &mut impl GenericClient, id: &OrgId, actor: Actor) -> Result<Caller, ApiError> {
    let org = find_org(db, id)?;
    Ok(Caller { org, actor })
}

pub fn create_org(
    db: &mut impl GenericClient,
    actor: &Actor,
    name: &OrgName,
) -> Result<Org, ApiError> {
    let mut tx = db.transaction()?;
    let org = orgs::create_org(&mut tx, name)?;
    let entry = AuditEntry::new(Operation::CreateOrg, "org", org.id.as_str()).named(&org.name);
    audit::record_by(&mut tx, Some(&org.id), actor, entry)?;
    tx.commit()?;
    Ok(org)
}
