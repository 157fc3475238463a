//! What the console's test modules share: a browser of the console (its session cookie, its
//! form token, posts from the console's origin), people and organisations to sign in with, and
//! the checks every console page gets.

use crate::harness::{db, server, Client, Resp, TestServer, CONSOLE_HOST};
use agentcard::db::{self, people};
use agentcard::domain::{
    DomainName, Email, FragmentName, FragmentRef, KeyValues, Lang, NewPassword, OrgName, Role,
};
use agentcard::ids::{self, FragmentId, OrgId, PersonId};
use agentcard::ops::{self, fragments::FragmentWrite, sites::SiteWrite, Caller};
use agentcard::password::{Passwords, Rates};
use std::sync::OnceLock;

/// The session cookie's name.
pub const COOKIE: &str = "agentcard_session";
/// The device cookie's name (a browser the person signed in from before).
pub const DEVICE_COOKIE: &str = "agentcard_device";

pub fn console() -> Client {
    Browser::new().client
}

/// Every console answer carries these, whatever its status.
pub fn assert_secured(resp: &Resp, what: &str) {
    let csp = resp.header("Content-Security-Policy").unwrap_or_default();
    for directive in [
        "default-src 'none'",
        "frame-ancestors 'none'",
        "style-src 'self'",
        "script-src 'self'",
        "connect-src 'self'",
    ] {
        assert!(
            csp.contains(directive),
            "{what}: CSP {csp:?} lacks {directive}"
        );
    }
    assert!(!csp.contains("unsafe-inline"), "{what}: {csp}");
    assert_eq!(resp.header("Cache-Control"), Some("no-store"), "{what}");
    assert_eq!(
        resp.header("Referrer-Policy"),
        Some("no-referrer"),
        "{what}"
    );
    assert_eq!(
        resp.header("X-Content-Type-Options"),
        Some("nosniff"),
        "{what}"
    );
}

/// Asserts a refusal page of the console: `status`, the heading said for it, and `sentence`
/// (as the page escapes it) as what went wrong; secured as every answer.
#[track_caller]
pub fn assert_refusal(resp: &Resp, status: u16, sentence: &str) {
    let heading = match status {
        403 => "Not allowed",
        404 => "Not found",
        409 => "Not done: it conflicts with what is there",
        410 => "Link not valid",
        422 => "Not done: a value was refused",
        429 => "Too many attempts",
        _ => panic!("no refusal page of the console is expected with {status}"),
    };
    let text = resp.text();
    assert_eq!(resp.status, status, "{text}");
    let said = format!("<h1>{heading}</h1>\n<p role=\"alert\">{sentence}</p>");
    assert!(text.contains(&said), "{said}: {text}");
    assert_secured(resp, sentence);
}

/// The console's origin on the tests' servers (made from their console host).
pub const ORIGIN: &str = "https://console.test";
pub const PASSWORD: &str = "correct horse battery";

/// A person with a password, member of `org` as `role` (none: no membership).
pub fn person(org: Option<&str>, role: Role) -> String {
    person_in(&mut db(), org, role)
}

/// [`person`] in the database of `db` (an [`own_server`](crate::harness::own_server)'s).
pub fn person_in(db: &mut postgres::Client, org: Option<&str>, role: Role) -> String {
    let email = format!("{}@example.org", ids::new_id("p_"));
    let id = with_password(db, email.clone(), false);
    if let Some(org) = org {
        people::add_membership(db, &org_id(org), &id, role).unwrap();
    }
    email
}

/// Support staff with a password, member of no organisation.
pub fn support_person() -> String {
    let email = format!("{}@support.example", ids::new_id("s_"));
    with_password(&mut db(), email.clone(), true);
    email
}

fn with_password(db: &mut postgres::Client, email: String, support: bool) -> PersonId {
    let made = people::create_person(db, &Email::parse(&email).unwrap(), support)
        .unwrap()
        .unwrap();
    let hash = hashing()
        .hash(&NewPassword::parse(PASSWORD).unwrap())
        .unwrap();
    people::set_password(db, &made.id, &hash).unwrap();
    made.id
}

