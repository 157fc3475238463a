//! The templates of the console's pages whose handlers live in several files (sign-in, members,
//! one-time links, home, sessions, time zone, password): one askama template per page
//! (`templates/console/`), compiled and checked with the binary, HTML escaping on by default.

use super::answers::html;
use super::inputs::{Input, Inputs};
use super::layout::{Creating, Layout};
use crate::db::people::{Member, OrgAccess, PendingInvitation};
use crate::db::sessions::SessionListed;
use crate::http::Response;
use crate::ids::PersonId;
use askama::Template;

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
    /// The invite form (`members::InviteForm`) and a refusal no input names.
    pub invite: Inputs,
    pub alert: Option<String>,
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
    /// The organisation has no site yet, or its edge has sent no request.
    pub first_steps: bool,
    /// The first site's "Connect an edge" page.
    pub connect: Option<String>,
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
