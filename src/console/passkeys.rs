//! Passkeys in the console: the options a page's script asks for (JSON), and the answers it
//! posts back in a form: a passkey registered from the page of second factors, a sign-in with a
//! passkey alone (from the sign-in page, or as the factor after a password), a passkey removed.
//! The rules are `ops::passkeys`'; the browser's side is `console.js`'s passkeys part.

use super::answers;
use super::context::{Answer, PersonContext, PublicContext};
use super::form::Form;
use super::notice::Notice;
use super::refusal::PageRefusal;
use super::second_factor::{self, codes_page, proven, FACTORS_PATH};
use super::session;
use super::sign_in;
use super::unknown_browser;
use crate::error::ApiError;
use crate::http::Response;
use crate::limits::Limit;
use crate::ops::second_factors::{self, PENDING_COOKIE};
use crate::ops::{members, passkeys};

fn json(body: String) -> Response {
    Response::new(200)
        .header("Content-Type", "application/json")
        .body(body.into_bytes())
}

/// The refusal of an address whose failed sign-ins are full (`429`): it starts no ceremony
/// and gives no answer either.
fn address_has_room(ctx: &PublicContext) -> Result<(), PageRefusal> {
    let address = [Limit::FailedAuth(ctx.app.client_ip(ctx.request))];
    match ctx.app.limiter.has_room(&address) {
        true => Ok(()),
        false => Err(ApiError::RateLimited.into()),
    }
}

/// The browser's answer to a ceremony and the ceremony it answers, as the form posts them.
fn answered(form: &Form) -> (&str, &str) {
    (form.get("credential"), form.get("ceremony"))
}

/// `POST /sign-in/passkey/options`: a sign-in ceremony's options (nothing stored).
pub fn sign_in_options(ctx: &mut PublicContext) -> Answer {
    address_has_room(ctx)?;
    let url = session::console_url(ctx.app);
    let key = unknown_browser::fleet_key(ctx.db, ctx.app)?;
    Ok(json(passkeys::start_sign_in(url, key)?))
}

/// `POST /sign-in/passkey`: the passkey's answer signs its person in (whether or not a
/// password came first: it proves possession and the person's gesture). An answer refused
/// counts as a failed sign-in of the address.
pub fn sign_in(ctx: &mut PublicContext) -> Answer {
    address_has_room(ctx)?;
    let url = session::console_url(ctx.app);
    let key = unknown_browser::fleet_key(ctx.db, ctx.app)?;
    let person = passkeys::finish_sign_in(ctx.db, url, key, answered(&ctx.form))?;
    // A sign-in that waited for its factor after the password ends with this one.
    if let Some(waiting) = session::cookie_of(ctx.request, PENDING_COOKIE) {
        second_factors::end_pending(ctx.db, waiting)?;
    }
    let person = members::find_person(ctx.db, &person)?.ok_or(ApiError::NotFound)?;
    let next = sign_in::return_path(ctx.form.get("next")).map(str::to_owned);
    let answer = sign_in::start_session(ctx, &person, next.as_deref())?;
    Ok(answer.header("Set-Cookie", session::pending_cookie(ctx.app, "")))
}

/// `POST /second-factors/passkey/options`: a registration ceremony's options.
pub fn registration_options(ctx: &mut PersonContext) -> Answer {
    let url = session::console_url(ctx.app);
    let person = ctx.visit.person();
    let key = unknown_browser::fleet_key(ctx.db, ctx.app)?;
    Ok(json(passkeys::start_registration(
        ctx.db, url, key, &person,
    )?))
}

/// `POST /second-factors/passkey`: the new passkey's answer registers it; the first factor's
/// answer shows the ten recovery codes, once.
pub fn add(ctx: &mut PersonContext) -> Answer {
    let url = session::console_url(ctx.app);
    let person = ctx.visit.person();
    let key = unknown_browser::fleet_key(ctx.db, ctx.app)?;
    match passkeys::finish_registration(ctx.db, url, key, &person, answered(&ctx.form))? {
        Some(codes) => codes_page(ctx, codes),
        None => Ok(answers::redirect_with(FACTORS_PATH, Notice::PasskeyAdded)),
    }
}

/// `POST /second-factors/passkey/remove`: with the password or a code of the app, the passkey
/// named is removed.
pub fn remove(ctx: &mut PersonContext) -> Answer {
    let id = hex::decode(ctx.form.get("passkey")).map_err(|_| ApiError::NotFound)?;
    let typed = ctx.form.get("passkey_proof").to_string();
    if !proven(ctx, &typed)? {
        let mut page = second_factor::factors_page(ctx)?;
        page.passkey_proof.error = Some(second_factor::NOT_PROVEN.into());
        return Ok(answers::html(422, &page));
    }
    passkeys::remove(ctx.db, &ctx.visit.person(), &id)?;
    Ok(answers::redirect_with(FACTORS_PATH, Notice::PasskeyRemoved))
}
