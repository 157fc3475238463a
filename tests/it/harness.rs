//! The test harness: databases cloned from one migrated template (made once per run), the
//! service started in-process on a free loopback port, a raw HTTP/1.1 client, and tenants (an
//! organisation with its own token and its own client address, so that per-IP limits of one
//! test never touch another).
//!
//! Every test has a server and a database of its own: [`server`], [`tenant`], [`db`] and
//! [`sync_cache`] (and the fixtures built on them) reach the server of the test that calls them,
//! started on its first call on a database cloned from the template, stopped and dropped when
//! the test ends. No test sees another's data, so a test may assert on every row of a table,
//! on platform cards or on the whole report. Nothing is shared between tests but the template;
//! `tests/it/conventions.rs` keeps it so (no server held in a `static` outside this file). A
//! test that needs a second server, or one reaching its database through a proxy, takes
//! [`own_server`] or [`own_server_via`] beside its own.

use agentcard::config::Config;
use agentcard::db::orgs::Creator;
use agentcard::domain::{OrgName, TokenName};
use agentcard::ids::OrgId;
use agentcard::{auth, db};
use serde_json::Value;
use std::cell::RefCell;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, Once, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The header through which tests tell the server which client they are (loopback is a
/// trusted proxy of the tests' servers).
pub const CLIENT_IP_HEADER: &str = "X-Test-Client-IP";
pub const CONSOLE_HOST: &str = "console.test";
pub const LEGACY_HOST: &str = "legacy.test";
/// Short deadlines so that timeout tests run in about a second.
pub const REQUEST_TIMEOUT_MS: u64 = 800;
pub const IDLE_TIMEOUT_MS: u64 = 1500;
/// The servers of the tests flush their report counters this often.
pub const REPORT_FLUSH_MS: u64 = 100;

pub struct TestServer {
    pub addr: SocketAddr,
    pub database_url: String,
    pub app: std::sync::Arc<agentcard::app::App>,
    _running: agentcard::Running,
    /// Dropped after the server (fields drop in order): an [`own_server`]'s database.
    _database: Option<TestDatabase>,
}

/// The server of the test that calls it: started on the test's first call, on a database of
/// its own cloned from the template, its first snapshot loaded (about a tenth of a second on a
/// quiet machine), and stopped, its database dropped, when the test ends (as long again, off
/// the tests' way: `DROP DATABASE` waits for a checkpoint). Tests get their own rather than one
/// server for the run, so that none depends on what the others wrote; a test that wants many
/// organisations on one server makes many tenants on its own.
///
/// "The test" is the thread the test runs on (libtest names it after the test): a thread the
/// test spawns is not its test, and calling this there panics rather than start another
/// server; hand that thread the server (or a [`Client`]) instead.
pub fn server() -> Arc<TestServer> {
    assert!(
        std::thread::current().name().is_some(),
        "harness::server() called on a thread a test spawned: pass it the test's server"
    );
    THIS_TEST.with(|this| {
        let mut this = this.0.borrow_mut();
        Arc::clone(this.get_or_insert_with(|| Arc::new(own_server())))
    })
}

thread_local! {
    static THIS_TEST: ThisTest = const { ThisTest(RefCell::new(None)) };
}

/// The server of the test running on this thread, once it asked for one.
struct ThisTest(RefCell<Option<Arc<TestServer>>>);

impl Drop for ThisTest {
    /// At the end of the test's thread, whose other thread-locals (the database client's among
    /// them) may be gone already: the server stops and its database is dropped on a thread of
    /// their own, while the next test runs (what is left at exit, `drop_made_databases` drops).
    fn drop(&mut self) {
        if let Some(server) = self.0.take() {
            std::thread::spawn(move || drop(server));
        }
    }
}

/// Another server with the settings of the tests' servers, on a database of its own cloned from
/// the template (the test's [`server`] is one): it starts from the migrated, empty state. The
/// server stops and its database is dropped when it is dropped.
pub fn own_server() -> TestServer {
    own_server_via(str::to_string)
}

/// [`own_server`] reaching its database at the URL `via` makes of the database's (a proxy's).
pub fn own_server_via(via: impl FnOnce(&str) -> String) -> TestServer {
    let database = TestDatabase::create();
    TestServer::start(via(&database.url), Some(database))
}

impl TestServer {
    fn start(database_url: String, database: Option<TestDatabase>) -> TestServer {
        let _ = env_logger::builder().is_test(true).try_init();
        let running = start_running(
            &database_url,
            &[
                ("AGENTCARD_CLIENT_IP_HEADER", CLIENT_IP_HEADER),
                ("AGENTCARD_TRUSTED_PROXIES", "127.0.0.0/8"),
            ],
        );
        let server = TestServer {
            addr: running.server.local_addr(),
            database_url,
            app: std::sync::Arc::clone(&running.app),
            _running: running,
            _database: database,
        };
        // Ready, as `/ready` says it: its first snapshot loaded.
        server.sync_cache();
        server
    }

    /// A client of this server, with no address, token or host of its own yet.
    pub fn client(&self) -> Client {
        Client::new(self.addr)
    }

    /// A direct connection to this server's database, for setting and reading state.
    pub fn db(&self) -> postgres::Client {
        db::connect(&self.database_url).expect("connect to the test database")
    }

    /// A new organisation with a live management token, and a client of this server for it.
    pub fn tenant(&self) -> Tenant {
        let mut db = self.db();
        let org = new_org(&mut db, "Test Publisher");
        let (token_id, token) = new_token(&mut db, org.as_str(), false);
        Tenant {
            client: self.client().ip(&next_client_ip()).token(&token),
            org_id: org.to_string(),
            token_id,
            token,
        }
    }

    /// Brings this server's fragment cache up to date with its database now (instead of
    /// waiting for its notification or refresh period).
    pub fn sync_cache(&self) {
        self.app
            .delivery
            .cache
            .refresh_changed(&mut self.db())
            .expect("refresh the fragment cache");
    }
}

/// An in-process server a test started for itself: it stops (its listeners, its connections,
/// its threads) when the test drops it, at the latest when the test ends.
pub struct OwnServer {
    pub addr: SocketAddr,
    pub app: std::sync::Arc<agentcard::app::App>,
    _running: agentcard::Running,
}

impl OwnServer {
    fn of(running: agentcard::Running) -> OwnServer {
        OwnServer {
            addr: running.server.local_addr(),
            app: std::sync::Arc::clone(&running.app),
            _running: running,
        }
    }
}

/// Starts another in-process server on the database at `database_url`, with extra settings.
pub fn start_server(database_url: &str, extra: &[(&str, &str)]) -> OwnServer {
    OwnServer::of(start_running(database_url, extra))
}

fn start_running(database_url: &str, extra: &[(&str, &str)]) -> agentcard::Running {
    let mut vars: Vec<(String, String)> = vec![
        ("DATABASE_URL".into(), database_url.into()),
        ("AGENTCARD_LISTEN".into(), "127.0.0.1:0".into()),
        ("AGENTCARD_CONSOLE_HOST".into(), CONSOLE_HOST.into()),
        ("AGENTCARD_LEGACY_HOST".into(), LEGACY_HOST.into()),
        ("AGENTCARD_REFRESH_MS".into(), "200".into()),
        (
            "AGENTCARD_REQUEST_TIMEOUT_MS".into(),
            REQUEST_TIMEOUT_MS.to_string(),
        ),
        (
            "AGENTCARD_IDLE_TIMEOUT_MS".into(),
            IDLE_TIMEOUT_MS.to_string(),
        ),
        ("AGENTCARD_DB_POOL".into(), "8".into()),
        // Tests sign in in parallel, faster than a real console's global rates of hashes;
        // `console_flood` sets its own.
        (
            "AGENTCARD_PASSWORD_HASHES_PER_MINUTE".into(),
            "1000000".into(),
        ),
        (
            "AGENTCARD_UNKNOWN_BROWSER_SIGN_INS_PER_MINUTE".into(),
            "1000000".into(),
        ),
        // Their browsers' addresses are neighbours (`next_client_ip`), in a few /24 blocks.
        (
            "AGENTCARD_UNKNOWN_BROWSER_SIGN_INS_PER_BLOCK_PER_MINUTE".into(),
            "1000000".into(),
        ),
        (
            "AGENTCARD_REPORT_FLUSH_MS".into(),
            REPORT_FLUSH_MS.to_string(),
        ),
        // Test domains never resolve; the icon's own tests turn the fetch on, with a loopback
        // server to fetch from.
        ("AGENTCARD_ICON_FETCH".into(), "off".into()),
    ];
    vars.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    let config = Config::from_lookup(|name| {
        vars.iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    })
    .expect("test configuration");
    agentcard::start(config).expect("start test server")
}

/// Brings the test's server's fragment cache up to date with the database now (instead of
/// waiting for its notification or refresh period).
pub fn sync_cache() {
    server().sync_cache();
}

/// The PostgreSQL server where tests may create databases: `AGENTCARD_TEST_PG_URL`, else the
/// local 5432.
fn admin_url() -> String {
    std::env::var("AGENTCARD_TEST_PG_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into())
}

/// The databases this process made and has not dropped yet, dropped when it exits.
static MADE: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// A database cloned from the template, for a server the test starts itself, dropped
/// when the process exits (`cargo test` alone included).
pub fn fresh_database() -> String {
    let mut admin = admin();
    let name = new_database(&mut admin, &format!("TEMPLATE \"{}\"", template()));
    with_database(&admin_url(), &name)
}

/// A database without even the migrations, for a test of the migrations themselves; dropped
/// when the process exits.
pub fn empty_database() -> String {
    let name = new_database(&mut admin(), "");
    with_database(&admin_url(), &name)
}

/// A database cloned from the template that is dropped with this value (and at the latest
/// when the process exits).
pub struct TestDatabase {
    pub url: String,
    name: String,
}

impl TestDatabase {
    pub fn create() -> TestDatabase {
        let mut admin = admin();
        let name = new_database(&mut admin, &format!("TEMPLATE \"{}\"", template()));
        TestDatabase {
            url: with_database(&admin_url(), &name),
            name,
        }
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        // `FORCE`: a server's connections may still be closing.
        let dropped = admin().batch_execute(&format!(
            "DROP DATABASE IF EXISTS \"{}\" WITH (FORCE)",
            self.name
        ));
        if dropped.is_ok() {
            made().retain(|name| *name != self.name);
        }
    }
}

/// The migrated database every test database is cloned from (`CREATE DATABASE … TEMPLATE`,
/// a copy of files, much faster than running the migrations again), made on first use.
/// Nobody stays connected to it: PostgreSQL clones only a database nobody uses.
fn template() -> &'static str {
    static TEMPLATE: OnceLock<String> = OnceLock::new();
    TEMPLATE.get_or_init(|| {
        let name = new_database(&mut admin(), "");
        let url = with_database(&admin_url(), &name);
        let mut template = db::connect(&url).expect("connect to the template database");
        db::migrate::run(&mut template).expect("migrate the template database");
        name
    })
}

/// A connection to the PostgreSQL server where tests make databases. The first one also
/// drops what killed runs left behind and has this process's databases dropped at exit.
fn admin() -> postgres::Client {
    let mut admin = db::connect(&admin_url()).expect("connect to the test PostgreSQL server");
    static FIRST: Once = Once::new();
    FIRST.call_once(|| {
        drop_leftovers(&mut admin);
        // SAFETY: registers a plain function with no arguments, as atexit asks.
        let registered = unsafe { libc::atexit(drop_made_databases) };
        assert_eq!(registered, 0, "register the test databases' drop at exit");
    });
    admin
}

fn made() -> std::sync::MutexGuard<'static, Vec<String>> {
    MADE.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Creates `agentcard_test_<time>_<pid>_<n>` with `options` (empty, or a template) and
/// returns its name.
fn new_database(admin: &mut postgres::Client, options: &str) -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let name = format!(
        "agentcard_test_{}_{}_{n}",
        unix_seconds(),
        std::process::id()
    );
    made().push(name.clone());
    admin
        .batch_execute(&format!("CREATE DATABASE \"{name}\" {options}"))
        .expect("create the test database");
    name
}

