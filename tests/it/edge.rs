//! `agentcard edge`, the reference edge, as a separate process: every shared case of
//! `recipes/cases/` through it (checked by `recipes/cases/harness.py`, the checker the recipes run
//! too) with its log line per fail-open cause, a card from a real `agentcard serve`,
//! `abc.txt`, the sites' `ctx.` values on the card call, the configuration refusals (a key
//! that is not a delivery key among them), and docs/edge.md's check command as written there.

mod metrics;

use crate::edge_fixtures::{get_once, read_answer, Edge, Stubs, CASES_KEY, GPTBOT, HARNESS};
use crate::fixtures::{free_local_addr, test_authority, CardSpec, World};
use crate::harness::server;
use agentcard::recipes::{Recipe, Values};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const KEY_VAR: &str = "AGENTCARD_EDGE_KEY";
/// The shared cases' site (recipes/cases/cases.json, `site`) in the sites file of
/// `recipes/edge/`, as the console's "Connect an edge" fills it in.
pub fn cases_sites() -> String {
    let values = Values {
        domain: "news.example",
        partner_id: "org_edge",
        fragment_id: Some("frg_edge"),
        lang: Some("fr"),
        service_url: None,
        key: None,
    };
    Recipe::named("sites.toml").unwrap().filled(&values)
}

/// Runs `harness.py check` on the edge; its output, its report (one JSON object a case).
fn check_cases(edge: &Edge, stubs: &Stubs) -> (bool, String, Vec<serde_json::Value>) {
    let report = edge.dir.join("report.jsonl");
    let output = Command::new("python3")
        .arg(HARNESS)
        .arg("check")
        .args(["--edge", &format!("http://{}", edge.addr)])
        .args(["--origin", &format!("http://{}", stubs.origin)])
        .args(["--card", &format!("http://{}", stubs.card)])
        .args(["--runtime", "agentcard-edge", "--report"])
        .arg(&report)
        .output()
        .expect("run harness.py check");
    let lines = std::fs::read_to_string(&report).unwrap_or_default();
    let cases = lines
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let text = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    (output.status.success(), text, cases)
}

#[test]
fn every_shared_case_passes_through_the_edge_with_one_log_line_per_cause() {
    let stubs = Stubs::start("none");
    let edge = Edge::start(stubs.origin, stubs.card, &cases_sites(), &[]);
    let (passed, output, cases) = check_cases(&edge, &stubs);
    assert!(
        passed,
        "harness.py check failed:\n{output}\nedge log:\n{}",
        edge.log()
    );
    assert!(
        cases.len() > 80,
        "only {} cases ran:\n{output}",
        cases.len()
    );
    // Every case's path starts with its name, and each has a page of its own.
    for case in &cases {
        let name = case["case"].as_str().unwrap();
        let lines = edge.fail_open_lines(&format!("https://news.example/{name}"));
        match case["cause"].as_str() {
            Some(cause) => {
                assert_eq!(lines.len(), 1, "{name}: {lines:?}");
                assert!(
                    lines[0].contains(&format!("fail open: {cause} ")),
                    "{name}: {lines:?}"
                );
            }
            None => assert!(lines.is_empty(), "{name} logged {lines:?}"),
        }
    }
    assert!(!edge.log().contains(CASES_KEY), "the key was logged");
}

/// One request through the edge on its own connection; status line and headers, and the body
/// with its chunked framing removed.
fn get(addr: SocketAddr, host: &str, path: &str, user_agent: &str) -> (String, Vec<u8>) {
    read_answer(&get_once(
        addr,
        host,
        path,
        user_agent,
        Duration::from_secs(10),
    ))
}

