//! Who is signed in: the session cookie (a random secret of which only the SHA-256 is stored),
//! the session it names, the organisation being looked at, and the form token bound to the
//! session.

use super::refusal::PageRefusal;
use crate::app::App;
use crate::auth;
use crate::config::ConsoleUrl;
use crate::db::orgs::Org;
use crate::db::people::{OrgAccess, Person};
use crate::db::sessions::Session;
use crate::domain::Role;
use crate::http::Request;
use crate::ids::OrgId;
use crate::ops::{devices, members, second_factors, sessions, Actor, Caller};
use postgres::Client;
use sha2::{Digest, Sha256};

pub const COOKIE: &str = "agentcard_session";
/// 256 random bits, written as 64 lowercase hex characters.
const SECRET_BYTES: usize = 32;
/// The cookie outlives the browser's restart until the session's absolute end (30 days).
const COOKIE_MAX_AGE: u32 = 30 * 24 * 3600;
/// A User-Agent is kept to this many characters, to name a session on the sessions page.
const USER_AGENT_CHARS: usize = 200;

/// A session's secret, as the cookie carries it. Never logged: `Debug` hides it.
pub struct Secret(String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(…)")
    }
}

impl Secret {
    fn generate() -> Secret {
        Secret(auth::random_hex(SECRET_BYTES))
    }

    /// The cookie's value, if it has the form of a secret (anything else names no session).
    fn of(request: &Request) -> Option<Secret> {
        cookie_of(request, COOKIE)
            .filter(|value| auth::is_random_hex(value, SECRET_BYTES))
            .map(|value| Secret(value.to_string()))
    }

    fn hash(&self) -> [u8; 32] {
        auth::hash(&self.0)
    }

    /// Derived from the secret, so nothing more is stored, and useless without the cookie.
    fn form_token(&self) -> String {
        let mut digest = Sha256::new();
        digest.update(b"agentcard console form token\0");
        digest.update(self.0.as_bytes());
        hex::encode(digest.finalize())
    }
}

/// The value of the request's cookie `name`, if it sent one.
pub fn cookie_of<'a>(request: &'a Request, name: &str) -> Option<&'a str> {
    request
        .header_all("cookie")
        .flat_map(|header| header.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(named, _)| *named == name)
        .map(|(_, value)| value)
}

/// The console's own address. Configuration sets it whenever a console host is set, and only
/// requests to that host reach the console.
pub fn console_url(app: &App) -> &ConsoleUrl {
    (app.config.console_url.as_ref()).expect("a console host comes with its console URL")
}

/// The `Set-Cookie` of a new session: `HttpOnly`, `SameSite=Lax`, and `Secure` unless the
/// console is plain-HTTP `localhost`.
pub fn cookie(app: &App, secret: &Secret) -> String {
    cookie_with(console_url(app), &secret.0, COOKIE_MAX_AGE)
}

/// The `Set-Cookie` that removes the session cookie.
pub fn removed_cookie(app: &App) -> String {
    cookie_with(console_url(app), "", 0)
}

/// The `Set-Cookie` of a new device cookie (`ops::devices`): `HttpOnly`, `SameSite=Strict`
/// (it is only ever read by the sign-in's own `POST`), `Secure` as the session cookie.
pub fn device_cookie(app: &App, value: &str) -> String {
    let secure = secure(console_url(app));
    let (name, max_age) = (devices::COOKIE, devices::MAX_AGE);
    format!("{name}={value}; Path=/; Max-Age={max_age}; HttpOnly; SameSite=Strict{secure}")
}

/// The `Set-Cookie` of a sign-in waiting for its second factor (`ops::second_factors`):
/// `HttpOnly`, `SameSite=Strict`, `Secure` as the session cookie, for the few minutes it waits;
/// an empty value removes it.
pub fn pending_cookie(app: &App, value: &str) -> String {
    let secure = secure(console_url(app));
    let name = second_factors::PENDING_COOKIE;
    let max_age = match value.is_empty() {
        true => 0,
        false => second_factors::PENDING_MAX_AGE,
    };
    format!("{name}={value}; Path=/; Max-Age={max_age}; HttpOnly; SameSite=Strict{secure}")
}

