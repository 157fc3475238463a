//! What the console shows: one askama template per page (`templates/console/`), compiled and
//! checked with the binary, HTML escaping on by default; and the answers that carry them.

use super::inputs::Input;
use super::notice::Notice;
use super::refusal::PageRefusal;
use super::session::Visit;
use crate::db::people::{Member, OrgAccess, PendingInvitation};
use crate::db::sessions::SessionListed;
use crate::error::{ApiError, RETRY_AFTER_SECONDS, UNAVAILABLE_RETRY_AFTER_SECONDS};
use crate::http::Response;
use crate::ids::PersonId;
use crate::ops::once::{Made, SHOWN_ALREADY};
use crate::password::Caller;
use askama::Template;
use jiff::tz::TimeZone;

const STYLESHEET: &str = include_str!("../../templates/console/console.css");
const SCRIPT: &str = include_str!("../../templates/console/console.js");
const PROOF_WORKER: &str = include_str!("../../templates/console/proof-worker.js");

/// A form that makes a secret (a token, a key, an invitation): the one-time value it carries,
/// and on the answer to its `POST` the secret made, shown this once, or the word that the form
/// was sent already and made nothing.
#[derive(Debug, Clone, Default)]
pub struct Creating {
    pub once: String,
    pub secret: Option<String>,
    pub shown_already: Option<&'static str>,
}

impl Creating {
    pub fn new(once: String) -> Creating {
        Creating {
            once,
            ..Creating::default()
        }
    }

    /// Shows what the post made; the answer's status (`409` for a form sent again).
    pub fn made(&mut self, made: Made<String>) -> u16 {
        match made {
            Made::New(secret) => {
                self.secret = Some(secret);
                200
            }
            Made::ShownAlready => {
                self.shown_already = Some(SHOWN_ALREADY);
                409
            }
        }
    }
}

/// What the base template renders around every page: the header of a signed-in person (with
/// the form token every form of theirs carries), and the notice of the write that led here.
/// A handler gets it whole from its context (`ctx.layout()`), into its page's `layout` field.
#[derive(Debug, Clone, Default)]
pub struct Layout {
    pub nav: Option<Nav>,
    pub notice: Option<Notice>,
    /// What the write was about, by name, where the page found it (`redirect_about`).
    pub about: Option<String>,
    /// The time zone the page shows times in, the person's; `None`: UTC.
    pub zone: Option<TimeZone>,
}

impl Layout {
    pub fn of(visit: Option<&Visit>, notice: Option<Notice>) -> Layout {
        let zone = visit.and_then(|visit| visit.session.time_zone.as_deref());
        Layout {
            nav: visit.map(Nav::of),
            notice,
            about: None,
            zone: zone.and_then(time_zone),
        }
    }

    /// The same page, its times in UTC whatever the person chose: the reports', whose windows
    /// and days are UTC's.
    pub fn in_utc(self) -> Layout {
        Layout { zone: None, ..self }
    }

    /// A moment in the page's time zone ([`when`]).
    pub fn when(&self, at: &str) -> String {
        match &self.zone {
            Some(zone) => when(at, zone),
            None => when(at, &TimeZone::UTC),
        }
    }

    /// Whether the page shows the forms that change the organisation (`Nav::writes`).
    pub fn writes(&self) -> bool {
        self.nav.as_ref().is_some_and(|nav| nav.writes)
    }

    /// Whether the page shows the owners' forms and links.
    pub fn owner(&self) -> bool {
        self.nav.as_ref().is_some_and(|nav| nav.owner)
    }

    /// The notice's sentence, naming what it is about when the page knows it.
    pub fn notice_sentence(&self) -> Option<String> {
        let about = self.about.as_deref();
        self.notice.map(|notice| notice.sentence_about(about))
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
    /// A member or an owner: the page shows its forms that change the organisation (a
    /// viewer's would be refused).
    pub writes: bool,
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
            writes: visit.writes(),
            csrf: visit.form_token.clone(),
        }
    }
}

#[derive(Template)]
#[template(path = "console/sign_in.html")]
pub struct SignIn {
    pub layout: Layout,
    pub email: Input,
    pub password: Input,
    /// The console's page to go to once signed in (`sign_in::return_path`); empty: home.
    pub next: String,
    /// Mail is set up: the page offers "Forgot your password?".
    pub mail: bool,
    /// The proof of work this browser must send with its sign-in, in a flood.
    pub proof: Option<ProofAsked>,
}