fn unix_seconds() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs())
}

/// At exit, with `FORCE`: the in-process servers still hold connections. A few at a time, on
/// threads of their own (the exiting thread's thread-locals, which the client uses, are
/// already gone): each drop waits on PostgreSQL's files more than on this process.
extern "C" fn drop_made_databases() {
    const AT_ONCE: usize = 4;
    let made = std::mem::take(&mut *made());
    let share = made.len().div_ceil(AT_ONCE).max(1);
    let droppers: Vec<_> = made
        .chunks(share)
        .map(|names| {
            let names = names.to_vec();
            std::thread::spawn(move || {
                let Ok(mut admin) = db::connect(&admin_url()) else {
                    return;
                };
                for name in names {
                    let drop = format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)");
                    let _ = admin.batch_execute(&drop);
                }
            })
        })
        .collect();
    for dropper in droppers {
        let _ = dropper.join();
    }
}

/// Drops the test databases of runs that ended without dropping theirs (killed): nobody
/// connected, their process gone from this machine, made over a minute ago (another machine's
/// run may not have connected to a database it just made).
fn drop_leftovers(admin: &mut postgres::Client) {
    let Ok(rows) = admin.query(
        "SELECT datname FROM pg_database d WHERE datname LIKE 'agentcard\\_test\\_%' \
         AND NOT EXISTS (SELECT FROM pg_stat_activity a WHERE a.datname = d.datname)",
        &[],
    ) else {
        return;
    };
    let now = unix_seconds();
    for row in rows {
        let name: String = row.get(0);
        if is_left_over(&name, now) {
            // Someone connected meanwhile: the drop fails, and the database stays.
            let _ = admin.batch_execute(&format!("DROP DATABASE IF EXISTS \"{name}\""));
        }
    }
}

