//! `/health`, `/ready` and `/contact`.

use crate::harness::{self, next_client_ip, server, Client, LEGACY_HOST};
use serde_json::json;

fn client() -> Client {
    Client::new(server().addr).ip(&next_client_ip())
}

#[test]
fn health_answers_on_every_host() {
    for host in ["api.test", LEGACY_HOST, harness::CONSOLE_HOST] {
        let resp = client().host(host).get("/health");
        assert_eq!(resp.status, 200, "{host}");
        assert_eq!(resp.json(), json!({"status": "ok"}));
    }
}

#[test]
fn ready_answers_200_when_the_database_answers() {
    let resp = client().get("/ready");
    assert_eq!(resp.status, 200);
    assert_eq!(resp.json()["database"], "up");
    assert_eq!(client().host(LEGACY_HOST).get("/ready").status, 404);
}

#[test]
fn ready_answers_503_when_the_database_is_unreachable() {
    // A server whose database does not answer (nothing listens on port 1).
    let addr = harness::start_server_without_migrations("postgres://postgres@127.0.0.1:1/none");
    let resp = Client::new(addr).get("/ready");
    assert_eq!(resp.status, 503);
    assert_eq!(resp.json()["database"], "down");
}

#[test]
fn contact_page_is_an_html_form() {
    let resp = client().get("/contact");
    assert_eq!(resp.status, 200);
    assert_eq!(
        resp.header("Content-Type"),
        Some("text/html; charset=UTF-8")
    );
    assert!(resp
        .text()
        .contains("<form method=\"post\" action=\"/contact\">"));
}

fn stored(email: &str) -> Vec<(String, String)> {
    harness::db()
        .query(
            "SELECT name, message FROM contact_messages WHERE email = $1",
            &[&email],
        )
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect()
}

#[test]
fn contact_messages_are_validated_and_stored_from_json_and_forms() {
    let email = format!("{}@example.com", next_client_ip().replace('.', "-"));
    let resp = client().post(
        "/contact",
        &json!({"name": " Ann ", "email": email, "message": "Hello"}),
    );
    assert_eq!(resp.status, 201);
    assert_eq!(resp.json(), json!({"status": "received"}));

    let form = format!(
        "name=Bob&email={}&message=Hi+there%21",
        email.replace('@', "%40")
    );
    let resp = client().request(
        "POST",
        "/contact",
        &[("Content-Type", "application/x-www-form-urlencoded")],
        Some(form.as_bytes()),
    );
    assert_eq!(resp.status, 201);
    assert!(resp.text().contains("Thank you"));
    assert_eq!(
        stored(&email),
        [
            ("Ann".to_string(), "Hello".to_string()),
            ("Bob".to_string(), "Hi there!".to_string())
        ]
    );

    let bad = client().post(
        "/contact",
        &json!({"name": "A", "email": "nope", "message": "x"}),
    );
    assert_eq!(
        (bad.status, bad.code().as_str(), bad.field().as_deref()),
        (422, "validation", Some("email"))
    );
    let plain = client().request(
        "POST",
        "/contact",
        &[("Content-Type", "text/plain")],
        Some(b"hi"),
    );
    assert_eq!(plain.status, 400);
}

#[test]
fn contact_is_limited_per_client_address() {
    let c = client();
    let email = format!("{}@example.org", next_client_ip().replace('.', "-"));
    for _ in 0..5 {
        assert_eq!(
            c.post(
                "/contact",
                &json!({"name": "A", "email": email, "message": "m"})
            )
            .status,
            201
        );
    }
    let resp = c.post(
        "/contact",
        &json!({"name": "A", "email": email, "message": "m"}),
    );
    assert_eq!((resp.status, resp.code().as_str()), (429, "rate_limited"));
    assert_eq!(stored(&email).len(), 5);
}
