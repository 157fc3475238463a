//! The pages of a one-time link: set a password (a reset, or an invitation for someone new),
//! or join an organisation (an invitation for a person who has a password, accepted by that
//! person signed in only; anyone else is asked to sign in as them first). Reading the page
//! changes nothing; the `POST` uses the link, once, in the transaction that does what it says.

use super::answers;
use super::captures::LinkSecret;
use super::context::{Answer, PublicContext};
use super::inputs::Input;
use super::layout::Layout;
use super::notice::Notice;
use super::pages::LinkPage;
use super::refusal::PageRefusal;
use super::session::{self, Visit};
use super::sign_in::signed_in;
use crate::db::people::{LinkPurpose, OneTimeLink, Person};
use crate::domain::NewPassword;
use crate::ops::members::{self, live_link, LINK_PATH};
use crate::ops::{orgs, second_factors, sessions};
use postgres::Client;

/// What the holder of a live link is asked for.
enum Step {
    /// A new password: a reset, or an invitation for someone without one.
    SetPassword { person: Option<Person> },
    /// Nothing but a confirmation: an invitation for a person who has a password.
    Join { person: Person },
}

fn step(db: &mut Client, link: &OneTimeLink) -> Result<Step, PageRefusal> {
    let person = match &link.purpose {
        LinkPurpose::Reset { person } => members::find_person(db, person)?,
        LinkPurpose::Invitation { email, .. } => members::find_by_email(db, email)?,
    };
    Ok(match person {
        Some(person) if person.password_hash.is_some() && is_invitation(link) => {
            Step::Join { person }
        }
        person => Step::SetPassword { person },
    })
}

/// The email of the account whose password the link sets; `None` when it sets none.
fn password_for<'a>(step: &'a Step, link: &'a OneTimeLink) -> Option<&'a str> {
    match (step, &link.purpose) {
        (
            Step::SetPassword {
                person: Some(person),
            },
            _,
        ) => Some(&person.email),
        (Step::SetPassword { person: None }, LinkPurpose::Invitation { email, .. }) => Some(email),
        _ => None,
    }
}

fn is_invitation(link: &OneTimeLink) -> bool {
    matches!(link.purpose, LinkPurpose::Invitation { .. })
}

fn dead_link() -> PageRefusal {
    PageRefusal::Gone("this link is unknown, used or expired: ask for a new one")
}

/// `GET /link/{link}`. The link's secret stands for the form token: a link is used before
/// any session (joining, signed in, carries the session's form token too).
pub fn page(ctx: &mut PublicContext) -> Answer {
    let LinkSecret(secret) = ctx.captures.get()?;
    let link = live_link(ctx.db, &secret)?.ok_or_else(dead_link)?;
    let step = step(ctx.db, &link)?;
    let layout = ctx.layout();
    let mut page = link_page(ctx.db, layout, &secret, &link, &step)?;
    if let Step::Join { person } = &step {
        ask_to_sign_in(&mut page, ctx.visit.as_ref(), person, &secret);
    }
    Ok(answers::html(200, &page))
}

/// An invitation for a person who has a password is accepted by that person signed in only:
/// anyone else is asked to sign in as them first (back here after), and offered no button.
fn ask_to_sign_in(page: &mut LinkPage, visit: Option<&Visit>, invitee: &Person, secret: &str) {
    let email = &invitee.email;
    match visit {
        Some(visit) if visit.session.person == invitee.id => {
            page.csrf = Some(visit.form_token.clone());
        }
        Some(visit) => {
            page.offer = false;
            page.note = Some(format!(
                "You are signed in as {}, not {email}: sign out, then sign in as {email} \
                 and open this link again to accept.",
                visit.session.email
            ));
        }
        None => {
            page.offer = false;
            page.note = Some(format!(
                "{email} has a password already: sign in as {email} first to accept."
            ));
            page.sign_in = Some(format!("/sign-in?next={LINK_PATH}{secret}"));
        }
    }
}

