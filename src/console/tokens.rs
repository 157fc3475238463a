//! Management tokens, for owners only (support staff count as owners; the page table checks
//! the page and each `POST` alike): the list, a new token (shown once, on the answer that
//! made it), revoke, delete after a confirmation. The writes are `ops::tokens`'s.

use super::confirm::Confirm;
use super::context::{Answer, PageContext};
use super::notice::Notice;
use super::pages::{self, Creating, Field, Layout};
use super::refusal::PageRefusal;
use crate::db::orgs::{Creator, TokenRow};
use crate::domain::TokenName;
use crate::error::ApiError;
use crate::ids::TokenId;
use crate::ops::{self, Scope};
use askama::Template;

#[derive(Template)]
#[template(path = "console/tokens.html")]
pub struct TokensPage {
    pub layout: Layout,
    pub tokens: Vec<TokenRow>,
    pub name: Field,
    /// The form's one-time value; a token just made, on the answer that made it only.
    pub creating: Creating,
}

fn page(ctx: &mut PageContext) -> Result<TokensPage, PageRefusal> {
    let tokens = ops::tokens::list_tokens(ctx.db, &ctx.caller()?)?;
    let mut layout = ctx.layout();
    let about = ctx.query.get("about");
    layout.about = tokens.iter().find(|t| t.id.as_str() == about).map(label);
    Ok(TokensPage {
        layout,
        tokens,
        name: Field::new("name", "Name", "text"),
        creating: Creating::new(ctx.once()?),
    })
}

/// A token as a sentence names it: its name and prefix.
fn label(token: &TokenRow) -> String {
    format!("{} ({}…)", token.name, token.prefix)
}

/// The token of the path, of this organisation.
fn token_of_path(ctx: &mut PageContext) -> Result<TokenRow, PageRefusal> {
    let id: TokenId = ctx.captures.get()?;
    let tokens = ops::tokens::list_tokens(ctx.db, &ctx.caller()?)?;
    Ok(tokens
        .into_iter()
        .find(|t| t.id == id)
        .ok_or(ApiError::NotFound)?)
}

pub fn list(ctx: &mut PageContext) -> Answer {
    Ok(pages::html(200, &page(ctx)?))
}

/// `POST /tokens`: a token made by support staff expires after 90 days, an owner's never;
/// the same form sent again makes none.
pub fn create(ctx: &mut PageContext) -> Answer {
    let caller = ctx.caller()?;
    let mut page = page(ctx)?;
    let Some(name) = page.name.parse(&ctx.form, TokenName::parse) else {
        return Ok(pages::html(422, &page));
    };
    let creator = match ctx.visit.session.support {
        true => Creator::Support,
        false => Creator::Owner,
    };
    let app = ctx.app;
    let prefix = &app.config.prefix;
    let made =
        ctx.made_once(|tx| ops::tokens::create_token(tx, &caller, &name, creator, prefix))?;
    let status = page.creating.made(made.map(|created| created.secret));
    page.tokens = ops::tokens::list_tokens(ctx.db, &caller)?;
    Ok(pages::html(status, &page))
}

/// `GET /tokens/{token}/revoke`: which token stops, and the button that stops it.
pub fn confirm_revoke(ctx: &mut PageContext) -> Answer {
    let token = token_of_path(ctx)?;
    let page = Confirm {
        layout: ctx.layout(),
        title: format!("Revoke the token {}", label(&token)),
        goes: vec![
            "Scripts that still use it are refused from now on (401); it stays listed, \
             revoked."
                .to_string(),
        ],
        action: format!("/tokens/{}/revoke", token.id),
        button: "Revoke the token",
        back: "/tokens".into(),
    };
    Ok(pages::html(200, &page))
}

/// `POST /tokens/{token}/revoke`: the notice names the token.
pub fn revoke(ctx: &mut PageContext) -> Answer {
    let id: TokenId = ctx.captures.get()?;
    ops::tokens::revoke_token(ctx.db, Scope::Org(&ctx.caller()?), &id)?;
    Ok(pages::redirect_about(
        "/tokens",
        Notice::TokenRevoked,
        id.as_str(),
    ))
}

/// `GET /tokens/{token}/delete`: what is deleted, and the button that does it.
pub fn confirm_delete(ctx: &mut PageContext) -> Answer {
    let token = token_of_path(ctx)?;
    let id = &token.id;
    let page = Confirm {
        layout: ctx.layout(),
        title: format!("Delete the token {}", label(&token)),
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

/// `POST /tokens/{token}/delete`.
pub fn delete(ctx: &mut PageContext) -> Answer {
    let id: TokenId = ctx.captures.get()?;
    ops::tokens::delete_token(ctx.db, Scope::Org(&ctx.caller()?), &id)?;
    Ok(pages::redirect_with("/tokens", Notice::TokenDeleted))
}
