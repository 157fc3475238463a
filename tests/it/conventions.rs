//! Conventions of the management API: headers on every response, 404 and 405, and the body
//! checks in the contract's order.

use crate::harness::{next_client_ip, server, tenant, Client, Resp};
use serde_json::json;

const POLICY: &str = "\"token\";q=120;w=60, \"write\";q=60;w=60";
const ABSENT_KEY: &str = "/v1/keys/key_000000000000000000000000";

fn assert_management_headers(resp: &Resp) {
    assert_eq!(
        resp.header("Cache-Control"),
        Some("private, no-store"),
        "{}",
        resp.status
    );
    assert_eq!(resp.header("RateLimit-Policy"), Some(POLICY));
    assert_eq!(resp.header("Content-Type"), Some("application/json"));
    assert!(resp.json().is_object());
}

fn raw_delete(client: &Client, content_type: Option<&str>, body: &[u8]) -> Resp {
    let headers: Vec<(&str, &str)> = content_type
        .map(|c| ("Content-Type", c))
        .into_iter()
        .collect();
    client.request("DELETE", ABSENT_KEY, &headers, Some(body))
}

#[test]
fn every_response_carries_the_management_headers() {
    let t = tenant();
    let anonymous = Client::new(server().addr).ip(&next_client_ip());
    let responses = [
        t.client.get("/v1/me"),
        t.client.get("/v1/unknown"),
        t.client.post("/v1/me", &json!({})),
        t.client.put("/v1/cards", &json!({})),
        raw_delete(&t.client, None, b"{}"),
        anonymous.get("/v1/me"),
    ];
    let statuses: Vec<u16> = responses.iter().map(|r| r.status).collect();
    assert_eq!(statuses, [200, 404, 405, 405, 400, 401]);
    responses.iter().for_each(assert_management_headers);
}

#[test]
fn unknown_paths_are_404_and_wrong_methods_405_after_authentication() {
    let t = tenant();
    let cases = [
        ("GET", "/v1", 404, "not_found"),
        ("GET", "/v1/nothing/here", 404, "not_found"),
        ("GET", "/v1/me/", 404, "not_found"),
        ("PATCH", "/v1/keys", 405, "method_not_allowed"),
        ("GET", "/v1/keys/key_x", 405, "method_not_allowed"),
    ];
    for (method, path, status, code) in cases {
        let resp = t.client.request(
            method,
            path,
            &[("Content-Type", "application/json")],
            Some(b"{}"),
        );
        assert_eq!(
            (resp.status, resp.code().as_str()),
            (status, code),
            "{method} {path}"
        );
    }
    let resp = t.client.request("PATCH", "/v1/keys", &[], None);
    assert_eq!(resp.header("Allow"), Some("GET, POST"));
    let anonymous = t.client.clone().without_token();
    assert_eq!(anonymous.get("/v1/nothing").status, 401);
    assert_eq!(
        anonymous.request("PATCH", "/v1/keys", &[], None).status,
        401
    );
}

#[test]
fn writes_need_the_json_media_type() {
    let t = tenant();
    let cases = [
        (None, 400),
        (Some("text/plain"), 400),
        (Some("application/x-www-form-urlencoded"), 400),
        (Some("application/json; charset=utf-8"), 404),
        (Some("APPLICATION/JSON"), 404),
    ];
    for (content_type, status) in cases {
        let resp = raw_delete(&t.client, content_type, b"{}");
        assert_eq!(resp.status, status, "{content_type:?}");
        if status == 400 {
            assert_eq!(resp.code(), "unsupported_media_type");
        }
    }
}

#[test]
fn body_size_counts_raw_bytes_with_the_byte_order_mark() {
    let t = tenant();
    let padded = |total: usize, bom: bool| -> Vec<u8> {
        let mut body = if bom {
            b"\xEF\xBB\xBF".to_vec()
        } else {
            Vec::new()
        };
        body.extend_from_slice(b"{}");
        body.resize(total, b' ');
        body
    };
    let cases = [
        (padded(262_144, false), 404),
        (padded(262_145, false), 400),
        (padded(262_144, true), 404),
        (padded(262_145, true), 400),
    ];
    for (body, status) in cases {
        let resp = raw_delete(&t.client, Some("application/json"), &body);
        assert_eq!(resp.status, status, "{} bytes", body.len());
        if status == 400 {
            assert_eq!(resp.code(), "body_too_large");
            assert_eq!(
                resp.json()["error"]["message"],
                "request body over 262144 bytes"
            );
        }
    }
}

#[test]
fn unparsable_and_duplicate_member_bodies_are_invalid_json() {
    let t = tenant();
    let cases: [&[u8]; 5] = [b"{", b"", b"{\"a\":1,\"a\":1}", b"{} {}", b"\xff"];
    for body in cases {
        let resp = raw_delete(&t.client, Some("application/json"), body);
        assert_eq!(
            (resp.status, resp.code().as_str()),
            (400, "invalid_json"),
            "{body:?}"
        );
        assert_eq!(
            resp.json()["error"]["message"],
            "request body is not valid JSON"
        );
        assert_eq!(resp.field(), None);
    }
}

#[test]
fn authentication_comes_before_the_body() {
    let anonymous = Client::new(server().addr).ip(&next_client_ip());
    let resp = raw_delete(&anonymous, Some("text/plain"), b"{");
    assert_eq!((resp.status, resp.code().as_str()), (401, "missing_token"));
}
