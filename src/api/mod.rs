//! The management API `/v1`: the pipeline every request goes through, in the contract's order
//! of checks, and the call of the operation the route table names.
//!
//! Order: (1) token and limits (`401`, `429`); route (`404`, `405`); (2) body: media type,
//! size, JSON syntax, duplicate and unknown members (`400`), then shape (`422`); (3) the object
//! named in the path (`404`); (4) checks on stored data. Step 2b is the table's body reader
//! (`wire`), run here before the handler, which then reads the same body into its operation's
//! input: the reader the description names and the fuzz target runs is the one every request
//! meets, and no handler can look at its path first. Steps 3–4 are the operation's (`ops`),
//! which writes nothing before every check has passed.

mod openapi;
pub(crate) mod operations;

pub use openapi::description;

use crate::app::App;
use crate::auth::{self, Presented};
use crate::db::{self, orgs::TokenOwner};
use crate::domain::{DomainName, FragmentRef};
use crate::error::{ApiError, RETRY_AFTER_SECONDS};
use crate::http::{media_type, Body, Request, Response, BODY_LIMIT};
use crate::limits::{Limit, POLICY_HEADER};
use crate::ops::Caller;
use crate::pool::Conn;
use crate::wire;
use operations::Params;
use serde_json::Value;
use std::net::IpAddr;
use std::sync::Arc;

/// A handler's success: status and JSON body.
pub struct Reply {
    pub status: u16,
    pub body: Value,
}

impl Reply {
    pub fn ok(body: Value) -> Reply {
        Reply { status: 200, body }
    }
    pub fn created(body: Value) -> Reply {
        Reply { status: 201, body }
    }
    /// `201` for a write that created its object, else `200`.
    pub fn created_or_updated(created: bool, body: Value) -> Reply {
        if created {
            Reply::created(body)
        } else {
            Reply::ok(body)
        }
    }
}

/// What a handler works with: the caller (the token and its organisation), a database
/// connection, and the request's path parameters and body, which it reads once.
pub struct OperationContext<'a> {
    pub app: &'a App,
    pub caller: Caller,
    pub db: Conn,
    params: Params<'a>,
    body: Value,
}

impl OperationContext<'_> {
    /// The parsed body of a write (`null` for a read, which takes none).
    fn body(&self) -> &Value {
        &self.body
    }

    /// The `{domain}` of a site-scoped operation: an invalid domain names no site (`404`).
    fn site(&self) -> Result<DomainName, ApiError> {
        DomainName::from_path_segment(self.params.get("domain")).map_err(|_| ApiError::NotFound)
    }

    /// The `{domain}` of `PUT /v1/sites/{domain}`, which creates the site: an invalid domain is
    /// refused (`422`).
    fn new_site(&self) -> Result<DomainName, ApiError> {
        Ok(DomainName::from_path_segment(self.params.get("domain"))?)
    }

    /// The `{ref}`: the whole reference encoded once; refused on `ref` (`422`).
    fn fragment_ref(&self) -> Result<FragmentRef, ApiError> {
        Ok(FragmentRef::from_path_segment(self.params.get("ref"))?)
    }

    /// The `{id}`: an id of another shape names nothing (`404`).
    fn id<T>(&self, parse: fn(&str) -> Option<T>) -> Result<T, ApiError> {
        parse(self.params.get("id")).ok_or(ApiError::NotFound)
    }
}

/// Answers one `/v1` request. Runs the whole pipeline on the blocking pool, since it reads the
/// database; the calling coroutine only waits.
pub fn handle(app: &Arc<App>, request: Request) -> Response {
    let client_ip = app.client_ip(&request);
    let app_for_job = Arc::clone(app);
    let outcome = app
        .blocking
        .run(move || process(&app_for_job, &request, client_ip))
        .unwrap_or_else(|error| Err(ApiError::internal(error)));
    respond(app, outcome)
}

/// The `404` of `/v1` paths on hosts that do not serve the management API.
pub fn not_served(app: &App) -> Response {
    respond(app, Err(ApiError::NotFound))
}

