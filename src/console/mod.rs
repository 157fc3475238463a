//! The console: the web pages where an organisation's people sign in and do what the contract
//! reserves to them, served on the console host only (`router::area`).
//!
//! A request goes: `routes` (the page table: path and method → page and typed captures,
//! `404`/`405`) → the blocking pool → `open` (origin, form and query, session, form token, the
//! page's access rule) → the page's handler (a `context::PageContext` in, through `ops`, a
//! template of `pages` out, its layout rendered by the base template) → `secured`, which gives
//! every answer its security headers.

mod account;
mod alerts;
mod answers;
mod assets;
mod audit;
mod browsers;
mod captures;
mod card_form;
mod cards;
mod chart;
mod confirm;
mod connect;
mod context;
mod credentials;
mod form;
mod fragments;
mod inputs;
mod keys;
mod layout;
mod members;
mod notice;
mod one_time_links;
mod pages;
mod passkeys;
mod refusal;
mod report_mail;
mod reports;
mod routes;
mod rules;
mod second_factor;
mod session;
mod sign_in;
mod site_forms;
mod sites;
mod times;
mod tokens;
mod unknown_browser;
mod why;

pub use report_mail::mail_reports;
pub use routes::{page_table, Access, PageSample};

use crate::app::App;
use crate::blocking::BlockingError;
use crate::domain::Role;
use crate::error::ApiError;
use crate::http::{Request, Response};
use crate::limits::Limit;
use captures::Captures;
use context::{Answer, PersonContext, PublicContext};
use form::Form;
use notice::Notice;
use postgres::Client;
use refusal::PageRefusal;
use routes::{Handler, Method, Page, SignedIn};
use session::Visit;
use std::sync::Arc;

/// The Content-Security-Policy of every answer: nothing but our own files (the style sheet, the
/// script of the "Copy" buttons, of passkeys and of the sign-in's wait, the Web Worker of its
/// proof of work, which `worker-src` falling back to `script-src` allows); no inline script, no
/// framing, forms posted only here, and the script's requests (a passkey's options) only here.
const CSP: &str = "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; \
                   connect-src 'self'; form-action 'self'; frame-ancestors 'none'; \
                   base-uri 'none'";

/// Answers one request to the console host.
pub fn handle(app: &Arc<App>, request: Request) -> Response {
    let response = match routes::find(request.method(), request.path()) {
        Ok((
            Page {
                handler: Handler::File(asset),
                ..
            },
            _,
        )) => assets::asset(*asset),
        Ok((page, captures)) => {
            let app_for_job = Arc::clone(app);
            app.blocking
                .run(move || serve(&app_for_job, &request, page, captures))
                .unwrap_or_else(|error| match error {
                    BlockingError::Busy => Err(PageRefusal::Busy),
                    BlockingError::Panicked => Err(ApiError::internal(error).into()),
                })
                .unwrap_or_else(|refusal| answers::refusal(&refusal, None))
        }
        Err(refusal) => answers::refusal(&refusal, None),
    };
    secured(app, response)
}

/// A page, on a blocking-pool thread; a refusal of a sign-in, whatever refused it, counts as
/// a failed sign-in of the client address, as a wrong password does.
fn serve(app: &App, request: &Request, page: &Page, captures: Captures) -> Answer {
    let answer = open(app, request, page, captures);
    if page.counts_refusals && answer.as_ref().is_err_and(PageRefusal::of_input) {
        app.limiter
            .charge(Limit::FailedAuth(app.client_ip(request)));
    }
    answer
}

