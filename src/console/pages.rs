//! What the console shows: one askama template per page (`templates/console/`), compiled and
//! checked with the binary, HTML escaping on by default; and the answers that carry them.

use super::form::Form;
use super::routes::Asset;
use super::Refusal;
use crate::db::people::{Member, OrgAccess, PendingInvitation};
use crate::db::sessions::SessionListed;
use crate::domain::Invalid;
use crate::error::{ApiError, RETRY_AFTER_SECONDS};
use crate::http::{Request, Response};
use crate::ids::PersonId;
use askama::Template;

const STYLESHEET: &str = include_str!("../../templates/console/console.css");
const COPY_SCRIPT: &str = include_str!("../../templates/console/console.js");

/// A form field: its label, its value as sent back, and the refusal shown next to it.
#[derive(Debug, Clone)]
pub struct Field {
    pub name: &'static str,
    pub label: &'static str,
    /// The input's `type`.
    pub kind: &'static str,
    pub autocomplete: &'static str,
    pub value: String,
    pub error: Option<String>,
}

impl Field {
    pub fn new(name: &'static str, label: &'static str, kind: &'static str) -> Field {
        Field {
            name,
            label,
            kind,
            autocomplete: "off",
            value: String::new(),
            error: None,
        }
    }

    pub fn autocomplete(mut self, autocomplete: &'static str) -> Field {
        self.autocomplete = autocomplete;
        self
    }

    /// The form's value of this field, parsed; `None` when refused, the field then showing the
    /// refusal next to the value as sent.
    pub fn parse<T>(
        &mut self,
        form: &Form,
        parse: impl FnOnce(&str) -> Result<T, Invalid>,
    ) -> Option<T> {
        let sent = form.get(self.name);
        match parse(sent) {
            Ok(parsed) => Some(parsed),
            Err(invalid) => {
                self.value = sent.to_string();
                self.error = Some(invalid.message);
                None
            }
        }
    }
}

/// A refusal a form shows next to one of its fields, as `(field, message)`; any other is the
/// refusal of the whole request.
pub fn field_refusal(error: ApiError) -> Result<(String, String), Refusal> {
    match error {
        ApiError::Validation { field, message } | ApiError::Conflict { field, message } => {
            Ok((field, message))
        }
        other => Err(other.into()),
    }
}

/// What every page of a signed-in person shows in its header.
#[derive(Debug, Clone)]
pub struct Nav {
    pub email: String,
    pub support: bool,
    pub org_id: String,
    pub org_name: String,
    pub orgs: Vec<OrgAccess>,
    pub owner: bool,
    /// The form token of the session, for the header's forms.
    pub csrf: String,
}

#[derive(Template)]
#[template(path = "console/sign_in.html")]
pub struct SignIn {
    pub nav: Option<Nav>,
    pub email: Field,
    pub password: Field,
    pub notice: Option<String>,
}

impl SignIn {
    pub fn empty() -> SignIn {
        SignIn {
            nav: None,
            email: Field::new("email", "Email", "email").autocomplete("username"),
            password: Field::new("password", "Password", "password")
                .autocomplete("current-password"),
            notice: None,
        }
    }
}

pub fn sign_in(status: u16, page: SignIn) -> Response {
    html(status, &page)
}

/// What a page says after the write that led to it (post/redirect/get): the redirect names the
/// notice by a key, never with text of its own.
pub fn notice(request: &Request) -> Option<&'static str> {
    let key = url::form_urlencoded::parse(request.query()?.as_bytes())
        .find(|(name, _)| name == "notice")?
        .1;
    NOTICES
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, text)| *text)
}

const NOTICES: &[(&str, &str)] = &[
    (
        "password-changed",
        "Your password was changed. Every other session has ended.",
    ),
    ("others-ended", "Your other sessions have ended."),
    ("password-set", "Your password is set: you are signed in."),
    (
        "joined",
        "You have joined the organisation: sign in with your password.",
    ),
    ("removed", "The member was removed."),
    ("role-changed", "The member's role was changed."),
    (
        "token-revoked",
        "The token was revoked: it is refused from now on.",
    ),
    ("token-deleted", "The token was deleted."),
    (
        "key-revoked",
        "The key was revoked: it is refused from now on.",
    ),
    ("key-deleted", "The key was deleted."),
    (
        "site-deleted",
        "The site was deleted, with everything in it.",
    ),
    (
        "fragment-deleted",
        "The fragment was deleted, with its rules and eligibility entries.",
    ),
    (
        "invitation-revoked",
        "The invitation was revoked: its link no longer works.",
    ),
    ("card-saved", "The card was saved."),
    (
        "card-active",
        "The card is active: it may be shown where it is eligible.",
    ),
    (
        "card-archived",
        "The card is archived: it is no longer shown.",
    ),
    (
        "card-draft",
        "The card is a draft again: it is no longer shown.",
    ),
    (
        "card-deleted",
        "The card was deleted, with its eligibility.",
    ),
    ("eligibility-saved", "The card's eligibility was saved."),
];

