//! The console's page table, as `api::OPERATIONS` is `/v1`'s: each page a method, a path
//! pattern with typed captures (`/cards/{card}`, see `captures`), who may use it, and its
//! handler. `404` and `405` (with `Allow`) come from the table; so does the access rule, which
//! `console::serve` applies before any handler runs. A `GET` page answers `HEAD` too.
//!
//! A new page is one line here and a handler `fn(&mut PageContext) -> Answer` in the file of
//! its concern (`PublicContext` for a public page).

use super::captures::{self, Captures};
use super::context::{Answer, PageContext, PublicContext};
use super::pages::Asset;
use super::passkeys;
use super::refusal::PageRefusal;
use super::{account, audit, cards, keys, links, members, second_factor, sign_in, sites, tokens};
use super::{fragments, rules};
use super::{reports, why};
use crate::error::ApiError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// Reads (`GET` and `HEAD`): changes nothing.
    Get,
    /// Writes: from the console's own origin, with the session's form token.
    Post,
}

/// Who may use a page: anyone, or a signed-in person whose role in the organisation looked
/// at is at least the one named (support staff count as owners).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Anyone, signed in or not.
    Public,
    /// Every signed-in person: the organisation's pages a viewer reads, and the person's own
    /// account (a page that needs an organisation asks `ctx.caller()`).
    Viewer,
    /// A member or an owner: the pages that change the organisation's sites, cards and keys,
    /// and their forms.
    Member,
    /// An owner: members, tokens, a site's deletion, the organisation's security.
    Owner,
}

/// The handler of a public page, and of a signed-in person's page.
pub type PublicHandler = fn(&mut PublicContext) -> Answer;
pub type SignedInHandler = fn(&mut PageContext) -> Answer;

/// What answers a page.
#[derive(Clone, Copy)]
pub enum Handler {
    Public(PublicHandler),
    SignedIn(SignedInHandler),
    /// One of the console's own files, answered at once, without the database.
    File(Asset),
}

/// One page of the console. Made by [`public`], [`viewer`], [`member`], [`own`], [`owner`], [`file`] and
/// [`sign_in_attempt`], so that the access and the kind of handler always agree.
pub struct Page {
    pub method: Method,
    /// Literal segments and `{kind}` captures, as `captures::KINDS` names them.
    pub path: &'static str,
    pub access: Access,
    pub handler: Handler,
    /// A refusal of this page counts as a failed sign-in of the client address.
    pub counts_refusals: bool,
    /// Open to a person whose organisation requires a second factor they have not added: the
    /// pages that add one, and signing out.
    pub open_without_factor: bool,
    /// Its handler takes every value of its form through `inputs::Checked`, which shows a
    /// value that is not text (a NUL byte, bytes not UTF-8) next to its input on the same
    /// form; any other page refuses such a value before its handler runs.
    pub refuses_in_place: bool,
}

use Method::{Get, Post};

