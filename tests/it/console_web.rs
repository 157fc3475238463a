//! The web console over real HTTP: hosts, security headers, sign-in and sessions, the form
//! token and origin checks, one-time links, members and their owners-only rules.

use crate::harness::{server, Client, Resp, CONSOLE_HOST, LEGACY_HOST};

fn console() -> Client {
    Client::new(server().addr)
        .host(CONSOLE_HOST)
        .ip(&crate::harness::next_client_ip())
}

/// Every console answer carries these, whatever its status.
fn assert_secured(resp: &Resp, what: &str) {
    let csp = resp.header("Content-Security-Policy").unwrap_or_default();
    for directive in [
        "default-src 'none'",
        "frame-ancestors 'none'",
        "style-src 'self'",
    ] {
        assert!(
            csp.contains(directive),
            "{what}: CSP {csp:?} lacks {directive}"
        );
    }
    assert!(!csp.contains("unsafe-inline"), "{what}: {csp}");
    assert_eq!(resp.header("Cache-Control"), Some("no-store"), "{what}");
    assert_eq!(
        resp.header("Referrer-Policy"),
        Some("no-referrer"),
        "{what}"
    );
    assert_eq!(
        resp.header("X-Content-Type-Options"),
        Some("nosniff"),
        "{what}"
    );
}

#[test]
fn the_console_is_served_on_the_console_host_only() {
    let page = console().get("/sign-in");
    assert_eq!(page.status, 200);
    assert!(page
        .text()
        .contains("<form method=\"post\" action=\"/sign-in\""));
    for host in ["api.test", LEGACY_HOST] {
        for path in ["/sign-in", "/", "/console.css", "/members"] {
            let other = Client::new(server().addr).host(host).get(path);
            assert_eq!(other.status, 404, "{host}{path}");
            assert!(
                other.header("Content-Security-Policy").is_none(),
                "{host}{path}"
            );
        }
    }
    // The console host still refuses the management API and the fragment endpoint.
    assert_eq!(console().get("/v1/me").code(), "not_found");
    assert_eq!(console().get("/fragment").status, 404);
}

#[test]
fn every_console_answer_is_secured() {
    let answers = [
        ("sign-in page", console().get("/sign-in")),
        ("home, signed out", console().get("/")),
        ("style sheet", console().get("/console.css")),
        ("unknown page", console().get("/nothing/here")),
        (
            "wrong method",
            console().request("DELETE", "/sign-in", &[], None),
        ),
    ];
    for (what, resp) in &answers {
        assert_secured(resp, what);
    }
    let [_, home, css, unknown, wrong] = answers.map(|(_, r)| r);
    assert_eq!(
        (home.status, home.header("Location")),
        (303, Some("/sign-in"))
    );
    assert_eq!(css.header("Content-Type"), Some("text/css; charset=utf-8"));
    assert_eq!(unknown.status, 404);
    assert!(unknown.text().contains("<h1>"));
    assert_eq!(
        (wrong.status, wrong.header("Allow")),
        (405, Some("GET, HEAD"))
    );
}

#[test]
fn pages_label_every_input() {
    let page = console().get("/sign-in").text();
    for id in ["email", "password"] {
        assert!(page.contains(&format!("<label for=\"{id}\">")), "{id}");
        assert!(page.contains(&format!("<input id=\"{id}\"")), "{id}");
    }
    assert!(!page.contains("<script"), "no script: {page}");
}
