//! Signing in and out, and the one check of a password a person types, under the limits on
//! failed attempts (per client address, shared with `/v1`'s failed authentications, and per
//! email address unless the browser is one the person signed in from before: `ops::devices`),
//! and for a browser unknown to the person, the budgets of hashes and the proof of work of
//! `unknown_browser`; "forgot your password" when mail is set up.

use super::context::{Answer, PersonContext, PublicContext};
use super::inputs::Input;
use super::notice::Notice;
use super::pages::{ForgotPassword, ProofAsked, SignIn};
use super::refusal::PageRefusal;
use super::session;
use super::unknown_browser::{self, Admission};
use super::{answers, pages};
use crate::app::App;
use crate::db::people::Person;
use crate::db::second_factors::PendingSignIn;
use crate::domain::Email;
use crate::error::ApiError;
use crate::http::Response;
use crate::limits::{self, Limit};
use crate::ops::{devices, members, second_factors, sessions};
use crate::password::Caller;

/// Where a sign-in whose password matched asks for the second factor.
const FACTOR_STEP: &str = "/sign-in/second-factor";

/// Said for a wrong password and an unknown email alike.
const WRONG: &str = "wrong email or password";

/// Where a sign-in may return to (`next`): a page of the console's own, by its path alone (a
/// single leading `/`, then only the letters, digits and `/-_.` of the console's paths), so
/// that no link can send a person elsewhere once signed in (no open redirect).
pub fn return_path(sent: &str) -> Option<&str> {
    let path_only = sent
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"/-_.".contains(&b));
    (sent.starts_with('/') && !sent.starts_with("//") && path_only).then_some(sent)
}

/// The sign-in page for a person not signed in who asked for `path`: it returns there once
/// signed in when `path` is a [`return_path`], home otherwise.
pub fn asking_for(path: &str) -> Response {
    match return_path(path) {
        Some(path) if path != "/" => answers::redirect(&format!("/sign-in?next={path}")),
        _ => answers::redirect("/sign-in"),
    }
}

fn page(ctx: &PublicContext, next: Option<&str>) -> SignIn {
    let mut page = SignIn::empty(ctx.layout());
    page.next = next.unwrap_or("").to_string();
    page.mail = ctx.app.mailer.is_some();
    page
}

/// `GET /sign-in[?next=PATH]`: a person signed in already goes on, home or to `next`; in a
/// flood, the form carries a proof of work for a browser without a device cookie to solve.
pub fn form(ctx: &mut PublicContext) -> Answer {
    let next = return_path(ctx.query.get("next"));
    if ctx.visit.is_some() {
        return Ok(answers::redirect(next.unwrap_or("/")));
    }
    let mut page = page(ctx, next);
    page.proof = unknown_browser::offered(ctx)?;
    Ok(pages::sign_in(200, page))
}

/// `POST /sign-in`: a new session and its cookie, and a device cookie for this browser; or the
/// form again with one answer for every failure, after as long a wait (an unknown email costs
/// no hash: `password::Passwords::verify`). A browser unknown to the person is held to its
/// budgets of hashes, and beyond the global rate gets the form again asking for a proof of
/// work (`unknown_browser`); a known browser is held to neither.
pub fn sign_in(ctx: &mut PublicContext) -> Answer {
    if !ctx.form.unreadable().is_empty() {
        return unreadable(ctx);
    }
    let device = session::cookie_of(ctx.request, devices::COOKIE);
    let email = ctx.form.get("email").trim().to_string();
    // A browser without a device cookie is no one's known browser: its admission needs no
    // query, so a flood of new browsers costs the database nothing before a hash is allowed.
    let found = match device {
        Some(_) => Some(members::find_by_email(ctx.db, &email)?),
        None => None,
    };
    let found_id = found.as_ref().and_then(Option::as_ref).map(|p| &p.id);
    let known = devices::is_known(ctx.db, found_id, device)?;
    let limits = limits::sign_in_limits(ctx.app.client_ip(ctx.request), &email, known);
    let caller = match known {
        true => Caller::Known,
        false => match unknown_browser::admit(ctx, &email, &limits)? {
            Admission::Hash(caller) => caller,
            Admission::Ask(proof) => return Ok(asked(ctx, &email, proof)),
        },
    };
    let person = match found {
        Some(found) => found,
        None => members::find_by_email(ctx.db, &email)?,
    };
    let stored = person.as_ref().and_then(|p| p.password_hash.as_deref());
    let password = ctx.form.get("password");
    let matches = match check_password(ctx.app, caller, &limits, stored, password) {
        Err(PageRefusal::Hashes(Caller::Unknown)) => {
            let proof = unknown_browser::ask(ctx.db, ctx.app, None)?;
            return Ok(asked(ctx, &email, proof));
        }
        checked => checked?,
    };
    let next = return_path(ctx.form.get("next"));
    let (Some(person), true) = (person, matches) else {
        let mut page = page(ctx, next);
        page.email.value = email;
        page.password.error = Some(WRONG.into());
        return Ok(pages::sign_in(422, page));
    };
    let next = next.map(str::to_owned);
    after_password(ctx, &person, known, next.as_deref())
}