/// A proof of work the sign-in page asks for (`console::unknown_browser`): the challenge the
/// page's script solves, and why the proof sent was refused, if it was.
#[derive(Debug, Clone)]
pub struct ProofAsked {
    pub challenge: String,
    pub refused: Option<&'static str>,
}

impl SignIn {
    pub fn empty(layout: Layout) -> SignIn {
        SignIn {
            layout,
            email: Input::line("email", "Email", "email").autocomplete("username"),
            password: Input::line("password", "Password", "password")
                .autocomplete("current-password"),
            next: String::new(),
            mail: false,
            proof: None,
        }
    }
}

/// "Forgot your password?": the email to mail a link to, or (without mail) whom to ask.
#[derive(Template)]
#[template(path = "console/forgot_password.html")]
pub struct ForgotPassword {
    pub layout: Layout,
    pub email: Input,
    pub mail: bool,
    /// The request was taken: the same words whether the email is known or not.
    pub sent: bool,
}

pub fn sign_in(status: u16, page: SignIn) -> Response {
    html(status, &page)
}

#[derive(Template)]
#[template(path = "console/members.html")]
pub struct MembersPage {
    pub layout: Layout,
    /// The person looking may change the members (the forms are shown to owners only).
    pub owner: bool,
    /// The person looking: their own row says so.
    pub me: PersonId,
    /// The organisation's only owner, whose removal is not offered (it would be refused).
    pub last_owner: Option<PersonId>,
    pub members: Vec<Member>,
    pub invitations: Vec<PendingInvitation>,
    /// The invite form's inputs.
    pub email: Input,
    pub role: Input,
    /// The invite form's one-time value; an invitation's link, on the answer that made it only.
    pub creating: Creating,
    /// The invitation was also mailed to its person (`AGENTCARD_SMTP_URL` set).
    pub mailed: bool,
}

#[derive(Template)]
#[template(path = "console/link.html")]
pub struct LinkPage {
    pub layout: Layout,
    pub intro: String,
    /// The email of the account whose password is set (read-only, for password managers).
    pub email: Option<String>,
    /// Where the form posts: the link itself.
    pub action: String,
    pub button: &'static str,
    /// The new password's field; `None`: the link only asks to join.
    pub password: Option<Input>,
    /// The form is offered (not to someone who must sign in as the invitee first).
    pub offer: bool,
    /// The session's form token, when the invitee signed in joins.
    pub csrf: Option<String>,
    /// Why no form is offered, and where to sign in (back to the link after).
    pub note: Option<String>,
    pub sign_in: Option<String>,
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
#[template(path = "console/time_zone.html")]
pub struct TimeZonePage {
    pub layout: Layout,
    /// The moment the page was made (RFC 3339), shown in the person's time zone.
    pub now: String,
    pub zone: Input,
}

#[derive(Template)]
#[template(path = "console/password.html")]
pub struct PasswordPage {
    pub layout: Layout,
    pub current: Input,
    pub new: Input,
}

#[derive(Template)]
#[template(path = "console/error.html")]
struct ErrorPage {
    layout: Layout,
    status: u16,
    title: &'static str,
    message: String,
    next_href: &'static str,
    next_label: &'static str,
}

/// The page of a refusal, with its status (and `Allow`, `Retry-After` where they belong); to a
/// signed-in person, with the header of their pages.
pub fn refusal(refusal: &PageRefusal, visit: Option<&Visit>) -> Response {
    let (status, message) = match refusal {
        PageRefusal::Api(ApiError::RateLimited) => (
            429,
            "Too many failed attempts came from your address, or for this email, in the last \
             minute: nothing was done. Wait a minute, then try again."
                .into(),
        ),
        PageRefusal::Api(ApiError::NotFound) => (
            404,
            "There is no such page, or it is not open to you: check the address, or start again \
             from the console."
                .into(),
        ),
        PageRefusal::Api(error) => (error.status(), error.message()),
        PageRefusal::BadRequest(message) => (400, message.to_string()),
        PageRefusal::Forbidden(message) => (403, message.to_string()),
        PageRefusal::Gone(message) => (410, message.to_string()),
        PageRefusal::Busy => (
            503,
            "The console is busy at this moment: nothing was done. Try again in a few seconds."
                .into(),
        ),
        PageRefusal::Hashes(Caller::Unknown | Caller::Proven) => (
            429,
            "Many sign-ins are coming from browsers new to their person at this moment: nothing \
             was done. Open the sign-in page again and sign in: this browser will first do a few \
             seconds of work. A browser you signed in from before is not held up."
                .into(),
        ),
        PageRefusal::Hashes(Caller::Known) => (
            429,
            "Many passwords are being checked at this moment: nothing was done. Wait a minute, \
             then do it again."
                .into(),
        ),
        PageRefusal::UnknownBrowsers => (
            429,
            "Too many sign-ins from browsers new to their person came for this email, or from \
             your network, in the last minute: nothing was done. Wait a minute, then sign in \
             again. A browser you signed in from before is not held up: sign in there if you can."
                .into(),
        ),
    };
    let page = ErrorPage {
        layout: Layout::of(visit, None),
        status,
        title: error_title(status),
        message,
        next_href: "/",
        next_label: "Back to the console",
    };
    let response = html(status, &page);
    match refusal {
        PageRefusal::Api(ApiError::MethodNotAllowed { allow }) => {
            response.header("Allow", allow.clone())
        }
        PageRefusal::Api(ApiError::RateLimited)
        | PageRefusal::Busy
        | PageRefusal::Hashes(_)
        | PageRefusal::UnknownBrowsers => {
            response.header("Retry-After", RETRY_AFTER_SECONDS.to_string())
        }
        PageRefusal::Api(ApiError::Unavailable(_)) => {
            response.header("Retry-After", UNAVAILABLE_RETRY_AFTER_SECONDS.to_string())
        }
        _ => response,
    }
}

/// What happened, in a refusal page's heading, by its status.
fn error_title(status: u16) -> &'static str {
    match status {
        400 => "Not understood",
        403 => "Not allowed",
        404 => "Not found",
        405 => "Not possible on this page",
        409 => "Not done: it conflicts with what is there",
        410 => "Link not valid",
        413 => "Too large",
        422 => "Not done: a value was refused",
        429 => "Too many attempts",
        503 => "Busy",
        500..=599 => "Something went wrong on our side",
        _ => "Not done",
    }
}

