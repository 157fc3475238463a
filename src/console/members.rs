//! The members page, for owners only (support staff count as owners): the members with their
//! roles, the pending invitations, and the invite form. Every request is checked on the
//! server, the page and each `POST` alike; the writes are `ops::members`'s.

use super::form::Form;
use super::pages::{self, Field, MembersPage};
use super::session::{console_url, Visit};
use super::{Call, Refusal};
use crate::db::people;
use crate::domain::{Email, Role};
use crate::error::ApiError;
use crate::http::{Request, Response};
use crate::ids::PersonId;
use crate::ops::members;
use postgres::Client;

fn page(db: &mut Client, visit: &Visit, request: &Request) -> Result<MembersPage, Refusal> {
    let org = visit.require_owner()?;
    Ok(MembersPage {
        nav: Some(visit.nav()),
        notice: pages::notice(request),
        me: visit.session.person.clone(),
        members: people::members(db, &org.org_id)?,
        invitations: people::pending_invitations(db, &org.org_id)?,
        email: Field::new("email", "Email", "email"),
        role_error: None,
        new_link: None,
    })
}

pub fn members_page(
    db: &mut Client,
    visit: &Visit,
    request: &Request,
) -> Result<Response, Refusal> {
    Ok(pages::html(200, &page(db, visit, request)?))
}

/// `POST /members/invite`: the link is shown on the answer itself, once (it is not stored, so
/// no later page can show it).
pub fn invite(db: &mut Client, call: &Call, visit: &Visit) -> Result<Response, Refusal> {
    let (app, form) = (call.app, &call.form);
    let mut page = page(db, visit, call.request)?;
    page.email.value = form.get("email").to_string();
    let caller = visit.owner()?;
    let invited = Email::parse(form.get("email"))
        .map_err(ApiError::from)
        .and_then(|email| Ok((email, Role::parse(form.get("role"))?)))
        .and_then(|(email, role)| members::invite(db, &caller, console_url(app), &email, role));
    match invited {
        Ok(link) => {
            page.new_link = Some(link);
            page.email.value.clear();
            page.invitations = people::pending_invitations(db, &caller.org.id)?;
            Ok(pages::html(200, &page))
        }
        Err(error) => {
            match pages::field_refusal(error)? {
                (field, message) if field == "role" => page.role_error = Some(message),
                (_, message) => page.email.error = Some(message),
            }
            Ok(pages::html(422, &page))
        }
    }
}

/// `POST /members/{id}/role` (`remove` false) and `POST /members/{id}/remove`.
pub fn change(
    db: &mut Client,
    form: &Form,
    visit: &Visit,
    person: &PersonId,
    remove: bool,
) -> Result<Response, Refusal> {
    let caller = visit.owner()?;
    if remove {
        members::remove_member(db, &caller, person)?;
    } else {
        members::change_role(db, &caller, person, Role::parse(form.get("role"))?)?;
    }
    Ok(match remove {
        true if *person == visit.session.person => pages::redirect("/"),
        true => pages::redirect("/members?notice=removed"),
        false => pages::redirect("/members?notice=role-changed"),
    })
}

/// `POST /invitations/{id}/revoke`: a pending invitation of this organisation is deleted.
pub fn revoke_invitation(db: &mut Client, visit: &Visit, id: i64) -> Result<Response, Refusal> {
    members::revoke_invitation(db, &visit.owner()?, id)?;
    Ok(pages::redirect("/members?notice=invitation-revoked"))
}
