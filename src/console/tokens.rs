//! Management tokens, for owners only (support staff count as owners), checked on the server
//! for the page and each `POST` alike: the list, a new token (shown once, on the answer that
//! made it), revoke, delete after a confirmation. The writes are `ops::tokens`'s.

use super::confirm::Confirm;
use super::pages::{self, Field, Nav};
use super::session::Visit;
use super::{Call, Refusal};
use crate::db::orgs::{Creator, TokenRow};
use crate::domain::TokenName;
use crate::error::ApiError;
use crate::http::{Request, Response};
use crate::ids::TokenId;
use crate::ops::{self, Scope};
use askama::Template;
use postgres::Client;

#[derive(Template)]
#[template(path = "console/tokens.html")]
pub struct TokensPage {
    pub nav: Option<Nav>,
    pub notice: Option<&'static str>,
    pub tokens: Vec<TokenRow>,
    pub name: Field,
    /// A token just made, on the answer that made it only.
    pub secret: Option<String>,
}

fn page(db: &mut Client, visit: &Visit, request: &Request) -> Result<TokensPage, Refusal> {
    let caller = visit.owner()?;
    Ok(TokensPage {
        nav: Some(visit.nav()),
        notice: pages::notice(request),
        tokens: ops::tokens::list_tokens(db, &caller)?,
        name: Field::new("name", "Name", "text"),
        secret: None,
    })
}

/// `GET /tokens`.
pub fn tokens_page(db: &mut Client, visit: &Visit, request: &Request) -> Result<Response, Refusal> {
    Ok(pages::html(200, &page(db, visit, request)?))
}

/// `POST /tokens`: a token made by support staff expires after 90 days, an owner's never.
pub fn create(db: &mut Client, call: &Call, visit: &Visit) -> Result<Response, Refusal> {
    let caller = visit.owner()?;
    let mut page = page(db, visit, call.request)?;
    let Some(name) = page.name.parse(&call.form, TokenName::parse) else {
        return Ok(pages::html(422, &page));
    };
    let creator = match visit.session.support {
        true => Creator::Support,
        false => Creator::Owner,
    };
    let prefix = &call.app.config.prefix;
    let created = ops::tokens::create_token(db, &caller, &name, creator, prefix)?;
    page.secret = Some(created.secret);
    page.tokens = ops::tokens::list_tokens(db, &caller)?;
    Ok(pages::html(200, &page))
}

/// `POST /tokens/{id}/revoke`.
pub fn revoke(db: &mut Client, visit: &Visit, id: &TokenId) -> Result<Response, Refusal> {
    ops::tokens::revoke_token(db, Scope::Org(&visit.owner()?), id)?;
    Ok(pages::redirect("/tokens?notice=token-revoked"))
}

/// `GET /tokens/{id}/delete`: what is deleted, and the button that does it.
pub fn confirm_delete(db: &mut Client, visit: &Visit, id: &TokenId) -> Result<Response, Refusal> {
    let caller = visit.owner()?;
    let token = ops::tokens::list_tokens(db, &caller)?
        .into_iter()
        .find(|t| t.id == *id)
        .ok_or(ApiError::NotFound)?;
    let page = Confirm {
        nav: Some(visit.nav()),
        title: format!("Delete the token {} ({}…)", token.name, token.prefix),
        goes: vec![
            "Scripts that still use it are refused from now on (401); the audit log \
                    keeps what it did."
                .to_string(),
        ],
        action: format!("/tokens/{id}/delete"),
        button: "Delete the token",
        back: "/tokens".into(),
    };
    Ok(pages::html(200, &page))
}

/// `POST /tokens/{id}/delete`.
pub fn delete(db: &mut Client, visit: &Visit, id: &TokenId) -> Result<Response, Refusal> {
    ops::tokens::delete_token(db, Scope::Org(&visit.owner()?), id)?;
    Ok(pages::redirect("/tokens?notice=token-deleted"))
}
