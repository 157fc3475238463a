//! The console: the web pages where an organisation's people sign in and do what the contract
//! reserves to them, served on the console host only (`router::area`).
//!
//! A request goes: `routes` (hand-parsed path and method, `404`/`405`) → the blocking pool →
//! the page's handler (reads its form with `form`, works with `db` and `password`, renders a
//! template of `pages`) → `secured`, which gives every answer its security headers.

mod account;
mod audit;
mod cards;
mod confirm;
mod form;
mod keys;
mod links;
mod members;
mod pages;
mod routes;
mod session;
mod sign_in;
mod sites;
mod tokens;

use crate::app::App;
use crate::blocking::BlockingError;
use crate::error::ApiError;
use crate::http::{Request, Response};
use crate::password::Refused;
use form::Form;
use postgres::Client;
use routes::Route;
use session::Visit;
use std::sync::Arc;

/// The Content-Security-Policy of every answer: nothing but our own files (the style sheet, the
/// script of the "Copy" buttons); no inline script, no framing, forms posted only here.
const CSP: &str = "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; \
                   form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// Why a console request is refused, as its error page says.
#[derive(Debug)]
pub(crate) enum Refusal {
    /// Not found, method not allowed, rate limited, a bad body, an internal error: the
    /// contract's status and wording.
    Api(ApiError),
    /// `400`: a body the console's forms never send.
    BadRequest(&'static str),
    /// `403`: a check of the console (origin, form token, owners only) refused the request.
    Forbidden(&'static str),
    /// `410`: a one-time link that is unknown, used or expired.
    Gone(&'static str),
    /// `503`: too many passwords are being checked (or requests waiting for a thread);
    /// nothing was done.
    Busy,
}

impl From<ApiError> for Refusal {
    fn from(error: ApiError) -> Self {
        Refusal::Api(error)
    }
}

impl From<crate::domain::Invalid> for Refusal {
    fn from(invalid: crate::domain::Invalid) -> Self {
        Refusal::Api(invalid.into())
    }
}

impl From<postgres::Error> for Refusal {
    fn from(error: postgres::Error) -> Self {
        Refusal::Api(error.into())
    }
}

impl From<r2d2::Error> for Refusal {
    fn from(error: r2d2::Error) -> Self {
        Refusal::Api(error.into())
    }
}

impl From<Refused> for Refusal {
    fn from(refused: Refused) -> Self {
        match refused {
            Refused::Busy => Refusal::Busy,
            Refused::TooMany => Refusal::Api(ApiError::RateLimited),
        }
    }
}

/// What a page's handler reads of the request it answers: the service, the request, its form
/// (empty for a `GET`).
pub(crate) struct Call<'a> {
    pub app: &'a App,
    pub request: &'a Request,
    pub form: Form,
}

/// Answers one request to the console host.
pub fn handle(app: &Arc<App>, request: Request) -> Response {
    let response = match routes::route(request.method(), request.path()) {
        Ok(Route::Asset(asset)) => pages::asset(asset),
        Ok(route) => {
            let app_for_job = Arc::clone(app);
            app.blocking
                .run(move || serve(&app_for_job, &request, route))
                .unwrap_or_else(|error| match error {
                    BlockingError::Busy => Err(Refusal::Busy),
                    BlockingError::Panicked => Err(ApiError::internal(error).into()),
                })
                .unwrap_or_else(|refusal| pages::refusal(&refusal))
        }
        Err(refusal) => pages::refusal(&refusal),
    };
    secured(app, response)
}

/// The page of a route, on a blocking-pool thread. A write (`POST`) from another origin is
/// refused before its body is read.
fn serve(app: &App, request: &Request, route: Route) -> Result<Response, Refusal> {
    let writes = request.method() == "POST";
    if writes && !session::from_own_origin(app, request) {
        return Err(Refusal::Forbidden(
            "this form was not sent from the console's own pages: nothing was changed",
        ));
    }
    let form = if writes {
        Form::read(request)?
    } else {
        Form::default()
    };
    let call = Call { app, request, form };
    let mut connection = app.pool.get()?;
    let db = &mut *connection;
    let visit = Visit::of(db, request)?;
    match route {
        Route::SignInForm => Ok(sign_in::form(visit.as_ref())),
        Route::SignIn => sign_in::sign_in(db, &call, visit),
        // The link's secret stands for the form token: a link is used before any session.
        Route::LinkPage(secret) => links::page(db, &secret),
        Route::UseLink(secret) => links::use_link(db, &call, &secret),
        route => match visit {
            Some(visit) => {
                let answer = signed_in(db, &call, route, &visit);
                if writes && answer.is_ok() {
                    see_write(app, db, &visit);
                }
                answer.or_else(|refusal| Ok(pages::refusal_in(&refusal, Some(visit.nav()))))
            }
            None if writes => Err(Refusal::Forbidden(
                "your session has ended: sign in again (nothing was changed)",
            )),
            None => Ok(pages::redirect("/sign-in")),
        },
    }
}

/// A card, key, site or fragment changed from the console is what this instance's next
/// `/fragment` call serves, as after a write through `/v1` (a write that changed nothing of
/// the snapshot costs one version check).
fn see_write(app: &App, db: &mut Client, visit: &Visit) {
    if let Some(org) = &visit.org {
        app.delivery.cache.see_write(db, org.org_id.as_str());
    }
}

/// The pages of a signed-in person. Every write carries the session's form token.
fn signed_in(
    db: &mut Client,
    call: &Call,
    route: Route,
    visit: &Visit,
) -> Result<Response, Refusal> {
    let (request, form) = (call.request, &call.form);
    if request.method() == "POST" && !visit.token_matches(form.get("csrf")) {
        return Err(Refusal::Forbidden(
            "this form is out of date or not from your session: reload the page and send it \
             again (nothing was changed)",
        ));
    }
    match route {
        Route::Home => Ok(account::home(visit, request)),
        Route::SignOut => sign_in::sign_out(db, visit, call.app),
        Route::Sessions => account::sessions_page(db, visit, request),
        Route::EndOtherSessions => account::end_others(db, visit),
        Route::PasswordForm => Ok(account::password_page(visit)),
        Route::ChangePassword => account::change_password(db, call, visit),
        Route::ChooseOrg => account::choose_org(db, form, visit),
        Route::Members => members::members_page(db, visit, request),
        Route::Invite => members::invite(db, call, visit),
        Route::ChangeRole(person) => members::change(db, form, visit, &person, false),
        Route::RemoveMember(person) => members::change(db, form, visit, &person, true),
        Route::RevokeInvitation(id) => members::revoke_invitation(db, visit, id),
        Route::Cards(page) => cards::serve(db, call, visit, page),
        Route::Tokens => tokens::tokens_page(db, visit, request),
        Route::CreateToken => tokens::create(db, call, visit),
        Route::RevokeToken(id) => tokens::revoke(db, visit, &id),
        Route::ConfirmDeleteToken(id) => tokens::confirm_delete(db, visit, &id),
        Route::DeleteToken(id) => tokens::delete(db, visit, &id),
        Route::Keys => keys::keys_page(db, visit, request),
        Route::CreateKey => keys::create(db, call, visit),
        Route::RevokeKey(id) => keys::revoke(db, visit, &id),
        Route::ConfirmDeleteKey(id) => keys::confirm_delete(db, visit, &id),
        Route::DeleteKey(id) => keys::delete(db, visit, &id),
        Route::Sites => sites::sites_page(db, visit, request),
        Route::ConfirmDeleteSite(domain) => sites::confirm_site(db, visit, &domain),
        Route::DeleteSite(domain) => sites::delete_site(db, visit, &domain),
        Route::ConfirmDeleteFragment(id) => sites::confirm_fragment(db, visit, &id),
        Route::DeleteFragment(id) => sites::delete_fragment(db, visit, &id),
        Route::Audit => audit::audit_page(db, visit, request),
        Route::SignInForm
        | Route::SignIn
        | Route::LinkPage(_)
        | Route::UseLink(_)
        | Route::Asset(_) => Err(ApiError::NotFound.into()),
    }
}

/// The headers of every console answer: never stored, never framed, no script, no referrer;
/// and, when the console is served over HTTPS, HTTPS only from then on.
fn secured(app: &App, response: Response) -> Response {
    let response = response
        .replace_header("Cache-Control", "no-store")
        .header("Content-Security-Policy", CSP)
        .header("Referrer-Policy", "no-referrer")
        .header("X-Content-Type-Options", "nosniff")
        .header("X-Frame-Options", "DENY");
    match app
        .config
        .console_url
        .as_ref()
        .and_then(|url| url.strict_transport())
    {
        Some(value) => response.header("Strict-Transport-Security", value),
        None => response,
    }
}