fn hashing() -> &'static Passwords {
    static PASSWORDS: OnceLock<Passwords> = OnceLock::new();
    // The people of every console test: no rate of hashes is reached here.
    let rates = Rates {
        known_per_minute: 1_000_000,
        unknown_per_minute: 1_000_000,
    };
    PASSWORDS.get_or_init(|| Passwords::new(2, 8, rates))
}

pub fn new_org() -> String {
    let name = OrgName::parse("Console Publisher").unwrap();
    db::orgs::create_org(&mut db(), &name)
        .unwrap()
        .id
        .to_string()
}

/// A site of the caller's organisation, and on it a fragment "Front page" of `reference`.
pub fn site_with_front_page(
    db: &mut postgres::Client,
    caller: &Caller,
    domain: &DomainName,
    reference: &FragmentRef,
) -> FragmentId {
    ops::sites::put_site(db, caller, domain, SiteWrite::default()).unwrap();
    let write = FragmentWrite {
        name: FragmentName::parse("Front page").unwrap(),
        lang: Lang::En,
        description: None,
        key_values: KeyValues::default(),
        status: None,
    };
    let made = ops::fragments::create_fragment(db, caller, domain, Some(reference), write);
    made.unwrap().fragment.id
}

/// The role of the person of `email` in `org`, as stored.
pub fn role_of(org: &str, email: &str) -> Option<String> {
    db().query_opt(
        "SELECT m.role FROM memberships m JOIN persons p ON p.id = m.person_id
          WHERE m.org_id = $1 AND lower(p.email) = lower($2)",
        &[&org, &email],
    )
    .unwrap()
    .map(|row| row.get(0))
}

/// The typed id of an organisation the tests hold as text.
pub fn org_id(text: &str) -> OrgId {
    OrgId::parse(text).expect("an organisation id")
}

/// A browser of the console: its client address, its session cookie once signed in.
pub struct Browser {
    pub client: Client,
    pub cookie: Option<String>,
}

impl Browser {
    pub fn new() -> Browser {
        Browser::of(&server())
    }

    /// A browser of the console of `server`.
    pub fn of(server: &TestServer) -> Browser {
        Browser {
            client: server
                .client()
                .host(CONSOLE_HOST)
                .ip(&crate::harness::next_client_ip()),
            cookie: None,
        }
    }

    /// A browser of the console of a server a test started for itself.
    pub fn on(addr: std::net::SocketAddr) -> Browser {
        Browser {
            client: Client::new(addr)
                .host(CONSOLE_HOST)
                .ip(&crate::harness::next_client_ip()),
            ..Browser::new()
        }
    }

    /// A browser of this person, signed in.
    pub fn signed_in(email: &str) -> Browser {
        Browser::signed_in_to(&server(), email)
    }

    /// A browser of this person, signed in to the console of `server`.
    pub fn signed_in_to(server: &TestServer, email: &str) -> Browser {
        let mut browser = Browser::of(server);
        let resp = browser.sign_in(email, PASSWORD);
        assert_eq!(resp.status, 303, "{}", resp.text());
        browser
    }

    pub fn headers(&self) -> Vec<(&str, String)> {
        let mut headers = vec![("User-Agent", "ConsoleTest/1.0".to_string())];
        if let Some(cookie) = &self.cookie {
            headers.push(("Cookie", format!("{COOKIE}={cookie}")));
        }
        headers
    }

    pub fn get(&self, path: &str) -> Resp {
        let headers = self.headers();
        let headers: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
        self.client.request("GET", path, &headers, None)
    }

    /// A form posted from the console's origin, as a browser sends it.
    pub fn post(&self, path: &str, fields: &[(&str, &str)]) -> Resp {
        self.post_with(path, fields, &[("Origin", ORIGIN)])
    }

