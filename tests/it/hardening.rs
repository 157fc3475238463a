//! Defects a hostile-input campaign found, each pinned by the test that failed before its fix.

use crate::fixtures::assert_error;
use crate::harness::tenant;
use serde_json::json;

#[test]
fn control_characters_in_json_texts_are_refused_with_their_field_and_change_nothing() {
    let t = tenant();
    let site = "/v1/sites/controls.example";
    assert_error(
        &t.client.put(site, &json!({"name": "a\u{0}b"})),
        422,
        "validation",
        Some("name"),
    );
    assert_eq!(
        t.client.get("/v1/sites").json()["items"],
        json!([]),
        "the site was not created"
    );
    assert_eq!(t.client.put(site, &json!({"name": "Controls"})).status, 201);
    let fragment = format!("{site}/fragments/%2Fx");
    let refused = [
        (json!({"name": "a\u{0}b"}), "name"),
        (json!({"name": "tab\there"}), "name"),
        (
            json!({"name": "N", "description": "nul\u{0}"}),
            "description",
        ),
        (
            json!({"name": "N", "key_values": {"k": ["v\u{0}"]}}),
            "key_values.k",
        ),
        (
            json!({"name": "N", "key_values": {"k": ["v\u{1b}[31m"]}}),
            "key_values.k",
        ),
    ];
    for (body, field) in refused {
        assert_error(
            &t.client.put(&fragment, &body),
            422,
            "validation",
            Some(field),
        );
    }
    assert_eq!(
        t.client.get(&format!("{site}/fragments")).json()["items"],
        json!([]),
        "no fragment was written"
    );
    let multi_line = json!({"name": "N", "description": "two\nlines\tand a tab"});
    assert_eq!(t.client.put(&fragment, &multi_line).status, 201);
    assert_error(
        &t.client.post("/v1/keys", &json!({"name": "k\u{0}"})),
        422,
        "validation",
        Some("name"),
    );
    assert_eq!(t.client.get("/v1/keys").json()["items"], json!([]));
}

#[test]
fn an_admin_command_whose_reader_has_gone_ends_quietly() {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_agentcard"))
        .args(["admin", "org", "create", "--name", "Piped"])
        .env("DATABASE_URL", &crate::harness::server().database_url)
        .env("RUST_LOG", "warn")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run agentcard admin");
    // The reader goes before the command writes (`| head` that has read enough).
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{:?}: {stderr}", output.status);
    assert_eq!(stderr, "");
}

#[test]
fn an_http11_request_without_exactly_one_host_is_refused() {
    let addr = crate::harness::server().addr;
    let cases: [(&str, u16); 4] = [
        ("GET /health HTTP/1.1\r\nConnection: close\r\n\r\n", 400),
        (
            "GET /v1/me HTTP/1.1\r\nHost: api.test\r\nHost: console.test\r\nConnection: close\r\n\r\n",
            400,
        ),
        (
            "GET /v1/me HTTP/1.1\r\nHost: console.test\r\nHost: api.test\r\nConnection: close\r\n\r\n",
            400,
        ),
        ("GET /health HTTP/1.0\r\n\r\n", 200),
    ];
    for (raw, status) in cases {
        let answer = &crate::harness::exchange(addr, raw.as_bytes())[0];
        assert_eq!(answer.status, status, "{raw:?}: {}", answer.text());
        if status == 400 {
            assert_eq!(answer.code(), "bad_request");
        }
    }
}

#[test]
fn an_absolute_form_target_is_served_with_its_authority_as_host() {
    let addr = crate::harness::server().addr;
    let raw =
        format!("GET http://{addr}/health HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    let answer = &crate::harness::exchange(addr, raw.as_bytes())[0];
    assert_eq!(answer.status, 200, "{}", answer.text());
    // The authority, not the Host header, decides the host's role: the base host asks for a
    // token where the console host would answer 404.
    let base = format!(
        "GET http://api.test/v1/me HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
        crate::harness::CONSOLE_HOST
    );
    let answer = &crate::harness::exchange(addr, base.as_bytes())[0];
    assert_eq!(
        (answer.status, answer.code()),
        (401, "missing_token".to_string())
    );
}

#[test]
fn expect_100_continue_gets_the_interim_answer_and_other_expectations_417() {
    use std::io::{Read, Write};
    let t = tenant();
    let addr = crate::harness::server().addr;
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(2)))
        .unwrap();
    let head = format!(
        "PUT /v1/sites/continue.example HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\
         Connection: close\r\n\r\n",
        t.token
    );
    stream.write_all(head.as_bytes()).unwrap();
    let mut interim = [0u8; 25];
    stream
        .read_exact(&mut interim)
        .expect("the interim answer before the body");
    assert_eq!(&interim, b"HTTP/1.1 100 Continue\r\n\r\n");
    stream.write_all(b"{}").unwrap();
    let mut rest = Vec::new();
    stream.read_to_end(&mut rest).unwrap();
    let answer = &crate::harness::parse_responses(&rest)[0];
    assert_eq!(answer.status, 201, "{}", answer.text());

    let other = "PUT /v1/sites/x.example HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\
                 Expect: 101-upgrade-me\r\n\r\n{}";
    let answer = &crate::harness::exchange(addr, other.as_bytes())[0];
    assert_eq!(
        (answer.status, answer.code()),
        (417, "expectation_failed".to_string())
    );
    assert_eq!(answer.header("Connection"), Some("close"));
}

