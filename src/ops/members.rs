//! The people of an organisation, from the console and the CLI alike: invitations (one-time
//! links), roles, removals, the making of a person and their password links, and the use of a
//! link. A link's secret is shown once, as a URL of the console; only its SHA-256 is stored,
//! and it can be used once within 7 days. Each write is recorded in the audit log in its own
//! transaction; the rule that an organisation keeps an owner is `db::people::change_membership`'s.

use super::audit::{self, AuditEntry, Operation, NONE};
use super::{Actor, Caller};
use crate::auth;
use crate::config::ConsoleUrl;
use crate::db::people::{
    self, LinkPurpose, Member, MembershipChange, OneTimeLink, OrgAccess, PendingInvitation, Person,
};
use crate::domain::{Email, Role};
use crate::error::ApiError;
use crate::ids::{OrgId, PersonId};
use crate::mail::{Mail, Mailer};
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
    let entry = invitation_entry(Operation::InviteMember, &id, email.as_str()).change(
        "role",
        NONE,
        role.as_str(),
    );
    audit::record(&mut tx, caller, entry)?;
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
    let invitation = people::pending_invitations(&mut tx, &caller.org.id)?
        .into_iter()
        .find(|invitation| invitation.id == id);
    if !people::revoke_invitation(&mut tx, &caller.org.id, id)? {
        return Err(ApiError::NotFound);
    }
    let email = invitation.map(|i| i.email).unwrap_or_default();
    let id = id.to_string();
    audit::record(
        &mut tx,
        caller,
        invitation_entry(Operation::RevokeInvitation, &id, &email),
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
    let was = match people::change_membership(&mut tx, &caller.org.id, person, to)? {
        MembershipChange::Done { was } => was,
        MembershipChange::NotMember => return Err(ApiError::NotFound),
        MembershipChange::LastOwner => {
            return Err(ApiError::conflict(
                "role",
                "an organisation keeps at least one owner: make another member an owner first",
            ))
        }
    };
    let email = people::find_person(&mut tx, person)?
        .map(|p| p.email)
        .unwrap_or_default();
    let after = to.map_or(NONE, Role::as_str);
    let entry = person_entry(operation, person, &email).change("role", was.as_str(), after);
    audit::record(&mut tx, caller, entry)?;
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
    audit::record_about_person(&mut tx, person, actor, Operation::PasswordLink)?;
    tx.commit()?;
    Ok(link)
}

/// Mails an invitation's link to the invitee when mail is set up; whether it was queued.
pub fn mail_invitation(
    mailer: Option<&Mailer>,
    caller: &Caller,
    email: &Email,
    role: Role,
    link: &str,
) -> bool {
    let mail = || Mail::invitation(email.as_str(), &caller.org.name, role.as_str(), link);
    mailer.map(|m| m.send(mail())).is_some()
}

/// Mails a link to set a password to its person when mail is set up; whether it was queued.
pub fn mail_password_link(mailer: Option<&Mailer>, person: &Person, link: &str) -> bool {
    mailer
        .map(|m| m.send(Mail::password(&person.email, link)))
        .is_some()
}

/// "Forgot your password": mails a new password link to the person with `email`, if there is
/// one, and does nothing otherwise; the answer is the same either way, and the mail leaves
/// from the mailer's thread, so neither the answer nor its time says whether the email is
/// known. The audit log records the link under the person's email.
pub fn request_reset(
    db: &mut impl GenericClient,
    mailer: &Mailer,
    url: &ConsoleUrl,
    email: &str,
) -> Result<(), ApiError> {
    let Some(person) = people::find_by_email(db, email.trim())? else {
        return Ok(());
    };
    let actor = Actor::Person {
        email: person.email.clone(),
    };
    let link = password_link(db, &actor, url, &person)?;
    mail_password_link(Some(mailer), &person, &link);
    Ok(())
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
    audit::record_about_person(&mut tx, &person, actor, Operation::CreatePerson)?;
    let link = reset_link(&mut tx, url, &person, actor)?;
    tx.commit()?;
    Ok((person, link))
}

/// The person with this email (made, without a password, when new) as an owner of `org_id`:
/// how the demo gives each of its organisations the same owner.
pub fn make_owner(
    db: &mut impl GenericClient,
    actor: &Actor,
    org_id: &OrgId,
    email: &Email,
) -> Result<Person, ApiError> {
    let mut tx = db.transaction()?;
    // Made here, or found when it exists (an insert meeting another's waits for it).
    let person = match people::create_person(&mut tx, email, false)? {
        Some(person) => person,
        None => people::find_by_email(&mut tx, email.as_str())?.ok_or_else(|| {
            ApiError::internal(format!("{}: neither made nor found", email.as_str()))
        })?,
    };
    people::add_membership(&mut tx, org_id, &person.id, Role::Owner)?;
    audit::record_by(
        &mut tx,
        Some(org_id),
        actor,
        person_entry(Operation::MakeOwner, &person.id, &person.email),
    )?;
    tx.commit()?;
    Ok(person)
}

/// A person's new password (its hash), which ends every session of theirs; recorded in each
/// of their organisations as the person's own write.
/// Sets the time zone (an IANA name the caller checked; `None`: UTC) a person reads the
/// console's times in: a preference of their own, not audited.
pub fn set_time_zone(
    db: &mut impl GenericClient,
    person: &PersonId,
    time_zone: Option<&str>,
) -> Result<(), ApiError> {
    people::set_time_zone(db, person, time_zone)?;
    Ok(())
}

