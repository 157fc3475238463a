//! The members page: every member reads it (the members with their roles, the pending
//! invitations); owners only change it (support staff count as owners; the page table checks
//! each `POST` and the removal's confirmation): the invite form, a role, a removal after a
//! confirmation. The writes are `ops::members`'s.

use super::answers;
use super::captures::InvitationNumber;
use super::confirm::{self, Confirm};
use super::context::{Answer, PageContext};
use super::form::Form;
use super::inputs::{Checked, Failed, Input, InputKind, Inputs};
use super::layout::Creating;
use super::notice::Notice;
use super::pages::MembersPage;
use super::refusal::PageRefusal;
use super::session::console_url;
use crate::domain::{Email, Invalid, Role};
use crate::error::ApiError;
use crate::ids::PersonId;
use crate::ops::members;
use crate::ops::once::Made;
use crate::ops::Caller;

fn page(ctx: &mut PageContext) -> Result<MembersPage, PageRefusal> {
    let caller = ctx.caller.clone();
    let members = members::members(ctx.db, &caller)?;
    let owners = members.iter().filter(|m| m.role == Role::Owner).count();
    Ok(MembersPage {
        layout: ctx.layout(),
        owner: ctx.visit.is_owner(),
        me: ctx.visit.session.person.clone(),
        last_owner: (owners == 1)
            .then(|| members.iter().find(|m| m.role == Role::Owner))
            .flatten()
            .map(|m| m.person_id.clone()),
        members,
        invitations: members::pending_invitations(ctx.db, &caller)?,
        invite: InviteForm::inputs(),
        alert: None,
        creating: Creating::new(ctx.once()?),
        mailed: false,
    })
}

/// The form that invites a person: their email and the role they will have.
pub struct InviteForm;

impl InviteForm {
    pub fn inputs() -> Inputs {
        Inputs(vec![
            Input::line("email", "Email", "email"),
            Input::alone("role", "Role")
                .required()
                .kind(InputKind::Choice(role_options()))
                .value(Role::Member.as_str()),
        ])
    }

    pub fn validate(form: &Form) -> Result<(Email, Role), Vec<Invalid>> {
        let mut checked = Checked::of(form);
        let email = checked.take(Email::parse(form.get("email")));
        let role = checked.take(Role::parse(form.get("role")));
        let (Some(email), Some(role)) = (email, role) else {
            return Err(checked.refusals());
        };
        checked.done((email, role))
    }
}

/// The roles an invitation may give, the most usual first.
fn role_options() -> Vec<(String, String)> {
    [Role::Member, Role::Viewer, Role::Owner]
        .map(|role| (role.as_str().to_string(), role.as_str().to_string()))
        .to_vec()
}

pub fn list(ctx: &mut PageContext) -> Answer {
    Ok(answers::html(200, &page(ctx)?))
}

/// `POST /members/invite`: the link is shown on the answer itself, once (it is not stored, so
/// no later page can show it), and mailed to the person when mail is set up; the same form
/// sent again makes none.
pub fn invite(ctx: &mut PageContext) -> Answer {
    let mut page = page(ctx)?;
    let caller = ctx.caller.clone();
    match invite_person(ctx, &caller) {
        Ok((email, role, made)) => {
            if let Made::New(link) = &made {
                let mailer = ctx.app.mailer.as_ref();
                page.mailed = members::mail_invitation(mailer, &caller, &email, role, link);
            }
            let status = page.creating.made(made);
            page.invitations = members::pending_invitations(ctx.db, &caller)?;
            Ok(answers::html(status, &page))
        }
        Err(failed) => {
            page.alert = page.invite.refused(&ctx.form, failed.refusals()?);
            Ok(answers::html(422, &page))
        }
    }
}

/// The invitation the form asks for, made once.
fn invite_person(
    ctx: &mut PageContext,
    caller: &Caller,
) -> Result<(Email, Role, Made<String>), Failed> {
    let (email, role) = InviteForm::validate(&ctx.form)?;
    let url = console_url(ctx.app);
    let made = ctx.made_once(|tx| members::invite(tx, caller, url, &email, role))?;
    Ok((email, role, made))
}

/// `POST /members/{person}/role`.
pub fn change_role(ctx: &mut PageContext) -> Answer {
    let person: PersonId = ctx.captures.get()?;
    let role = Role::parse(ctx.form.get("role"))?;
    members::change_role(ctx.db, &ctx.caller, &person, role)?;
    Ok(answers::redirect_with("/members", Notice::RoleChanged))
}

/// `GET /members/{person}/remove`: who leaves, and the button that removes them.
pub fn confirm_remove(ctx: &mut PageContext) -> Answer {
    let person: PersonId = ctx.captures.get()?;
    let caller = ctx.caller.clone();
    let org = &caller.org;
    let member = members::members(ctx.db, &caller)?
        .into_iter()
        .find(|m| m.person_id == person)
        .ok_or(ApiError::NotFound)?;
    let goes = match person == ctx.visit.session.person {
        true => format!("You no longer open {}.", org.name),
        false => format!(
            "They no longer open {}; they come back only with a new invitation.",
            org.name
        ),
    };
    let page = Confirm {
        traffic: confirm::traffic(ctx, None)?,
        layout: ctx.layout(),
        title: format!(
            "Remove {} ({}) from {}",
            member.email, member.role, org.name
        ),
        goes: vec![goes],
        action: format!("/members/{person}/remove"),
        button: "Remove the member",
        back: "/members".into(),
    };
    Ok(answers::html(200, &page))
}

/// `POST /members/{person}/remove`: an owner who removes themselves goes home.
pub fn remove(ctx: &mut PageContext) -> Answer {
    let person: PersonId = ctx.captures.get()?;
    members::remove_member(ctx.db, &ctx.caller, &person)?;
    Ok(match person == ctx.visit.session.person {
        true => answers::redirect("/"),
        false => answers::redirect_with("/members", Notice::MemberRemoved),
    })
}

/// `GET /invitations/{invitation}/revoke`: what revoking a pending invitation of this
/// organisation does, before it is done.
pub fn confirm_revoke_invitation(ctx: &mut PageContext) -> Answer {
    let InvitationNumber(id) = ctx.captures.get()?;
    let caller = ctx.caller.clone();
    let org = &caller.org;
    let invitation = members::pending_invitations(ctx.db, &caller)?
        .into_iter()
        .find(|i| i.id == id)
        .ok_or(ApiError::NotFound)?;
    let page = Confirm {
        traffic: confirm::traffic(ctx, None)?,
        layout: ctx.layout(),
        title: format!(
            "Revoke the invitation of {} ({}) to {}",
            invitation.email, invitation.role, org.name
        ),
        goes: vec![format!(
            "Its link stops working; {} joins only with a new invitation.",
            invitation.email
        )],
        action: format!("/invitations/{id}/revoke"),
        button: "Revoke the invitation",
        back: "/members".into(),
    };
    Ok(answers::html(200, &page))
}

/// `POST /invitations/{invitation}/revoke`: a pending invitation of this organisation is
/// deleted.
pub fn revoke_invitation(ctx: &mut PageContext) -> Answer {
    let InvitationNumber(id) = ctx.captures.get()?;
    members::revoke_invitation(ctx.db, &ctx.caller, id)?;
    Ok(answers::redirect_with(
        "/members",
        Notice::InvitationRevoked,
    ))
}
