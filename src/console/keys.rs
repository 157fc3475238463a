//! Delivery keys, for every member: the list, a new key (shown once, on the answer that made
//! it), revoke, and delete a revoked one after a confirmation. The writes are `ops::keys`'s.

use super::confirm::Confirm;
use super::pages::{self, Field, Nav};
use super::session::Visit;
use super::{Call, Refusal};
use crate::db::keys::KeyRow;
use crate::domain::KeyName;
use crate::error::ApiError;
use crate::http::{Request, Response};
use crate::ids::KeyId;
use crate::ops::{self, Scope};
use askama::Template;
use postgres::Client;

#[derive(Template)]
#[template(path = "console/keys.html")]
pub struct KeysPage {
    pub nav: Option<Nav>,
    pub notice: Option<&'static str>,
    pub keys: Vec<KeyRow>,
    pub name: Field,
    /// A key just made, on the answer that made it only.
    pub secret: Option<String>,
}

fn page(db: &mut Client, visit: &Visit, request: &Request) -> Result<KeysPage, Refusal> {
    Ok(KeysPage {
        nav: Some(visit.nav()),
        notice: pages::notice(request),
        keys: ops::keys::list_keys(db, &visit.caller()?)?,
        name: Field::new("name", "Name", "text"),
        secret: None,
    })
}

/// `GET /keys`.
pub fn keys_page(db: &mut Client, visit: &Visit, request: &Request) -> Result<Response, Refusal> {
    Ok(pages::html(200, &page(db, visit, request)?))
}

/// `POST /keys`.
pub fn create(db: &mut Client, call: &Call, visit: &Visit) -> Result<Response, Refusal> {
    let caller = visit.caller()?;
    let mut page = page(db, visit, call.request)?;
    let Some(name) = page.name.parse(&call.form, KeyName::parse) else {
        return Ok(pages::html(422, &page));
    };
    let prefix = &call.app.config.prefix;
    let created = ops::keys::create_key(db, &caller, name.as_ref(), prefix)?;
    page.secret = Some(created.secret);
    page.keys = ops::keys::list_keys(db, &caller)?;
    Ok(pages::html(200, &page))
}

/// `POST /keys/{id}/revoke`.
pub fn revoke(db: &mut Client, visit: &Visit, id: &KeyId) -> Result<Response, Refusal> {
    ops::keys::revoke_key(db, &visit.caller()?, id)?;
    Ok(pages::redirect("/keys?notice=key-revoked"))
}

/// `GET /keys/{id}/delete`: a revoked key only (a live one is refused as the delete would be).
pub fn confirm_delete(db: &mut Client, visit: &Visit, id: &KeyId) -> Result<Response, Refusal> {
    let key = ops::keys::list_keys(db, &visit.caller()?)?
        .into_iter()
        .find(|k| k.id == *id)
        .ok_or(ApiError::NotFound)?;
    if !key.is_revoked() {
        return Err(ApiError::validation("id", "this key is live: revoke it first").into());
    }
    let page = Confirm {
        nav: Some(visit.nav()),
        title: format!(
            "Delete the revoked key {} ({}…)",
            key.name.as_deref().unwrap_or("without a name"),
            key.prefix
        ),
        goes: vec![
            "It leaves the list for good; the audit log keeps what was done with it.".into(),
        ],
        action: format!("/keys/{id}/delete"),
        button: "Delete the key",
        back: "/keys".into(),
    };
    Ok(pages::html(200, &page))
}

/// `POST /keys/{id}/delete`: a live key is refused, to be revoked first.
pub fn delete(db: &mut Client, visit: &Visit, id: &KeyId) -> Result<Response, Refusal> {
    ops::keys::delete_revoked_key(db, Scope::Org(&visit.caller()?), id)?;
    Ok(pages::redirect("/keys?notice=key-deleted"))
}