#[test]
fn a_body_announced_with_expect_100_continue_is_asked_for_at_once_and_reaches_the_origin() {
    let stubs = Stubs::start("none");
    let edge = Edge::start(stubs.origin, stubs.card, &cases_sites(), &[]);
    let mut stream = TcpStream::connect(edge.addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let head = "POST /human-post HTTP/1.1\r\nHost: news.example\r\nUser-Agent: Firefox\r\n\
                Content-Length: 5\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n";
    stream.write_all(head.as_bytes()).unwrap();
    let mut interim = [0u8; 25];
    stream.read_exact(&mut interim).unwrap();
    assert_eq!(&interim, b"HTTP/1.1 100 Continue\r\n\r\n");
    stream.write_all(b"hello").unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    // sha256("hello"), as the origin stub echoes the body it received.
    let hello = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824";
    assert!(answer.contains(hello), "{answer}");
}

#[test]
fn a_card_from_a_real_agentcard_serve_goes_before_the_article_with_its_brand_line() {
    let mut world = World::new();
    let site = world.site("news.example");
    let fragment = world.fragment(site, "/home", true);
    let card = world.card(CardSpec::default(), &[&fragment]);
    let sites = format!(
        "[[site]]\ndomain = \"news.example\"\npartner_id = \"{}\"\nfragment_id = \"{fragment}\"\n\
         lang = \"fr\"\n",
        world.org_id
    );
    let stubs = Stubs::start("none");
    let key = world.key.clone();
    let edge = Edge::start(
        stubs.origin,
        server().addr,
        &sites,
        &[("AGENTCARD_EDGE_KEY", &key)],
    );

    let (head, body) = get(
        edge.addr,
        "news.example",
        "/card-brand-escaping?x=1",
        GPTBOT,
    );
    let page = String::from_utf8(body).unwrap();
    let placed = format!(
        "<aside class=\"agentcard\" data-card-id=\"{card}\" data-brand=\"Brand\" lang=\"fr\">"
    );
    let card_at = page
        .find(&placed)
        .unwrap_or_else(|| panic!("no card in:\n{head}{page}"));
    let article = &page[card_at..];
    let article_at = article.find("</aside>").unwrap() + "</aside>".len();
    assert!(article[article_at..].starts_with("<article"), "{page}");
    let inside = &article[article_at..];
    let tag_end = inside.find('>').unwrap() + 1;
    assert!(
        inside[tag_end..].starts_with("<p class=\"agentcard-brand-line\">Brand</p>"),
        "{page}"
    );
    assert!(
        head.contains("Cache-Control: public, max-age=0, must-revalidate\r\n"),
        "{head}"
    );
    assert!(
        edge.log().lines().all(|line| !line.contains("fail open")),
        "{}",
        edge.log()
    );
    assert!(!edge.log().contains(&key), "the key was logged");
}

#[test]
fn a_service_that_refuses_connections_leaves_the_page_unchanged_and_says_unreachable() {
    let stubs = Stubs::start("none");
    let closed = free_local_addr();
    let edge = Edge::start(stubs.origin, closed, &cases_sites(), &[]);
    let (direct_head, direct_body) = get(stubs.origin, "news.example", "/card-closed", "x");
    let (head, body) = get(edge.addr, "news.example", "/card-closed", GPTBOT);
    assert_eq!(body, direct_body);
    assert!(head.starts_with("HTTP/1.1 200"), "{head} vs {direct_head}");
    let lines = edge.fail_open_lines("https://news.example/card-closed");
    assert_eq!(lines.len(), 1, "{}", edge.log());
    assert!(lines[0].contains("fail open: unreachable "), "{lines:?}");
}

#[test]
fn abc_txt_is_served_byte_for_byte_to_every_user_agent() {
    let stubs = Stubs::start("none");
    let dir = tempdir("abc");
    let file =
        b"\xEF\xBB\xBFcards.example, acc_1, direct # ours\n\nother.example, 42, RESELLER, x\n";
    std::fs::write(dir.join("abc.txt"), file).unwrap();
    let abc = dir.join("abc.txt");
    let edge = Edge::start(
        stubs.origin,
        stubs.card,
        &cases_sites(),
        &[("AGENTCARD_EDGE_ABC_TXT", abc.to_str().unwrap())],
    );
    for user_agent in [GPTBOT, "Mozilla/5.0 Firefox/130.0"] {
        let (head, body) = get(edge.addr, "news.example", "/abc.txt", user_agent);
        assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
        assert!(head.contains("Content-Type: text/plain\r\n"), "{head}");
        assert_eq!(body, file.to_vec());
    }
}

fn tempdir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("agentcard-edge-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Starts the edge with `env`; it must stop within 5 s, non-zero, its message naming `named`.
/// Its log.
#[track_caller]
fn assert_refused(sites: &str, env: &[(&str, &str)], named: &str) -> String {
    let unused = free_local_addr();
    let (mut edge, started) = Edge::spawn(unused, unused, sites, env);
    let status = loop {
        if let Some(status) = edge.child.try_wait().unwrap() {
            break status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "still running: {}",
            edge.log()
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(!status.success());
    assert!(edge.log().contains(named), "{named} not in: {}", edge.log());
    edge.log()
}

#[test]
fn a_bad_configuration_stops_the_start_naming_the_variable_or_the_line() {
    assert_refused(
        &cases_sites(),
        &[("AGENTCARD_EDGE_KEY", "")],
        "AGENTCARD_EDGE_KEY",
    );
    assert_refused(
        &cases_sites(),
        &[("AGENTCARD_EDGE_BUDGET_MS", "soon")],
        "AGENTCARD_EDGE_BUDGET_MS",
    );
    assert_refused(
        &cases_sites(),
        &[("AGENTCARD_EDGE_ORIGIN", "ftp://x")],
        "AGENTCARD_EDGE_ORIGIN",
    );
    assert_refused(
        &cases_sites(),
        &[("AGENTCARD_EDGE_LISTEN", "here")],
        "AGENTCARD_EDGE_LISTEN",
    );
    let bad_lang = cases_sites().replace("\"fr\"", "\"pt\"");
    assert_refused(&bad_lang, &[], "sites.toml:8: lang");
    let dir = tempdir("bad-abc");
    let abc = dir.join("abc.txt");
    std::fs::write(
        &abc,
        "cards.example, acc_1, DIRECT\ncards.example, acc_1, PARTNER\ncards.example\n",
    )
    .unwrap();
    // Every refused line is named, not only the first.
    let named = format!(
        "{}: line 2: the relationship must be DIRECT or RESELLER; line 3:",
        abc.display()
    );
    assert_refused(
        &cases_sites(),
        &[("AGENTCARD_EDGE_ABC_TXT", abc.to_str().unwrap())],
        &named,
    );
    let missing = Path::new("/nonexistent/sites.toml");
    assert!(!missing.exists());
}

#[test]
fn a_management_token_or_anything_but_a_delivery_key_is_refused_without_being_shown() {
    let management = format!("svc_mgmt_{}", "0123456789".repeat(4));
    for key in [
        management.as_str(),
        "hello world",
        "svc_live_x\r\nX-Injected: 1",
    ] {
        let log = assert_refused(&cases_sites(), &[("AGENTCARD_EDGE_KEY", key)], KEY_VAR);
        assert!(!log.contains(key), "the key was shown: {log}");
    }
}

#[test]
fn the_sites_ctx_values_reach_the_card_service_fixed_and_from_the_path() {
    let stubs = Stubs::start("none");
    let sites = format!(
        "{}ctx = {{ edition = \"paris\" }}\n\
         ctx_from_path = {{ section = 2, depth = 5 }}\n",
        cases_sites()
    );
    let edge = Edge::start(stubs.origin, stubs.card, &sites, &[]);
    let (head, _) = get(
        edge.addr,
        "news.example",
        "/marker-gptbot/%C3%A9conomie/x?q=1",
        GPTBOT,
    );
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let (_, calls) = get(stubs.card, "card-stub", "/_calls/marker-gptbot", "x");
    let calls: serde_json::Value = serde_json::from_slice(&calls).unwrap();
    let ctx: Vec<(&str, &str)> = calls[0]["query"]
        .as_array()
        .unwrap()
        .iter()
        .map(|pair| (pair[0].as_str().unwrap(), pair[1].as_str().unwrap()))
        .filter(|(name, _)| name.starts_with("ctx."))
        .collect();
    assert_eq!(
        ctx,
        [("ctx.edition", "paris"), ("ctx.section", "économie")],
        "{calls}"
    );
}

#[test]
fn a_bad_ctx_key_in_the_sites_file_stops_the_start_naming_its_line() {
    let bad_key = format!(
        "{}ctx = {{ \"Section Name\" = \"sport\" }}\n",
        cases_sites()
    );
    assert_refused(&bad_key, &[], "sites.toml:9: ctx.Section Name");
    let bad_segment = format!("{}\nctx_from_path = {{ section = 0 }}\n", cases_sites());
    assert_refused(&bad_segment, &[], "sites.toml:10: ctx_from_path.section");
}

/// A server on loopback answering every request with `answer` and closing the connection.
fn answering(answer: String) -> SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).is_ok_and(|n| n == 1) {
                head.push(byte[0]);
            }
            let _ = stream.write_all(answer.as_bytes());
        }
    });
    addr
}

