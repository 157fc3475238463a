//! Second factors in the console: the sign-in's step after the password (a sign-in waiting
//! for its factor, bound to the browser by a cookie, for a few minutes, under the sign-in's
//! limits), the person's own page of factors (add and remove their authenticator app, their
//! passkeys listed, new recovery codes), and the owners' security settings of the organisation
//! ("require a second factor"). The rules are `ops::second_factors`'.

use super::answers;
use super::context::{Answer, PageContext, PersonContext, PublicContext};
use super::inputs::{field_refused, Input};
use super::layout::Layout;
use super::notice::Notice;
use super::refusal::PageRefusal;
use super::session;
use super::sign_in::{self, check_password};
use crate::app::App;
use crate::db::passkeys::PasskeyListed;
use crate::db::second_factors::PendingSignIn;
use crate::error::ApiError;
use crate::limits::{self, Limit};
use crate::ops::second_factors::{self, AppSetup, PENDING_COOKIE};
use crate::ops::{members, passkeys};
use crate::password::Caller;
use askama::Template;
use qrcode::render::svg;
use qrcode::QrCode;

/// The person's own page of factors; a person whose organisation requires one and who has
/// none is sent here.
pub const FACTORS_PATH: &str = "/second-factors";
const WRONG_FACTOR: &str = "this code is not right, or it was used already";
/// Said when the password or code asked before a removal is neither.
pub const NOT_PROVEN: &str = "this is neither your password nor a code of your app";

#[derive(Template)]
#[template(path = "console/sign_in_factor.html")]
struct StepPage {
    layout: Layout,
    code: Input,
    /// Where the sign-in goes on to, for the passkey's form (`sign_in::return_path`).
    next: String,
}

fn step_page(ctx: &PublicContext, pending: &PendingSignIn) -> StepPage {
    StepPage {
        layout: ctx.layout(),
        code: Input::line("code", "Code", "text").autocomplete("one-time-code"),
        next: pending.next.clone(),
    }
}

fn pending_cookie<'a>(ctx: &PublicContext<'a>) -> Option<&'a str> {
    session::cookie_of(ctx.request, PENDING_COOKIE)
}

/// `GET /sign-in/second-factor`: the factor's form while the sign-in waits; else back to the
/// sign-in.
pub fn step_form(ctx: &mut PublicContext) -> Answer {
    match second_factors::pending(ctx.db, pending_cookie(ctx))? {
        Some(pending) => Ok(answers::html(200, &step_page(ctx, &pending))),
        None => Ok(answers::redirect("/sign-in")),
    }
}

/// `POST /sign-in/second-factor`: a code of the person's app or a recovery code ends the wait
/// with a session. A wrong one counts as a failed sign-in of the address and of the email, as
/// a wrong password does (the same limits, refused at once when full).
pub fn give_factor(ctx: &mut PublicContext) -> Answer {
    let cookie = pending_cookie(ctx).unwrap_or("");
    let Some(pending) = second_factors::pending(ctx.db, Some(cookie))? else {
        return Err(ended());
    };
    let client = ctx.app.client_ip(ctx.request);
    let limits = limits::sign_in_limits(client, &pending.email, pending.known_device);
    if !ctx.app.limiter.has_room(&limits) {
        return Err(ApiError::RateLimited.into());
    }
    let person = members::find_person(ctx.db, &pending.person)?.ok_or_else(ended)?;
    if !second_factors::check_factor(ctx.db, &person, ctx.form.get("code"))? {
        charge(ctx.app, limits);
        let mut page = step_page(ctx, &pending);
        page.code.error = Some(WRONG_FACTOR.into());
        return Ok(answers::html(422, &page));
    }
    if !second_factors::end_pending(ctx.db, cookie)? {
        return Err(ended());
    }
    let next = sign_in::return_path(&pending.next);
    let answer = sign_in::start_session(ctx, &person, next)?;
    Ok(answer.header("Set-Cookie", session::pending_cookie(ctx.app, "")))
}

fn ended() -> PageRefusal {
    PageRefusal::Gone("this sign-in has ended (it waits 5 minutes): sign in again")
}

#[derive(Template)]
#[template(path = "console/second_factors.html")]
pub(super) struct FactorsPage {
    layout: Layout,
    app: bool,
    passkeys: Vec<PasskeyListed>,
    codes_left: i64,
    /// The person's organisation requires a factor they have not added yet.
    required: bool,
    /// The password or a code, asked before the app is removed, and before a passkey is.
    proof: Input,
    pub(super) passkey_proof: Input,
}

impl FactorsPage {
    fn has_factor(&self) -> bool {
        self.app || !self.passkeys.is_empty()
    }
}

pub(super) fn factors_page(ctx: &mut PersonContext) -> Result<FactorsPage, PageRefusal> {
    let person = &ctx.visit.session.person;
    let proof = |name| {
        Input::line(name, "Your password, or a code of your app", "password")
            .autocomplete("current-password")
    };
    Ok(FactorsPage {
        layout: ctx.layout(),
        app: second_factors::has_app(ctx.db, person)?,
        passkeys: passkeys::passkeys_of(ctx.db, person)?,
        codes_left: second_factors::recovery_codes_left(ctx.db, person)?,
        required: ctx.visit.lacks_required_factor(),
        proof: proof("proof"),
        passkey_proof: proof("passkey_proof"),
    })
}

/// `GET /second-factors`: the person's factors, what to add, what to remove.
pub fn page(ctx: &mut PersonContext) -> Answer {
    Ok(answers::html(200, &factors_page(ctx)?))
}

