//! The operations of an organisation, one function each, that `/v1`, the admin CLI and the
//! console all call: the same input types (validated domain values, typed ids), the same checks
//! in the contract's order, the same errors (`ApiError`, whose `field` and `message` the
//! contract names) and the same output.
//!
//! Every function takes what has been read already (step 2 of the contract's order, the body,
//! is the caller's) and does the rest: the object named (`404`), then the checks on stored data
//! (`403`, `409`, `422`), then the writes, in one transaction that also records the write in
//! the audit log. Nothing is written before every check has passed.

pub mod alerts;
pub mod audit;
pub mod cards;
pub mod devices;
pub mod fragments;
pub mod keys;
pub mod members;
pub mod once;
pub mod orgs;
pub mod passkeys;
pub mod reports;
pub mod routes;
pub mod second_factors;
pub mod sessions;
pub mod site_map;
pub mod sites;
pub mod subscriptions;
pub mod tokens;
pub mod why;

use crate::db::audit::ActorKind;
use crate::db::orgs::{Org, TokenOwner};
use crate::error::ApiError;
use crate::ids::{OrgId, TokenId};

/// Who acts: the audit log names a token by its prefix, a person by email, the CLI as `cli`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Actor {
    Token { id: TokenId, prefix: String },
    Person { email: String },
    Cli,
}

impl Actor {
    fn kind(&self) -> ActorKind {
        match self {
            Actor::Token { .. } => ActorKind::Token,
            Actor::Person { .. } => ActorKind::Person,
            Actor::Cli => ActorKind::Cli,
        }
    }

    fn label(&self) -> &str {
        match self {
            Actor::Token { prefix, .. } => prefix,
            Actor::Person { email, .. } => email,
            Actor::Cli => "cli",
        }
    }

    fn token(&self) -> Option<&TokenId> {
        match self {
            Actor::Token { id, .. } => Some(id),
            _ => None,
        }
    }
}

/// An actor within one organisation: every operation of the contract works in the caller's
/// organisation, and an object of another is not found.
#[derive(Debug, Clone)]
pub struct Caller {
    pub org: Org,
    pub actor: Actor,
}

impl Caller {
    /// The caller of a `/v1` request: the live token's organisation.
    pub fn token(owner: TokenOwner) -> Caller {
        Caller {
            actor: Actor::Token {
                id: owner.token_id,
                prefix: owner.token_prefix,
            },
            org: owner.org,
        }
    }
}

/// Where an action on an object named by id may reach: one organisation's objects, or, for the
/// service operator, every organisation's and the platform's (platform cards).
#[derive(Debug, Clone, Copy)]
pub enum Scope<'a> {
    Org(&'a Caller),
    Operator(&'a Actor),
}

impl Scope<'_> {
    fn actor(&self) -> &Actor {
        match self {
            Scope::Org(caller) => &caller.actor,
            Scope::Operator(actor) => actor,
        }
    }

    /// Whether an object of `owner` (`None`: the platform's) is within reach; an organisation
    /// reaches only its own.
    fn reaches(&self, owner: Option<&OrgId>) -> bool {
        match self {
            Scope::Org(caller) => owner == Some(&caller.org.id),
            Scope::Operator(_) => true,
        }
    }
}

/// A record a write created (`201`) or replaced (`200`).
#[derive(Debug, Clone, PartialEq)]
pub struct Saved<T> {
    pub record: T,
    pub created: bool,
}

/// The `409` message of a write that collided with a concurrent one.
const CHANGED_MEANWHILE: &str = "changed by another request meanwhile: read it again";

/// Maps a unique violation (a concurrent writer got there first) to `409 conflict` on
/// `field`; any other database error stays `500`.
fn conflict_on_unique(
    field: &'static str,
    message: &'static str,
) -> impl FnOnce(postgres::Error) -> ApiError {
    move |error| {
        if crate::db::is_unique_violation(&error) {
            ApiError::conflict(field, message)
        } else {
            error.into()
        }
    }
}
