//! The console's page table, as `api::OPERATIONS` is `/v1`'s: each page a method, a path
//! pattern with typed captures (`/cards/{card}`, see `captures`), who may use it, and its
//! handler. `404` and `405` (with `Allow`) come from the table; so does the access rule, which
//! `console::serve` applies before any handler runs. A `GET` page answers `HEAD` too.
//!
//! A new page is one line here and a handler `fn(&mut PageContext) -> Answer` in the file of
//! its concern: `PageContext` on a page of the organisation looked at (its `caller` checked
//! here), `PersonContext` on a person's own page, `PublicContext` on a public page.

use super::assets::Asset;
use super::captures::{self, Captures};
use super::context::{Answer, PageContext, PersonContext, PublicContext};
use super::passkeys;
use super::refusal::PageRefusal;
use super::{
    account, audit, cards, keys, members, one_time_links, second_factor, sign_in, sites, tokens,
};
use super::{alerts, connect, reports, why};
use super::{fragments, report_mail, rules};
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
    /// Every signed-in person: the organisation's pages a viewer reads (refused to a person
    /// in no organisation), and the person's own account.
    Viewer,
    /// A member or an owner: the pages that change the organisation's sites, cards and keys,
    /// and their forms.
    Member,
    /// An owner: members, tokens, a site's deletion, the organisation's security.
    Owner,
}

/// The handler of a public page, of a signed-in person's own page, and of a page of the
/// organisation looked at.
pub type PublicHandler = fn(&mut PublicContext) -> Answer;
pub type PersonHandler = fn(&mut PersonContext) -> Answer;
pub type OrgHandler = fn(&mut PageContext) -> Answer;

/// What answers a page.
#[derive(Clone, Copy)]
pub enum Handler {
    Public(PublicHandler),
    SignedIn(SignedIn),
    /// One of the console's own files, answered at once, without the database.
    File(Asset),
}

/// The handler of a signed-in person's page.
#[derive(Clone, Copy)]
pub enum SignedIn {
    /// Their own page: their account, their second factors.
    Person(PersonHandler),
    /// A page of the organisation looked at: the table gives it the caller, and refuses a
    /// person who has no organisation.
    Org(OrgHandler),
}

/// One page of the console. Made by [`public`], [`person`], [`own`], [`viewer`], [`member`],
/// [`owner`], [`file`] and [`sign_in_attempt`], so that the access and the kind of handler
/// always agree.
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
    /// A write whose authority is the signed token in its path alone (a report mail's
    /// one-click unsubscribe, RFC 8058): taken from any origin, its body not read.
    pub one_click: bool,
}

/// How a row of [`PAGES`] is sent: a read, or a write whose values that are not text are
/// refused before its handler runs, or on its form itself ([`Page::refuses_in_place`]).
#[derive(Clone, Copy)]
enum Sent {
    Get,
    Post,
    PostInPlace,
}

use Sent::{Get, Post, PostInPlace};

