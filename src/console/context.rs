//! What a page's handler works with, made by the page table before it runs: the service, a
//! database connection, the request with its decoded form and query, the typed captures of
//! its path, and who is asking: a [`Visit`] on the pages of a signed-in person (the table has
//! checked the session, the form token of a `POST` and the access rule), `Option<Visit>` on
//! public pages; and on the pages of an organisation the [`Caller`] of `ops`, this person in
//! the organisation looked at (the table has refused a person who has none).

use super::captures::Captures;
use super::form::Form;
use super::layout::Layout;
use super::notice::Notice;
use super::refusal::PageRefusal;
use super::session::Visit;
use crate::app::App;
use crate::error::ApiError;
use crate::http::{Request, Response};
use crate::ops::{self, once::Made, Caller};
use postgres::{Client, Transaction};

/// The context of a page of the organisation looked at (`PersonContext`, `PublicContext`:
/// the other pages).
pub struct PageContext<'a, V = Visit, C = Caller> {
    pub app: &'a App,
    pub db: &'a mut Client,
    pub request: &'a Request,
    /// The body of a `POST` (empty for a `GET`).
    pub form: Form,
    pub query: Form,
    pub captures: Captures,
    pub visit: V,
    /// Who acts through `ops` on an organisation's page; `()` on the others.
    pub caller: C,
}

/// The context of a signed-in person's own page (their account, their second factors), which
/// needs no organisation.
pub type PersonContext<'a> = PageContext<'a, Visit, ()>;

/// The context of a public page (sign-in, one-time links): a visit if there is one.
pub type PublicContext<'a> = PageContext<'a, Option<Visit>, ()>;

/// What a handler answers: a page or a redirect, or a refusal the table renders.
pub type Answer = Result<Response, PageRefusal>;

impl<'a, V, C> PageContext<'a, V, C> {
    /// The notice the query names (after a write's redirect).
    fn notice(&self) -> Option<Notice> {
        Notice::named(self.query.get("notice"))
    }

    /// The same context with its visit made over and another caller: the table's steps from
    /// a public context once the session is known, and into an organisation's page once its
    /// caller is.
    pub(super) fn with<W, D>(self, visit: impl FnOnce(V) -> W, caller: D) -> PageContext<'a, W, D> {
        PageContext {
            app: self.app,
            db: self.db,
            request: self.request,
            form: self.form,
            query: self.query,
            captures: self.captures,
            visit: visit(self.visit),
            caller,
        }
    }
}

impl<V, C> PageContext<'_, V, C> {
    /// Runs a read that may lag (the reports, the audit log) on the replica, when one is set
    /// and answers (`App::replica`), else on the page's own connection to the primary.
    pub fn on_replica<T>(&mut self, read: impl FnOnce(&mut Client) -> T) -> T {
        match self.app.replica() {
            Some(mut replica) => read(&mut replica),
            None => read(self.db),
        }
    }
}

impl<C> PageContext<'_, Visit, C> {
    /// The layout of this person's pages, with the notice of the query.
    pub fn layout(&self) -> Layout {
        Layout::of(Some(&self.visit), self.notice())
    }

    /// A new one-time value for a form that makes a secret (its hidden field `once`).
    pub fn once(&mut self) -> Result<String, PageRefusal> {
        Ok(ops::once::issue(&mut *self.db, self.visit.session.id)?)
    }

    /// Runs `create` unless the form's one-time value was used already (`ops::once`).
    pub fn made_once<T>(
        &mut self,
        create: impl FnOnce(&mut Transaction) -> Result<T, ApiError>,
    ) -> Result<Made<T>, ApiError> {
        let (session, nonce) = (self.visit.session.id, self.form.get("once"));
        ops::once::made_once(&mut *self.db, session, nonce, create)
    }
}

impl PublicContext<'_> {
    /// The layout of a public page: no header, the notice of the query.
    pub fn layout(&self) -> Layout {
        Layout::of(None, self.notice())
    }
}
