//! The people of an organisation, from the console and the CLI alike: invitations (one-time
//! links), roles, removals, the making of a person and their password links, and the use of a
//! link. A link's secret is shown once, as a URL of the console; only its SHA-256 is stored,
//! and it can be used once within 7 days. Each write is recorded in the audit log in its own
//! transaction; the rule that an organisation keeps an owner is `db::people::change_membership`'s.

use super::{record, record_for, Actor, Caller, Operation, Wrote};
use crate::auth;
use crate::config::ConsoleUrl;
use crate::db::people::{self, Link, LinkPurpose, MembershipChange, Person};
use crate::domain::{Email, Role};
use crate::error::ApiError;
use crate::ids::{OrgId, PersonId};
use postgres::{GenericClient, Transaction};

/// 256 random bits.
pub const LINK_SECRET_BYTES: usize = 32;
/// Where a link leads, under the console's origin.
pub const LINK_PATH: &str = "/link/";

/// Where a new person belongs: an organisation, or the service's support staff.
#[derive(Debug, Clone)]
pub enum Access {
    Member { org_id: OrgId, role: Role },
    Support,
}

/// A link's URL, the only place its secret appears, and the stored link's id. The link names
/// its maker as the audit log does (an email, or `cli`).
fn new_link(
    db: &mut impl GenericClient,
    url: &ConsoleUrl,
    purpose: &LinkPurpose,
    actor: &Actor,
) -> Result<(i64, String), ApiError> {
    let secret = auth::random_hex(LINK_SECRET_BYTES);
    let id = people::create_link(db, &auth::hash(&secret), purpose, actor.label())?;
    Ok((id, format!("{}{LINK_PATH}{secret}", url.origin())))
}

/// The URL of a new link with which `person` sets their password.
fn reset_link(
    db: &mut impl GenericClient,
    url: &ConsoleUrl,
    person: &Person,
    actor: &Actor,
) -> Result<String, ApiError> {
    let purpose = LinkPurpose::Reset {
        person: person.id.clone(),
    };
    Ok(new_link(db, url, &purpose, actor)?.1)
}

/// An invitation to the caller's organisation as `role`; refused when the email is already a
/// member there. Answers the link.
pub fn invite(
    db: &mut impl GenericClient,
    caller: &Caller,
    url: &ConsoleUrl,
    email: &Email,
    role: Role,
) -> Result<String, ApiError> {
    let mut tx = db.transaction()?;
    let members = people::members(&mut tx, &caller.org.id)?;
    if members
        .iter()
        .any(|m| m.email.eq_ignore_ascii_case(email.as_str()))
    {
        return Err(ApiError::conflict(
            "email",
            "this person is already a member of the organisation",
        ));
    }
    let purpose = LinkPurpose::Invitation {
        email: email.to_string(),
        org_id: caller.org.id.clone(),
        role,
    };
    let (id, link) = new_link(&mut tx, url, &purpose, &caller.actor)?;
    let id = id.to_string();
    record_for(
        &mut tx,
        caller,
        invitation_wrote(Operation::InviteMember, &id),
    )?;
    tx.commit()?;
    Ok(link)
}

/// Deletes a pending invitation of the caller's organisation: its link stops working.
pub fn revoke_invitation(
    db: &mut impl GenericClient,
    caller: &Caller,
    id: i64,
) -> Result<(), ApiError> {
    let mut tx = db.transaction()?;
    if !people::revoke_invitation(&mut tx, &caller.org.id, id)? {
        return Err(ApiError::NotFound);
    }
    let id = id.to_string();
    record_for(
        &mut tx,
        caller,
        invitation_wrote(Operation::RevokeInvitation, &id),
    )?;
    tx.commit()?;
    Ok(())
}

/// Gives a member of the caller's organisation another role.
pub fn change_role(
    db: &mut impl GenericClient,
    caller: &Caller,
    person: &PersonId,
    role: Role,
) -> Result<(), ApiError> {
    change_membership(db, caller, person, Some(role), Operation::ChangeRole)
}

/// Removes a member from the caller's organisation.
pub fn remove_member(
    db: &mut impl GenericClient,
    caller: &Caller,
    person: &PersonId,
) -> Result<(), ApiError> {
    change_membership(db, caller, person, None, Operation::RemoveMember)
}

fn change_membership(
    db: &mut impl GenericClient,
    caller: &Caller,
    person: &PersonId,
    to: Option<Role>,
    operation: Operation,
) -> Result<(), ApiError> {
    let mut tx = db.transaction()?;
    match people::change_membership(&mut tx, &caller.org.id, person, to)? {
        MembershipChange::Done => {}
        MembershipChange::NotMember => return Err(ApiError::NotFound),
        MembershipChange::LastOwner => {
            return Err(ApiError::conflict(
                "role",
                "an organisation keeps at least one owner: make another member an owner first",
            ))
        }
    }
    record_for(&mut tx, caller, person_wrote(operation, person))?;
    tx.commit()?;
    Ok(())
}