fn cookie_with(url: &ConsoleUrl, value: &str, max_age: u32) -> String {
    let secure = secure(url);
    format!("{COOKIE}={value}; Path=/; Max-Age={max_age}; HttpOnly; SameSite=Lax{secure}")
}

fn secure(url: &ConsoleUrl) -> &'static str {
    if url.is_plain_http() {
        ""
    } else {
        "; Secure"
    }
}

/// Starts a session for `person` in this browser, looking at `org` (`None`: their first);
/// returns its secret for the cookie.
pub fn start(
    db: &mut Client,
    person: &Person,
    org: Option<&OrgId>,
    request: &Request,
) -> Result<Secret, PageRefusal> {
    let secret = Secret::generate();
    let user_agent: String = request
        .header("user-agent")
        .unwrap_or("")
        .chars()
        .filter(|c| !c.is_control())
        .take(USER_AGENT_CHARS)
        .collect();
    sessions::start(db, &secret.hash(), &person.id, org, &user_agent)?;
    Ok(secret)
}

/// A signed-in request: its session and the organisations open to its person.
pub struct Visit {
    pub session: Session,
    pub form_token: String,
    pub orgs: Vec<OrgAccess>,
    /// The organisation being looked at; `None` when none is open to the person.
    pub org: Option<OrgAccess>,
}

impl Visit {
    /// The visit of the request's session cookie; `None` without a live session.
    pub fn of(db: &mut Client, request: &Request) -> Result<Option<Visit>, PageRefusal> {
        let Some(secret) = Secret::of(request) else {
            return Ok(None);
        };
        let Some(session) = sessions::live(db, &secret.hash())? else {
            return Ok(None);
        };
        let orgs = members::orgs_open_to(db, &person_of(&session))?;
        let org = orgs
            .iter()
            .find(|o| Some(&o.org_id) == session.org_id.as_ref())
            .or(orgs.first())
            .cloned();
        Ok(Some(Visit {
            form_token: secret.form_token(),
            session,
            orgs,
            org,
        }))
    }

    /// The person of this session (without their password's hash).
    pub fn person(&self) -> Person {
        person_of(&self.session)
    }

    /// A person without a second factor in an organisation of theirs that requires one: they
    /// reach only the pages that add one (and sign out).
    pub fn lacks_required_factor(&self) -> bool {
        !self.session.second_factor
            && self
                .orgs
                .iter()
                .any(|o| o.role.is_some() && o.second_factor_required)
    }

    /// The refusal of a write without this session's form token.
    pub fn require_token(&self, sent: &str) -> Result<(), PageRefusal> {
        match self.token_matches(sent) {
            true => Ok(()),
            false => Err(PageRefusal::Forbidden(
                "this form is out of date or not from your session: reload the page and send \
                 it again (nothing was changed)",
            )),
        }
    }

    /// No early exit: the time taken does not tell how much of a guessed token was right.
    fn token_matches(&self, sent: &str) -> bool {
        let expected = self.form_token.as_bytes();
        sent.len() == expected.len()
            && sent
                .bytes()
                .zip(expected)
                .fold(0u8, |differ, (a, b)| differ | (a ^ b))
                == 0
    }

    /// The organisation being looked at, or a refusal for a person who has none.
    pub fn current_org(&self) -> Result<&OrgAccess, PageRefusal> {
        self.org.as_ref().ok_or(PageRefusal::Forbidden(
            "you belong to no organisation: ask an owner for an invitation",
        ))
    }

    /// The caller of the operations layer: this person, in the organisation being looked at
    /// (the audit log records the person's email).
    pub fn caller(&self) -> Result<Caller, PageRefusal> {
        let org = self.current_org()?;
        Ok(Caller {
            org: Org {
                id: org.org_id.clone(),
                name: org.name.clone(),
            },
            actor: Actor::Person {
                email: self.session.email.clone(),
            },
        })
    }

