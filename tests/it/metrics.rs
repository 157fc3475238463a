//! Operator metrics: `agentcard serve` with `AGENTCARD_METRICS_LISTEN`, scraped over HTTP and
//! read by Prometheus's parsers; every family there, counters that move with the requests
//! made, and the two listeners kept apart.

use crate::fixtures::{assert_error, free_local_addr, scrape, Scrape, ServeProcess, World};
use crate::harness::Client;
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Every family of the exposition, with its type.
const FAMILIES: [(&str, &str); 14] = [
    ("agentcard_http_requests", "counter"),
    ("agentcard_http_request_duration_seconds", "histogram"),
    ("agentcard_fragment_requests", "counter"),
    ("agentcard_fragment_agent_purposes", "counter"),
    ("agentcard_snapshot_generation", "gauge"),
    ("agentcard_snapshot_age_seconds", "gauge"),
    ("agentcard_snapshot_last_build_seconds", "gauge"),
    ("agentcard_report_pending_counters", "gauge"),
    ("agentcard_report_last_flush_timestamp_seconds", "gauge"),
    ("agentcard_report_flush_failures", "counter"),
    ("agentcard_db_pool_connections", "gauge"),
    ("agentcard_database_up", "gauge"),
    ("agentcard_rate_limited", "counter"),
    ("agentcard_open_connections", "gauge"),
];

/// A sample's labels, as `Scrape::value` takes them.
type Labels<'a> = &'a [(&'a str, &'a str)];

const REQUESTS: &str = "agentcard_http_requests_total";
const ANSWERED: &str = "agentcard_http_request_duration_seconds_count";
const WITHIN_10S: &str = "agentcard_http_request_duration_seconds_bucket";
const FRAGMENTS: &str = "agentcard_fragment_requests_total";
const PURPOSES: &str = "agentcard_fragment_agent_purposes_total";

/// A server with its metrics listener; the address of that listener.
fn serve_with_metrics() -> (ServeProcess, SocketAddr) {
    let metrics = free_local_addr();
    let process = ServeProcess::start_with(&[
        ("RUST_LOG", "warn"),
        ("AGENTCARD_METRICS_LISTEN", &metrics.to_string()),
        ("AGENTCARD_REPORT_FLUSH_MS", "100"),
    ]);
    (process, metrics)
}