/// A link with which `person` sets a (new) password; recorded in each organisation of theirs
/// (support staff without one: as the platform's).
pub fn password_link(
    db: &mut impl GenericClient,
    actor: &Actor,
    url: &ConsoleUrl,
    person: &Person,
) -> Result<String, ApiError> {
    let mut tx = db.transaction()?;
    let link = reset_link(&mut tx, url, person, actor)?;
    record_in_orgs_of(&mut tx, person, actor, Operation::PasswordLink)?;
    tx.commit()?;
    Ok(link)
}

/// A new person without a password yet, and the link with which they set it.
pub fn create_person(
    db: &mut impl GenericClient,
    actor: &Actor,
    url: &ConsoleUrl,
    email: &Email,
    access: &Access,
) -> Result<(Person, String), ApiError> {
    let mut tx = db.transaction()?;
    let support = matches!(access, Access::Support);
    let person = people::create_person(&mut tx, email, support)?
        .ok_or_else(|| ApiError::conflict("email", "a person with this email exists already"))?;
    if let Access::Member { org_id, role } = access {
        people::add_membership(&mut tx, org_id, &person.id, *role)?;
    }
    record_in_orgs_of(&mut tx, &person, actor, Operation::CreatePerson)?;
    let link = reset_link(&mut tx, url, &person, actor)?;
    tx.commit()?;
    Ok((person, link))
}

/// The live link whose secret is `secret`; `None` when it is unknown, used or expired (or not
/// of a secret's form).
pub fn live_link(db: &mut impl GenericClient, secret: &str) -> Result<Option<Link>, ApiError> {
    if !auth::is_random_hex(secret, LINK_SECRET_BYTES) {
        return Ok(None);
    }
    Ok(people::live_link(db, &auth::hash(secret))?)
}

/// Uses a live link, once: sets the password (`Some` hash) and, for an invitation, adds the
/// membership, making the person it names when they are new. `None`: the link was used or
/// expired meanwhile. The person who uses it is the actor the audit log names.
pub fn use_link(
    db: &mut impl GenericClient,
    link: &Link,
    person: Option<Person>,
    password_hash: Option<&str>,
) -> Result<Option<Person>, ApiError> {
    let mut tx = db.transaction()?;
    if !people::use_link(&mut tx, link.id)? {
        return Ok(None);
    }
    let person = match person {
        Some(person) => person,
        None => invited_person(&mut tx, link)?,
    };
    let actor = Actor::Person {
        email: person.email.clone(),
    };
    if let Some(hash) = password_hash {
        people::set_password(&mut tx, &person.id, hash)?;
    }
    match &link.purpose {
        LinkPurpose::Invitation { org_id, role, .. } => {
            people::add_membership(&mut tx, org_id, &person.id, *role)?;
            let wrote = person_wrote(Operation::Join, &person.id);
            record(&mut tx, Some(org_id), &actor, wrote)?;
        }
        LinkPurpose::Reset { .. } => {
            record_in_orgs_of(&mut tx, &person, &actor, Operation::SetPassword)?
        }
    }
    tx.commit()?;
    Ok(Some(person))
}

/// The person an invitation names, made when it is first used.
fn invited_person(tx: &mut Transaction, link: &Link) -> Result<Person, ApiError> {
    let LinkPurpose::Invitation { email, .. } = &link.purpose else {
        return Err(ApiError::NotFound);
    };
    let email = Email::parse(email)?;
    people::create_person(tx, &email, false)?
        .ok_or_else(|| ApiError::conflict("email", "a person with this email exists"))
}

/// Records a write about `person` in each of their organisations; with none, as the platform's.
fn record_in_orgs_of(
    tx: &mut Transaction,
    person: &Person,
    actor: &Actor,
    operation: Operation,
) -> Result<(), ApiError> {
    let orgs = people::orgs_of(tx, &person.id)?;
    if orgs.is_empty() {
        return record(tx, None, actor, person_wrote(operation, &person.id));
    }
    for org_id in &orgs {
        record(tx, Some(org_id), actor, person_wrote(operation, &person.id))?;
    }
    Ok(())
}

fn person_wrote<'a>(operation: Operation, id: &'a PersonId) -> Wrote<'a> {
    Wrote {
        operation,
        object_kind: "person",
        object: id.as_str(),
    }
}

fn invitation_wrote<'a>(operation: Operation, id: &'a str) -> Wrote<'a> {
    Wrote {
        operation,
        object_kind: "invitation",
        object: id,
    }
}
