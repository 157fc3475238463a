//! Delivery keys, for every member: the list, a new key (shown once, on the answer that made
//! it), revoke, and delete a revoked one after a confirmation. The writes are `ops::keys`'s;
//! the pages are `credentials`'.

use super::context::{Answer, PageContext};
use super::credentials::{self, credential_pages, Credential, Listing, Maker, Words};
use super::layout::Layout;
use super::notice::Notice;
use crate::db::keys::KeyRow;
use crate::domain::{Invalid, KeyName};
use crate::error::ApiError;
use crate::ids::KeyId;
use crate::ops::{self, Caller, Scope};
use askama::Template;
use postgres::{Client, Transaction};

#[derive(Template)]
#[template(path = "console/keys.html")]
pub struct KeysPage {
    pub layout: Layout,
    pub list: Listing<KeyRow>,
}

impl Credential for KeyRow {
    type Id = KeyId;
    type Name = Option<KeyName>;
    type Page = KeysPage;
    const WORDS: Words = Words {
        thing: "key",
        path: "/keys",
        revoke: "Revoke the key",
        revoke_goes: "Every page whose edge asks with this key gets no card from now on: make \
                      and deploy a new key first if it is in use.",
        revoked: Notice::KeyRevoked,
        delete_title: "Delete the revoked key",
        delete: "Delete the key",
        delete_goes: "It leaves the list for good; the audit log keeps what was done with it.",
        deleted: Notice::KeyDeleted,
        live_deletable: false,
        delivers: true,
    };

    fn page(layout: Layout, list: Listing<KeyRow>) -> KeysPage {
        KeysPage { layout, list }
    }

    fn list(db: &mut Client, caller: &Caller) -> Result<Vec<KeyRow>, ApiError> {
        ops::keys::list_keys(db, caller)
    }

    fn parse_name(sent: &str) -> Result<Option<KeyName>, Invalid> {
        KeyName::parse(sent)
    }

    fn create(
        tx: &mut Transaction,
        maker: &Maker,
        name: &Option<KeyName>,
    ) -> Result<String, ApiError> {
        let created = ops::keys::create_key(tx, maker.caller, name.as_ref(), maker.prefix)?;
        Ok(created.secret)
    }

    fn revoke(db: &mut Client, caller: &Caller, id: &KeyId) -> Result<(), ApiError> {
        ops::keys::revoke_key(db, caller, id).map(drop)
    }

    /// A live key is refused, to be revoked first.
    fn delete(db: &mut Client, caller: &Caller, id: &KeyId) -> Result<(), ApiError> {
        ops::keys::delete_revoked_key(db, Scope::Org(caller), id).map(drop)
    }

    fn id(&self) -> &KeyId {
        &self.id
    }

    fn label(&self) -> String {
        let name = self.name.as_deref().unwrap_or("without a name");
        format!("{name} ({}…)", self.prefix)
    }

    fn is_revoked(&self) -> bool {
        KeyRow::is_revoked(self)
    }
}

credential_pages!(KeyRow);