    pub fn post_with(&self, path: &str, fields: &[(&str, &str)], extra: &[(&str, &str)]) -> Resp {
        let body = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(fields)
            .finish();
        let mut headers = self.headers();
        headers.push((
            "Content-Type",
            "application/x-www-form-urlencoded".to_string(),
        ));
        let mut headers: Vec<(&str, &str)> =
            headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
        headers.extend_from_slice(extra);
        self.client
            .request("POST", path, &headers, Some(body.as_bytes()))
    }

    /// Signs in; keeps the session cookie it is given.
    pub fn sign_in(&mut self, email: &str, password: &str) -> Resp {
        let resp = self.post("/sign-in", &[("email", email), ("password", password)]);
        if let Some(secret) = session_cookie(&resp) {
            self.cookie = Some(secret);
        }
        resp
    }

    /// The form token of this browser's session, as its pages carry it (read from the page of
    /// second factors, open to everyone signed in, also where a second factor is required).
    pub fn token(&self) -> String {
        let page = self.get("/second-factors").text();
        let at = page.find("name=\"csrf\" value=\"").expect("a form token") + 19;
        page[at..at + 64].to_string()
    }

    /// A write with this session's form token.
    pub fn write(&self, path: &str, fields: &[(&str, &str)]) -> Resp {
        let token = self.token();
        let mut all = vec![("csrf", token.as_str())];
        all.extend_from_slice(fields);
        self.post(path, &all)
    }

    /// A form that makes a secret (a token, a key, an invitation) sent from its page
    /// `form_page`, as a browser sends it: with the session's form token and the one-time value
    /// the page gave the form.
    pub fn create(&self, form_page: &str, path: &str, fields: &[(&str, &str)]) -> Resp {
        let once = hidden(&self.get(form_page).text(), "once");
        let mut all = vec![("once", once.as_str())];
        all.extend_from_slice(fields);
        self.write(path, &all)
    }

    pub fn is_signed_in(&self) -> bool {
        self.get("/").status == 200
    }
}

/// The value of a page's (first) hidden field `name`.
pub fn hidden(page: &str, name: &str) -> String {
    let marker = format!("name=\"{name}\" value=\"");
    let at = page
        .find(&marker)
        .unwrap_or_else(|| panic!("no {name}: {page}"))
        + marker.len();
    page[at..at + page[at..].find('"').unwrap()].to_string()
}

/// The value a response sets the session cookie to.
pub fn session_cookie(resp: &Resp) -> Option<String> {
    set_cookie(resp, COOKIE)
}

/// A browser that keeps the device cookie its sign-ins give it, and sends it with each.
pub struct Device {
    pub browser: Browser,
    pub cookie: Option<String>,
}

impl Device {
    pub fn new() -> Device {
        Device::of(Browser::new())
    }

    /// A device of `browser`, without a device cookie yet.
    pub fn of(browser: Browser) -> Device {
        Device {
            browser,
            cookie: None,
        }
    }

    pub fn sign_in(&mut self, email: &str, password: &str) -> Resp {
        let fields = [("email", email), ("password", password)];
        let cookie = self.cookie.as_ref().map(|c| format!("{DEVICE_COOKIE}={c}"));
        let mut extra = vec![("Origin", ORIGIN)];
        extra.extend(cookie.as_deref().map(|c| ("Cookie", c)));
        let resp = self.browser.post_with("/sign-in", &fields, &extra);
        if let Some(session) = set_cookie(&resp, COOKIE) {
            self.browser.cookie = Some(session);
        }
        if let Some(device) = set_cookie(&resp, DEVICE_COOKIE) {
            self.cookie = Some(device);
        }
        resp
    }
}

/// The value a response sets the cookie `name` to.
pub fn set_cookie(resp: &Resp, name: &str) -> Option<String> {
    set_cookie_header(resp, name)?
        .split(';')
        .next()
        .map(|pair| pair[name.len() + 1..].to_string())
}

/// The whole `Set-Cookie` header a response sets the cookie `name` with.
pub fn set_cookie_header<'a>(resp: &'a Resp, name: &str) -> Option<&'a str> {
    let prefix = format!("{name}=");
    resp.headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case("set-cookie"))
        .map(|(_, v)| v.as_str())
        .find(|v| v.starts_with(&prefix))
}