fn html_answer(body: &str) -> String {
    format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    )
}

/// The check command of docs/edge.md's "agentcard edge" steps, as written there.
fn documented_check() -> String {
    let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/edge.md"))
        .expect("read docs/edge.md");
    let lines: Vec<&str> = docs
        .lines()
        .map(str::trim)
        .filter(|line| line.starts_with("curl ") && line.contains("GPTBot"))
        .collect();
    assert_eq!(
        lines.len(),
        1,
        "one agent curl line in docs/edge.md: {lines:?}"
    );
    lines[0].to_string()
}

/// The address `agentcard edge` listens on when told none.
fn default_listen(sites: &Path) -> SocketAddr {
    let args = agentcard::edge::EdgeArgs {
        listen: None,
        origin: Some("http://127.0.0.1:1".into()),
        service: Some("http://127.0.0.1:1".into()),
        sites: Some(sites.to_path_buf()),
        budget_ms: None,
        abc_txt: None,
        ca_file: None,
        metrics_listen: None,
    };
    let config = agentcard::edge::EdgeConfig::from_args(args, Some(CASES_KEY.into()));
    config
        .expect("the defaults and a sites file make a configuration")
        .listen
}

#[test]
fn the_documented_check_shows_the_card_from_an_edge_started_with_the_defaults() {
    const CARD: &str = "<aside class=\"agentcard\" data-card-id=\"crd_doc\" data-brand=\"Doc\" lang=\"fr\">x</aside>";
    let origin = answering(html_answer(
        "<html><body><article><p>Text</p></article></body></html>",
    ));
    let service = answering(html_answer(CARD));
    let sites = "[[site]]\ndomain = \"www.example-news.com\"\npartner_id = \"acc_doc\"\n\
                 fragment_id = \"frg_doc\"\nlang = \"fr\"\n";
    let edge = Edge::start(origin, service, sites, &[]);
    // The documented line talks to the default address; this edge listens on a free port of
    // its own, so that tests running side by side never meet there.
    let default = format!("http://{}/", default_listen(&edge.dir.join("sites.toml")));
    let command = documented_check();
    assert!(
        command.contains(&default),
        "{command} does not ask {default}"
    );
    let command = command.replace(&default, &format!("http://{}/", edge.addr));
    let output = Command::new("sh")
        .args(["-c", &command])
        .output()
        .expect("run sh -c curl …");
    let page = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && page.contains(&format!("{CARD}<article>")),
        "{command}\n{page}\n{}\n{}",
        String::from_utf8_lossy(&output.stderr),
        edge.log()
    );
}

