//! The fixtures and assertions the test modules share; they import from here and from
//! `harness` (the infrastructure), never from each other. Data is made in these ways, by what
//! a test exercises:
//! - through the management API, as a tenant: `new_site`, and `put_fragment` for the tests of
//!   fragment writes;
//! - every other fragment as the console makes one, through `ops` (`new_fragment`, `fragment`,
//!   `fragment_without_ref`, `World::fragment`, all on `made_fragment`); cards with the
//!   service's db functions (`card`);
//! - with SQL, for the rest of the serving side (`GET /fragment`): `World` and its `CardSpec`;
//! - through the real binary: `admin` (its JSON), `admin_output` (its text); `ServeProcess`
//!   runs `agentcard serve` beside the test's in-process server, and `scrape` reads its
//!   `/metrics` with Prometheus's parsers.

use crate::harness::{self, db, server, Client, Resp, Tenant};
use agentcard::db::cards::{self, CardContent, CardLink};
use agentcard::domain::{
    CardStatus, CardText, DomainName, FragmentName, FragmentRef, FragmentStatus, KeyValues, Lang,
    LinkUrl,
};
use agentcard::ids::{OrgId, SiteId};
use agentcard::ops::{self, fragments::FragmentWrite, sites::SiteWrite, Actor};
use agentcard::{auth, ids};
use serde_json::{json, Value};
use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

// ---- assertions and readers ----

/// Asserts an error answer: status, code and field (absent when `None`).
#[track_caller]
pub fn assert_error(resp: &Resp, status: u16, code: &str, field: Option<&str>) {
    assert_eq!(
        (resp.status, resp.code(), resp.field()),
        (status, code.to_owned(), field.map(str::to_owned)),
        "{}",
        resp.text()
    );
}

/// The card id a `200` served.
pub fn served_card(resp: &Resp) -> String {
    assert_eq!(resp.status, 200, "{}", resp.text());
    let html = resp.text();
    let start = html.find("data-card-id=\"").expect("card id") + 14;
    html[start..start + html[start..].find('"').unwrap()].to_string()
}

/// The member names of a JSON object, sorted.
pub fn members(value: &Value) -> Vec<String> {
    let mut names: Vec<String> = value
        .as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default();
    names.sort();
    names
}

pub fn is_timestamp(value: &Value) -> bool {
    value
        .as_str()
        .is_some_and(|s| s.len() == 27 && s.as_bytes()[10] == b'T' && s.ends_with('Z'))
}

// ---- the management API, as a tenant ----

/// The whole reference encoded once as a URI component, slashes included.
pub fn enc(reference: &str) -> String {
    percent_encoding::utf8_percent_encode(reference, percent_encoding::NON_ALPHANUMERIC).to_string()
}

/// Creates the site in the tenant's organisation.
#[track_caller]
pub fn new_site(t: &Tenant, domain: &str) -> Value {
    let resp = t.client.put(&format!("/v1/sites/{domain}"), &json!({}));
    assert_eq!(resp.status, 201, "{}", resp.text());
    resp.json()
}

pub fn put_fragment(t: &Tenant, domain: &str, reference: &str, body: &Value) -> Resp {
    let path = format!("/v1/sites/{domain}/fragments/{}", enc(reference));
    t.client.put(&path, body)
}

/// An active fragment named after its reference; returns its id.
#[track_caller]
pub fn new_fragment(t: &Tenant, domain: &str, reference: &str) -> String {
    let status = FragmentStatus::Active;
    made_fragment(
        &mut db(),
        &t.org_id,
        domain,
        Some(reference),
        reference,
        status,
    )
}

pub fn get_items(t: &Tenant, path: &str) -> Vec<Value> {
    let resp = t.client.get(path);
    assert_eq!(resp.status, 200, "{path}: {}", resp.text());
    resp.json()["items"].as_array().cloned().unwrap_or_default()
}

// ---- the console's operations ----

