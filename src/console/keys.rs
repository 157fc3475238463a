//! Delivery keys, for every member: the list, a new key (shown once, on the answer that made
//! it), revoke, and delete a revoked one after a confirmation. The writes are `ops::keys`'s.

use super::confirm::Confirm;
use super::context::{Answer, PageContext};
use super::notice::Notice;
use super::pages::{self, Creating, Field, Layout};
use super::refusal::PageRefusal;
use crate::db::keys::KeyRow;
use crate::domain::KeyName;
use crate::error::ApiError;
use crate::ids::KeyId;
use crate::ops::{self, Scope};
use askama::Template;

#[derive(Template)]
#[template(path = "console/keys.html")]
pub struct KeysPage {
    pub layout: Layout,
    pub keys: Vec<KeyRow>,
    pub name: Field,
    /// The form's one-time value; a key just made, on the answer that made it only.
    pub creating: Creating,
}

fn page(ctx: &mut PageContext) -> Result<KeysPage, PageRefusal> {
    let keys = ops::keys::list_keys(ctx.db, &ctx.caller()?)?;
    let mut layout = ctx.layout();
    let about = ctx.query.get("about");
    layout.about = keys.iter().find(|k| k.id.as_str() == about).map(label);
    Ok(KeysPage {
        layout,
        keys,
        name: Field::new("name", "Name", "text"),
        creating: Creating::new(ctx.once()?),
    })
}

/// A key as a sentence names it: its name and prefix.
fn label(key: &KeyRow) -> String {
    let name = key.name.as_deref().unwrap_or("without a name");
    format!("{name} ({}…)", key.prefix)
}

/// The key of the path, of this organisation.
fn key_of_path(ctx: &mut PageContext) -> Result<KeyRow, PageRefusal> {
    let id: KeyId = ctx.captures.get()?;
    let keys = ops::keys::list_keys(ctx.db, &ctx.caller()?)?;
    Ok(keys
        .into_iter()
        .find(|k| k.id == id)
        .ok_or(ApiError::NotFound)?)
}

pub fn list(ctx: &mut PageContext) -> Answer {
    Ok(pages::html(200, &page(ctx)?))
}

/// `POST /keys`: the same form sent again makes none.
pub fn create(ctx: &mut PageContext) -> Answer {
    let caller = ctx.caller()?;
    let mut page = page(ctx)?;
    let Some(name) = page.name.parse(&ctx.form, KeyName::parse) else {
        return Ok(pages::html(422, &page));
    };
    let app = ctx.app;
    let prefix = &app.config.prefix;
    let made = ctx.made_once(|tx| ops::keys::create_key(tx, &caller, name.as_ref(), prefix))?;
    let status = page.creating.made(made.map(|created| created.secret));
    page.keys = ops::keys::list_keys(ctx.db, &caller)?;
    Ok(pages::html(status, &page))
}

/// `GET /keys/{key}/revoke`: which key stops, and the button that stops it.
pub fn confirm_revoke(ctx: &mut PageContext) -> Answer {
    let key = key_of_path(ctx)?;
    let page = Confirm {
        layout: ctx.layout(),
        title: format!("Revoke the key {}", label(&key)),
        goes: vec![
            "Every page whose edge asks with this key gets no card from now on: make and \
             deploy a new key first if it is in use."
                .into(),
        ],
        action: format!("/keys/{}/revoke", key.id),
        button: "Revoke the key",
        back: "/keys".into(),
    };
    Ok(pages::html(200, &page))
}

/// `POST /keys/{key}/revoke`: the notice names the key.
pub fn revoke(ctx: &mut PageContext) -> Answer {
    let id: KeyId = ctx.captures.get()?;
    ops::keys::revoke_key(ctx.db, &ctx.caller()?, &id)?;
    Ok(pages::redirect_about(
        "/keys",
        Notice::KeyRevoked,
        id.as_str(),
    ))
}

/// `GET /keys/{key}/delete`: a revoked key only (a live one is refused as the delete would be).
pub fn confirm_delete(ctx: &mut PageContext) -> Answer {
    let key = key_of_path(ctx)?;
    let id = &key.id;
    if !key.is_revoked() {
        return Err(ApiError::validation("id", "this key is live: revoke it first").into());
    }
    let page = Confirm {
        layout: ctx.layout(),
        title: format!("Delete the revoked key {}", label(&key)),
        goes: vec![
            "It leaves the list for good; the audit log keeps what was done with it.".into(),
        ],
        action: format!("/keys/{id}/delete"),
        button: "Delete the key",
        back: "/keys".into(),
    };
    Ok(pages::html(200, &page))
}

/// `POST /keys/{key}/delete`: a live key is refused, to be revoked first.
pub fn delete(ctx: &mut PageContext) -> Answer {
    let id: KeyId = ctx.captures.get()?;
    ops::keys::delete_revoked_key(ctx.db, Scope::Org(&ctx.caller()?), &id)?;
    Ok(pages::redirect_with("/keys", Notice::KeyDeleted))
}
