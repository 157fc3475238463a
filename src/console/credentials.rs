//! The pages of a revocable secret (a delivery key, a management token): the list, a new one
//! shown once on the answer that made it, revoke and delete, each after a confirmation. What
//! differs between the kinds, their words and their `ops` functions, is a [`Credential`]; the
//! page files implement it and name their handlers with [`credential_pages!`].

use super::answers;
use super::captures::Captured;
use super::confirm::{self, Confirm};
use super::context::{Answer, PageContext};
use super::inputs::Input;
use super::layout::{Creating, Layout};
use super::notice::Notice;
use super::refusal::PageRefusal;
use crate::domain::Invalid;
use crate::error::ApiError;
use crate::ops::reports::Touched;
use crate::ops::Caller;
use askama::Template;
use postgres::{Client, Transaction};
use std::fmt;

/// What a kind of secret's pages say.
pub struct Words {
    /// What one is called: "key".
    pub thing: &'static str,
    /// The list's page, where each write goes back to.
    pub path: &'static str,
    /// The revocation's confirmation title and button: "Revoke the key".
    pub revoke: &'static str,
    /// What revoking stops, for the confirmation.
    pub revoke_goes: &'static str,
    pub revoked: Notice,
    /// The deletion's confirmation title: "Delete the revoked key".
    pub delete_title: &'static str,
    /// Its button: "Delete the key".
    pub delete: &'static str,
    pub delete_goes: &'static str,
    pub deleted: Notice,
    /// Whether a live one may be deleted; if not, it is refused until revoked.
    pub live_deletable: bool,
    /// Whether requests to `/fragment` are sent with it (a delivery key): its confirmations
    /// count them.
    pub delivers: bool,
}

/// Who makes a secret, and the service prefix it carries.
pub struct Maker<'a> {
    pub caller: &'a Caller,
    /// Made by support staff (a token then expires).
    pub support: bool,
    pub prefix: &'a str,
}

/// A kind of revocable secret, as its row of the list.
pub trait Credential: Sized {
    type Id: Captured + PartialEq + fmt::Display;
    /// The name the create form reads.
    type Name;
    /// The list page, rendered from its layout and [`Listing`].
    type Page: Template;
    const WORDS: Words;

    fn page(layout: Layout, list: Listing<Self>) -> Self::Page;
    fn list(db: &mut Client, caller: &Caller) -> Result<Vec<Self>, ApiError>;
    fn parse_name(sent: &str) -> Result<Self::Name, Invalid>;
    /// A new one; the secret, shown this once.
    fn create(tx: &mut Transaction, maker: &Maker, name: &Self::Name) -> Result<String, ApiError>;
    fn revoke(db: &mut Client, caller: &Caller, id: &Self::Id) -> Result<(), ApiError>;
    fn delete(db: &mut Client, caller: &Caller, id: &Self::Id) -> Result<(), ApiError>;
    fn id(&self) -> &Self::Id;
    /// As a sentence names it: its name and prefix.
    fn label(&self) -> String;
    fn is_revoked(&self) -> bool;
}

/// What a list page shows besides its layout.
pub struct Listing<C> {
    pub rows: Vec<C>,
    pub name: Input,
    /// The form's one-time value; a secret just made, on the answer that made it only.
    pub creating: Creating,
}

fn listing<C: Credential>(ctx: &mut PageContext) -> Result<(Layout, Listing<C>), PageRefusal> {
    let rows = C::list(ctx.db, &ctx.caller)?;
    let mut layout = ctx.layout();
    let about = ctx.query.get("about");
    layout.about = (rows.iter())
        .find(|row| row.id().to_string() == about)
        .map(C::label);
    let list = Listing {
        rows,
        name: Input::line("name", "Name", "text"),
        creating: Creating::new(ctx.once()?),
    };
    Ok((layout, list))
}

fn render<C: Credential>(status: u16, layout: Layout, list: Listing<C>) -> Answer {
    Ok(answers::html(status, &C::page(layout, list)))
}