pub fn change_password(
    db: &mut impl GenericClient,
    person: &Person,
    password_hash: &str,
) -> Result<(), ApiError> {
    let mut tx = db.transaction()?;
    people::set_password(&mut tx, &person.id, password_hash)?;
    let actor = Actor::Person {
        email: person.email.clone(),
    };
    audit::record_about_person(&mut tx, person, &actor, Operation::ChangePassword)?;
    tx.commit()?;
    Ok(())
}

/// The person of this id, if any.
pub fn find_person(db: &mut impl GenericClient, id: &PersonId) -> Result<Option<Person>, ApiError> {
    Ok(people::find_person(db, id)?)
}

/// The person of this email (in any case), if any.
pub fn find_by_email(db: &mut impl GenericClient, email: &str) -> Result<Option<Person>, ApiError> {
    Ok(people::find_by_email(db, email)?)
}

/// The organisations `person` may open, by name (every one for support staff).
pub fn orgs_open_to(
    db: &mut impl GenericClient,
    person: &Person,
) -> Result<Vec<OrgAccess>, ApiError> {
    Ok(people::orgs_open_to(db, person)?)
}

/// The members of the caller's organisation.
pub fn members(db: &mut impl GenericClient, caller: &Caller) -> Result<Vec<Member>, ApiError> {
    Ok(people::members(db, &caller.org.id)?)
}

/// The invitations of the caller's organisation not used yet and not expired.
pub fn pending_invitations(
    db: &mut impl GenericClient,
    caller: &Caller,
) -> Result<Vec<PendingInvitation>, ApiError> {
    Ok(people::pending_invitations(db, &caller.org.id)?)
}

/// The live link whose secret is `secret`; `None` when it is unknown, used or expired (or not
/// of a secret's form).
pub fn live_link(
    db: &mut impl GenericClient,
    secret: &str,
) -> Result<Option<OneTimeLink>, ApiError> {
    if !auth::is_random_hex(secret, LINK_SECRET_BYTES) {
        return Ok(None);
    }
    Ok(people::live_link(db, &auth::hash(secret))?)
}

/// Uses a live link, once: sets the password (`Some` hash) and, for an invitation, adds the
/// membership, making the person it names when they are new. `None`: the link was used or
/// expired meanwhile. The person who uses it is the actor the audit log names. An invitation
/// for a person who has a password is refused here: only they accept it, signed in ([`join`]).
pub fn use_link(
    db: &mut impl GenericClient,
    link: &OneTimeLink,
    person: Option<Person>,
    password_hash: Option<&str>,
) -> Result<Option<Person>, ApiError> {
    if let LinkPurpose::Invitation { email, .. } = &link.purpose {
        if person.as_ref().is_some_and(|p| p.password_hash.is_some()) {
            return Err(sign_in_as(email));
        }
    }
    spend_link(db, link, person, password_hash)
}

/// Accepts an invitation for a person who has a password: only that person, signed in
/// (`signed_in`, the person of the session), joins; anyone else holding the link is refused
/// and nothing changes. `None`: the link was used or expired meanwhile.
pub fn join(
    db: &mut impl GenericClient,
    link: &OneTimeLink,
    signed_in: &PersonId,
) -> Result<Option<Person>, ApiError> {
    let LinkPurpose::Invitation { email, .. } = &link.purpose else {
        return Err(ApiError::NotFound);
    };
    let person = people::find_person(db, signed_in)?.ok_or(ApiError::NotFound)?;
    if !person.email.eq_ignore_ascii_case(email) {
        return Err(sign_in_as(email));
    }
    spend_link(db, link, Some(person), None)
}

/// The refusal of an invitation used by someone other than its invitee, signed in.
fn sign_in_as(email: &str) -> ApiError {
    ApiError::validation(
        "email",
        format!("this invitation is for {email}, who has a password: sign in as {email}, then open the link again"),
    )
}

fn spend_link(
    db: &mut impl GenericClient,
    link: &OneTimeLink,
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
            let entry = person_entry(Operation::Join, &person.id, &person.email).change(
                "role",
                NONE,
                role.as_str(),
            );
            audit::record_by(&mut tx, Some(org_id), &actor, entry)?;
        }
        LinkPurpose::Reset { .. } => {
            audit::record_about_person(&mut tx, &person, &actor, Operation::SetPassword)?
        }
    }
    tx.commit()?;
    Ok(Some(person))
}

/// The person an invitation names, made when it is first used.
fn invited_person(tx: &mut Transaction, link: &OneTimeLink) -> Result<Person, ApiError> {
    let LinkPurpose::Invitation { email, .. } = &link.purpose else {
        return Err(ApiError::NotFound);
    };
    let email = Email::parse(email)?;
    people::create_person(tx, &email, false)?
        .ok_or_else(|| ApiError::conflict("email", "a person with this email exists"))
}

/// A person's entry, named by their email.
fn person_entry<'a>(operation: Operation, id: &'a PersonId, email: &str) -> AuditEntry<'a> {
    AuditEntry::new(operation, "person", id.as_str()).named(email)
}

/// An invitation's entry, named by the email it invites.
fn invitation_entry<'a>(operation: Operation, id: &'a str, email: &str) -> AuditEntry<'a> {
    AuditEntry::new(operation, "invitation", id).named(email)
}
