//! The site icon: the fetch against HTTPS servers on loopback (a page's icon link, the
//! favicon, redirects, what is refused: addresses, SVG, size, time, other bodies), one attempt
//! an hour per site, and the background fetch through a running server, read back on `/v1` and
//! shown on the site's console page (its stored copy).
//! Names are answered by the test (`Names::Fixed`), never resolved: test domains end in
//! `.test`, and nothing is ever connected to off this machine.

use crate::console_fixtures::{new_org, person, Browser, PASSWORD};
use crate::fixtures::{test_authority, TestAuthority};
use crate::harness::{db, next_client_ip, server, start_server, tenant, Client, OwnServer};
use crate::harness::{Tenant, CONSOLE_HOST};
use agentcard::db::icons;
use agentcard::domain::{DomainName, Role};
use agentcard::icon::{self, Failure, Names};
use agentcard::ids::OrgId;
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x10\0\0\0\x10\x08\x06\0\0\0";
const ICO: &[u8] = b"\0\0\x01\0\x01\0\x10\x10\0\0\x01\0 \0";
/// Every name the test servers' certificate is for.
const NAMES: &[&str] = &[
    "site.test",
    "cdn.test",
    "elsewhere.test",
    "icon-e2e.test",
    "icon-page.test",
];

/// What a test server answers to a path.
enum Reply {
    Ok(&'static str, Vec<u8>),
    Redirect(&'static str),
    NotFound,
    /// A head promising a long body, then a byte every 100 ms.
    Drip,
}

type Routes = fn(&str) -> Reply;

/// An HTTPS server on a loopback address, answering by `routes`, counting the connections it
/// accepted; it stops when dropped.
struct TlsServer {
    addr: SocketAddr,
    connections: Arc<AtomicUsize>,
    stopped: Arc<AtomicBool>,
}

impl TlsServer {
    fn start(ip: &str, authority: &TestAuthority, routes: Routes) -> TlsServer {
        let listener = TcpListener::bind((ip, 0)).unwrap();
        let addr = listener.local_addr().unwrap();
        let connections = Arc::new(AtomicUsize::new(0));
        let stopped = Arc::new(AtomicBool::new(false));
        let (config, counted, stop) = (
            Arc::clone(&authority.server),
            Arc::clone(&connections),
            Arc::clone(&stopped),
        );
        std::thread::spawn(move || {
            for tcp in listener.incoming().flatten() {
                if stop.load(Ordering::Acquire) {
                    return;
                }
                counted.fetch_add(1, Ordering::AcqRel);
                let (config, stop) = (Arc::clone(&config), Arc::clone(&stop));
                std::thread::spawn(move || answer(tcp, config, routes, &stop));
            }
        });
        TlsServer {
            addr,
            connections,
            stopped,
        }
    }

    fn connections(&self) -> usize {
        self.connections.load(Ordering::Acquire)
    }
}

impl Drop for TlsServer {
    fn drop(&mut self) {
        self.stopped.store(true, Ordering::Release);
        let _ = TcpStream::connect(self.addr);
    }
}

/// One connection: one request, its answer, then the close.
fn answer(tcp: TcpStream, config: Arc<rustls::ServerConfig>, routes: Routes, stop: &AtomicBool) {
    let _ = tcp.set_read_timeout(Some(Duration::from_secs(10)));
    let session = rustls::ServerConnection::new(config).unwrap();
    let mut tls = rustls::StreamOwned::new(session, tcp);
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && tls.read(&mut byte).is_ok_and(|n| n == 1) {
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head);
    let path = head.split(' ').nth(1).unwrap_or("/").to_string();
    let (status, headers, body) = match routes(&path) {
        Reply::Ok(content_type, body) => {
            ("200 OK", format!("Content-Type: {content_type}\r\n"), body)
        }
        Reply::Redirect(to) => ("302 Found", format!("Location: {to}\r\n"), Vec::new()),
        Reply::NotFound => ("404 Not Found", String::new(), Vec::new()),
        Reply::Drip => {
            let head =
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 100000\r\n\r\n";
            let _ = tls.write_all(head.as_bytes()).and_then(|()| tls.flush());
            // Until the client gives up (or a minute, at the most).
            for _ in 0..600 {
                let sent = tls.write_all(b" ").and_then(|()| tls.flush());
                if sent.is_err() || stop.load(Ordering::Acquire) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            return;
        }
    };
    let head = format!(
        "HTTP/1.1 {status}\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = tls.write_all(head.as_bytes());
    let _ = tls.write_all(&body);
    tls.conn.send_close_notify();
    let _ = tls.flush();
}

fn page(head: &str) -> Reply {
    Reply::Ok(
        "text/html; charset=utf-8",
        format!("<!doctype html><html><head><title>t</title>{head}</head><body>x</body></html>")
            .into_bytes(),
    )
}

/// A client whose names resolve by `table` (a name not in it has no address), allowed to
/// connect to `allowed` and trusting the test authority.
fn client(
    authority: &TestAuthority,
    allowed: Option<SocketAddr>,
    table: Vec<(&'static str, Vec<SocketAddr>)>,
) -> icon::Client {
    let names = Names::Fixed(Arc::new(move |name: &str| {
        table
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, addrs)| addrs.clone())
            .unwrap_or_default()
    }));
    icon::Client::new(names, allowed, &[authority.certificate.der().clone()])
}

/// A client for one server, every test name resolving to it.
fn client_of(authority: &TestAuthority, server: &TlsServer) -> icon::Client {
    let table = NAMES.iter().map(|n| (*n, vec![server.addr])).collect();
    client(authority, Some(server.addr), table)
}

fn at(addr: &str) -> SocketAddr {
    addr.parse().unwrap()
}

// ---- what is fetched ----

#[test]
fn the_first_icon_link_of_the_page_is_fetched_from_where_its_redirect_leads() {
    let authority = test_authority(NAMES);
    let server = TlsServer::start("127.0.0.1", &authority, |path| match path {
        "/" => page(
            r#"<link rel="stylesheet" href="/s.css"><link rel="shortcut icon" href="/old.png"><link rel="icon" href="/second.png">"#,
        ),
        "/old.png" => Reply::Redirect("https://cdn.test/static/icon.png"),
        "/static/icon.png" => Reply::Ok("image/png", PNG.to_vec()),
        _ => Reply::NotFound,
    });
    let icon = client_of(&authority, &server).fetch("site.test").unwrap();
    assert_eq!(icon.source_url, "https://cdn.test/static/icon.png");
    assert_eq!(icon.content_type, "image/png");
    assert_eq!(icon.bytes, PNG);
}

#[test]
fn without_an_icon_link_the_favicon_is_fetched() {
    let authority = test_authority(NAMES);
    let server = TlsServer::start("127.0.0.1", &authority, |path| match path {
        "/" => page(r#"<link rel="stylesheet" href="/s.css">"#),
        "/favicon.ico" => Reply::Ok("image/vnd.microsoft.icon", ICO.to_vec()),
        _ => Reply::NotFound,
    });
    let icon = client_of(&authority, &server).fetch("site.test").unwrap();
    assert_eq!(icon.source_url, "https://site.test/favicon.ico");
    assert_eq!(icon.content_type, "image/x-icon");
    assert_eq!(icon.bytes, ICO);
}

#[test]
fn a_refused_link_falls_back_to_the_favicon_and_both_refused_tell_the_first_reason() {
    let authority = test_authority(NAMES);
    let server = TlsServer::start("127.0.0.1", &authority, |path| match path {
        "/" => page(r#"<link rel="icon" href="/icon.svg">"#),
        "/icon.svg" => Reply::Ok(
            "image/svg+xml",
            br#"<svg xmlns="http://www.w3.org/2000/svg"/>"#.to_vec(),
        ),
        "/favicon.ico" => Reply::Ok("image/png", PNG.to_vec()),
        _ => Reply::NotFound,
    });
    let icon = client_of(&authority, &server).fetch("site.test").unwrap();
    assert_eq!(icon.source_url, "https://site.test/favicon.ico");
    assert_eq!(icon.content_type, "image/png");

    let refused = fetch_failure(|path| match path {
        "/" => page(r#"<link rel="icon" href="/icon.svg">"#),
        "/icon.svg" => Reply::Ok(
            "image/svg+xml",
            br#"<svg xmlns="http://www.w3.org/2000/svg"/>"#.to_vec(),
        ),
        _ => Reply::NotFound,
    });
    assert!(
        matches!(&refused, Failure::NotAnIcon { url, .. } if url == "https://site.test/icon.svg"),
        "{refused:?}"
    );
    assert!(refused.to_string().contains("image/svg+xml"), "{refused}");
}

/// The failure of a fetch of `site.test` from a server answering by `routes`.
fn fetch_failure(routes: Routes) -> Failure {
    let authority = test_authority(NAMES);
    let server = TlsServer::start("127.0.0.1", &authority, routes);
    client_of(&authority, &server)
        .fetch("site.test")
        .expect_err("refused")
}

// ---- what is refused ----

#[test]
fn svg_in_disguise_html_and_other_bodies_are_not_icons() {
    let svg_as_png = fetch_failure(|path| match path {
        "/favicon.ico" => Reply::Ok(
            "image/png",
            b"<svg xmlns='http://www.w3.org/2000/svg'/>".to_vec(),
        ),
        _ => Reply::NotFound,
    });
    assert!(
        matches!(svg_as_png, Failure::NotAnIcon { .. }),
        "{svg_as_png:?}"
    );
    let html = fetch_failure(|path| match path {
        "/" => page(r#"<link rel="icon" href="/icon">"#),
        "/icon" => page(""),
        _ => Reply::NotFound,
    });
    assert!(matches!(html, Failure::NotAnIcon { .. }), "{html:?}");
    let untyped = fetch_failure(|path| match path {
        "/favicon.ico" => Reply::Ok("application/octet-stream", ICO.to_vec()),
        _ => Reply::NotFound,
    });
    assert!(matches!(untyped, Failure::NotAnIcon { .. }), "{untyped:?}");
    let missing = fetch_failure(|_| Reply::NotFound);
    assert!(
        matches!(&missing, Failure::Status { status: 404, url } if url == "https://site.test/favicon.ico"),
        "{missing:?}"
    );
}

#[test]
fn an_icon_over_the_size_in_all_is_refused() {
    let too_large = fetch_failure(|path| match path {
        "/" => page(r#"<link rel="icon" href="/big.png">"#),
        "/big.png" => Reply::Ok("image/png", [PNG, &vec![0u8; icon::BYTES]].concat()),
        _ => Reply::NotFound,
    });
    assert!(matches!(too_large, Failure::TooLarge), "{too_large:?}");
}

#[test]
fn a_server_that_drips_its_answer_is_given_up() {
    let timed_out = fetch_failure(|_| Reply::Drip);
    assert!(matches!(timed_out, Failure::TimedOut), "{timed_out:?}");
}

/// Three redirects: `/r0` → `/r2` → `/r3` → `/icon.png`.
fn redirects(path: &str) -> Reply {
    match path {
        "/r0" => Reply::Redirect("/r2"),
        "/r2" => Reply::Redirect("/r3"),
        "/r3" => Reply::Redirect("/icon.png"),
        "/icon.png" => Reply::Ok("image/png", PNG.to_vec()),
        _ => Reply::NotFound,
    }
}

#[test]
fn plain_http_links_and_more_than_three_redirects_are_refused() {
    let http = fetch_failure(|path| match path {
        "/" => page(r#"<link rel="icon" href="http://site.test/icon.png">"#),
        "/icon.png" => Reply::Ok("image/png", PNG.to_vec()),
        _ => Reply::NotFound,
    });
    assert!(matches!(http, Failure::NotHttps(_)), "{http:?}");

    let authority = test_authority(NAMES);
    let three: Routes = |path| match path {
        "/" => page(r#"<link rel="icon" href="/r0">"#),
        path => redirects(path),
    };
    let server = TlsServer::start("127.0.0.1", &authority, three);
    let icon = client_of(&authority, &server).fetch("site.test").unwrap();
    assert_eq!(icon.source_url, "https://site.test/icon.png");
    let four = fetch_failure(|path| match path {
        "/favicon.ico" => Reply::Redirect("/r1"),
        "/r1" => Reply::Redirect("/r0"),
        path => redirects(path),
    });
    assert!(matches!(four, Failure::TooManyRedirects), "{four:?}");
}

/// A name with one address not public among others is refused, naming that address and why.
#[test]
fn a_name_with_any_address_not_public_is_never_connected_to() {
    let authority = test_authority(NAMES);
    let server = TlsServer::start("127.0.0.1", &authority, |_| {
        Reply::Ok("image/png", PNG.to_vec())
    });
    let cases: &[(&[&str], &str, &str)] = &[
        (&["10.0.0.7:443"], "10.0.0.7", "private"),
        (
            &["93.184.215.14:443", "192.168.1.1:443"],
            "192.168.1.1",
            "private",
        ),
        (
            &[
                "[2606:2800:21f:cb07:6820:80da:af6b:8b2c]:443",
                "[fd00:ec2::254]:443",
            ],
            "fd00:ec2::254",
            "cloud metadata",
        ),
        (
            &["169.254.169.254:443"],
            "169.254.169.254",
            "cloud metadata",
        ),
        (
            &["100.64.1.2:443"],
            "100.64.1.2",
            "shared address space (CGNAT)",
        ),
        (&["[::ffff:127.0.0.1]:443"], "::ffff:127.0.0.1", "loopback"),
        (&["[fe80::1]:443"], "fe80::1", "link-local"),
        (&["127.0.0.1:443"], "127.0.0.1", "loopback"),
    ];
    for (answers, ip, why) in cases {
        // The test server's own address first: still refused for the other (and were the check
        // ever lost, the connection would go there, never off this machine).
        let mut addrs = vec![server.addr];
        addrs.extend(answers.iter().map(|a| at(a)));
        let refused = client(&authority, Some(server.addr), vec![("site.test", addrs)])
            .fetch("site.test")
            .expect_err("refused");
        let expected: IpAddr = ip.parse().unwrap();
        assert!(
            matches!(&refused, Failure::NotPublic { host, ip, why: w } if host == "site.test" && *ip == expected && w == why),
            "{answers:?}: {refused:?}"
        );
    }
    assert_eq!(
        server.connections(),
        0,
        "a refused name is never connected to"
    );

    // A loopback server not allowed, as a deployment has none.
    let refused = client(&authority, None, vec![("site.test", vec![server.addr])])
        .fetch("site.test")
        .expect_err("refused");
    assert!(
        matches!(
            refused,
            Failure::NotPublic {
                why: "loopback",
                ..
            }
        ),
        "{refused:?}"
    );
    assert_eq!(server.connections(), 0);
}

#[test]
fn a_redirect_to_an_address_not_public_is_refused_before_it_is_followed() {
    let authority = test_authority(NAMES);
    let server = TlsServer::start("127.0.0.1", &authority, |path| match path {
        "/" => Reply::Redirect("https://elsewhere.test/"),
        "/favicon.ico" => Reply::Redirect("https://cdn.test/favicon.ico"),
        _ => Reply::NotFound,
    });
    // elsewhere.test: another loopback server, which is not the allowed one.
    let other = TlsServer::start("127.0.0.2", &authority, |_| {
        Reply::Ok("image/png", PNG.to_vec())
    });
    let table = vec![
        ("site.test", vec![server.addr]),
        ("elsewhere.test", vec![other.addr]),
        // The loopback server first: were the check ever lost, that is where a connection
        // would go, never off this machine.
        ("cdn.test", vec![server.addr, at("192.168.0.10:443")]),
    ];
    let refused = client(&authority, Some(server.addr), table)
        .fetch("site.test")
        .expect_err("refused");
    assert!(
        matches!(&refused, Failure::NotPublic { host, why: "private", .. } if host == "cdn.test"),
        "{refused:?}"
    );
    assert_eq!(
        server.connections(),
        2,
        "the page and the favicon were asked"
    );
    assert_eq!(other.connections(), 0, "the redirect was not followed");
}

// ---- one attempt an hour, and the background fetch ----

/// A site of `t`'s organisation made through `/v1`, as stored.
fn new_site(t: &Tenant, domain: &str) -> agentcard::db::sites::SiteRow {
    let made = t
        .client
        .put(&format!("/v1/sites/{domain}"), &json!({"name": "Icon"}));
    assert_eq!(made.status, 201, "{}", made.text());
    let org = OrgId::parse(&t.org_id).unwrap();
    let domain = DomainName::parse(domain).unwrap();
    agentcard::db::sites::find_site(&mut db(), &org, &domain)
        .unwrap()
        .expect("the site")
}

#[test]
fn a_site_is_tried_at_most_once_within_the_retry_period_and_never_once_it_has_an_icon() {
    let t = tenant();
    let site = new_site(&t, "claims.test");
    let mut db = db();
    assert!(icons::claim_attempt(&mut db, site.id, icon::RETRY).unwrap());
    assert!(!icons::claim_attempt(&mut db, site.id, icon::RETRY).unwrap());
    assert!(icons::claim_attempt(&mut db, site.id, Duration::ZERO).unwrap());
    icons::store(
        &mut db,
        site.id,
        "https://claims.test/favicon.ico",
        "image/x-icon",
        ICO,
    )
    .unwrap();
    assert!(!icons::claim_attempt(&mut db, site.id, Duration::ZERO).unwrap());
    let gone = agentcard::ids::SiteId(-1);
    assert!(!icons::claim_attempt(&mut db, gone, Duration::ZERO).unwrap());
}

fn listed_icon(client: &Client, domain: &str) -> Value {
    let listed = client.get("/v1/sites");
    assert_eq!(listed.status, 200, "{}", listed.text());
    let sites = listed.json()["items"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let site = sites
        .into_iter()
        .find(|s| s["domain"] == domain)
        .expect("listed");
    site["icon"].clone()
}

/// A server of its own with the icon fetch on, every name connecting to a loopback HTTPS site
/// whose page links `/static/icon.png` (a PNG), trusting the test authority; the site server
/// and the directory of the authority's file go with it.
struct FetchingServer {
    own: OwnServer,
    _site: TlsServer,
    dir: std::path::PathBuf,
}

impl FetchingServer {
    fn start(name: &str) -> FetchingServer {
        let authority = test_authority(NAMES);
        let site = TlsServer::start("127.0.0.1", &authority, |path| match path {
            "/" => page(r#"<link rel="icon" href="/static/icon.png">"#),
            "/static/icon.png" => Reply::Ok("image/png", PNG.to_vec()),
            _ => Reply::NotFound,
        });
        let dir =
            std::env::temp_dir().join(format!("agentcard-icon-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let ca_file = dir.join("ca.pem");
        std::fs::write(&ca_file, authority.certificate.pem()).unwrap();
        let connect_to = site.addr.to_string();
        let own = start_server(
            &server().database_url,
            &[
                ("AGENTCARD_ICON_FETCH", "on"),
                ("AGENTCARD_ICON_TEST_CONNECT_TO", &connect_to),
                ("AGENTCARD_ICON_TEST_CA_FILE", ca_file.to_str().unwrap()),
            ],
        );
        FetchingServer {
            own,
            _site: site,
            dir,
        }
    }
}

impl Drop for FetchingServer {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[test]
fn a_running_server_fetches_the_icon_in_the_background_and_v1_shows_its_url() {
    let fetching = FetchingServer::start("e2e");
    let own = &fetching.own;
    let t = tenant();
    let client = Client::new(own.addr).token(&t.token);
    let site = new_site(&t, "icon-e2e.test");
    assert_eq!(listed_icon(&client, "icon-e2e.test"), Value::Null);

    own.app.icons.look_up(&site);
    let started = Instant::now();
    let shown = loop {
        let shown = listed_icon(&client, "icon-e2e.test");
        if !shown.is_null() || started.elapsed() > Duration::from_secs(30) {
            break shown;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(shown, "https://icon-e2e.test/static/icon.png");
    let org = OrgId::parse(&t.org_id).unwrap();
    let domain = DomainName::parse("icon-e2e.test").unwrap();
    let stored = icons::stored_icon(&mut db(), &org, &domain)
        .unwrap()
        .expect("stored");
    assert_eq!(
        (stored.content_type.as_str(), stored.bytes.as_slice()),
        ("image/png", PNG)
    );
    let other = new_org_icon(&domain);
    assert_eq!(
        other, None,
        "another organisation's site of that domain has none"
    );
}

#[test]
fn the_site_page_shows_the_stored_icon_once_its_first_opening_has_fetched_it() {
    let fetching = FetchingServer::start("page");
    let t = tenant();
    new_site(&t, "icon-page.test");
    let email = person(Some(&t.org_id), Role::Member);
    let mut browser = Browser {
        client: Client::new(fetching.own.addr)
            .host(CONSOLE_HOST)
            .ip(&next_client_ip()),
        cookie: None,
    };
    assert_eq!(browser.sign_in(&email, PASSWORD).status, 303);
    assert_eq!(browser.get("/sites/icon-page.test/icon").status, 404);
    let img = r#"<img class="site-icon" src="/sites/icon-page.test/icon" alt=""#;
    let started = Instant::now();
    let shown = loop {
        // Each opening asks for the icon; the fetcher queues the site once.
        let page = browser.get("/sites/icon-page.test");
        assert_eq!(page.status, 200);
        if page.text().contains(img) || started.elapsed() > Duration::from_secs(30) {
            break page.text();
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(shown.contains(img), "{shown}");
    let icon = browser.get("/sites/icon-page.test/icon");
    assert_eq!(icon.status, 200);
    assert_eq!(icon.header("Content-Type"), Some("image/png"));
    assert_eq!(icon.body, PNG);
    // Another organisation's member: not found, like a site of its own it does not have.
    let other = Browser::signed_in(&person(Some(&new_org()), Role::Owner));
    assert_eq!(other.get("/sites/icon-page.test/icon").status, 404);
}

/// The stored icon of a new organisation's site with `domain`.
fn new_org_icon(domain: &DomainName) -> Option<icons::StoredIcon> {
    let t = tenant();
    new_site(&t, domain.as_str());
    let org = OrgId::parse(&t.org_id).unwrap();
    icons::stored_icon(&mut db(), &org, domain).unwrap()
}
