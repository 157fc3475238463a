//! What is done with the console's people, from the console and from the CLI alike: one-time
//! links (an invitation to an organisation, a link to set one's password) and their use, and
//! making a person. A link's secret is shown once, as a URL of the console; only its SHA-256
//! is stored, and it can be used once within 7 days.

use crate::auth;
use crate::config::ConsoleUrl;
use crate::db::people::{self, Link, LinkPurpose, Person};
use crate::domain::{Email, Role};
use crate::error::ApiError;
use crate::ids::{OrgId, PersonId};
use postgres::GenericClient;

/// 256 random bits.
pub const LINK_SECRET_BYTES: usize = 32;
/// Where a link leads, under the console's origin.
pub const LINK_PATH: &str = "/link/";

/// Who makes a link, as the members page shows it: a person's email, or the CLI.
pub const BY_CLI: &str = "cli";

/// A link's URL; the only place its secret appears.
fn new_link(
    db: &mut impl GenericClient,
    url: &ConsoleUrl,
    purpose: &LinkPurpose,
    created_by: &str,
) -> Result<String, ApiError> {
    let secret = auth::random_hex(LINK_SECRET_BYTES);
    people::create_link(db, &auth::hash(&secret), purpose, created_by)?;
    Ok(format!("{}{LINK_PATH}{secret}", url.origin()))
}

/// An invitation to `org_id` as `role`; refused when the email is already a member there.
pub fn invite(
    db: &mut impl GenericClient,
    url: &ConsoleUrl,
    org_id: &OrgId,
    email: &Email,
    role: Role,
    created_by: &str,
) -> Result<String, ApiError> {
    let members = people::members(db, org_id)?;
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
        org_id: org_id.clone(),
        role,
    };
    new_link(db, url, &purpose, created_by)
}

/// A link with which `person` sets a (new) password.
pub fn password_link(
    db: &mut impl GenericClient,
    url: &ConsoleUrl,
    person: &PersonId,
    created_by: &str,
) -> Result<String, ApiError> {
    let purpose = LinkPurpose::Reset {
        person: person.clone(),
    };
    new_link(db, url, &purpose, created_by)
}

/// Where a new person belongs: an organisation, or the service's support staff.
#[derive(Debug, Clone)]
pub enum Access {
    Member { org_id: OrgId, role: Role },
    Support,
}

/// A new person without a password yet, and the link with which they set it.
pub fn create_person(
    db: &mut postgres::Transaction,
    url: &ConsoleUrl,
    email: &Email,
    access: &Access,
) -> Result<(Person, String), ApiError> {
    let support = matches!(access, Access::Support);
    let person = people::create_person(db, email, support)?
        .ok_or_else(|| ApiError::conflict("email", "a person with this email exists already"))?;
    if let Access::Member { org_id, role } = access {
        people::add_membership(db, org_id, &person.id, *role)?;
    }
    let link = password_link(db, url, &person.id, BY_CLI)?;
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