fn link_page(
    db: &mut Client,
    layout: Layout,
    secret: &str,
    link: &OneTimeLink,
    step: &Step,
) -> Result<LinkPage, PageRefusal> {
    let intro = match &link.purpose {
        LinkPurpose::Invitation {
            email,
            org_id,
            role,
        } => {
            let org = orgs::find_org(db, org_id)?;
            format!("{email} is invited to join {} as {role}.", org.name)
        }
        LinkPurpose::Reset { .. } => "Choose the password you will sign in with.".into(),
    };
    let password = matches!(step, Step::SetPassword { .. }).then(|| {
        Input::line(
            "new_password",
            "New password (10 to 128 characters)",
            "password",
        )
        .autocomplete("new-password")
    });
    Ok(LinkPage {
        layout,
        intro,
        // Where a password manager saves the password, with the account it is for.
        email: password_for(step, link).map(str::to_string),
        action: format!("{LINK_PATH}{secret}"),
        button: match step {
            Step::Join { .. } => "Join",
            Step::SetPassword { .. } => "Set password and sign in",
        },
        password,
        offer: true,
        csrf: None,
        note: None,
        sign_in: None,
    })
}

/// `POST /link/{secret}`: the link used, and what it says done, in one transaction; then the
/// person is signed in (a new password) or sent to sign in (joined with their own).
pub fn use_link(ctx: &mut PublicContext) -> Answer {
    let LinkSecret(secret) = ctx.captures.get()?;
    let (app, db) = (ctx.app, &mut *ctx.db);
    let link = live_link(db, &secret)?.ok_or_else(dead_link)?;
    let step = step(db, &link)?;
    let hash = match step {
        Step::Join { .. } => None,
        Step::SetPassword { .. } => match NewPassword::for_person(
            ctx.form.get("new_password"),
            password_for(&step, &link).unwrap_or_default(),
        ) {
            Ok(password) => Some(app.passwords.hash(&password)?),
            Err(invalid) => {
                let mut page = link_page(db, Layout::default(), &secret, &link, &step)?;
                if let Some(field) = page.password.as_mut() {
                    field.error = Some(invalid.message);
                }
                return Ok(answers::html(422, &page));
            }
        },
    };
    let person = match (step, &ctx.visit) {
        (Step::Join { .. }, Some(visit)) => return join(db, &link, visit, ctx.form.get("csrf")),
        (Step::Join { person }, None) => members::use_link(db, &link, Some(person), None)?,
        (Step::SetPassword { person }, _) => members::use_link(db, &link, person, hash.as_deref())?,
    };
    let person = person.ok_or_else(dead_link)?;
    if second_factors::has_factor(db, &person.id)? {
        // A link proves the email, not the second factor: the sign-in asks for it.
        return Ok(answers::redirect_with(
            "/sign-in",
            Notice::PasswordSetSignIn,
        ));
    }
    let org = match &link.purpose {
        LinkPurpose::Invitation { org_id, .. } => Some(org_id),
        LinkPurpose::Reset { .. } => None,
    };
    let secret = session::start(db, &person, org, ctx.request)?;
    let location = format!("/?notice={}", Notice::PasswordSet.as_str());
    signed_in(db, app, &person, &secret, &location)
}

/// An invitation accepted by the person signed in (`ops::members::join` refuses anyone but
/// the invitee): their session then looks at the organisation joined.
fn join(db: &mut Client, link: &OneTimeLink, visit: &Visit, csrf: &str) -> Answer {
    visit.require_token(csrf)?;
    members::join(db, link, &visit.session.person)?.ok_or_else(dead_link)?;
    if let LinkPurpose::Invitation { org_id, .. } = &link.purpose {
        sessions::choose_org(db, visit.session.id, org_id)?;
    }
    Ok(answers::redirect_with("/", Notice::JoinedSignedIn))
}
