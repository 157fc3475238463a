//! The console's main journeys in a real browser: `tests/browser/journeys.py` drives Debian's
//! Chromium through Selenium (installed by `scripts/test.sh`, as are the other peers; this test
//! fails when they are missing) against a server of its own on `console.localhost`, checks each
//! page with axe-core and writes a screenshot of each step to the folder it prints.

use crate::fixtures::{agentcard, free_local_addr};
use crate::harness::{fresh_database, python_tool, start_server, CLIENT_IP_HEADER};
use serde_json::Value;
use std::path::Path;

const OWNER_EMAIL: &str = "owner@journey.example";

#[test]
#[cfg_attr(
    not(feature = "external-tools"),
    ignore = "needs Chromium, chromedriver, selenium and axe-core: cargo test --features external-tools"
)]
fn an_owner_and_a_member_do_the_console_only_tasks_in_a_browser() {
    let browser_tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser");
    assert!(
        browser_tests
            .join("node_modules/axe-core/axe.min.js")
            .is_file()
            && Path::new("/usr/bin/chromedriver").is_file(),
        "axe-core, chromium or chromium-driver is missing: scripts/test.sh installs them \
         (scripts/lib/browser.sh)"
    );
    let database_url = fresh_database();
    let listen = free_local_addr();
    let console = format!("http://console.localhost:{}", listen.port());
    let settings = [
        ("DATABASE_URL", database_url.as_str()),
        ("AGENTCARD_CONSOLE_HOST", "console.localhost"),
        ("AGENTCARD_CONSOLE_URL", console.as_str()),
    ];
    let listen = listen.to_string();
    let server_settings = [
        ("AGENTCARD_LISTEN", listen.as_str()),
        ("AGENTCARD_CLIENT_IP_HEADER", CLIENT_IP_HEADER),
        ("AGENTCARD_TRUSTED_PROXIES", "127.0.0.0/8"),
    ];
    let own = start_server(
        &database_url,
        &[&settings[1..], &server_settings[..]].concat(),
    );
    let addr = own.addr;
    let org = admin(&["org", "create", "--name", "Journey Press"], &settings);
    let org_id = org["id"].as_str().unwrap();
    let owner = admin(
        &[
            "user",
            "create",
            "--email",
            OWNER_EMAIL,
            "--org",
            org_id,
            "--role",
            "owner",
        ],
        &settings,
    );
    let screenshots = Path::new(env!("CARGO_TARGET_TMPDIR")).join("browser-screenshots");
    let output = python_tool("python")
        .arg(browser_tests.join("journeys.py"))
        .current_dir(&browser_tests)
        .env("SE_OFFLINE", "true")
        .env("AGENTCARD_SCREENSHOTS", &screenshots)
        .env("AGENTCARD_CONSOLE", &console)
        .env("AGENTCARD_API", format!("http://{addr}"))
        .env("AGENTCARD_OWNER_LINK", owner["link"].as_str().unwrap())
        .env("AGENTCARD_OWNER_EMAIL", OWNER_EMAIL)
        .env("AGENTCARD_ORG_ID", org_id)
        // `admin report` for the numbers the pages must show.
        .env("AGENTCARD_BIN", env!("CARGO_BIN_EXE_agentcard"))
        .env("DATABASE_URL", &database_url)
        .env("AGENTCARD_CLIENT_IP_HEADER", CLIENT_IP_HEADER)
        .env("AGENTCARD_CLIENT_IP", "203.0.113.77")
        .output()
        .expect("run tests/browser/journeys.py with the project's Python (.venv/)");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    println!("{stdout}");
    assert!(
        output.status.success(),
        "the browser journeys failed (screenshots in {}):\n{stdout}\n{stderr}",
        screenshots.display()
    );
    assert!(stdout.contains("every journey passed"), "{stdout}");
}

/// `agentcard admin ARGS…` on this test's database: its JSON object.
fn admin(args: &[&str], settings: &[(&str, &str)]) -> Value {
    let (ok, stdout, stderr) = agentcard(&[&["admin"], args].concat(), settings);
    assert!(ok, "admin {args:?}: {stderr}");
    serde_json::from_str(&stdout).expect("one JSON object")
}