/// Every page of the console, one a line, by concern.
#[rustfmt::skip]
pub static PAGES: &[Page] = &[
    // The console's own files.
    file("/console.css", Asset::Stylesheet),
    file("/console.js", Asset::Script),
    file("/proof-worker.js", Asset::ProofWorker),
    // Signing in, the one-time links (invitations, new passwords) and "forgot your password".
    public(Get, "/sign-in", sign_in::form),
    sign_in_attempt(PostInPlace, "/sign-in", sign_in::sign_in),
    public(Get, "/link/{link}", one_time_links::page),
    public(Post, "/link/{link}", one_time_links::use_link),
    public(Get, "/forgot-password", sign_in::forgot_form),
    sign_in_attempt(Post, "/forgot-password", sign_in::forgot),
    // Second factors: the sign-in's step (a code or a passkey), a person's own factors (an
    // app, recovery codes, passkeys), the organisation's rule.
    public(Get, "/sign-in/second-factor", second_factor::step_form),
    sign_in_attempt(Post, "/sign-in/second-factor", second_factor::give_factor),
    own(Get, "/second-factors", second_factor::page),
    own(Get, "/second-factors/app", second_factor::app_form),
    own(Post, "/second-factors/app", second_factor::add_app),
    own(Post, "/second-factors/app/remove", second_factor::remove_app),
    own(Post, "/second-factors/recovery-codes", second_factor::new_codes),
    sign_in_attempt(Post, "/sign-in/passkey/options", passkeys::sign_in_options),
    sign_in_attempt(Post, "/sign-in/passkey", passkeys::sign_in),
    own(Post, "/second-factors/passkey/options", passkeys::registration_options),
    own(Post, "/second-factors/passkey", passkeys::add),
    own(Post, "/second-factors/passkey/remove", passkeys::remove),
    owner(Get, "/org/security", second_factor::security),
    owner(Post, "/org/security", second_factor::save_security),
    // The person's home, signing out, their sessions, password and organisation looked at.
    person(Get, "/", account::home),
    own(Post, "/sign-out", sign_in::sign_out),
    person(Get, "/sessions", account::sessions),
    person(Post, "/sessions/end-others", account::end_others),
    person(Get, "/password", account::password_form),
    person(PostInPlace, "/password", account::change_password),
    person(Get, "/time-zone", account::time_zone_form),
    person(PostInPlace, "/time-zone", account::set_time_zone),
    person(Get, "/subscriptions", account::subscriptions),
    person(PostInPlace, "/subscriptions", account::subscribe),
    public(Get, "/unsubscribe/{unsubscribe}", report_mail::page),
    one_click("/unsubscribe/{unsubscribe}", report_mail::unsubscribe),
    person(Post, "/org", account::choose_org),
    // Members and invitations.
    viewer(Get, "/members", members::list),
    owner(PostInPlace, "/members/invite", members::invite),
    owner(Post, "/members/{person}/role", members::change_role),
    owner(Get, "/members/{person}/remove", members::confirm_remove),
    owner(Post, "/members/{person}/remove", members::remove),
    owner(Get, "/invitations/{invitation}/revoke", members::confirm_revoke_invitation),
    owner(Post, "/invitations/{invitation}/revoke", members::revoke_invitation),
    // Cards and their eligibility lists.
    viewer(Get, "/cards", cards::list),
    member(Get, "/cards/new", cards::new),
    member(PostInPlace, "/cards/new", cards::create),
    viewer(Get, "/cards/{card}", cards::show),
    member(PostInPlace, "/cards/{card}", cards::edit),
    member(Post, "/cards/{card}/status", cards::set_status),
    member(Get, "/cards/{card}/delete", cards::confirm_delete),
    member(Post, "/cards/{card}/delete", cards::delete),
    viewer(Get, "/cards/{card}/eligibility", cards::eligibility),
    member(Post, "/cards/{card}/eligibility", cards::save_eligibility),
    // The secrets: API tokens and delivery keys.
    owner(Get, "/tokens", tokens::list),
    owner(PostInPlace, "/tokens", tokens::create),
    owner(Get, "/tokens/{token}/revoke", tokens::confirm_revoke),
    owner(Post, "/tokens/{token}/revoke", tokens::revoke),
    owner(Get, "/tokens/{token}/delete", tokens::confirm_delete),
    owner(Post, "/tokens/{token}/delete", tokens::delete),
    viewer(Get, "/keys", keys::list),
    member(PostInPlace, "/keys", keys::create),
    member(Get, "/keys/{key}/revoke", keys::confirm_revoke),
    member(Post, "/keys/{key}/revoke", keys::revoke),
    member(Get, "/keys/{key}/delete", keys::confirm_delete),
    member(Post, "/keys/{key}/delete", keys::delete),
    // The publisher's numbers: reports, "why this card?", alerts (a person's own mail of them).
    viewer(Get, "/reports", reports::page),
    viewer(Get, "/reports.csv", reports::csv_file),
    viewer(Get, "/sites/{domain}/why", why::page),
    viewer(Get, "/alerts", alerts::list),
    owner(PostInPlace, "/alerts", alerts::save),
    viewer(Post, "/alerts/mail", alerts::mail),
    // Connecting an edge: the values, a key, the recipes (each a download), the live check.
    viewer(Get, "/sites/{domain}/connect", connect::page),
    member(PostInPlace, "/sites/{domain}/connect", connect::make_key),
    viewer(Get, "/sites/{domain}/connect/live", connect::live_check),
    viewer(Get, "/sites/{domain}/connect/{recipe}", connect::download),
    // The site map: sites, their fragments, default and rules.
    viewer(Get, "/sites", sites::list),
    member(PostInPlace, "/sites", sites::create),
    viewer(Get, "/sites/{domain}", sites::site),
    member(PostInPlace, "/sites/{domain}", sites::rename),
    viewer(Get, "/sites/{domain}/icon", sites::icon),
    member(PostInPlace, "/sites/{domain}/default", sites::set_default),
    member(Post, "/sites/{domain}/default/clear", sites::clear_default),
    owner(Get, "/sites/{domain}/delete", sites::confirm_delete),
    owner(Post, "/sites/{domain}/delete", sites::delete),
    member(PostInPlace, "/sites/{domain}/fragments", fragments::create),
    viewer(Get, "/fragments/{fragment}", fragments::show),
    member(PostInPlace, "/fragments/{fragment}", fragments::edit),
    member(Post, "/fragments/{fragment}/status", fragments::set_status),
    member(Get, "/fragments/{fragment}/delete", fragments::confirm_delete),
    member(Post, "/fragments/{fragment}/delete", fragments::delete),
    member(PostInPlace, "/sites/{domain}/rules", rules::add),
    viewer(Get, "/sites/{domain}/rules/{route}", rules::show),
    member(PostInPlace, "/sites/{domain}/rules/{route}", rules::edit),
    member(Get, "/sites/{domain}/rules/{route}/delete", rules::confirm_delete),
    member(Post, "/sites/{domain}/rules/{route}/delete", rules::delete),
    // The audit log, as a page and as CSV.
    viewer(Get, "/audit", audit::page),
    viewer(Get, "/audit.csv", audit::csv),
];