/// A fragment made as the console makes one (`ops::fragments::create_fragment`, its site made
/// when needed): the one way the tests make a fragment, but for those of the fragment writes
/// themselves. Returns its id.
#[track_caller]
fn made_fragment(
    db: &mut postgres::Client,
    org: &str,
    domain: &str,
    fragment_ref: Option<&str>,
    name: &str,
    status: FragmentStatus,
) -> String {
    let caller = ops::orgs::open(db, &OrgId::parse(org).unwrap(), Actor::Cli).unwrap();
    let write = FragmentWrite {
        name: FragmentName::parse(name).unwrap(),
        lang: Lang::Fr,
        description: None,
        key_values: KeyValues::default(),
        status: Some(status),
    };
    let domain = DomainName::parse(domain).unwrap();
    let fragment_ref = fragment_ref.map(|r| FragmentRef::parse(r).unwrap());
    ops::fragments::create_fragment(db, &caller, &domain, fragment_ref.as_ref(), write)
        .unwrap()
        .fragment
        .id
        .to_string()
}

/// An active fragment of `org` on `domain`, without a reference when `None`; its id.
#[track_caller]
pub fn fragment(org: &str, domain: &str, fragment_ref: Option<&str>) -> String {
    made_fragment(
        &mut db(),
        org,
        domain,
        fragment_ref,
        "Fixture",
        FragmentStatus::Active,
    )
}

/// A fragment without a reference, which only the console makes; its id.
#[track_caller]
pub fn fragment_without_ref(t: &Tenant, domain: &str, name: &str) -> String {
    made_fragment(
        &mut db(),
        &t.org_id,
        domain,
        None,
        name,
        FragmentStatus::Active,
    )
}

/// A card the fixtures made: its id and times, as the API lists them.
pub struct MadeCard {
    pub id: String,
    pub created_at: String,
    pub updated_at: String,
}

/// A card of `org` (`None`: a platform card) in `status`.
pub fn card(org: Option<&str>, status: CardStatus) -> MadeCard {
    card_in(&mut db(), org, status)
}

/// [`card`] in the database of `db` (an [`own_server`](crate::harness::own_server)'s).
pub fn card_in(db: &mut postgres::Client, org: Option<&str>, status: CardStatus) -> MadeCard {
    let content = CardContent {
        name: CardText::parse("Subscription offer", "name").unwrap(),
        lang: Lang::Fr,
        brand: CardText::parse("Example News", "brand").unwrap(),
        brand_domain: Some(DomainName::parse("example.com").unwrap()),
        title: CardText::parse("Read Example News", "title").unwrap(),
        body: CardText::parse_body("Independent reporting since 1950.").unwrap(),
        link: Some(CardLink {
            url: LinkUrl::parse("https://example.com/subscribe").unwrap(),
            label: CardText::parse("Subscribe", "link_label").unwrap(),
        }),
        key_values: KeyValues::from_pairs([("section".to_string(), "politics".to_string())])
            .unwrap(),
    };
    let org = org.map(|org| OrgId::parse(org).unwrap());
    let row = cards::create_card(db, org.as_ref(), status, &content).unwrap();
    MadeCard {
        id: row.id.to_string(),
        created_at: row.created_at,
        updated_at: row.updated_at,
    }
}

// ---- the serving side ----

/// An organisation with a delivery key, and helpers to shape its data: sites and fragments as
/// the console makes them, the rest in SQL.
pub struct World {
    pub org_id: String,
    pub key: String,
    pub key_id: String,
    database_url: String,
    db: postgres::Client,
    /// The server `fetch` asks.
    addr: SocketAddr,
    /// The domain of each site made.
    sites: Vec<(SiteId, String)>,
}

impl World {
    /// A world in the test's database, fetched from the test's server.
    pub fn new() -> World {
        World::on(&server().database_url, server().addr)
    }

    /// A new world whose site `domain` has the active fragment `/home` with one card on it;
    /// the fragment's id.
    pub fn with_a_served_fragment(domain: &str) -> (World, String) {
        let mut w = World::new();
        let site = w.site(domain);
        let fragment = w.fragment(site, "/home", true);
        w.card(CardSpec::default(), &[&fragment]);
        (w, fragment)
    }

    /// A world in the database at `database_url`, fetched from the server at `addr`.
    pub fn on(database_url: &str, addr: SocketAddr) -> World {
        let mut db = agentcard::db::connect(database_url).expect("connect to the database");
        let org = harness::new_org(&mut db, "Test Publisher");
        let secret = auth::generate(auth::SecretKind::DeliveryKey, "svc");
        let key_id = ids::KeyId::generate().to_string();
        db.execute(
            "INSERT INTO delivery_keys (id, org_id, key_hash, prefix) VALUES ($1, $2, $3, $4)",
            &[&key_id, &org.as_str(), &secret.hash, &secret.prefix],
        )
        .unwrap();
        World {
            org_id: org.to_string(),
            key: secret.value,
            key_id,
            database_url: database_url.to_string(),
            db,
            addr,
            sites: Vec::new(),
        }
    }