/// Every page of the console.
pub static PAGES: &[Page] = &[
    file("/console.css", Asset::Stylesheet),
    file("/console.js", Asset::Script),
    file("/proof-worker.js", Asset::ProofWorker),
    public(Get, "/sign-in", sign_in::form),
    sign_in_attempt(Post, "/sign-in", sign_in::sign_in).in_place(),
    public(Get, "/link/{link}", links::page),
    public(Post, "/link/{link}", links::use_link),
    // Issue 34 item 7: "forgot your password", counted as sign-ins.
    public(Get, "/forgot-password", sign_in::forgot_form),
    sign_in_attempt(Post, "/forgot-password", sign_in::forgot),
    // Issue 41 item 1: second factors.
    public(Get, "/sign-in/second-factor", second_factor::step_form),
    sign_in_attempt(Post, "/sign-in/second-factor", second_factor::give_factor),
    own(Get, "/second-factors", second_factor::page),
    own(Get, "/second-factors/app", second_factor::app_form),
    own(Post, "/second-factors/app", second_factor::add_app),
    own(
        Post,
        "/second-factors/app/remove",
        second_factor::remove_app,
    ),
    own(
        Post,
        "/second-factors/recovery-codes",
        second_factor::new_codes,
    ),
    sign_in_attempt(Post, "/sign-in/passkey/options", passkeys::sign_in_options),
    sign_in_attempt(Post, "/sign-in/passkey", passkeys::sign_in),
    own(
        Post,
        "/second-factors/passkey/options",
        passkeys::registration_options,
    ),
    own(Post, "/second-factors/passkey", passkeys::add),
    own(Post, "/second-factors/passkey/remove", passkeys::remove),
    owner(Get, "/org/security", second_factor::security),
    owner(Post, "/org/security", second_factor::save_security),
    viewer(Get, "/", account::home),
    own(Post, "/sign-out", sign_in::sign_out),
    viewer(Get, "/sessions", account::sessions),
    viewer(Post, "/sessions/end-others", account::end_others),
    viewer(Get, "/password", account::password_form),
    viewer(Post, "/password", account::change_password).in_place(),
    viewer(Get, "/time-zone", account::time_zone_form),
    viewer(Post, "/time-zone", account::set_time_zone),
    viewer(Post, "/org", account::choose_org),
    viewer(Get, "/members", members::list),
    owner(Post, "/members/invite", members::invite).in_place(),
    owner(Post, "/members/{person}/role", members::change_role),
    owner(Get, "/members/{person}/remove", members::confirm_remove),
    owner(Post, "/members/{person}/remove", members::remove),
    owner(
        Get,
        "/invitations/{invitation}/revoke",
        members::confirm_revoke_invitation,
    ),
    owner(
        Post,
        "/invitations/{invitation}/revoke",
        members::revoke_invitation,
    ),
    viewer(Get, "/cards", cards::list),
    member(Get, "/cards/new", cards::new),
    member(Post, "/cards/new", cards::create).in_place(),
    viewer(Get, "/cards/{card}", cards::show),
    member(Post, "/cards/{card}", cards::edit).in_place(),
    member(Post, "/cards/{card}/status", cards::set_status),
    member(Get, "/cards/{card}/delete", cards::confirm_delete),
    member(Post, "/cards/{card}/delete", cards::delete),
    viewer(Get, "/cards/{card}/eligibility", cards::eligibility),
    member(Post, "/cards/{card}/eligibility", cards::save_eligibility),
    owner(Get, "/tokens", tokens::list),
    owner(Post, "/tokens", tokens::create).in_place(),
    owner(Get, "/tokens/{token}/revoke", tokens::confirm_revoke),
    owner(Post, "/tokens/{token}/revoke", tokens::revoke),
    owner(Get, "/tokens/{token}/delete", tokens::confirm_delete),
    owner(Post, "/tokens/{token}/delete", tokens::delete),
    viewer(Get, "/keys", keys::list),
    member(Post, "/keys", keys::create).in_place(),
    member(Get, "/keys/{key}/revoke", keys::confirm_revoke),
    member(Post, "/keys/{key}/revoke", keys::revoke),
    member(Get, "/keys/{key}/delete", keys::confirm_delete),
    member(Post, "/keys/{key}/delete", keys::delete),
    // The publisher's numbers.
    viewer(Get, "/reports", reports::page),
    viewer(Get, "/reports.csv", reports::csv_file),
    viewer(Get, "/sites/{domain}/why", why::page),
    // The site map: sites, their fragments, default and rules.
    viewer(Get, "/sites", sites::list),
    member(Post, "/sites", sites::create).in_place(),
    viewer(Get, "/sites/{domain}", sites::site),
    member(Post, "/sites/{domain}", sites::rename).in_place(),
    viewer(Get, "/sites/{domain}/icon", sites::icon),
    member(Post, "/sites/{domain}/default", sites::set_default).in_place(),
    member(Post, "/sites/{domain}/default/clear", sites::clear_default),
    owner(Get, "/sites/{domain}/delete", sites::confirm_delete),
    owner(Post, "/sites/{domain}/delete", sites::delete),
    member(Post, "/sites/{domain}/fragments", fragments::create).in_place(),
    viewer(Get, "/fragments/{fragment}", fragments::show),
    member(Post, "/fragments/{fragment}", fragments::edit).in_place(),
    member(Post, "/fragments/{fragment}/status", fragments::set_status),
    member(
        Get,
        "/fragments/{fragment}/delete",
        fragments::confirm_delete,
    ),
    member(Post, "/fragments/{fragment}/delete", fragments::delete),
    member(Post, "/sites/{domain}/rules", rules::add).in_place(),
    viewer(Get, "/sites/{domain}/rules/{route}", rules::show),
    member(Post, "/sites/{domain}/rules/{route}", rules::edit).in_place(),
    member(Post, "/sites/{domain}/rules/{route}/delete", rules::delete),
    viewer(Get, "/audit", audit::page),
    // Issue 34 item 9: the audit log as CSV.
    viewer(Get, "/audit.csv", audit::csv),
];

