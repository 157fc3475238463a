//! The HTTP layer survives hostile input: each item of the foundation issue's point 6.

use crate::harness::{exchange, parse_responses, server, IDLE_TIMEOUT_MS, REQUEST_TIMEOUT_MS};
use agentcard::http::{self, HttpLimits, Request, Response, ServerOptions, Service};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn health_request(extra: &str) -> String {
    format!("GET /health HTTP/1.1\r\nHost: api.test\r\n{extra}\r\n")
}

/// Reads until the server closes the connection; `None` if it is still open after `wait`.
fn read_until_closed(stream: &mut TcpStream, wait: Duration) -> Option<Vec<u8>> {
    stream.set_read_timeout(Some(wait)).unwrap();
    let mut received = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        match stream.read(&mut chunk) {
            Ok(0) => return Some(received),
            Ok(n) => received.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return Some(received),
            Err(_) => return None,
        }
    }
}

fn server_still_serves() {
    let responses = exchange(
        server().addr,
        health_request("Connection: close\r\n").as_bytes(),
    );
    assert_eq!(responses[0].status, 200);
}

#[test]
fn a_request_with_40_headers_is_answered() {
    let headers: String = (0..40)
        .map(|i| format!("X-Extra-{i}: value-{i}\r\n"))
        .collect();
    let responses = exchange(
        server().addr,
        health_request(&format!("{headers}Connection: close\r\n")).as_bytes(),
    );
    assert_eq!(responses.len(), 1);
    assert_eq!(responses[0].status, 200);
}

#[test]
fn malformed_negative_or_oversized_content_length_is_a_4xx() {
    let cases = [
        "abc",
        "-1",
        "1e3",
        "18446744073709551616",
        "99999999999999999999999",
        "5, 6",
    ];
    for value in cases {
        let raw = format!(
            "POST /v1/me HTTP/1.1\r\nHost: api.test\r\nContent-Length: {value}\r\n\r\n{{}}"
        );
        let responses = exchange(server().addr, raw.as_bytes());
        assert_eq!(responses.len(), 1, "{value}");
        assert!(
            (400..500).contains(&responses[0].status),
            "{value}: {}",
            responses[0].status
        );
    }
    server_still_serves();
}

#[test]
fn a_declared_body_over_the_limit_is_not_read() {
    let raw = "PUT /v1/sites/a.com HTTP/1.1\r\nHost: api.test\r\nContent-Type: application/json\r\nContent-Length: 999999999\r\n\r\n";
    let responses = exchange(server().addr, raw.as_bytes());
    assert_eq!(responses.len(), 1);
    assert_eq!(
        responses[0].status, 401,
        "authentication first, then body_too_large"
    );
    assert_eq!(responses[0].header("Connection"), Some("close"));
}

#[test]
fn a_chunked_body_is_refused_never_parsed_as_a_next_request() {
    let smuggled = "GET /health HTTP/1.1\r\nHost: api.test\r\n\r\n";
    let chunk = format!("{:x}\r\n{smuggled}\r\n0\r\n\r\n", smuggled.len());
    let raw = format!(
        "POST /contact HTTP/1.1\r\nHost: api.test\r\nTransfer-Encoding: chunked\r\n\r\n{chunk}"
    );
    let responses = exchange(server().addr, raw.as_bytes());
    assert_eq!(responses.len(), 1, "only the refusal, no smuggled answer");
    assert_eq!(responses[0].status, 411);
    assert_eq!(responses[0].header("Connection"), Some("close"));
}

#[test]
fn request_head_bytes_are_capped() {
    let mut stream = TcpStream::connect(server().addr).unwrap();
    let mut raw = b"GET /health HTTP/1.1\r\nHost: api.test\r\nX-Big: ".to_vec();
    raw.extend(std::iter::repeat_n(b'a', 64 * 1024));
    let _ = stream.write_all(&raw);
    let received =
        read_until_closed(&mut stream, Duration::from_secs(5)).expect("connection closed");
    let responses = parse_responses(&received);
    assert_eq!(responses.len(), 1);
    assert_eq!(responses[0].status, 431);
    server_still_serves();
}

