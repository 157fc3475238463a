//! Signing in and out, and the one check of a password a person types, under the limits on
//! failed attempts (per client address, shared with `/v1`'s failed authentications, and per
//! email address).

use super::pages::{self, SignIn};
use super::session::{self, Visit};
use super::{Call, Refusal};
use crate::app::App;
use crate::db::{people, sessions};
use crate::error::ApiError;
use crate::http::Response;
use crate::limits::Counter;
use postgres::Client;

/// Said for a wrong password and an unknown email alike.
const WRONG: &str = "wrong email or password";

pub fn form(visit: Option<&Visit>) -> Response {
    match visit {
        Some(_) => pages::redirect("/"),
        None => pages::sign_in(200, SignIn::empty()),
    }
}

/// `POST /sign-in`: a new session and its cookie, or the form again with one answer for every
/// failure, after the same work (an unknown email is checked against a dummy hash).
pub fn sign_in(db: &mut Client, call: &Call, visit: Option<Visit>) -> Result<Response, Refusal> {
    let email = call.form.get("email").trim();
    let person = people::find_by_email(db, email)?;
    let stored = person.as_ref().and_then(|p| p.password_hash.as_deref());
    let matches = check_password(call, email, stored, call.form.get("password"))?;
    let (Some(person), true) = (person, matches) else {
        let mut page = SignIn::empty();
        page.email.value = email.to_string();
        page.password.error = Some(WRONG.into());
        return Ok(pages::sign_in(422, page));
    };
    if let Some(visit) = visit {
        sessions::end_session(db, visit.session.id)?;
    }
    let secret = session::start(db, &person, None, call.request)?;
    Ok(signed_in(call.app, &secret, "/"))
}

/// The redirect that gives the browser its new session cookie.
pub fn signed_in(app: &App, secret: &session::Secret, location: &str) -> Response {
    pages::redirect(location).header("Set-Cookie", session::cookie(app, secret))
}

/// `POST /sign-out`: the session ends and its cookie is removed.
pub fn sign_out(db: &mut Client, visit: &Visit, app: &App) -> Result<Response, Refusal> {
    sessions::end_session(db, visit.session.id)?;
    Ok(pages::redirect("/sign-in").header("Set-Cookie", session::removed_cookie(app)))
}

/// Whether `candidate` is the password of `stored` (`None`: unknown email or no password yet,
/// checked against a dummy hash all the same). A failure counts toward the client address's
/// failed authentications and the email's failed sign-ins; either one full refuses at once
/// (`429`) without checking.
pub fn check_password(
    call: &Call,
    email: &str,
    stored: Option<&str>,
    candidate: &str,
) -> Result<bool, Refusal> {
    let (app, request) = (call.app, call.request);
    let counters = [
        Counter::FailedAuth(app.client_ip(request)),
        Counter::FailedSignIn(email.trim().to_lowercase()),
    ];
    if !app.limiter.has_room(&counters) {
        return Err(ApiError::RateLimited.into());
    }
    let matches = app.passwords.verify(stored, candidate)?;
    if !matches {
        for counter in counters {
            app.limiter.charge(counter);
        }
    }
    Ok(matches)
}