const fn page(method: Method, path: &'static str, access: Access, handler: Handler) -> Page {
    Page {
        method,
        path,
        access,
        handler,
        counts_refusals: false,
        open_without_factor: false,
        refuses_in_place: false,
    }
}

impl Page {
    /// The same page, a value of its form that is not text refused on the form itself.
    const fn in_place(self) -> Page {
        Page {
            refuses_in_place: true,
            ..self
        }
    }
}

const fn public(method: Method, path: &'static str, handle: PublicHandler) -> Page {
    page(method, path, Access::Public, Handler::Public(handle))
}

const fn viewer(method: Method, path: &'static str, handle: SignedInHandler) -> Page {
    page(method, path, Access::Viewer, Handler::SignedIn(handle))
}

const fn member(method: Method, path: &'static str, handle: SignedInHandler) -> Page {
    page(method, path, Access::Member, Handler::SignedIn(handle))
}

/// A signed-in person's page about their own second factors (and signing out): open to
/// everyone signed in, also while their organisation requires a factor they lack.
const fn own(method: Method, path: &'static str, handle: SignedInHandler) -> Page {
    Page {
        open_without_factor: true,
        ..viewer(method, path, handle)
    }
}

const fn owner(method: Method, path: &'static str, handle: SignedInHandler) -> Page {
    page(method, path, Access::Owner, Handler::SignedIn(handle))
}

const fn file(path: &'static str, asset: Asset) -> Page {
    page(Get, path, Access::Public, Handler::File(asset))
}

/// A public page whose every refusal counts as a failed sign-in.
const fn sign_in_attempt(method: Method, path: &'static str, handle: PublicHandler) -> Page {
    Page {
        counts_refusals: true,
        ..public(method, path, handle)
    }
}

/// The page of `(method, path)` with its captures; `404` for a path no page has (or whose
/// capture names nothing), `405` with `Allow` for a path with other methods.
pub fn find(method: &str, path: &str) -> Result<(&'static Page, Captures), PageRefusal> {
    let segments: Vec<&str> = path.strip_prefix('/').unwrap_or(path).split('/').collect();
    let wanted = match method {
        "GET" | "HEAD" => Some(Get),
        "POST" => Some(Post),
        _ => None,
    };
    let mut allowed = Vec::new();
    for page in PAGES {
        let Some(captures) = matched(page.path, &segments) else {
            continue;
        };
        if Some(page.method) == wanted {
            return Ok((page, captures));
        }
        allowed.push(page.method);
    }
    let allow = match (allowed.contains(&Get), allowed.contains(&Post)) {
        (false, false) => return Err(ApiError::NotFound.into()),
        (true, true) => "GET, HEAD, POST",
        (true, false) => "GET, HEAD",
        (false, true) => "POST",
    };
    Err(ApiError::MethodNotAllowed {
        allow: allow.into(),
    }
    .into())
}