const fn page(sent: Sent, path: &'static str, access: Access, handler: Handler) -> Page {
    let (method, refuses_in_place) = match sent {
        Get => (Method::Get, false),
        Post => (Method::Post, false),
        PostInPlace => (Method::Post, true),
    };
    Page {
        method,
        path,
        access,
        handler,
        counts_refusals: false,
        open_without_factor: false,
        refuses_in_place,
        one_click: false,
    }
}

const fn public(sent: Sent, path: &'static str, handle: PublicHandler) -> Page {
    page(sent, path, Access::Public, Handler::Public(handle))
}

/// A signed-in person's own page (their account): open to everyone signed in, in an
/// organisation or not.
const fn person(sent: Sent, path: &'static str, handle: PersonHandler) -> Page {
    page(
        sent,
        path,
        Access::Viewer,
        Handler::SignedIn(SignedIn::Person(handle)),
    )
}

/// A signed-in person's page about their own second factors (and signing out): a [`person`]'s
/// page, also while their organisation requires a factor they lack.
const fn own(sent: Sent, path: &'static str, handle: PersonHandler) -> Page {
    Page {
        open_without_factor: true,
        ..person(sent, path, handle)
    }
}

const fn viewer(sent: Sent, path: &'static str, handle: OrgHandler) -> Page {
    in_org(sent, path, Access::Viewer, handle)
}

const fn member(sent: Sent, path: &'static str, handle: OrgHandler) -> Page {
    in_org(sent, path, Access::Member, handle)
}

const fn owner(sent: Sent, path: &'static str, handle: OrgHandler) -> Page {
    in_org(sent, path, Access::Owner, handle)
}

const fn in_org(sent: Sent, path: &'static str, access: Access, handle: OrgHandler) -> Page {
    page(sent, path, access, Handler::SignedIn(SignedIn::Org(handle)))
}

const fn file(path: &'static str, asset: Asset) -> Page {
    page(Get, path, Access::Public, Handler::File(asset))
}

/// A public write that a mail client sends from no page of ours (`Page::one_click`).
const fn one_click(path: &'static str, handle: PublicHandler) -> Page {
    Page {
        one_click: true,
        ..public(Post, path, handle)
    }
}

/// A public page whose every refusal counts as a failed sign-in.
const fn sign_in_attempt(sent: Sent, path: &'static str, handle: PublicHandler) -> Page {
    Page {
        counts_refusals: true,
        ..public(sent, path, handle)
    }
}

/// The page of `(method, path)` with its captures; `404` for a path no page has (or whose
/// capture names nothing), `405` with `Allow` for a path with other methods.
pub fn find(method: &str, path: &str) -> Result<(&'static Page, Captures), PageRefusal> {
    let segments: Vec<&str> = path.strip_prefix('/').unwrap_or(path).split('/').collect();
    let wanted = match method {
        "GET" | "HEAD" => Some(Method::Get),
        "POST" => Some(Method::Post),
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
    let allow = match (
        allowed.contains(&Method::Get),
        allowed.contains(&Method::Post),
    ) {
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
                Method::Get => "GET",
                Method::Post => "POST",
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
            let method = if page.method == Method::Get {
                "GET"
            } else {
                "POST"
            };
            let (found, _) = find(method, &sample).unwrap_or_else(|_| panic!("{sample}"));
            assert!(
                std::ptr::eq(found, page),
                "{method} {sample} finds {}",
                found.path
            );
        }
    }
}