/// A sign-in whose email or password is not text: the form again, the refusal next to its
/// input, nothing looked up and no hash spent; counted as a failed sign-in of the address, as
/// every refused sign-in is (any other such value is the request's refusal, counted by the
/// page table).
fn unreadable(ctx: &PublicContext) -> Answer {
    let mut page = page(ctx, return_path(ctx.form.get("next")));
    let shown = [&mut page.email, &mut page.password].map(|input| input.unreadable(&ctx.form));
    if !shown.contains(&true) {
        ctx.form.refusal()?;
    }
    page.email.value = ctx.form.get("email").to_string();
    let address = Limit::FailedAuth(ctx.app.client_ip(ctx.request));
    ctx.app.limiter.charge(address);
    Ok(pages::sign_in(422, page))
}

/// After the password matched: a person with a second factor waits for it (a cookie, and the
/// factor's page: `second_factor`), anyone else is signed in.
fn after_password(
    ctx: &mut PublicContext,
    person: &Person,
    known_device: bool,
    next: Option<&str>,
) -> Answer {
    if !second_factors::has_factor(ctx.db, &person.id)? {
        return start_session(ctx, person, next);
    }
    let pending = PendingSignIn {
        person: person.id.clone(),
        email: person.email.clone(),
        next: next.unwrap_or("").to_string(),
        known_device,
    };
    let cookie = second_factors::start_pending(ctx.db, &pending)?;
    let waiting = session::pending_cookie(ctx.app, &cookie);
    Ok(answers::redirect(FACTOR_STEP).header("Set-Cookie", waiting))
}

/// A new session of `person` in this browser (the one it had ends), going to `next` (home).
pub fn start_session(ctx: &mut PublicContext, person: &Person, next: Option<&str>) -> Answer {
    if let Some(visit) = &ctx.visit {
        sessions::end(ctx.db, visit.session.id)?;
    }
    let secret = session::start(ctx.db, person, None, ctx.request)?;
    signed_in(ctx.db, ctx.app, person, &secret, next.unwrap_or("/"))
}

/// The form again for `email`, asking for `proof` (`422` when the one sent was refused):
/// nothing was checked.
fn asked(ctx: &PublicContext, email: &str, proof: ProofAsked) -> Response {
    let mut page = page(ctx, return_path(ctx.form.get("next")));
    page.email.value = email.to_string();
    let status = if proof.refused.is_some() { 422 } else { 200 };
    page.proof = Some(proof);
    pages::sign_in(status, page)
}

/// The redirect that gives the browser its new session cookie and a device cookie of
/// `person`: a browser that proved the person's password (or chose it through their link) is
/// a known browser of theirs from then on, whichever way it signed in.
pub fn signed_in(
    db: &mut postgres::Client,
    app: &App,
    person: &Person,
    secret: &session::Secret,
    location: &str,
) -> Answer {
    let device = devices::issue(db, &person.id)?;
    Ok(answers::redirect(location)
        .header("Set-Cookie", session::cookie(app, secret))
        .header("Set-Cookie", session::device_cookie(app, &device)))
}

/// `POST /sign-out`: the session ends and its cookie is removed; the sign-in page says so.
pub fn sign_out(ctx: &mut PersonContext) -> Answer {
    sessions::end(ctx.db, ctx.visit.session.id)?;
    let redirect = answers::redirect_with("/sign-in", Notice::SignedOut);
    Ok(redirect.header("Set-Cookie", session::removed_cookie(ctx.app)))
}

/// Whether `candidate` is the password of `stored` (`None`: unknown email or no password yet,
/// checked against a dummy hash all the same), under `limits`: a failure counts toward each;
/// one full refuses at once (`429`) without checking; and under `caller`'s rate of hashes.
pub fn check_password(
    app: &App,
    caller: Caller,
    limits: &[Limit],
    stored: Option<&str>,
    candidate: &str,
) -> Result<bool, PageRefusal> {
    if !app.limiter.has_room(limits) {
        return Err(ApiError::RateLimited.into());
    }
    let matches = app.passwords.verify(caller, stored, candidate)?;
    if !matches {
        for limit in limits {
            app.limiter.charge(limit.clone());
        }
    }
    Ok(matches)
}

fn forgot_page(ctx: &PublicContext) -> ForgotPassword {
    ForgotPassword {
        layout: ctx.layout(),
        email: Input::line("email", "Email", "email").autocomplete("username"),
        mail: ctx.app.mailer.is_some(),
        sent: false,
    }
}

/// `GET /forgot-password`: the form, or without mail whom to ask.
pub fn forgot_form(ctx: &mut PublicContext) -> Answer {
    Ok(answers::html(200, &forgot_page(ctx)))
}

/// `POST /forgot-password`: a link to set a new password is mailed to the person with the
/// email, if there is one; the answer is the same either way. Each request counts against
/// the sign-in limits of the address and of the email, as a failed sign-in does, so that
/// neither guesses nor mails to one person come faster than sign-ins. Without mail: `404`.
pub fn forgot(ctx: &mut PublicContext) -> Answer {
    let app = ctx.app;
    let mailer = app.mailer.as_ref().ok_or(ApiError::NotFound)?;
    let mut page = forgot_page(ctx);
    let Some(email) = page.email.parse(&ctx.form, Email::parse) else {
        return Ok(answers::html(422, &page));
    };
    let limits = limits::sign_in_limits(app.client_ip(ctx.request), email.as_str(), false);
    if !app.limiter.try_charge(&limits) {
        return Err(ApiError::RateLimited.into());
    }
    let url = session::console_url(app);
    members::request_reset(ctx.db, mailer, url, email.as_str())?;
    page.sent = true;
    Ok(answers::html(200, &page))
}
