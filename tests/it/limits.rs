//! The rate limits of the management API, counted exactly on one instance, and the cap on the
//! connections of one address, which a trusted proxy is not held to.

use crate::fixtures::{connect_from, ServeProcess};
use crate::harness::{self, next_client_ip, server, tenant, Client, Resp};
use serde_json::json;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

fn assert_429(resp: &Resp) {
    assert_eq!(resp.status, 429, "{}", resp.text());
    assert_eq!(resp.code(), "rate_limited");
    assert_eq!(resp.header("Retry-After"), Some("60"));
    assert_eq!(resp.json()["error"]["retry_after"], 60);
    assert_eq!(
        resp.json()["error"]["message"],
        "rate limited — retry after 60 seconds"
    );
    assert_eq!(resp.header("Cache-Control"), Some("private, no-store"));
}

#[test]
fn the_121st_request_of_a_token_is_refused() {
    let t = tenant();
    for i in 0..120 {
        assert_eq!(t.client.get("/v1/me").status, 200, "request {}", i + 1);
    }
    assert_429(&t.client.get("/v1/me"));
    // The refused request did not count against another token of the same organisation.
    let (_, other) = harness::new_token(&mut harness::db(), &t.org_id, false);
    assert_eq!(t.client.clone().token(&other).get("/v1/me").status, 200);
}

#[test]
fn the_61st_write_of_a_token_is_refused_and_reads_go_on() {
    let t = tenant();
    let absent = "/v1/keys/key_000000000000000000000000";
    for i in 0..60 {
        assert_eq!(t.client.delete(absent).status, 404, "write {}", i + 1);
    }
    assert_429(&t.client.delete(absent));
    assert_429(&t.client.post("/v1/keys", &json!({})));
    assert_eq!(t.client.get("/v1/me").status, 200);
}

#[test]
fn the_31st_failed_authentication_of_an_ip_is_refused() {
    let client = Client::new(server().addr).ip(&next_client_ip());
    for i in 0..30 {
        let resp = if i % 2 == 0 {
            client.get("/v1/me")
        } else {
            client.clone().token("svc_mgmt_malformed").get("/v1/me")
        };
        assert_eq!(resp.status, 401, "attempt {}", i + 1);
    }
    assert_429(&client.get("/v1/me"));
    // Another client address is not affected.
    assert_eq!(
        Client::new(server().addr)
            .ip(&next_client_ip())
            .get("/v1/me")
            .status,
        401
    );
}

#[test]
fn an_ip_presenting_well_formed_tokens_gets_600_requests() {
    let ip = next_client_ip();
    let mut db = harness::db();
    let org = harness::new_org(&mut db, "Busy");
    let tokens: Vec<String> = (0..6)
        .map(|_| harness::new_token(&mut db, org.as_str(), false).1)
        .collect();
    for (n, token) in tokens.iter().take(5).enumerate() {
        let client = Client::new(server().addr).ip(&ip).token(token);
        for i in 0..120 {
            assert_eq!(client.get("/v1/me").status, 200, "token {n} request {i}");
        }
    }
    assert_429(
        &Client::new(server().addr)
            .ip(&ip)
            .token(&tokens[5])
            .get("/v1/me"),
    );
}

#[test]
fn the_client_header_counts_only_from_a_trusted_proxy() {
    // A second server on the same database that trusts no proxy: every request is 127.0.0.1,
    // whatever the header says, so 30 failures from "different" addresses fill one counter.
    let own = harness::start_server(
        &server().database_url,
        &[("AGENTCARD_CLIENT_IP_HEADER", "X-Test-Client-IP")],
    );
    let addr = own.addr;
    for i in 0..30 {
        let client = Client::new(addr).ip(&next_client_ip());
        assert_eq!(client.get("/v1/me").status, 401, "attempt {}", i + 1);
    }
    assert_429(&Client::new(addr).ip(&next_client_ip()).get("/v1/me"));
}

#[test]
fn forwarded_for_takes_the_right_most_untrusted_address() {
    // Through the test's server (loopback trusted): failures spread over the first address of
    // X-Forwarded-For would be spoofable; the right-most untrusted one is what counts.
    let own = harness::start_server(
        &server().database_url,
        &[
            ("AGENTCARD_CLIENT_IP_HEADER", "X-Forwarded-For"),
            ("AGENTCARD_TRUSTED_PROXIES", "127.0.0.0/8, 10.255.0.0/16"),
        ],
    );
    let addr = own.addr;
    let real = next_client_ip();
    for i in 0..30 {
        let spoofed = format!("192.0.2.{i}, {real}, 10.255.0.1");
        let resp =
            Client::new(addr).request("GET", "/v1/me", &[("X-Forwarded-For", &spoofed)], None);
        assert_eq!(resp.status, 401);
    }
    let again = format!("198.51.100.1, {real}");
    assert_429(&Client::new(addr).request("GET", "/v1/me", &[("X-Forwarded-For", &again)], None));
    let other = Client::new(addr).request(
        "GET",
        "/v1/me",
        &[("X-Forwarded-For", &next_client_ip())],
        None,
    );
    assert_eq!(other.status, 401);
}

/// Opens `count` connections from `from` and holds them all, then asks `/health` on each
/// (kept alive, so that no answer frees a place): how many were answered `200`, the others
/// closed at accept.
fn health_answers_on_held_connections(from: &str, addr: SocketAddr, count: usize) -> usize {
    let mut held: Vec<TcpStream> = (0..count)
        .map(|_| connect_from(from, addr).expect("connect"))
        .collect();
    held.iter_mut()
        .filter_map(health_status)
        .filter(|status| *status == 200)
        .count()
}

/// The status of `GET /health` on `stream`, left open; `None` when the server closed it
/// unanswered.
fn health_status(stream: &mut TcpStream) -> Option<u16> {
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream
        .write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        .ok()?;
    let mut answer = Vec::new();
    let mut chunk = [0u8; 1024];
    // `/health` answers a short JSON object: its end is the object's.
    while !answer.ends_with(b"}") {
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => answer.extend_from_slice(&chunk[..n]),
        }
    }
    harness::parse_responses(&answer)
        .first()
        .map(|resp| resp.status)
}

#[test]
fn a_trusted_proxy_is_not_held_to_the_connections_cap_of_one_address() {
    let process = ServeProcess::start_with(&[
        ("RUST_LOG", "warn"),
        ("AGENTCARD_MAX_CONNECTIONS_PER_IP", "100"),
        ("AGENTCARD_TRUSTED_PROXIES", "127.0.0.2"),
        ("AGENTCARD_CLIENT_IP_HEADER", "X-Forwarded-For"),
    ]);
    let proxied = health_answers_on_held_connections("127.0.0.2", process.addr, 400);
    assert_eq!(proxied, 400, "{}", process.log());
    let untrusted = health_answers_on_held_connections("127.0.0.3", process.addr, 400);
    assert_eq!(untrusted, 100, "{}", process.log());
}
