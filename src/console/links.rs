//! The pages of a one-time link: set a password (a reset, or an invitation for someone new),
//! or join an organisation (an invitation for a person who has a password). Reading the page
//! changes nothing; the `POST` uses the link, once, in the transaction that does what it says.

use super::pages::{self, Field, LinkPage};
use super::session;
use super::sign_in::signed_in;
use super::{Call, Refusal};
use crate::db::people::{self, Link, LinkPurpose, Person};
use crate::domain::NewPassword;
use crate::error::ApiError;
use crate::http::Response;
use crate::ops::members::{self, live_link, LINK_PATH};
use postgres::Client;

/// What the holder of a live link is asked for.
enum Step {
    /// A new password: a reset, or an invitation for someone without one.
    SetPassword { person: Option<Person> },
    /// Nothing but a confirmation: an invitation for a person who has a password.
    Join { person: Person },
}

fn step(db: &mut Client, link: &Link) -> Result<Step, Refusal> {
    let person = match &link.purpose {
        LinkPurpose::Reset { person } => people::find_person(db, person)?,
        LinkPurpose::Invitation { email, .. } => people::find_by_email(db, email)?,
    };
    Ok(match person {
        Some(person) if person.password_hash.is_some() && is_invitation(link) => {
            Step::Join { person }
        }
        person => Step::SetPassword { person },
    })
}

fn is_invitation(link: &Link) -> bool {
    matches!(link.purpose, LinkPurpose::Invitation { .. })
}

fn dead_link() -> Refusal {
    Refusal::Gone("this link is unknown, used or expired: ask for a new one")
}

pub fn page(db: &mut Client, secret: &str) -> Result<Response, Refusal> {
    let link = live_link(db, secret)?.ok_or_else(dead_link)?;
    let step = step(db, &link)?;
    Ok(pages::html(200, &link_page(db, secret, &link, &step)?))
}

fn link_page(db: &mut Client, secret: &str, link: &Link, step: &Step) -> Result<LinkPage, Refusal> {
    let intro = match &link.purpose {
        LinkPurpose::Invitation {
            email,
            org_id,
            role,
        } => {
            let org = crate::db::orgs::find_org(db, org_id)?.ok_or(ApiError::NotFound)?;
            format!("{email} is invited to join {} as {role}.", org.name)
        }
        LinkPurpose::Reset { .. } => "Choose the password you will sign in with.".into(),
    };
    let password = matches!(step, Step::SetPassword { .. }).then(|| {
        Field::new(
            "new_password",
            "New password (10 to 128 characters)",
            "password",
        )
        .autocomplete("new-password")
    });
    Ok(LinkPage {
        nav: None,
        intro,
        action: format!("{LINK_PATH}{secret}"),
        button: match step {
            Step::Join { .. } => "Join",
            Step::SetPassword { .. } => "Set password and sign in",
        },
        password,
    })
}

/// `POST /link/{secret}`: the link used, and what it says done, in one transaction; then the
/// person is signed in (a new password) or sent to sign in (joined with their own).
pub fn use_link(db: &mut Client, call: &Call, secret: &str) -> Result<Response, Refusal> {
    let (app, form) = (call.app, &call.form);
    let link = live_link(db, secret)?.ok_or_else(dead_link)?;
    let step = step(db, &link)?;
    let hash = match step {
        Step::Join { .. } => None,
        Step::SetPassword { .. } => match NewPassword::parse(form.get("new_password")) {
            Ok(password) => Some(app.passwords.hash(&password)?),
            Err(invalid) => {
                let mut page = link_page(db, secret, &link, &step)?;
                if let Some(field) = page.password.as_mut() {
                    field.error = Some(invalid.message);
                }
                return Ok(pages::html(422, &page));
            }
        },
    };
    let known = match step {
        Step::Join { person } => Some(person),
        Step::SetPassword { person } => person,
    };
    let person = members::use_link(db, &link, known, hash.as_deref())?.ok_or_else(dead_link)?;
    if hash.is_none() {
        return Ok(pages::redirect("/sign-in?notice=joined"));
    }
    let org = match &link.purpose {
        LinkPurpose::Invitation { org_id, .. } => Some(org_id),
        LinkPurpose::Reset { .. } => None,
    };
    let secret = session::start(db, &person, org, call.request)?;
    Ok(signed_in(app, &secret, "/?notice=password-set"))
}