fn matched(pattern: &str, segments: &[&str]) -> Option<Captures> {
    let parts: Vec<&str> = pattern
        .strip_prefix('/')
        .unwrap_or(pattern)
        .split('/')
        .collect();
    if parts.len() != segments.len() {
        return None;
    }
    let mut captures = Vec::new();
    for (part, segment) in parts.iter().zip(segments) {
        match part.strip_prefix('{').and_then(|p| p.strip_suffix('}')) {
            Some(kind) => captures.push(captures::parse(kind, segment)?),
            None if part == segment => {}
            None => return None,
        }
    }
    Some(Captures(captures))
}

/// A page of the table as a test walks it: its method, a path of valid form (each capture a
/// sample), and its access.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageSample {
    pub method: &'static str,
    /// The path pattern, as the table writes it (`/cards/{card}`).
    pub pattern: &'static str,
    pub path: String,
    pub access: Access,
}

/// Every page of the table, with a sample path each, so that tests cover a page added later.
pub fn page_table() -> Vec<PageSample> {
    PAGES
        .iter()
        .map(|page| PageSample {
            method: match page.method {
                Get => "GET",
                Post => "POST",
            },
            pattern: page.path,
            path: sample_path(page.path),
            access: page.access,
        })
        .collect()
}

fn sample_path(pattern: &str) -> String {
    pattern
        .split('/')
        .map(|part| {
            part.strip_prefix('{')
                .and_then(|p| p.strip_suffix('}'))
                .and_then(captures::sample)
                .unwrap_or_else(|| part.to_string())
        })
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::CardId;

    fn status(method: &str, path: &str) -> Result<&'static str, u16> {
        find(method, path)
            .map(|(page, _)| page.path)
            .map_err(|refusal| match refusal {
                PageRefusal::Api(error) => error.status(),
                _ => 0,
            })
    }

    #[test]
    fn paths_and_methods() {
        assert_eq!(status("GET", "/"), Ok("/"));
        assert_eq!(status("HEAD", "/sign-in"), Ok("/sign-in"));
        assert_eq!(status("GET", "/sign-in/"), Err(404));
        assert_eq!(status("POST", "/sign-in"), Ok("/sign-in"));
        assert!(matches!(
            find("DELETE", "/sign-in"),
            Err(PageRefusal::Api(ApiError::MethodNotAllowed { allow })) if allow == "GET, HEAD, POST"
        ));
        assert!(matches!(
            find("GET", "/sign-out"),
            Err(PageRefusal::Api(ApiError::MethodNotAllowed { allow })) if allow == "POST"
        ));
        assert_eq!(status("POST", "/members/acc_0123456789/role"), Err(404));
        let (_, captures) = find("POST", "/invitations/12/revoke").unwrap();
        assert_eq!(captures.get::<captures::InvitationNumber>().unwrap().0, 12);
        for bad in ["012", "+1", "-1", "", "99999999999999999999"] {
            assert_eq!(
                status("POST", &format!("/invitations/{bad}/revoke")),
                Err(404)
            );
        }
        let card = CardId::generate();
        let (page, captures) = find("POST", &format!("/cards/{card}")).unwrap();
        assert_eq!(
            (page.path, captures.get::<CardId>().unwrap()),
            ("/cards/{card}", card)
        );
        assert_eq!(status("GET", "/cards/new"), Ok("/cards/new"));
        assert_eq!(status("GET", "/cards/nope"), Err(404));
        assert_eq!(status("GET", "/cards/"), Err(404));
        assert_eq!(
            status("GET", &format!("/cards/{}/status", CardId::generate())),
            Err(405)
        );
        assert_eq!(status("GET", "/link/"), Ok("/link/{link}"));
    }

    #[test]
    fn every_sample_path_finds_its_own_page() {
        for page in PAGES {
            let sample = sample_path(page.path);
            assert!(
                !sample.contains('{'),
                "{}: a capture kind no KINDS has",
                page.path
            );
            let method = if page.method == Get { "GET" } else { "POST" };
            let (found, _) = find(method, &sample).unwrap_or_else(|_| panic!("{sample}"));
            assert!(
                std::ptr::eq(found, page),
                "{method} {sample} finds {}",
                found.path
            );
        }
    }
}
