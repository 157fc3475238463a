//! Signing in and out, and the one check of a password a person types, under the limits on
//! failed attempts (per client address, shared with `/v1`'s failed authentications, and per
//! email address).

use super::context::{Answer, PageContext, PublicContext};
use super::pages::{self, SignIn};
use super::refusal::PageRefusal;
use super::session;
use crate::app::App;
use crate::db::{people, sessions};
use crate::error::ApiError;
use crate::http::{Request, Response};
use crate::limits::Limit;

/// Said for a wrong password and an unknown email alike.
const WRONG: &str = "wrong email or password";

/// `GET /sign-in`: a person signed in already goes home.
pub fn form(ctx: &mut PublicContext) -> Answer {
    Ok(match ctx.visit {
        Some(_) => pages::redirect("/"),
        None => pages::sign_in(200, SignIn::empty(ctx.layout())),
    })
}

/// `POST /sign-in`: a new session and its cookie, or the form again with one answer for every
/// failure, after the same work (an unknown email is checked against a dummy hash).
pub fn sign_in(ctx: &mut PublicContext) -> Answer {
    let email = ctx.form.get("email").trim();
    let person = people::find_by_email(ctx.db, email)?;
    let stored = person.as_ref().and_then(|p| p.password_hash.as_deref());
    let candidate = ctx.form.get("password");
    let matches = check_password(ctx.app, ctx.request, email, stored, candidate)?;
    let (Some(person), true) = (person, matches) else {
        let mut page = SignIn::empty(ctx.layout());
        page.email.value = email.to_string();
        page.password.error = Some(WRONG.into());
        return Ok(pages::sign_in(422, page));
    };
    if let Some(visit) = &ctx.visit {
        sessions::end_session(ctx.db, visit.session.id)?;
    }
    let secret = session::start(ctx.db, &person, None, ctx.request)?;
    Ok(signed_in(ctx.app, &secret, "/"))
}

/// The redirect that gives the browser its new session cookie.
pub fn signed_in(app: &App, secret: &session::Secret, location: &str) -> Response {
    pages::redirect(location).header("Set-Cookie", session::cookie(app, secret))
}

/// `POST /sign-out`: the session ends and its cookie is removed.
pub fn sign_out(ctx: &mut PageContext) -> Answer {
    sessions::end_session(ctx.db, ctx.visit.session.id)?;
    Ok(pages::redirect("/sign-in").header("Set-Cookie", session::removed_cookie(ctx.app)))
}

/// Whether `candidate` is the password of `stored` (`None`: unknown email or no password yet,
/// checked against a dummy hash all the same). A failure counts toward the client address's
/// failed authentications and the email's failed sign-ins; either one full refuses at once
/// (`429`) without checking.
pub fn check_password(
    app: &App,
    request: &Request,
    email: &str,
    stored: Option<&str>,
    candidate: &str,
) -> Result<bool, PageRefusal> {
    let limits = [
        Limit::FailedAuth(app.client_ip(request)),
        Limit::FailedSignIn(email.trim().to_lowercase()),
    ];
    if !app.limiter.has_room(&limits) {
        return Err(ApiError::RateLimited.into());
    }
    let matches = app.passwords.verify(stored, candidate)?;
    if !matches {
        for limit in limits {
            app.limiter.charge(limit);
        }
    }
    Ok(matches)
}