/// Scrapes until `done` holds of a scrape, for at most 10 seconds.
fn scrape_until(metrics: SocketAddr, what: &str, done: impl Fn(&Scrape) -> bool) -> Scrape {
    let started = Instant::now();
    loop {
        let scraped = scrape(metrics);
        if done(&scraped) {
            return scraped;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "never: {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

#[test]
#[cfg_attr(
    not(feature = "external-tools"),
    ignore = "needs prometheus_client: cargo test --features external-tools"
)]
fn every_family_is_exposed_and_the_counters_move_with_the_requests() {
    let (mut w, fragment) = World::with_a_served_fragment("metrics.example");
    let token = w.management_token();
    let (process, metrics) = serve_with_metrics(); // its first snapshot holds the fragment
    let w = w.served_by(process.addr);

    let before = scrape(metrics);
    for (family, kind) in FAMILIES {
        assert_eq!(before.family_type(family), Some(kind), "{family}");
    }
    let generation = before.value("agentcard_snapshot_generation", &[]);
    assert!(generation >= Some(1.0), "{generation:?}");
    let build = before.value("agentcard_snapshot_last_build_seconds", &[]);
    assert!(build > Some(0.0), "{build:?}");
    let age = before.value("agentcard_snapshot_age_seconds", &[]);
    assert!(age.is_some_and(|age| (0.0..60.0).contains(&age)), "{age:?}");

    let requested_at = unix_now();
    let gptbot = [("User-Agent", "Mozilla/5.0 (compatible; GPTBot/1.2)")];
    for _ in 0..3 {
        assert_eq!(w.fetch_with(&fragment, "", &gptbot).status, 200);
    }
    assert_error(&w.fetch("frg_unknown", ""), 403, "forbidden", None);
    let public = Client::new(process.addr);
    for _ in 0..2 {
        assert_eq!(public.clone().token(&token).get("/v1/me").status, 200);
        assert_eq!(public.get("/health").status, 200);
    }
    assert_error(&public.get("/nothing"), 404, "not_found", None);
    // The failed authentications of one client: 30 are answered 401, the next 429.
    for _ in 0..30 {
        assert_error(&public.get("/v1/me"), 401, "missing_token", None);
    }
    assert_eq!(public.get("/v1/me").status, 429);
    // A connection held open, for the gauge to see.
    let held = TcpStream::connect(process.addr).unwrap();

    let after = scrape_until(
        metrics,
        "the report flushed, the open connection seen",
        |s| {
            s.value("agentcard_report_last_flush_timestamp_seconds", &[]) > Some(requested_at)
                && s.value("agentcard_open_connections", &[]) >= Some(1.0)
        },
    );
    drop(held);
    // How far each counter moved over the requests above.
    let moved: [(&str, Labels, f64); 16] = [
        (REQUESTS, &[("area", "fragment"), ("status", "200")], 3.0),
        (REQUESTS, &[("area", "fragment"), ("status", "403")], 1.0),
        (REQUESTS, &[("area", "management"), ("status", "200")], 2.0),
        (REQUESTS, &[("area", "management"), ("status", "401")], 30.0),
        (REQUESTS, &[("area", "management"), ("status", "429")], 1.0),
        (REQUESTS, &[("area", "health"), ("status", "200")], 2.0),
        (REQUESTS, &[("area", "not_found"), ("status", "404")], 1.0),
        (ANSWERED, &[("area", "fragment")], 4.0),
        (ANSWERED, &[("area", "management")], 33.0),
        (WITHIN_10S, &[("area", "fragment"), ("le", "10.0")], 4.0),
        (
            FRAGMENTS,
            &[("outcome", "served"), ("reason", "served")],
            3.0,
        ),
        (
            FRAGMENTS,
            &[("outcome", "refused"), ("reason", "forbidden")],
            1.0,
        ),
        (
            FRAGMENTS,
            &[("outcome", "no_fill"), ("reason", "no_eligible_card")],
            0.0,
        ),
        (PURPOSES, &[("purpose", "training")], 3.0),
        (PURPOSES, &[("purpose", "none")], 1.0),
        ("agentcard_rate_limited_total", &[], 1.0),
    ];
    for (sample, labels, by) in moved {
        let got = after.moved(&before, sample, labels);
        assert_eq!(got, by, "{sample} {labels:?}");
    }
    let pool = |state| after.value("agentcard_db_pool_connections", &[("state", state)]);
    let pool = pool("in_use").unwrap() + pool("idle").unwrap();
    assert!(pool >= 1.0, "the /v1 requests opened a connection");
    let failures = after.value("agentcard_report_flush_failures_total", &[]);
    assert_eq!(failures, Some(0.0));
    let pending = after.value("agentcard_report_pending_counters", &[]);
    assert!(pending.is_some(), "{pending:?}");
}

#[test]
fn metrics_are_served_on_their_own_listener_and_nothing_else_is() {
    let (process, metrics) = serve_with_metrics();

    let public = Client::new(process.addr);
    assert_error(&public.get("/metrics"), 404, "not_found", None);

    let operator = Client::new(metrics);
    for path in ["/health", "/fragment", "/v1/me", "/", "/metrics/"] {
        assert_error(&operator.get(path), 404, "not_found", None);
    }
    let post = operator.request("POST", "/metrics", &[], Some(b""));
    assert_error(&post, 405, "method_not_allowed", None);
    assert_eq!(post.header("Allow"), Some("GET, HEAD"));
    let head = operator.request("HEAD", "/metrics", &[], None);
    assert_eq!((head.status, head.body.len()), (200, 0));
    let get = operator.get("/metrics");
    assert_eq!(
        get.header("Content-Type"),
        Some("application/openmetrics-text; version=1.0.0; charset=utf-8")
    );
    assert!(get.text().ends_with("# EOF\n"), "{}", get.text());
}
