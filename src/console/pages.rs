//! What the console shows: one askama template per page (`templates/console/`), compiled and
//! checked with the binary, HTML escaping on by default; and the answers that carry them.

use super::form::Form;
use super::notice::Notice;
use super::refusal::Refusal;
use super::session::Visit;
use crate::db::people::{Member, OrgAccess, PendingInvitation};
use crate::db::sessions::SessionListed;
use crate::domain::Invalid;
use crate::error::{ApiError, RETRY_AFTER_SECONDS};
use crate::http::Response;
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

/// What the base template renders around every page: the header of a signed-in person (with
/// the form token every form of theirs carries), and the notice of the write that led here.
/// A handler gets it whole from its context (`ctx.layout()`), into its page's `layout` field.
#[derive(Debug, Clone, Default)]
pub struct Layout {
    pub nav: Option<Nav>,
    pub notice: Option<Notice>,
}

impl Layout {
    pub fn of(visit: Option<&Visit>, notice: Option<Notice>) -> Layout {
        Layout {
            nav: visit.map(Nav::of),
            notice,
        }
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
    /// The form token of the session, for every form of the page.
    pub csrf: String,
}

impl Nav {
    fn of(visit: &Visit) -> Nav {
        let org = visit.org.as_ref();
        Nav {
            email: visit.session.email.clone(),
            support: visit.session.support,
            org_id: org.map_or(String::new(), |o| o.org_id.to_string()),
            org_name: org.map_or(String::new(), |o| o.name.clone()),
            orgs: visit.orgs.clone(),
            owner: visit.is_owner(),
            csrf: visit.form_token.clone(),
        }
    }
}

#[derive(Template)]
#[template(path = "console/sign_in.html")]
pub struct SignIn {
    pub layout: Layout,
    pub email: Field,
    pub password: Field,
}

impl SignIn {
    pub fn empty(layout: Layout) -> SignIn {
        SignIn {
            layout,
            email: Field::new("email", "Email", "email").autocomplete("username"),
            password: Field::new("password", "Password", "password")
                .autocomplete("current-password"),
        }
    }
}

pub fn sign_in(status: u16, page: SignIn) -> Response {
    html(status, &page)
}

#[derive(Template)]
#[template(path = "console/members.html")]
pub struct MembersPage {
    pub layout: Layout,
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
    pub layout: Layout,
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
    pub layout: Layout,
    pub org: Option<OrgAccess>,
    /// The organisation has no site yet.
    pub first_steps: bool,
    /// The organisation's last 24 hours.
    pub glance: Option<super::chart::Glance>,
}

#[derive(Template)]
#[template(path = "console/sessions.html")]
pub struct SessionsPage {
    pub layout: Layout,
    /// The session of this request.
    pub current: i64,
    pub sessions: Vec<SessionListed>,
}

#[derive(Template)]
#[template(path = "console/password.html")]
pub struct PasswordPage {
    pub layout: Layout,
    pub current: Field,
    pub new: Field,
}

#[derive(Template)]
#[template(path = "console/error.html")]
struct ErrorPage {
    layout: Layout,
    title: &'static str,
    message: String,
    next_href: &'static str,
    next_label: &'static str,
}

/// The page of a refusal, with its status (and `Allow`, `Retry-After` where they belong); to a
/// signed-in person, with the header of their pages.
pub fn refusal(refusal: &Refusal, visit: Option<&Visit>) -> Response {
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
        layout: Layout::of(visit, None),
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

/// The redirect after a write to a page that says `notice`.
pub fn redirect_with(location: &str, notice: Notice) -> Response {
    redirect(&format!("{location}?notice={}", notice.key()))
}

/// The console's own files, served to anyone (they hold nothing of an organisation), at once
/// and without the database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asset {
    Stylesheet,
    /// The "Copy" buttons of a secret shown once; without it the secret is selectable text.
    CopyScript,
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