/// A TLS server on loopback for `localhost`, with a certificate of a test authority, that
/// answers every request with `card`. The authority's certificate (PEM) and the address.
fn tls_card_server(card: &'static str) -> (String, SocketAddr) {
    let authority = test_authority(&["localhost"]);
    let config = std::sync::Arc::clone(&authority.server);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for tcp in listener.incoming().flatten() {
            let session = rustls::ServerConnection::new(std::sync::Arc::clone(&config)).unwrap();
            let mut tls = rustls::StreamOwned::new(session, tcp);
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && tls.read(&mut byte).is_ok_and(|n| n == 1) {
                head.push(byte[0]);
            }
            let answer = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=UTF-8\r\n\
                 Content-Length: {}\r\nConnection: close\r\n\r\n{card}",
                card.len()
            );
            let _ = tls.write_all(answer.as_bytes());
            tls.conn.send_close_notify();
            let _ = tls.flush();
        }
    });
    (authority.certificate.pem(), addr)
}

#[test]
fn an_https_service_is_trusted_through_the_ca_file_and_never_without_verification() {
    const CARD: &str = "<aside class=\"agentcard\" data-card-id=\"crd_tls\" data-brand=\"TLS\" lang=\"fr\">x</aside>";
    let stubs = Stubs::start("none");
    let (authority, tls) = tls_card_server(CARD);
    let dir = tempdir("tls");
    std::fs::write(dir.join("ca.pem"), authority).unwrap();
    let service = format!("https://localhost:{}", tls.port());
    let unused = free_local_addr();
    let trusting = Edge::start(
        stubs.origin,
        unused,
        &cases_sites(),
        &[
            ("AGENTCARD_EDGE_SERVICE", &service),
            (
                "AGENTCARD_EDGE_CA_FILE",
                dir.join("ca.pem").to_str().unwrap(),
            ),
        ],
    );
    let (_, body) = get(trusting.addr, "news.example", "/card-closed", GPTBOT);
    let page = String::from_utf8(body).unwrap();
    assert!(
        page.contains(&format!("{CARD}<article")),
        "{page}\n{}",
        trusting.log()
    );

    let unverified = Edge::start(
        stubs.origin,
        unused,
        &cases_sites(),
        &[("AGENTCARD_EDGE_SERVICE", &service)],
    );
    let (_, body) = get(unverified.addr, "news.example", "/card-closed", GPTBOT);
    let (_, direct) = get(stubs.origin, "news.example", "/card-closed", "x");
    assert_eq!(body, direct);
    let lines = unverified.fail_open_lines("https://news.example/card-closed");
    assert_eq!(lines.len(), 1, "{}", unverified.log());
    assert!(
        lines[0].contains("fail open: unreachable ") && lines[0].contains("certificate"),
        "{lines:?}"
    );
}