/// `agentcard_test_<seconds>_<pid>_<n>` made over a minute before `now` by a process that is
/// no longer running.
fn is_left_over(name: &str, now: u64) -> bool {
    let mut parts = name.trim_start_matches("agentcard_test_").split('_');
    let (Some(Ok(made)), Some(Ok(pid))) = (
        parts.next().map(str::parse::<u64>),
        parts.next().map(str::parse::<u32>),
    ) else {
        return false;
    };
    let running = Path::new(&format!("/proc/{pid}")).exists();
    now.saturating_sub(made) > 60 && !running
}

/// Replaces the database of a URL or key=value connection string.
fn with_database(admin_url: &str, name: &str) -> String {
    if admin_url.starts_with("postgres://") || admin_url.starts_with("postgresql://") {
        let (base, query) = match admin_url.split_once('?') {
            Some((b, q)) => (b, Some(q)),
            None => (admin_url, None),
        };
        let scheme_end = base.find("://").map_or(0, |i| i + 3);
        let server = match base[scheme_end..].find('/') {
            Some(slash) => &base[..scheme_end + slash],
            None => base,
        };
        match query {
            Some(q) => format!("{server}/{name}?{q}"),
            None => format!("{server}/{name}"),
        }
    } else {
        format!("{admin_url} dbname={name}")
    }
}

