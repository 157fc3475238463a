//! Authentication of the management API: service.md "Authentication" and decisions.md.

use crate::harness::{self, next_client_ip, server, tenant, Client, CONSOLE_HOST, LEGACY_HOST};
use agentcard::{auth, db};

fn anonymous() -> Client {
    Client::new(server().addr).ip(&next_client_ip())
}

fn assert_401(resp: &harness::Resp, code: &str) {
    assert_eq!(resp.status, 401, "{}", resp.text());
    assert_eq!(resp.code(), code);
    assert_eq!(
        resp.header("WWW-Authenticate"),
        Some("Bearer realm=\"svc\"")
    );
    assert_eq!(resp.json()["error"].get("field"), None);
}

#[test]
fn me_answers_the_account_and_the_token() {
    let t = tenant();
    let resp = t.client.get("/v1/me");
    assert_eq!(resp.status, 200);
    let me = resp.json();
    assert_eq!(me["account"]["id"], t.org_id.as_str());
    assert_eq!(me["account"]["name"], "Test Publisher");
    assert_eq!(me["token"]["id"], t.token_id.as_str());
    assert_eq!(me["token"]["prefix"], &t.token[..12]);
    assert_eq!(me.as_object().unwrap().len(), 2);
}

#[test]
fn no_bearer_header_is_missing_token() {
    assert_401(&anonymous().get("/v1/me"), "missing_token");
    let basic = anonymous().request(
        "GET",
        "/v1/me",
        &[("Authorization", "Basic dXNlcjpwdw==")],
        None,
    );
    assert_401(&basic, "missing_token");
}

#[test]
fn cookies_are_never_read() {
    let t = tenant();
    let cookie = format!("session={}; token={}", t.token, t.token);
    let resp = anonymous().request("GET", "/v1/me", &[("Cookie", &cookie)], None);
    assert_401(&resp, "missing_token");
}

#[test]
fn anything_but_a_live_token_is_invalid_token() {
    let t = tenant();
    let key = auth::generate(auth::SecretKind::DeliveryKey, "svc").value;
    let unknown = auth::generate(auth::SecretKind::ManagementToken, "svc").value;
    let cases = [
        "Bearer ".to_string(),
        "Bearer not-a-token".to_string(),
        format!("Bearer {key}"),
        format!("Bearer {unknown}"),
        format!("Bearer {}", t.token.to_uppercase()),
        format!("Bearer {}x", t.token),
    ];
    for header in cases {
        let resp = anonymous().request("GET", "/v1/me", &[("Authorization", &header)], None);
        assert_401(&resp, "invalid_token");
    }
}

#[test]
fn two_authorization_headers_are_invalid_token() {
    let t = tenant();
    let bearer = format!("Bearer {}", t.token);
    let headers = [
        ("Authorization", bearer.as_str()),
        ("Authorization", bearer.as_str()),
    ];
    assert_401(
        &anonymous().request("GET", "/v1/me", &headers, None),
        "invalid_token",
    );
}

#[test]
fn scheme_is_case_insensitive() {
    let t = tenant();
    let header = format!("bearer {}", t.token);
    let resp = anonymous().request("GET", "/v1/me", &[("Authorization", &header)], None);
    assert_eq!(resp.status, 200);
}

#[test]
fn a_revoked_token_answers_401_on_its_next_call() {
    let t = tenant();
    assert_eq!(t.client.get("/v1/me").status, 200);
    let token = agentcard::ids::TokenId::parse(&t.token_id).unwrap();
    db::orgs::revoke_token(&mut harness::db(), &token).unwrap();
    assert_401(&t.client.get("/v1/me"), "invalid_token");
}

#[test]
fn support_tokens_expire_after_90_days_and_owner_tokens_never() {
    let t = tenant();
    let mut db = harness::db();
    let (support_id, support_token) = harness::new_token(&mut db, &t.org_id, true);
    let row = db
        .query_one(
            "SELECT expires_at - created_at = interval '90 days', creator FROM mgmt_tokens WHERE id = $1",
            &[&support_id],
        )
        .unwrap();
    assert!(row.get::<_, bool>(0));
    assert_eq!(row.get::<_, String>(1), "support");
    let owner_expiry: Option<String> = db
        .query_one(
            "SELECT rfc3339(expires_at) FROM mgmt_tokens WHERE id = $1",
            &[&t.token_id],
        )
        .unwrap()
        .get(0);
    assert_eq!(owner_expiry, None);

    let support = anonymous().token(&support_token);
    assert_eq!(support.get("/v1/me").status, 200);
    db.execute(
        "UPDATE mgmt_tokens SET expires_at = now() - interval '1 second' WHERE id = $1",
        &[&support_id],
    )
    .unwrap();
    assert_401(&support.get("/v1/me"), "invalid_token");
}

#[test]
fn token_use_is_recorded() {
    let t = tenant();
    assert_eq!(t.client.get("/v1/me").status, 200);
    let mut db = harness::db();
    let mut recorded = false;
    for _ in 0..50 {
        let row = db
            .query_one(
                "SELECT last_used_at IS NOT NULL FROM mgmt_tokens WHERE id = $1",
                &[&t.token_id],
            )
            .unwrap();
        recorded = row.get(0);
        if recorded {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(recorded, "last_used_at was never set");
}

#[test]
fn console_and_legacy_hosts_answer_404_on_v1_with_or_without_token() {
    let t = tenant();
    for host in [CONSOLE_HOST, LEGACY_HOST, "CONSOLE.test:8443"] {
        for client in [t.client.clone(), t.client.clone().without_token()] {
            let resp = client.host(host).get("/v1/me");
            assert_eq!(resp.status, 404, "{host}");
            assert_eq!(resp.code(), "not_found");
            assert_eq!(resp.header("Cache-Control"), Some("private, no-store"));
        }
    }
    assert_eq!(
        t.client.clone().host("other.example").get("/v1/me").status,
        200
    );
}