#[derive(Template)]
#[template(path = "console/second_factor_app.html")]
struct AppPage {
    layout: Layout,
    /// The QR code of the app's link, as an `<svg>` drawn here (no script, no image to fetch).
    qr: String,
    secret: String,
    code: Input,
}

fn app_page(ctx: &mut PersonContext) -> Result<Option<AppPage>, PageRefusal> {
    let Some(setup) = second_factors::start_app(ctx.db, &ctx.visit.person())? else {
        return Ok(None);
    };
    Ok(Some(AppPage {
        layout: ctx.layout(),
        qr: qr_svg(&setup)?,
        secret: setup.secret_base32,
        code: Input::line("code", "Code shown by the app", "text").autocomplete("one-time-code"),
    }))
}

/// The QR code of the app's link, inline SVG with a name for screen readers.
fn qr_svg(setup: &AppSetup) -> Result<String, ApiError> {
    let code = QrCode::new(setup.url.as_bytes()).map_err(ApiError::internal)?;
    let drawn = code.render::<svg::Color>().min_dimensions(200, 200).build();
    let svg = drawn
        .split_once("?>")
        .map_or(drawn.as_str(), |(_, svg)| svg);
    Ok(svg.replacen(
        "<svg ",
        "<svg role=\"img\" aria-label=\"QR code for your authenticator app\" ",
        1,
    ))
}

/// `GET /second-factors/app`: the QR code and secret of a new app to set up (the same one on a
/// reload until it is confirmed); a person who has one goes back to their factors.
pub fn app_form(ctx: &mut PersonContext) -> Answer {
    match app_page(ctx)? {
        Some(page) => Ok(answers::html(200, &page)),
        None => Ok(answers::redirect(FACTORS_PATH)),
    }
}

#[derive(Template)]
#[template(path = "console/recovery_codes.html")]
struct CodesPage {
    layout: Layout,
    codes: Vec<String>,
}

pub(super) fn codes_page(ctx: &PersonContext, codes: Vec<String>) -> Answer {
    let page = CodesPage {
        layout: ctx.layout(),
        codes,
    };
    Ok(answers::html(200, &page))
}

/// `POST /second-factors/app`: a code the app shows confirms it; the first factor's answer
/// shows the ten recovery codes, once.
pub fn add_app(ctx: &mut PersonContext) -> Answer {
    let person = ctx.visit.person();
    match second_factors::confirm_app(ctx.db, &person, ctx.form.get("code")) {
        Ok(Some(codes)) => codes_page(ctx, codes),
        Ok(None) => Ok(answers::redirect_with(FACTORS_PATH, Notice::AppAdded)),
        Err(error) => {
            let refused = field_refused(error)?;
            let Some(mut page) = app_page(ctx)? else {
                return Ok(answers::redirect(FACTORS_PATH));
            };
            page.code.error = Some(refused.message);
            Ok(answers::html(422, &page))
        }
    }
}

/// Whether what the person typed proves them: a code of their app, or their password. A
/// failure counts as a failed sign-in, as at the sign-in.
pub(super) fn proven(ctx: &mut PersonContext, typed: &str) -> Result<bool, PageRefusal> {
    let person = members::find_person(ctx.db, &ctx.visit.session.person)?;
    let person = person.ok_or(ApiError::NotFound)?;
    let client = ctx.app.client_ip(ctx.request);
    let limits = limits::sign_in_limits(client, &person.email, false);
    if !second_factors::is_app_code(typed) {
        let stored = person.password_hash.as_deref();
        return check_password(ctx.app, Caller::Known, &limits, stored, typed);
    }
    if !ctx.app.limiter.has_room(&limits) {
        return Err(ApiError::RateLimited.into());
    }
    let proven = second_factors::check_factor(ctx.db, &person, typed)?;
    if !proven {
        charge(ctx.app, limits);
    }
    Ok(proven)
}

/// A wrong factor counts toward each of the sign-in's limits, as a wrong password does.
fn charge(app: &App, limits: Vec<Limit>) {
    for limit in limits {
        app.limiter.charge(limit);
    }
}

/// `POST /second-factors/app/remove`: with the password or a code of the app, the app is
/// removed.
pub fn remove_app(ctx: &mut PersonContext) -> Answer {
    let typed = ctx.form.get("proof").to_string();
    if !proven(ctx, &typed)? {
        let mut page = factors_page(ctx)?;
        page.proof.error = Some(NOT_PROVEN.into());
        return Ok(answers::html(422, &page));
    }
    second_factors::remove_app(ctx.db, &ctx.visit.person())?;
    Ok(answers::redirect_with(FACTORS_PATH, Notice::AppRemoved))
}

/// `POST /second-factors/recovery-codes`: ten new codes, shown once; the earlier ones stop
/// working.
pub fn new_codes(ctx: &mut PersonContext) -> Answer {
    let codes = second_factors::new_recovery_codes(ctx.db, &ctx.visit.person())?;
    codes_page(ctx, codes)
}

#[derive(Template)]
#[template(path = "console/org_security.html")]
struct SecurityPage {
    layout: Layout,
    required: bool,
}

/// `GET /org/security`: the organisation's security settings (owners only).
pub fn security(ctx: &mut PageContext) -> Answer {
    let page = SecurityPage {
        layout: ctx.layout(),
        required: ctx.visit.current_org()?.second_factor_required,
    };
    Ok(answers::html(200, &page))
}

/// `POST /org/security`: "require a second factor" on or off.
pub fn save_security(ctx: &mut PageContext) -> Answer {
    let required = ctx.form.checkbox("second_factor_required")?;
    second_factors::set_required(ctx.db, &ctx.caller, required)?;
    Ok(answers::redirect_with(
        "/org/security",
        Notice::SecuritySaved,
    ))
}