    /// The same world, fetched from the server at `addr`.
    pub fn served_by(self, addr: SocketAddr) -> World {
        World { addr, ..self }
    }

    /// Replaces the connection of the SQL helpers (after the database server restarted).
    pub fn reconnect(&mut self) {
        self.db = agentcard::db::connect(&self.database_url).expect("reconnect to the database");
    }

    /// A management token of this organisation.
    pub fn management_token(&mut self) -> String {
        harness::new_token(&mut self.db, &self.org_id, false).1
    }

    pub fn site(&mut self, domain: &str) -> SiteId {
        let caller = ops::orgs::open(
            &mut self.db,
            &OrgId::parse(&self.org_id).unwrap(),
            Actor::Cli,
        )
        .unwrap();
        let domain = DomainName::parse(domain).unwrap();
        let site = ops::sites::put_site(&mut self.db, &caller, &domain, SiteWrite::default())
            .unwrap()
            .record;
        self.sites.push((site.id, site.domain));
        site.id
    }

    pub fn fragment(&mut self, site: SiteId, reference: &str, active: bool) -> String {
        let status = if active {
            FragmentStatus::Active
        } else {
            FragmentStatus::Paused
        };
        let domain = self
            .sites
            .iter()
            .find(|(id, _)| *id == site)
            .unwrap()
            .1
            .clone();
        let org = self.org_id.clone();
        made_fragment(&mut self.db, &org, &domain, Some(reference), "f", status)
    }

    pub fn route(&mut self, site: SiteId, path: &str, exact: bool, fragment: &str) {
        let id = ids::RouteId::generate().to_string();
        let mode = if exact { "exact" } else { "prefix" };
        self.db
            .execute(
                "INSERT INTO routes (id, site_id, path, match, fragment_id) VALUES ($1, $2, $3, $4, $5)",
                &[&id, &site, &path, &mode, &fragment],
            )
            .unwrap();
    }

    pub fn default_fragment(&mut self, site: SiteId, fragment: &str) {
        self.db
            .execute(
                "UPDATE sites SET default_fragment_id = $2 WHERE id = $1",
                &[&site, &fragment],
            )
            .unwrap();
    }

    /// An active card of this organisation (`platform`: a platform card), eligible on `on`.
    pub fn card(&mut self, spec: CardSpec, on: &[&str]) -> String {
        let id = ids::CardId::generate().to_string();
        let org: Option<&str> = (!spec.platform).then_some(self.org_id.as_str());
        self.db
            .execute(
                "INSERT INTO cards (id, org_id, status, name, lang, brand, brand_domain, title, body, key_values)
                 VALUES ($1, $2, 'active', 'card', $3, 'Brand', $4, 'Title', 'Body', $5)",
                &[&id, &org, &spec.lang, &spec.brand_domain, &spec.key_values],
            )
            .unwrap();
        for fragment in on {
            self.db
                .execute(
                    "INSERT INTO card_eligibility (card_id, org_id, fragment_id) VALUES ($1, $2, $3)",
                    &[&id, &self.org_id, fragment],
                )
                .unwrap();
        }
        id
    }

    pub fn sql(&mut self, statement: &str, id: &str) {
        self.db.execute(statement, &[&id]).unwrap();
    }

    /// `GET /fragment` with these extra query parameters (partner, lang and key filled in).
    pub fn fetch(&self, fragment: &str, extra: &str) -> Resp {
        self.fetch_with(fragment, extra, &[])
    }

    pub fn fetch_with(&self, fragment: &str, extra: &str, headers: &[(&str, &str)]) -> Resp {
        self.fetch_from(self.addr, fragment, extra, headers)
    }

    /// The same, from the server at `addr`.
    pub fn fetch_from(
        &self,
        addr: SocketAddr,
        fragment: &str,
        extra: &str,
        headers: &[(&str, &str)],
    ) -> Resp {
        let path = format!(
            "/fragment?partner_id={}&fragment_id={fragment}&lang=fr&api_key={}{extra}",
            self.org_id, self.key
        );
        Client::new(addr).request("GET", &path, headers, None)
    }
}

/// The card `World::card` makes; by default the organisation's own, in French, without a brand
/// domain or key-values.
pub struct CardSpec {
    pub lang: &'static str,
    pub platform: bool,
    pub brand_domain: Option<&'static str>,
    pub key_values: Value,
}