#[test]
fn a_trickling_request_is_closed_after_the_request_timeout() {
    let mut stream = TcpStream::connect(server().addr).unwrap();
    let started = Instant::now();
    stream
        .write_all(b"GET /health HTTP/1.1\r\nHost: api")
        .unwrap();
    let mut closed = None;
    for _ in 0..30 {
        std::thread::sleep(Duration::from_millis(100));
        if stream.write_all(b"a").is_err() {
            break;
        }
        if let Some(bytes) = read_until_closed(&mut stream, Duration::from_millis(1)) {
            closed = Some(bytes);
            break;
        }
    }
    let received = closed
        .or_else(|| read_until_closed(&mut stream, Duration::from_secs(2)))
        .expect("closed");
    let elapsed = started.elapsed();
    assert!(
        elapsed >= Duration::from_millis(REQUEST_TIMEOUT_MS),
        "closed after {elapsed:?}"
    );
    assert!(
        elapsed < Duration::from_millis(REQUEST_TIMEOUT_MS * 3),
        "closed after {elapsed:?}"
    );
    assert_eq!(parse_responses(&received)[0].status, 408);
}

#[test]
fn an_idle_keep_alive_connection_is_closed() {
    let mut stream = TcpStream::connect(server().addr).unwrap();
    stream.write_all(health_request("").as_bytes()).unwrap();
    let started = Instant::now();
    let received = read_until_closed(&mut stream, Duration::from_millis(IDLE_TIMEOUT_MS * 3))
        .expect("closed when idle");
    assert!(started.elapsed() >= Duration::from_millis(IDLE_TIMEOUT_MS - 100));
    assert_eq!(parse_responses(&received)[0].status, 200);
}

#[test]
fn connection_close_and_http_10_close_after_the_answer() {
    for raw in [
        health_request("Connection: close\r\n"),
        "GET /health HTTP/1.0\r\nHost: api.test\r\n\r\n".to_string(),
    ] {
        let mut stream = TcpStream::connect(server().addr).unwrap();
        stream.write_all(raw.as_bytes()).unwrap();
        let received =
            read_until_closed(&mut stream, Duration::from_millis(500)).expect("closed at once");
        let responses = parse_responses(&received);
        assert_eq!(responses.len(), 1);
        assert_eq!(responses[0].header("Connection"), Some("close"));
    }
}

#[test]
fn pipelined_requests_are_answered_in_order_on_one_connection() {
    let raw = format!(
        "{}{}{}",
        health_request(""),
        "GET /nothing HTTP/1.1\r\nHost: api.test\r\n\r\n",
        health_request("Connection: close\r\n")
    );
    let statuses: Vec<u16> = exchange(server().addr, raw.as_bytes())
        .iter()
        .map(|r| r.status)
        .collect();
    assert_eq!(statuses, [200, 404, 200]);
}

#[test]
fn head_is_answered_without_a_body() {
    let raw = "HEAD /health HTTP/1.1\r\nHost: api.test\r\nConnection: close\r\n\r\n";
    let mut stream = TcpStream::connect(server().addr).unwrap();
    stream.write_all(raw.as_bytes()).unwrap();
    let received = read_until_closed(&mut stream, Duration::from_secs(2)).unwrap();
    let text = String::from_utf8_lossy(&received);
    assert!(text.starts_with("HTTP/1.1 200 OK\r\n"));
    assert!(text.ends_with("\r\n\r\n"), "no body after the head: {text}");
}

/// A service that panics on `/panic`, to prove the panic net on a server of its own.
struct Panicky;

impl Service for Panicky {
    fn call(&self, request: Request) -> Response {
        if request.path() == "/panic" {
            panic!("handler bug");
        }
        Response::new(200)
    }
}

#[test]
fn a_panicking_handler_answers_500_and_the_server_keeps_serving() {
    let options = ServerOptions {
        limits: HttpLimits::default(),
        request_timeout: Duration::from_secs(2),
        idle_timeout: Duration::from_secs(2),
        own_answer_headers: &[],
    };
    let listen: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let panicky = http::start(listen, options, Arc::new(Panicky)).unwrap();
    let addr = panicky.local_addr();
    let raw = "GET /panic HTTP/1.1\r\nHost: x\r\n\r\nGET /fine HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    let responses = exchange(addr, raw.as_bytes());
    assert_eq!(responses[0].status, 500);
    assert_eq!(responses[0].json()["error"]["code"], "internal");
    assert_eq!(responses[1].status, 200, "same connection goes on");
    assert_eq!(
        exchange(
            addr,
            b"GET /again HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )[0]
        .status,
        200
    );
}