#[derive(Template)]
#[template(path = "console/members.html")]
pub struct MembersPage {
    pub nav: Option<Nav>,
    pub notice: Option<&'static str>,
    /// The person looking: their own row says so.
    pub me: PersonId,
    pub members: Vec<Member>,
    pub invitations: Vec<PendingInvitation>,
    /// The invite form's email field, and the refusal of its role.
    pub email: Field,
    pub role_error: Option<String>,
    /// An invitation's link, on the answer that made it only.
    pub new_link: Option<String>,
}

#[derive(Template)]
#[template(path = "console/link.html")]
pub struct LinkPage {
    pub nav: Option<Nav>,
    pub intro: String,
    /// Where the form posts: the link itself.
    pub action: String,
    pub button: &'static str,
    /// The new password's field; `None`: the link only asks to join.
    pub password: Option<Field>,
}

#[derive(Template)]
#[template(path = "console/home.html")]
pub struct Home {
    pub nav: Option<Nav>,
    pub notice: Option<&'static str>,
    pub org: Option<OrgAccess>,
}

#[derive(Template)]
#[template(path = "console/sessions.html")]
pub struct SessionsPage {
    pub nav: Option<Nav>,
    pub notice: Option<&'static str>,
    /// The session of this request.
    pub current: i64,
    pub sessions: Vec<SessionListed>,
}

#[derive(Template)]
#[template(path = "console/password.html")]
pub struct PasswordPage {
    pub nav: Option<Nav>,
    pub current: Field,
    pub new: Field,
}

#[derive(Template)]
#[template(path = "console/error.html")]
struct ErrorPage {
    nav: Option<Nav>,
    title: &'static str,
    message: String,
    next_href: &'static str,
    next_label: &'static str,
}

/// The page of a refusal, with its status (and `Allow`, `Retry-After` where they belong).
pub fn refusal(refusal: &Refusal) -> Response {
    refusal_in(refusal, None)
}

/// The page of a refusal to a signed-in person: with the header of their pages.
pub fn refusal_in(refusal: &Refusal, nav: Option<Nav>) -> Response {
    let (status, title, message) = match refusal {
        Refusal::Api(error) => (error.status(), "Not done", error.message()),
        Refusal::BadRequest(message) => (400, "Not done", message.to_string()),
        Refusal::Forbidden(message) => (403, "Not allowed", message.to_string()),
        Refusal::Gone(message) => (410, "Link not valid", message.to_string()),
        Refusal::Busy => (
            503,
            "Busy",
            "The console is busy at this moment: nothing was done. Try again in a few seconds."
                .into(),
        ),
    };
    let page = ErrorPage {
        nav,
        title,
        message,
        next_href: "/",
        next_label: "Back to the console",
    };
    let response = html(status, &page);
    match refusal {
        Refusal::Api(ApiError::MethodNotAllowed { allow }) => {
            response.header("Allow", allow.clone())
        }
        Refusal::Api(ApiError::RateLimited) | Refusal::Busy => {
            response.header("Retry-After", RETRY_AFTER_SECONDS.to_string())
        }
        _ => response,
    }
}

/// `303 See Other` to a page of the console: after a write, the browser reads the result
/// with a `GET` (post/redirect/get).
pub fn redirect(location: &str) -> Response {
    Response::new(303).header("Location", location.to_string())
}

pub fn asset(asset: Asset) -> Response {
    let (content_type, text) = match asset {
        Asset::Stylesheet => ("text/css; charset=utf-8", STYLESHEET),
        Asset::CopyScript => ("text/javascript; charset=utf-8", COPY_SCRIPT),
    };
    Response::new(200)
        .header("Content-Type", content_type)
        .body(text.as_bytes().to_vec())
}

pub fn html(status: u16, page: &impl Template) -> Response {
    match page.render() {
        Ok(body) => Response::new(status)
            .header("Content-Type", "text/html; charset=utf-8")
            .body(body.into_bytes()),
        Err(error) => {
            log::error!("console page not rendered: {error}");
            Response::new(500)
                .header("Content-Type", "text/plain; charset=utf-8")
                .body(b"internal error\n".to_vec())
        }
    }
}