/// What every page gets before its handler: a write (`POST`) from another origin is refused
/// before its body is read (but a one-click unsubscribe's, whose token is its authority: see
/// `report_mail`); the form and the query are decoded (a NUL or invalid UTF-8 is
/// `422`, on the form itself where the page refuses in place); then the session, and the page's access rule.
fn open(app: &App, request: &Request, page: &Page, captures: Captures) -> Answer {
    let writes = page.method == Method::Post;
    let form_sent = writes && !page.one_click;
    if form_sent && !session::from_own_origin(app, request) {
        return Err(PageRefusal::Forbidden(
            "this form was not sent from the console's own pages: nothing was changed",
        ));
    }
    let form = if form_sent {
        Form::read(request)?
    } else {
        Form::default()
    };
    let query = Form::query(request);
    query.refusal()?;
    if !page.refuses_in_place {
        form.refusal()?;
    }
    let mut connection = app.pool.get()?;
    let db = &mut *connection;
    let visit = Visit::of(db, request)?;
    let mut ctx = PublicContext {
        app,
        db,
        request,
        form,
        query,
        captures,
        visit,
        caller: (),
    };
    match page.handler {
        Handler::Public(handle) => handle(&mut ctx),
        Handler::SignedIn(handle) => match ctx.visit.take() {
            Some(visit) => Ok(signed_in(ctx.with(|_| visit, ()), page, handle)),
            None if writes => Err(PageRefusal::Forbidden(
                "your session has ended: sign in again (nothing was changed)",
            )),
            None => Ok(sign_in::asking_for(ctx.request.path())),
        },
        Handler::File(asset) => Ok(assets::asset(asset)),
    }
}

/// A page of a signed-in person: every write carries the session's form token, a page for
/// members or owners refuses everyone else, a page of the organisation a person who has none,
/// before the handler runs; a refusal is shown with the person's header.
fn signed_in(ctx: PersonContext, page: &Page, handle: SignedIn) -> Response {
    let writes = page.method == Method::Post;
    if ctx.visit.lacks_required_factor() && !page.open_without_factor {
        return without_factor(&ctx.visit, writes);
    }
    let (answer, ctx) = match allowed(&ctx, page) {
        Ok(()) => run(ctx, handle),
        Err(refusal) => (Err(refusal), ctx),
    };
    if writes && answer.is_ok() {
        reload_after_write(ctx.app, ctx.db, &ctx.visit);
    }
    answer.unwrap_or_else(|refusal| answers::refusal(&refusal, Some(&ctx.visit)))
}

/// A person whose organisation requires a second factor they lack is sent to the page that
/// adds one; a write elsewhere is refused.
fn without_factor(visit: &Visit, writes: bool) -> Response {
    match writes {
        true => answers::refusal(
            &PageRefusal::Forbidden(
                "your organisation requires a second factor: add one first (nothing was changed)",
            ),
            Some(visit),
        ),
        false => answers::redirect_with(second_factor::FACTORS_PATH, Notice::SecondFactorRequired),
    }
}

/// Runs the handler; an organisation's page gets its caller, or refuses a person who has no
/// organisation (`403`). The context comes back for what follows the answer.
fn run(mut ctx: PersonContext, handle: SignedIn) -> (Answer, PersonContext) {
    match handle {
        SignedIn::Person(handle) => (handle(&mut ctx), ctx),
        SignedIn::Org(handle) => match ctx.visit.caller() {
            Ok(caller) => {
                let mut ctx = ctx.with(|visit| visit, caller);
                (handle(&mut ctx), ctx.with(|visit| visit, ()))
            }
            Err(refusal) => (Err(refusal), ctx),
        },
    }
}

fn allowed(ctx: &PersonContext, page: &Page) -> Result<(), PageRefusal> {
    if page.method == Method::Post {
        ctx.visit.require_token(ctx.form.get("csrf"))?;
    }
    match page.access {
        Access::Owner => ctx.visit.require(Role::Owner),
        Access::Member => ctx.visit.require(Role::Member),
        Access::Viewer | Access::Public => Ok(()),
    }
}

/// A card, key, site or fragment changed from the console is what this instance's next
/// `/fragment` call serves, as after a write through `/v1` (a write that changed nothing of
/// the snapshot costs one version check).
fn reload_after_write(app: &App, db: &mut Client, visit: &Visit) {
    if let Some(org) = &visit.org {
        app.delivery
            .cache
            .reload_org_after_write(db, org.org_id.as_str());
    }
}

/// The headers of every console answer: never stored, never framed, no script but our own
/// file, no referrer;
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