/// The one of the path, of this organisation.
fn of_path<C: Credential>(ctx: &mut PageContext) -> Result<C, PageRefusal> {
    let id: C::Id = ctx.captures.get()?;
    let rows = C::list(ctx.db, &ctx.caller)?;
    Ok(rows
        .into_iter()
        .find(|row| *row.id() == id)
        .ok_or(ApiError::NotFound)?)
}

pub fn list<C: Credential>(ctx: &mut PageContext) -> Answer {
    let (layout, list) = listing::<C>(ctx)?;
    render(200, layout, list)
}

/// The same form sent again makes none.
pub fn create<C: Credential>(ctx: &mut PageContext) -> Answer {
    let caller = ctx.caller.clone();
    let (layout, mut list) = listing::<C>(ctx)?;
    let Some(name) = list.name.parse(&ctx.form, C::parse_name) else {
        return render(422, layout, list);
    };
    let app = ctx.app;
    let maker = Maker {
        caller: &caller,
        support: ctx.visit.session.support,
        prefix: &app.config.prefix,
    };
    let made = ctx.made_once(|tx| C::create(tx, &maker, &name))?;
    let status = list.creating.made(made);
    list.rows = C::list(ctx.db, &caller)?;
    render(status, layout, list)
}

/// Which one stops, and the button that stops it.
pub fn confirm_revoke<C: Credential>(ctx: &mut PageContext) -> Answer {
    let row: C = of_path(ctx)?;
    confirmation(ctx, &row, Step::Revoke)
}

/// A step that asks for a confirmation first.
enum Step {
    Revoke,
    Delete,
}

/// The confirmation page of `step` of `row`: its title, what goes with it, its button.
fn confirmation<C: Credential>(ctx: &mut PageContext, row: &C, step: Step) -> Answer {
    let words = C::WORDS;
    let (segment, title, goes, button) = match step {
        Step::Revoke => ("revoke", words.revoke, words.revoke_goes, words.revoke),
        Step::Delete => (
            "delete",
            words.delete_title,
            words.delete_goes,
            words.delete,
        ),
    };
    let id = row.id().to_string();
    let touched = words.delivers.then_some(Touched::Key(&id));
    let page = Confirm {
        traffic: confirm::traffic(ctx, touched)?,
        layout: ctx.layout(),
        title: format!("{title} {}", row.label()),
        goes: vec![goes.into()],
        action: format!("{}/{id}/{segment}", words.path),
        button,
        back: words.path.into(),
    };
    Ok(answers::html(200, &page))
}

/// The notice names the one revoked.
pub fn revoke<C: Credential>(ctx: &mut PageContext) -> Answer {
    let id: C::Id = ctx.captures.get()?;
    C::revoke(ctx.db, &ctx.caller, &id)?;
    let words = C::WORDS;
    let about = id.to_string();
    Ok(answers::redirect_about(words.path, words.revoked, &about))
}

/// What is deleted, and the button that does it; a live one that must be revoked first is
/// refused as the delete would be.
pub fn confirm_delete<C: Credential>(ctx: &mut PageContext) -> Answer {
    let row: C = of_path(ctx)?;
    let words = C::WORDS;
    if !words.live_deletable && !row.is_revoked() {
        let message = format!("this {} is live: revoke it first", words.thing);
        return Err(ApiError::validation("id", message).into());
    }
    confirmation(ctx, &row, Step::Delete)
}

pub fn delete<C: Credential>(ctx: &mut PageContext) -> Answer {
    let id: C::Id = ctx.captures.get()?;
    C::delete(ctx.db, &ctx.caller, &id)?;
    let words = C::WORDS;
    Ok(answers::redirect_with(words.path, words.deleted))
}

/// The page table's handlers of a kind of secret, by the names it lists them under: each
/// the function of this module of the same name, for that kind.
macro_rules! credential_pages {
    ($credential:ty) => {
        credential_pages!(
            $credential: list, create, confirm_revoke, revoke, confirm_delete, delete
        );
    };
    ($credential:ty: $($handler:ident),*) => {
        $(
            #[doc = concat!("`credentials::", stringify!($handler), "` of this kind.")]
            pub fn $handler(ctx: &mut PageContext) -> Answer {
                credentials::$handler::<$credential>(ctx)
            }
        )*
    };
}
pub(super) use credential_pages;