impl Default for CardSpec {
    fn default() -> Self {
        CardSpec {
            lang: "fr",
            platform: false,
            brand_domain: None,
            key_values: json!({}),
        }
    }
}

// ---- the admin CLI ----

/// The content flags of a valid `admin card create`, to follow the owner's flag.
pub const CARD_FLAGS: [&str; 10] = [
    "--name", "N", "--lang", "fr", "--brand", "B", "--title", "T", "--body", "X",
];

/// Runs `agentcard admin ARGS…`; returns the exit status and the printed JSON (or stderr).
pub fn admin(args: &[&str]) -> (bool, Value, String) {
    let (ok, stdout, stderr) = admin_output(args);
    let json = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    (ok, json, stderr)
}

/// Runs `agentcard admin ARGS…` (standard output a pipe, not a terminal); returns the exit
/// status, standard output and standard error as text.
pub fn admin_output(args: &[&str]) -> (bool, String, String) {
    agentcard(&[&["admin"], args].concat(), &[])
}

/// Runs `agentcard ARGS…` on the test database, with `env` added; returns the exit status,
/// standard output and standard error as text.
pub fn agentcard(args: &[&str], env: &[(&str, &str)]) -> (bool, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_agentcard"))
        .args(args)
        .env("DATABASE_URL", &server().database_url)
        .env("RUST_LOG", "warn")
        .envs(env.iter().copied())
        .output()
        .expect("run agentcard");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

// ---- the real server binary ----

/// `agentcard serve` as a separate process on the test's database, its standard error
/// kept in a file that `log` reads. Stopped (killed) when dropped.
pub struct ServeProcess {
    child: Child,
    pub addr: SocketAddr,
    log: PathBuf,
}

impl ServeProcess {
    /// With `RUST_LOG=warn`, the quiet setting of every other spawned binary.
    pub fn start() -> ServeProcess {
        ServeProcess::start_with(&[("RUST_LOG", "warn")])
    }

    /// With the test database, a free port, no `RUST_LOG` (the default filter), then `env`;
    /// returns once `/ready` answers `200`.
    pub fn start_with(env: &[(&str, &str)]) -> ServeProcess {
        ServeProcess::start_limited(env, None)
    }

    /// The same, the process allowed at most `open_files` descriptors (soft and hard limit).
    pub fn start_limited(env: &[(&str, &str)], open_files: Option<u64>) -> ServeProcess {
        let addr = free_local_addr();
        let log = std::env::temp_dir().join(format!("agentcard-serve-{}.log", addr.port()));
        let mut command = Command::new(env!("CARGO_BIN_EXE_agentcard"));
        command
            .arg("serve")
            .env("DATABASE_URL", &server().database_url)
            .env("AGENTCARD_LISTEN", addr.to_string())
            // As the in-process servers: test domains never resolve.
            .env("AGENTCARD_ICON_FETCH", "off")
            .env_remove("RUST_LOG")
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).expect("create the log file"));
        if let Some(limit) = open_files {
            use std::os::unix::process::CommandExt;
            // SAFETY: between fork and exec only setrlimit runs, an async-signal-safe system
            // call that allocates nothing.
            unsafe {
                command.pre_exec(move || rlimit::setrlimit(rlimit::Resource::NOFILE, limit, limit));
            }
        }
        let child = command.spawn().expect("start agentcard serve");
        // Owned before waiting, so that a failed wait still stops the process.
        let process = ServeProcess { child, addr, log };
        let started = Instant::now();
        while !process.is_ready() {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "agentcard serve never ready; its log:\n{}",
                process.log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        process
    }

    fn is_ready(&self) -> bool {
        std::net::TcpStream::connect(self.addr).is_ok()
            && Client::new(self.addr).get("/ready").status == 200
    }

    /// Sends SIGTERM (the graceful stop) without waiting.
    pub fn terminate(&self) {
        let sent = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("run kill");
        assert!(sent.success(), "kill -TERM failed");
    }

    /// Waits for the process to end, at most `bound`; its exit status.
    pub fn wait_exit(&mut self, bound: Duration) -> std::process::ExitStatus {
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("wait for agentcard serve") {
                return status;
            }
            assert!(
                started.elapsed() < bound,
                "agentcard serve still running after {bound:?}; its log:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// What the process has written to standard error so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for ServeProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.log);
    }
}

/// A connection to `addr` from the loopback address `from` (127.0.0.2, …), as another client.
pub fn connect_from(from: &str, addr: SocketAddr) -> std::io::Result<std::net::TcpStream> {
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None)?;
    let source: SocketAddr = format!("{from}:0").parse().unwrap();
    socket.bind(&source.into())?;
    socket.connect(&addr.into())?;
    Ok(socket.into())
}