/// A direct connection to the test's database, for setting and reading state.
pub fn db() -> postgres::Client {
    server().db()
}

/// A distinct fake client address per tenant (TEST-NET and 10/8 ranges, never routed).
pub fn next_client_ip() -> String {
    static NEXT: AtomicU32 = AtomicU32::new(1);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    format!("10.{}.{}.{}", (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff)
}

/// An organisation with a live management token.
pub struct Tenant {
    pub org_id: String,
    pub token_id: String,
    pub token: String,
    pub client: Client,
}

/// A new organisation on the test's server.
pub fn tenant() -> Tenant {
    server().tenant()
}

/// A new organisation named `name`.
pub fn new_org(db: &mut postgres::Client, name: &str) -> OrgId {
    let name = OrgName::parse(name).unwrap();
    db::orgs::create_org(db, &name).unwrap().id
}

/// A management token of the organisation, by an owner or (`support`) by support: its id and
/// the token.
pub fn new_token(db: &mut postgres::Client, org_id: &str, support: bool) -> (String, String) {
    let org_id = OrgId::parse(org_id).expect("an organisation id");
    let secret = auth::generate(auth::SecretKind::ManagementToken, "svc");
    let creator = if support {
        Creator::Support
    } else {
        Creator::Owner
    };
    let name = TokenName::parse("test").unwrap();
    let row =
        db::orgs::create_token(db, &org_id, &name, &secret.hash, &secret.prefix, creator).unwrap();
    (row.id.to_string(), secret.value)
}

/// A response as received.
#[derive(Debug)]
pub struct Resp {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Resp {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|_| panic!("not JSON: {}", String::from_utf8_lossy(&self.body)))
    }
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
    /// The `error.code` of a management error body.
    pub fn code(&self) -> String {
        self.json()["error"]["code"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }
    pub fn field(&self) -> Option<String> {
        self.json()["error"]["field"].as_str().map(str::to_string)
    }
}

/// A client of the test server: fixed client address, optional token and host.
#[derive(Clone)]
pub struct Client {
    addr: SocketAddr,
    ip: Option<String>,
    token: Option<String>,
    host: String,
}

impl Client {
    pub fn new(addr: SocketAddr) -> Client {
        Client {
            addr,
            ip: None,
            token: None,
            host: "api.test".into(),
        }
    }
    pub fn ip(mut self, ip: &str) -> Client {
        self.ip = Some(ip.into());
        self
    }
    pub fn token(mut self, token: &str) -> Client {
        self.token = Some(token.into());
        self
    }
    pub fn without_token(mut self) -> Client {
        self.token = None;
        self
    }
    pub fn host(mut self, host: &str) -> Client {
        self.host = host.into();
        self
    }

    pub fn get(&self, path: &str) -> Resp {
        self.request("GET", path, &[], None)
    }
    pub fn put(&self, path: &str, body: &Value) -> Resp {
        self.send_json("PUT", path, body)
    }
    pub fn post(&self, path: &str, body: &Value) -> Resp {
        self.send_json("POST", path, body)
    }
    pub fn delete(&self, path: &str) -> Resp {
        self.send_json("DELETE", path, &serde_json::json!({}))
    }
    pub fn send_json(&self, method: &str, path: &str, body: &Value) -> Resp {
        let bytes = body.to_string().into_bytes();
        self.request(
            method,
            path,
            &[("Content-Type", "application/json")],
            Some(&bytes),
        )
    }

    /// One request on its own connection; `headers` are sent as given, after the defaults.
    pub fn request(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&[u8]>,
    ) -> Resp {
        let mut head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n",
            self.host
        );
        if let Some(ip) = &self.ip {
            head.push_str(&format!("{CLIENT_IP_HEADER}: {ip}\r\n"));
        }
        if let Some(token) = &self.token {
            head.push_str(&format!("Authorization: Bearer {token}\r\n"));
        }
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        if let Some(body) = body {
            head.push_str(&format!("Content-Length: {}\r\n", body.len()));
        }
        head.push_str("\r\n");
        let mut raw = head.into_bytes();
        raw.extend_from_slice(body.unwrap_or_default());
        let responses = exchange(self.addr, &raw);
        responses.into_iter().next().expect("no response")
    }
}