fn process(app: &App, request: &Request, client_ip: IpAddr) -> Result<Reply, ApiError> {
    let (owner, db) = authenticate(app, request, client_ip)?;
    let is_write = matches!(request.method(), "PUT" | "POST" | "DELETE");
    let token = owner.token_id.clone();
    let charged = if is_write {
        app.limiter
            .try_charge(&[Limit::Token(token.clone()), Limit::TokenWrites(token)])
    } else {
        app.limiter.try_charge(&[Limit::Token(token)])
    };
    if !charged {
        return Err(ApiError::RateLimited);
    }
    app.token_use.touch(&owner.token_id);
    let matched = operations::route(request.method(), request.path())?;
    let body = if is_write {
        read_body(request)?
    } else {
        Value::Null
    };
    let mut ctx = OperationContext {
        app,
        caller: Caller::token(owner),
        db,
        params: matched.params,
        body,
    };
    if let Some(body) = &matched.endpoint.body {
        (body.read)(&ctx.body)?;
    }
    let reply = (matched.endpoint.handle)(&mut ctx)?;
    if is_write {
        refresh_fragment_cache(&mut ctx);
    }
    Ok(reply)
}

/// A write is visible to this instance's next `/fragment` call.
fn refresh_fragment_cache(ctx: &mut OperationContext) {
    let org_id = ctx.caller.org.id.as_str();
    ctx.app
        .delivery
        .cache
        .reload_org_after_write(&mut ctx.db, org_id);
}

/// Step 1: the bearer token, checked against the database on every call, with the per-IP
/// limits on failed authentications and on requests presenting a well-formed token.
fn authenticate(app: &App, request: &Request, ip: IpAddr) -> Result<(TokenOwner, Conn), ApiError> {
    let token = well_formed_token(app, request, ip)?;
    if !app.limiter.try_charge(&[Limit::IpWithToken(ip)]) {
        return Err(ApiError::RateLimited);
    }
    let mut db = app.pool.get()?;
    match db::orgs::live_token_owner(&mut *db, &auth::hash(token))? {
        Some(owner) => Ok((owner, db)),
        None => {
            app.limiter.charge(Limit::FailedAuth(ip));
            Err(ApiError::InvalidToken)
        }
    }
}

/// The first checks of step 1, on the head alone: the failed-authentication limit of the
/// client address, then a well-formed bearer token (its absence counts as a failure).
fn well_formed_token<'r>(app: &App, request: &'r Request, ip: IpAddr) -> Result<&'r str, ApiError> {
    if !app.limiter.has_room(&[Limit::FailedAuth(ip)]) {
        return Err(ApiError::RateLimited);
    }
    match auth::presented_token(request, &app.config.prefix) {
        Presented::WellFormed(token) => Ok(token),
        refused => {
            app.limiter.charge(Limit::FailedAuth(ip));
            Err(auth::refusal(&refused))
        }
    }
}

/// A `/v1` request's answer before its body is read (the client sent `Expect: 100-continue`):
/// its refusal when the head decides it without the database, else `None` (the body is read
/// and the whole pipeline runs, once).
pub fn answer_without_body(app: &App, head: &Request) -> Option<Response> {
    let refused = well_formed_token(app, head, app.client_ip(head)).err()?;
    Some(respond(app, Err(refused)))
}

/// Step 2a: media type, raw size (a byte order mark included), then the strict JSON parse.
fn read_body(request: &Request) -> Result<Value, ApiError> {
    if !request
        .header("content-type")
        .is_some_and(media_type::is_json)
    {
        return Err(ApiError::UnsupportedMediaType);
    }
    match &request.body {
        Body::TooLarge => Err(ApiError::BodyTooLarge),
        Body::Bytes(bytes) if bytes.len() > BODY_LIMIT => Err(ApiError::BodyTooLarge),
        Body::Bytes(bytes) => wire::parse_body(bytes),
    }
}

/// Encodes an outcome with the headers every management response carries.
fn respond(app: &App, outcome: Result<Reply, ApiError>) -> Response {
    let response = match outcome {
        Ok(reply) => Response::json(reply.status, &reply.body),
        Err(error) => error_response(app, &error),
    };
    response
        .replace_header("Cache-Control", "private, no-store")
        .header("RateLimit-Policy", POLICY_HEADER)
}

/// An error with the headers its status calls for.
fn error_response(app: &App, error: &ApiError) -> Response {
    let response = error.response();
    match error {
        ApiError::MissingToken | ApiError::InvalidToken => {
            let realm = format!("Bearer realm=\"{}\"", app.config.prefix);
            response.header("WWW-Authenticate", realm)
        }
        ApiError::RateLimited => response.header("Retry-After", RETRY_AFTER_SECONDS.to_string()),
        _ => response,
    }
}