/// A loopback address with a port free now, for a process to listen on.
/// Sleeps into the next whole second (the live check samples one request a second).
pub fn next_second() {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    std::thread::sleep(Duration::from_nanos(
        1_000_000_000 - u64::from(now.subsec_nanos()),
    ));
}

pub fn free_local_addr() -> SocketAddr {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free loopback port")
}

// ---- operator metrics ----

/// Reads a scrape as Prometheus does, and prints its families as JSON (Python's
/// `prometheus_client`, which scripts/test.sh installs).
const METRICS_PARSER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/it/parse_metrics.py");

/// A scrape of `/metrics` as Prometheus's parsers read it: family name → `type` and `samples`
/// (each with `name`, `labels`, `value`).
pub struct Scrape(Value);

/// `GET /metrics` from the metrics listener at `addr`, parsed; fails when the answer is not
/// `200` or does not parse, or when the parser is missing.
pub fn scrape(addr: SocketAddr) -> Scrape {
    let resp = Client::new(addr).get("/metrics");
    assert_eq!(resp.status, 200, "{}", resp.text());
    let mut parser = harness::python_tool("python3")
        .arg(METRICS_PARSER)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3, to parse /metrics");
    let mut stdin = parser.stdin.take().unwrap();
    stdin.write_all(&resp.body).expect("hand the scrape over");
    drop(stdin);
    let parsed = parser.wait_with_output().expect("run the parser");
    assert!(
        parsed.status.success(),
        "the scrape does not parse (prometheus_client: {}): {}\n{}",
        harness::install_hint("prometheus_client"),
        String::from_utf8_lossy(&parsed.stderr),
        resp.text()
    );
    Scrape(serde_json::from_slice(&parsed.stdout).expect("the parser's JSON"))
}

impl Scrape {
    /// The type of a family (`counter`, `gauge`, `histogram`), `None` when it is absent.
    pub fn family_type(&self, family: &str) -> Option<&str> {
        self.0[family]["type"].as_str()
    }

    /// The value of the sample named `sample` with exactly `labels`, if the scrape has it.
    pub fn value(&self, sample: &str, labels: &[(&str, &str)]) -> Option<f64> {
        let labels: serde_json::Map<String, Value> = labels
            .iter()
            .map(|(name, value)| (name.to_string(), json!(value)))
            .collect();
        let families = self.0.as_object()?.values();
        let mut samples =
            families.flat_map(|family| family["samples"].as_array().into_iter().flatten());
        samples
            .find(|s| s["name"] == sample && s["labels"].as_object() == Some(&labels))
            .and_then(|s| s["value"].as_f64())
    }

    /// How much a counter moved from `before` to this scrape (absent counts as 0).
    pub fn moved(&self, before: &Scrape, sample: &str, labels: &[(&str, &str)]) -> f64 {
        let value = |scrape: &Scrape| scrape.value(sample, labels).unwrap_or(0.0);
        value(self) - value(before)
    }
}

// ---- TLS ----

/// A test certificate authority, and a server's TLS settings with a certificate it signed.
pub struct TestAuthority {
    pub certificate: rcgen::Certificate,
    pub server: std::sync::Arc<rustls::ServerConfig>,
}

/// A test authority and a server certificate for `names`, for TLS servers on loopback.
pub fn test_authority(names: &[&str]) -> TestAuthority {
    use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
    let authority_key = rcgen::KeyPair::generate().unwrap();
    let mut authority = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    authority.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let authority = authority.self_signed(&authority_key).unwrap();
    let server_key = rcgen::KeyPair::generate().unwrap();
    let names = names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
    let server_cert = rcgen::CertificateParams::new(names)
        .unwrap()
        .signed_by(&server_key, &authority, &authority_key)
        .unwrap();
    let private = PrivatePkcs8KeyDer::from(server_key.serialize_der());
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let server = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![server_cert.der().clone()],
            PrivateKeyDer::Pkcs8(private),
        )
        .unwrap();
    TestAuthority {
        certificate: authority,
        server: std::sync::Arc::new(server),
    }
}