/// `303 See Other` to a page of the console: after a write, the browser reads the result
/// with a `GET` (post/redirect/get).
pub fn redirect(location: &str) -> Response {
    Response::new(303).header("Location", location.to_string())
}

/// The redirect after a write to a page that says `notice`.
pub fn redirect_with(location: &str, notice: Notice) -> Response {
    redirect(&format!("{location}?notice={}", notice.as_str()))
}

/// The redirect after a write about one object (a key, a token): its id rides in the query
/// (`about`), and the page names it from its own list, so a crafted link cannot make the page
/// say a name of its choosing.
pub fn redirect_about(location: &str, notice: Notice, about: &str) -> Response {
    redirect(&format!(
        "{location}?notice={}&about={about}",
        notice.as_str()
    ))
}

/// A moment as a person reads it in `zone`, `27 Nov 2026, 20:41 UTC` (`21:41 CET` in
/// Europe/Paris): every time a page shows, through `time.html` ([`Layout::when`]), which keeps
/// its exact value in `<time datetime>`. A text that is not a moment is shown as it is.
pub fn when(at: &str, zone: &TimeZone) -> String {
    match at.parse::<jiff::Timestamp>() {
        Ok(moment) => moment
            .to_zoned(zone.clone())
            .strftime("%-d %b %Y, %H:%M %Z")
            .to_string(),
        Err(_) => at.to_string(),
    }
}

/// The time zone of an IANA name (`Europe/Paris`, `UTC`), from the system's time zone database;
/// `None` for a name it does not know.
pub fn time_zone(name: &str) -> Option<TimeZone> {
    let plain = (name.bytes()).all(|b| b.is_ascii_alphanumeric() || b"/_-+".contains(&b));
    if !plain || name.is_empty() || name.len() > 64 {
        return None;
    }
    if name == "UTC" {
        return Some(TimeZone::UTC);
    }
    jiff::tz::db().get(name).ok()
}

/// The console's own files, served to anyone (they hold nothing of an organisation), at once
/// and without the database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asset {
    Stylesheet,
    /// The "Copy" buttons of a secret shown once (without it the secret is selectable text),
    /// and the sign-in's wait for its proof of work.
    Script,
    /// The Web Worker that solves the sign-in's proof of work.
    ProofWorker,
}

pub fn asset(asset: Asset) -> Response {
    let (content_type, text) = match asset {
        Asset::Stylesheet => ("text/css; charset=utf-8", STYLESHEET),
        Asset::Script => ("text/javascript; charset=utf-8", SCRIPT),
        Asset::ProofWorker => ("text/javascript; charset=utf-8", PROOF_WORKER),
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
