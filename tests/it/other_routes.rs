//! `/health`, `/ready` and `/contact`; a server that stops leaves nothing open.

use crate::fixtures::World;
use crate::harness::{self, next_client_ip, server, Client, LEGACY_HOST};
use serde_json::json;
use std::time::{Duration, Instant};

/// Polls `done` every 50 ms; panics naming `what` if it is still false after 20 s.
fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < Duration::from_secs(20), "{what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

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
fn ready_answers_503_until_the_snapshot_has_loaded_and_says_the_database_is_down() {
    // A server whose database does not answer (nothing listens on port 1): no snapshot ever.
    let own = harness::start_server_without_migrations("postgres://postgres@127.0.0.1:1/none");
    let addr = own.addr;
    let ready = || Client::new(addr).get("/ready");
    wait_until("/ready says the database is down", || {
        ready().json()["database"] == "down"
    });
    let resp = ready();
    assert_eq!(resp.status, 503);
    assert_eq!(
        (&resp.json()["status"], &resp.json()["fragment_cache"]),
        (&json!("unavailable"), &json!("loading"))
    );
}

#[test]
fn ready_answers_from_memory_while_the_pool_is_taken() {
    // A server whose one pooled connection is held by a management request waiting on a lock.
    let database_url = harness::fresh_database();
    let own = harness::start_server(&database_url, &[("AGENTCARD_DB_POOL", "1")]);
    let addr = own.addr;
    let token = World::on(&database_url, addr).management_token();
    let ready = || Client::new(addr).get("/ready");
    wait_until("the snapshot loaded", || ready().status == 200);
    let mut locker = agentcard::db::connect(&database_url).unwrap();
    let mut lock = locker.transaction().unwrap();
    lock.batch_execute("LOCK TABLE mgmt_tokens IN ACCESS EXCLUSIVE MODE")
        .unwrap();
    let me = std::thread::spawn(move || Client::new(addr).token(&token).get("/v1/me"));
    let mut watcher = agentcard::db::connect(&database_url).unwrap();
    wait_until("the management request waits on the lock", || {
        let waiting: i64 = watcher
            .query_one(
                "SELECT count(*) FROM pg_stat_activity
                  WHERE wait_event_type = 'Lock' AND datname = current_database()",
                &[],
            )
            .unwrap()
            .get(0);
        waiting == 1
    });
    let resp = ready();
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_eq!(resp.json()["database"], "up");
    assert!(
        !me.is_finished(),
        "the management request held the pool meanwhile"
    );
    lock.commit().unwrap();
    assert_eq!(me.join().unwrap().status, 200);
}

#[test]
fn a_stopped_server_closes_its_listener_and_every_database_connection() {
    let database_url = harness::fresh_database();
    let own = harness::start_server(&database_url, &[]);
    let addr = own.addr;
    wait_until("the snapshot loaded", || {
        Client::new(addr).get("/ready").status == 200
    });
    let mut watcher = agentcard::db::connect(&database_url).unwrap();
    let mut others = || -> i64 {
        let sql = "SELECT count(*) FROM pg_stat_activity \
                   WHERE datname = current_database() AND pid <> pg_backend_pid()";
        watcher.query_one(sql, &[]).unwrap().get(0)
    };
    assert!(others() > 0, "the server's cache refresher listens");
    drop(own);
    wait_until("the listener closed", || {
        std::net::TcpStream::connect(addr).is_err()
    });
    wait_until("the server's database connections closed", || others() == 0);
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