    /// The person's role in the organisation being looked at; support staff act as owners
    /// everywhere. `None` without an organisation.
    pub fn role(&self) -> Option<Role> {
        match self.session.support {
            true => Some(Role::Owner),
            false => self.org.as_ref().and_then(|o| o.role),
        }
    }

    /// Owners manage members and tokens, delete sites and set the organisation's security.
    pub fn is_owner(&self) -> bool {
        self.role() == Some(Role::Owner)
    }

    /// Members and owners change the organisation's sites, cards and keys; viewers read them.
    pub fn writes(&self) -> bool {
        self.role() >= Some(Role::Member)
    }

    /// The refusal of a page or action for a person whose role is below `least` (the page
    /// table's access).
    pub fn require(&self, least: Role) -> Result<(), PageRefusal> {
        self.current_org()?;
        match (self.role() >= Some(least), least) {
            (true, _) => Ok(()),
            (false, Role::Owner) => Err(PageRefusal::Forbidden(
                "this is for the organisation's owners only: ask an owner",
            )),
            (false, _) => Err(PageRefusal::Forbidden(
                "a viewer reads the organisation's pages but changes nothing: ask an owner \
                 to make you a member (nothing was changed)",
            )),
        }
    }
}

fn person_of(session: &Session) -> Person {
    Person {
        id: session.person.clone(),
        email: session.email.clone(),
        password_hash: None,
        support: session.support,
    }
}

/// Whether a write comes from the console's own pages: its `Origin` is the console's, or the
/// browser hides the origin and says `Sec-Fetch-Site: same-origin`. A request with neither is
/// refused: every browser the console supports sends one of them with a form's `POST`.
///
/// Under the console's `Referrer-Policy: no-referrer`, browsers send a form's `POST` with
/// `Origin: null` (the Fetch standard's origin serialisation), so `null` counts as hidden;
/// `Sec-Fetch-Site` is set by the browser alone, and a page of another site cannot make it
/// `same-origin`.
pub fn from_own_origin(app: &App, request: &Request) -> bool {
    let url = console_url(app);
    let origin = request.header("origin").map(str::trim);
    let fetch_site = request.header("sec-fetch-site").map(str::trim);
    let hidden = matches!(origin, None | Some("null"));
    origin == Some(url.origin()) || (hidden && fetch_site == Some("same-origin"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(cookies: &[&str]) -> Request {
        let mut request = Request::new("GET", "/", None, "127.0.0.1:1".parse().unwrap(), 64, 2);
        for cookie in cookies {
            request.push_header("Cookie", cookie);
        }
        request
    }

    #[test]
    fn the_cookie_is_read_by_name_and_form_only() {
        let secret = "ab".repeat(32);
        let found = |cookies: &[&str]| Secret::of(&request(cookies)).map(|s| s.0);
        assert_eq!(
            found(&[&format!("theme=dark; {COOKIE}={secret}")]),
            Some(secret.clone())
        );
        assert_eq!(
            found(&["a=1", &format!("{COOKIE}={secret}")]),
            Some(secret.clone())
        );
        assert_eq!(found(&[&format!("{COOKIE}={}", "AB".repeat(32))]), None);
        assert_eq!(found(&[&format!("{COOKIE}={}", &secret[1..])]), None);
        assert_eq!(found(&[&format!("x{COOKIE}={secret}")]), None);
        assert_eq!(found(&[]), None);
    }

    #[test]
    fn form_tokens_differ_per_session_and_hide_the_secret() {
        let (a, b) = (Secret::generate(), Secret::generate());
        assert_ne!(a.form_token(), b.form_token());
        assert_eq!(a.form_token().len(), 64);
        assert!(!a.form_token().contains(&a.0));
        assert_eq!(format!("{a:?}"), "Secret(…)");
    }
}
