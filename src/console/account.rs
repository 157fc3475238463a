//! A signed-in person's own pages: home, their sessions ("sign out the others"), their
//! password, and the organisation they look at.

use super::form::Form;
use super::pages::{self, Field, Home, PasswordPage, SessionsPage};
use super::session::{self, Visit};
use super::sign_in::{check_password, signed_in};
use super::{Call, Refusal};
use crate::db::{people, sessions};
use crate::domain::NewPassword;
use crate::error::ApiError;
use crate::http::{Request, Response};
use crate::ids::OrgId;
use postgres::Client;

pub fn home(visit: &Visit, request: &Request) -> Response {
    pages::html(
        200,
        &Home {
            nav: Some(visit.nav()),
            notice: pages::notice(request),
            org: visit.org.clone(),
        },
    )
}

pub fn sessions_page(
    db: &mut Client,
    visit: &Visit,
    request: &Request,
) -> Result<Response, Refusal> {
    let listed = sessions::sessions_of(db, &visit.session.person)?;
    Ok(pages::html(
        200,
        &SessionsPage {
            nav: Some(visit.nav()),
            notice: pages::notice(request),
            current: visit.session.id,
            sessions: listed,
        },
    ))
}

/// `POST /sessions/end-others`: every other session of the person ends.
pub fn end_others(db: &mut Client, visit: &Visit) -> Result<Response, Refusal> {
    sessions::end_others(db, &visit.session.person, visit.session.id)?;
    Ok(pages::redirect("/sessions?notice=others-ended"))
}

pub fn password_page(visit: &Visit) -> Response {
    pages::html(200, &password_form(visit))
}

fn password_form(visit: &Visit) -> PasswordPage {
    PasswordPage {
        nav: Some(visit.nav()),
        current: Field::new("current_password", "Current password", "password")
            .autocomplete("current-password"),
        new: Field::new("new_password", "New password", "password").autocomplete("new-password"),
    }
}

/// `POST /password`: the current password checked (a failure counts as a failed sign-in), the
/// new one set; every session of the person ends, and this browser gets a new one.
pub fn change_password(db: &mut Client, call: &Call, visit: &Visit) -> Result<Response, Refusal> {
    let (app, form) = (call.app, &call.form);
    let mut page = password_form(visit);
    let new = NewPassword::parse(form.get("new_password"));
    let person = people::find_person(db, &visit.session.person)?;
    let Some(person) = person else {
        return Err(crate::error::ApiError::NotFound.into());
    };
    let stored = person.password_hash.as_deref();
    if !check_password(call, &person.email, stored, form.get("current_password"))? {
        page.current.error = Some("this is not your current password".into());
        return Ok(pages::html(422, &page));
    }
    let new = match new {
        Ok(new) => new,
        Err(invalid) => {
            page.new.error = Some(invalid.message);
            return Ok(pages::html(422, &page));
        }
    };
    let hash = app.passwords.hash(&new)?;
    people::set_password(db, &person.id, &hash)?;
    let secret = session::start(db, &person, None, call.request)?;
    Ok(signed_in(app, &secret, "/sessions?notice=password-changed"))
}

/// `POST /org`: an organisation not open to the person is not found (`404`), as everywhere, so
/// the answer does not tell whether it exists.
pub fn choose_org(db: &mut Client, form: &Form, visit: &Visit) -> Result<Response, Refusal> {
    let chosen = OrgId::parse(form.get("org")).ok_or(ApiError::NotFound)?;
    if !visit.orgs.iter().any(|o| o.org_id == chosen) {
        return Err(ApiError::NotFound.into());
    }
    sessions::choose_org(db, visit.session.id, &chosen)?;
    Ok(pages::redirect("/"))
}