/// Every visible input and select of a page has an id that a `<label for>` names.
pub fn assert_labelled(page: &str, what: &str) {
    for tag in ["<input ", "<select "] {
        for (at, _) in page.match_indices(tag) {
            let element = &page[at..at + page[at..].find('>').unwrap()];
            if element.contains("type=\"hidden\"") {
                continue;
            }
            let id_at = element
                .find(" id=\"")
                .unwrap_or_else(|| panic!("{what}: {element}"))
                + 5;
            let id = &element[id_at..id_at + element[id_at..].find('"').unwrap()];
            assert!(
                page.contains(&format!("<label for=\"{id}\"")),
                "{what}: {id} has no label"
            );
        }
    }
}

/// `agentcard admin ARGS…` with the tests' servers' console host, so its links point there.
pub fn admin_people(args: &[&str]) -> (bool, serde_json::Value, String) {
    let (ok, stdout, stderr) = crate::fixtures::agentcard(
        &[&["admin"], args].concat(),
        &[("AGENTCARD_CONSOLE_HOST", CONSOLE_HOST)],
    );
    (
        ok,
        serde_json::from_str(&stdout).unwrap_or_default(),
        stderr,
    )
}

/// A local SMTP server that prints every mail it receives (aiosmtpd's `Debugging` handler),
/// stopped when dropped.
pub struct SmtpSink {
    child: std::process::Child,
    port: u16,
    printed: std::sync::mpsc::Receiver<String>,
    seen: String,
}

impl SmtpSink {
    pub fn start() -> SmtpSink {
        use std::io::BufRead;
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut child = crate::harness::python_tool("python")
            .args(["-m", "aiosmtpd", "-n", "-l", &format!("127.0.0.1:{port}")])
            .env("PYTHONUNBUFFERED", "1")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("python runs");
        let stdout = child.stdout.take().unwrap();
        let (lines, printed) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
            {
                let _ = lines.send(line);
            }
        });
        let mut sink = SmtpSink {
            child,
            port,
            printed,
            seen: String::new(),
        };
        let listening = (0..200).any(|_| {
            std::thread::sleep(std::time::Duration::from_millis(50));
            std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
        });
        if !listening {
            let _ = sink.child.kill();
            panic!(
                "no SMTP sink: {}",
                crate::harness::install_hint("aiosmtpd==1.4.6")
            );
        }
        sink
    }

    pub fn url(&self) -> String {
        format!("smtp://127.0.0.1:{}", self.port)
    }

    /// What it printed until `wanted` appears (waiting up to a generous cap), its quoted-
    /// printable soft line breaks joined (a long line, the link's, comes encoded so).
    pub fn until(&mut self, wanted: &str) -> String {
        self.until_printed(wanted, |printed| printed.contains(wanted))
    }

    /// The same, until `wanted` appears and every mail printed so far is whole.
    pub fn until_whole(&mut self, wanted: &str) -> String {
        self.until_printed(wanted, |printed| {
            let (started, ended) = (
                printed.matches("MESSAGE FOLLOWS"),
                printed.matches("END MESSAGE"),
            );
            printed.contains(wanted) && started.count() == ended.count()
        })
    }

    fn until_printed(&mut self, wanted: &str, done: impl Fn(&str) -> bool) -> String {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while !done(&self.seen.replace("=\n", "")) {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.printed.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push_str(&line);
                    self.seen.push('\n');
                }
                Err(_) => panic!("no mail with {wanted}; printed:\n{}", self.seen),
            }
        }
        self.seen.replace("=\n", "")
    }
}

impl Drop for SmtpSink {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The link in a mail, as the sink printed it.
pub fn link_in(printed: &str) -> String {
    let at = printed.find("https://console.test/link/").expect("a link");
    let end = printed[at..]
        .find(char::is_whitespace)
        .map_or(printed.len(), |e| at + e);
    printed[at..end].to_owned()
}