/// Sends raw bytes, reads until the server closes (or a minute passes: a hang, not a slow
/// machine), parses every response.
pub fn exchange(addr: SocketAddr, raw: &[u8]) -> Vec<Resp> {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    stream.write_all(raw).expect("send");
    let mut received = Vec::new();
    let _ = stream.read_to_end(&mut received);
    parse_responses(&received)
}

/// Parses consecutive HTTP/1.1 responses framed by Content-Length.
pub fn parse_responses(mut bytes: &[u8]) -> Vec<Resp> {
    let mut out = Vec::new();
    while !bytes.is_empty() {
        let mut slots = [httparse::EMPTY_HEADER; 64];
        let mut response = httparse::Response::new(&mut slots);
        let Ok(httparse::Status::Complete(head_len)) = response.parse(bytes) else {
            break;
        };
        let headers: Vec<(String, String)> = response
            .headers
            .iter()
            .map(|h| {
                (
                    h.name.to_string(),
                    String::from_utf8_lossy(h.value).into_owned(),
                )
            })
            .collect();
        let length = headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
            .and_then(|(_, v)| v.parse::<usize>().ok())
            .unwrap_or(0);
        let end = (head_len + length).min(bytes.len());
        out.push(Resp {
            status: response.code.unwrap_or(0),
            headers,
            body: bytes[head_len..end].to_vec(),
        });
        bytes = &bytes[end..];
    }
    out
}

/// A server whose database is unreachable: built without the migration step of `start`.
pub fn start_server_without_migrations(database_url: &str) -> OwnServer {
    let config = Config::from_lookup(|name| match name {
        "DATABASE_URL" => Some(database_url.to_string()),
        "AGENTCARD_LISTEN" => Some("127.0.0.1:0".into()),
        _ => None,
    })
    .expect("test configuration");
    OwnServer::of(agentcard::serve_without_migrating(config).expect("start test server"))
}

/// A program of the project's Python environment, `.venv/` (scripts/test.sh makes it), else the
/// one on `PATH`: `cargo test` alone finds what scripts/test.sh installed. The environment's
/// programs come first on its `PATH` too, for the programs it runs in turn.
pub fn python_tool(program: &str) -> Command {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv/bin");
    if !bin.join(program).is_file() {
        return Command::new(program);
    }
    let mut command = Command::new(bin.join(program));
    let path = std::env::var_os("PATH").unwrap_or_default();
    let dirs = std::iter::once(bin).chain(std::env::split_paths(&path));
    if let Ok(joined) = std::env::join_paths(dirs) {
        command.env("PATH", joined);
    }
    command
}

/// What a test that lacks `package` (from PyPI) says to do.
pub fn install_hint(package: &str) -> String {
    format!(
        "scripts/test.sh installs it into .venv/ (by hand: `python3 -m venv .venv && \
         .venv/bin/pip install '{package}'`)"
    )
}
