//! Management tokens, for owners only (support staff count as owners; the page table checks
//! the page and each `POST` alike): the list, a new token (shown once, on the answer that
//! made it), revoke, delete after a confirmation. The writes are `ops::tokens`'s; the pages
//! are `credentials`'.

use super::context::{Answer, PageContext};
use super::credentials::{self, credential_pages, Credential, Listing, Maker, Words};
use super::layout::Layout;
use super::notice::Notice;
use crate::db::orgs::{Creator, TokenRow};
use crate::domain::{Invalid, TokenName};
use crate::error::ApiError;
use crate::ids::TokenId;
use crate::ops::{self, Caller, Scope};
use askama::Template;
use postgres::{Client, Transaction};

#[derive(Template)]
#[template(path = "console/tokens.html")]
pub struct TokensPage {
    pub layout: Layout,
    pub list: Listing<TokenRow>,
}

impl Credential for TokenRow {
    type Id = TokenId;
    type Name = TokenName;
    type Page = TokensPage;
    const WORDS: Words = Words {
        thing: "token",
        path: "/tokens",
        revoke: "Revoke the token",
        revoke_goes: "Scripts that still use it are refused from now on (401); it stays \
                      listed, revoked.",
        revoked: Notice::TokenRevoked,
        delete_title: "Delete the token",
        delete: "Delete the token",
        delete_goes: "Scripts that still use it are refused from now on (401); the audit log \
                      keeps what it did.",
        deleted: Notice::TokenDeleted,
        live_deletable: true,
        delivers: false,
    };

    fn page(layout: Layout, list: Listing<TokenRow>) -> TokensPage {
        TokensPage { layout, list }
    }

    fn list(db: &mut Client, caller: &Caller) -> Result<Vec<TokenRow>, ApiError> {
        ops::tokens::list_tokens(db, caller)
    }

    fn parse_name(sent: &str) -> Result<TokenName, Invalid> {
        TokenName::parse(sent)
    }

    /// A token made by support staff expires after 90 days, an owner's never.
    fn create(tx: &mut Transaction, maker: &Maker, name: &TokenName) -> Result<String, ApiError> {
        let creator = match maker.support {
            true => Creator::Support,
            false => Creator::Owner,
        };
        let (caller, prefix) = (maker.caller, maker.prefix);
        let created = ops::tokens::create_token(tx, caller, name, creator, prefix)?;
        Ok(created.secret)
    }

    fn revoke(db: &mut Client, caller: &Caller, id: &TokenId) -> Result<(), ApiError> {
        ops::tokens::revoke_token(db, Scope::Org(caller), id).map(drop)
    }

    fn delete(db: &mut Client, caller: &Caller, id: &TokenId) -> Result<(), ApiError> {
        ops::tokens::delete_token(db, Scope::Org(caller), id).map(drop)
    }

    fn id(&self) -> &TokenId {
        &self.id
    }

    fn label(&self) -> String {
        format!("{} ({}…)", self.name, self.prefix)
    }

    fn is_revoked(&self) -> bool {
        self.revoked_at.is_some()
    }
}

credential_pages!(TokenRow);
