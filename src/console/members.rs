//! The members page, for owners only (support staff count as owners): the members with their
//! roles, the pending invitations, and the invite form. Every request is checked on the
//! server, the page and each `POST` alike; the rule that an organisation keeps an owner is
//! `db::people::change_membership`'s.

use super::form::Form;
use super::pages::{self, Field, MembersPage};
use super::session::{console_url, Visit};
use super::{Call, Refusal};
use crate::db::people::{self, MembershipChange};
use crate::domain::{Email, Role};
use crate::error::ApiError;
use crate::http::{Request, Response};
use crate::ids::PersonId;
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
    let org_id = &visit.require_owner()?.org_id;
    let invited = Email::parse(form.get("email"))
        .map_err(ApiError::from)
        .and_then(|email| Ok((email, Role::parse(form.get("role"))?)))
        .and_then(|(email, role)| {
            let by = &visit.session.email;
            crate::people::invite(db, console_url(app), org_id, &email, role, by)
        });
    match invited {
        Ok(link) => {
            page.new_link = Some(link);
            page.email.value.clear();
            page.invitations = people::pending_invitations(db, org_id)?;
            Ok(pages::html(200, &page))
        }
        Err(ApiError::Validation { field, message } | ApiError::Conflict { field, message }) => {
            match field.as_str() {
                "role" => page.role_error = Some(message),
                _ => page.email.error = Some(message),
            }
            Ok(pages::html(422, &page))
        }
        Err(other) => Err(other.into()),
    }
}

/// `POST /members/{id}/role` (`Some`) and `POST /members/{id}/remove` (`None`).
pub fn change(
    db: &mut Client,
    form: &Form,
    visit: &Visit,
    person: &PersonId,
    remove: bool,
) -> Result<Response, Refusal> {
    let org_id = visit.require_owner()?.org_id.clone();
    let to = match remove {
        true => None,
        false => Some(Role::parse(form.get("role"))?),
    };
    let mut tx = db.transaction()?;
    let changed = people::change_membership(&mut tx, &org_id, person, to)?;
    tx.commit()?;
    match changed {
        MembershipChange::Done if remove && *person == visit.session.person => {
            Ok(pages::redirect("/"))
        }
        MembershipChange::Done if remove => Ok(pages::redirect("/members?notice=removed")),
        MembershipChange::Done => Ok(pages::redirect("/members?notice=role-changed")),
        MembershipChange::NotMember => Err(ApiError::NotFound.into()),
        MembershipChange::LastOwner => Err(ApiError::conflict(
            "role",
            "an organisation keeps at least one owner: make another member an owner first",
        )
        .into()),
    }
}

/// `POST /invitations/{id}/revoke`: a pending invitation of this organisation is deleted.
pub fn revoke_invitation(db: &mut Client, visit: &Visit, id: i64) -> Result<Response, Refusal> {
    let org = visit.require_owner()?;
    if !people::revoke_invitation(db, &org.org_id, id)? {
        return Err(ApiError::NotFound.into());
    }
    Ok(pages::redirect("/members?notice=invitation-revoked"))
}