/// Whether the server closed this idle connection within `bound` (a time-out: still open).
fn closed_by_server(stream: &mut std::net::TcpStream, bound: std::time::Duration) -> bool {
    use std::io::{ErrorKind, Read};
    stream.set_read_timeout(Some(bound)).unwrap();
    match stream.read(&mut [0u8; 1]) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => !matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut),
    }
}

/// `GET /health` on a fresh connection from `from`.
fn health_from(from: &str, addr: std::net::SocketAddr) -> u16 {
    use std::io::{Read, Write};
    let mut stream = crate::fixtures::connect_from(from, addr).expect("connect");
    stream
        .write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(5)))
        .unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).unwrap();
    crate::harness::parse_responses(&answer)[0].status
}

#[test]
fn one_address_holds_at_most_its_share_of_connections_and_others_still_get_in() {
    let process = crate::fixtures::ServeProcess::start_with(&[
        ("RUST_LOG", "warn"),
        ("AGENTCARD_MAX_CONNECTIONS_PER_IP", "8"),
    ]);
    // Not from 127.0.0.1, where the start's readiness checks came from: one of theirs still
    // open would take a place in the share.
    let mut held: Vec<std::net::TcpStream> = (0..12)
        .map(|_| crate::fixtures::connect_from("127.0.0.3", process.addr).unwrap())
        .collect();
    let second = std::time::Duration::from_secs(1);
    let closed: Vec<bool> = held
        .iter_mut()
        .map(|stream| closed_by_server(stream, second))
        .collect();
    assert_eq!(closed.iter().filter(|c| **c).count(), 4, "{closed:?}");
    assert_eq!(health_from("127.0.0.2", process.addr), 200);
    // Its share frees as its connections close.
    held.clear();
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert_eq!(health_from("127.0.0.3", process.addr), 200);
}

#[test]
fn near_the_open_files_limit_the_longest_idle_connections_make_room() {
    // 300 descriptors: idle connections are shed past (300 - 128) * 9 / 10 = 154 open; without
    // that, 260 idle ones and the process's own would use them all up.
    let process = crate::fixtures::ServeProcess::start_limited(&[("RUST_LOG", "warn")], Some(300));
    let mut idle: Vec<std::net::TcpStream> = (0..260)
        .map(|i| {
            let from = format!("127.0.1.{}", 1 + i % 50);
            crate::fixtures::connect_from(&from, process.addr).unwrap()
        })
        .collect();
    assert_eq!(
        health_from("127.0.0.9", process.addr),
        200,
        "{}",
        process.log()
    );
    let first_closed = closed_by_server(&mut idle[0], std::time::Duration::from_secs(2));
    assert!(first_closed, "the longest idle connection was shed");
}

#[test]
fn a_second_server_on_the_same_address_fails_to_start() {
    use agentcard::http::{self, HttpLimits, Request, Response, ServerOptions, Service};
    struct Nothing;
    impl Service for Nothing {
        fn call(&self, _: Request) -> Response {
            Response::new(204)
        }
    }
    let options = ServerOptions {
        limits: HttpLimits::default(),
        request_timeout: std::time::Duration::from_secs(1),
        idle_timeout: std::time::Duration::from_secs(1),
        own_answer_headers: &[],
    };
    let taken = crate::harness::server().addr;
    let second = http::start(taken, options, std::sync::Arc::new(Nothing));
    let error = second.err().expect("the address is taken");
    assert_eq!(error.kind(), std::io::ErrorKind::AddrInUse, "{error}");
}

#[test]
fn the_http_layers_own_refusals_carry_the_management_apis_headers() {
    let big = "x".repeat(20_000);
    let raw = format!("GET /v1/me HTTP/1.1\r\nHost: x\r\nX-Big: {big}\r\n\r\n");
    let answer = &crate::harness::exchange(crate::harness::server().addr, raw.as_bytes())[0];
    assert_eq!(answer.status, 431);
    assert_eq!(answer.header("Cache-Control"), Some("private, no-store"));
    assert_eq!(
        answer.header("RateLimit-Policy"),
        Some("\"token\";q=120;w=60, \"write\";q=60;w=60")
    );
}

#[test]
fn expect_100_continue_with_a_head_that_decides_is_answered_at_once() {
    use std::io::{Read, Write};
    let addr = crate::harness::server().addr;
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(2)))
        .unwrap();
    let head = "PUT /v1/sites/at-once.example HTTP/1.1\r\nHost: x\r\n\
                Content-Type: application/json\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n";
    stream.write_all(head.as_bytes()).unwrap();
    let mut answer = Vec::new();
    stream
        .read_to_end(&mut answer)
        .expect("the final answer, without the body");
    let answer = &crate::harness::parse_responses(&answer)[0];
    assert_eq!(
        (answer.status, answer.code()),
        (401, "missing_token".to_string())
    );
    assert_eq!(answer.header("Connection"), Some("close"));
    assert!(answer.header("RateLimit-Policy").is_some());
}
