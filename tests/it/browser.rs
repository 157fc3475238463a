//! The console's main journeys in a real browser: `tests/browser/journeys.py` drives Debian's
//! Chromium through Selenium (installed by `scripts/test.sh`, as are the other peers; this test
//! fails when they are missing) against a server of its own on `console.localhost`, checks each
//! page with axe-core and writes a screenshot of each step to the folder it prints.

use crate::fixtures::{agentcard, free_local_addr};
use crate::harness::{
    fresh_database, python_tool, start_server, Client, OwnServer, CLIENT_IP_HEADER,
};
use serde_json::Value;
use std::path::{Path, PathBuf};

const OWNER_EMAIL: &str = "owner@journey.example";

/// A server of the test's own on `console.localhost`, with the settings `admin` needs to
/// make links to it.
struct ConsoleServer {
    own: OwnServer,
    database_url: String,
    console: String,
}

impl ConsoleServer {
    fn start() -> ConsoleServer {
        assert!(
            browser_tests()
                .join("node_modules/axe-core/axe.min.js")
                .is_file()
                && Path::new("/usr/bin/chromedriver").is_file(),
            "axe-core, chromium or chromium-driver is missing: scripts/test.sh installs them \
             (scripts/lib/browser.sh)"
        );
        let database_url = fresh_database();
        let listen = free_local_addr();
        let console = format!("http://console.localhost:{}", listen.port());
        let listen = listen.to_string();
        let server_settings = [
            ("AGENTCARD_CONSOLE_HOST", "console.localhost"),
            ("AGENTCARD_CONSOLE_URL", console.as_str()),
            ("AGENTCARD_LISTEN", listen.as_str()),
            ("AGENTCARD_CLIENT_IP_HEADER", CLIENT_IP_HEADER),
            ("AGENTCARD_TRUSTED_PROXIES", "127.0.0.0/8"),
            // With mail set, the sign-in page links "forgot your password", a page the phone
            // pass must reach; nothing listens there, and no journey waits for a mail.
            ("AGENTCARD_SMTP_URL", "smtp://127.0.0.1:9"),
        ];
        let own = start_server(&database_url, &server_settings);
        ConsoleServer {
            own,
            database_url,
            console,
        }
    }

    /// `agentcard admin ARGS…` on this server's database, its links to its console.
    fn admin(&self, args: &[&str]) -> Value {
        let settings = [
            ("DATABASE_URL", self.database_url.as_str()),
            ("AGENTCARD_CONSOLE_HOST", "console.localhost"),
            ("AGENTCARD_CONSOLE_URL", self.console.as_str()),
        ];
        admin(args, &settings)
    }
}

fn browser_tests() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser")
}

#[test]
#[cfg_attr(
    not(feature = "external-tools"),
    ignore = "needs Chromium, chromedriver, selenium and axe-core: cargo test --features external-tools"
)]
fn an_owner_and_a_member_do_the_console_only_tasks_in_a_browser() {
    let browser_tests = browser_tests();
    let server = ConsoleServer::start();
    let (addr, console) = (server.own.addr, server.console.as_str());
    let org = server.admin(&["org", "create", "--name", "Journey Press"]);
    let org_id = org["id"].as_str().unwrap();
    let owner = server.admin(&[
        "user",
        "create",
        "--email",
        OWNER_EMAIL,
        "--org",
        org_id,
        "--role",
        "owner",
    ]);
    let screenshots = Path::new(env!("CARGO_TARGET_TMPDIR")).join("browser-screenshots");
    let output = python_tool("python")
        .arg(browser_tests.join("journeys.py"))
        .current_dir(&browser_tests)
        .env("SE_OFFLINE", "true")
        .env("AGENTCARD_SCREENSHOTS", &screenshots)
        .env("AGENTCARD_CONSOLE", console)
        .env("AGENTCARD_API", format!("http://{addr}"))
        .env("AGENTCARD_OWNER_LINK", owner["link"].as_str().unwrap())
        .env("AGENTCARD_OWNER_EMAIL", OWNER_EMAIL)
        .env("AGENTCARD_ORG_ID", org_id)
        // `admin report` for the numbers the pages must show.
        .env("AGENTCARD_BIN", env!("CARGO_BIN_EXE_agentcard"))
        .env("DATABASE_URL", &server.database_url)
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

/// `tests/browser/connect.py`: the owner of a new organisation, from the console alone, maps a
/// site with a served default, makes a key on "Connect an edge", takes a recipe, sends the
/// edge's request by hand and sees the live check turn green.
#[test]
#[cfg_attr(
    not(feature = "external-tools"),
    ignore = "needs Chromium, chromedriver, selenium and axe-core: cargo test --features external-tools"
)]
fn a_new_organisations_owner_connects_an_edge_from_the_console_alone() {
    let server = ConsoleServer::start();
    let org = server.admin(&["org", "create", "--name", "Edge Day"]);
    let org_id = org["id"].as_str().unwrap();
    let email = "owner@edge-day.example";
    let owner = server.admin(&[
        "user", "create", "--email", email, "--org", org_id, "--role", "owner",
    ]);
    let screenshots = Path::new(env!("CARGO_TARGET_TMPDIR")).join("connect-screenshots");
    let output = python_tool("python")
        .arg(browser_tests().join("connect.py"))
        .current_dir(browser_tests())
        .env("SE_OFFLINE", "true")
        .env("AGENTCARD_SCREENSHOTS", &screenshots)
        .env("AGENTCARD_CONSOLE", &server.console)
        .env("AGENTCARD_API", format!("http://{}", server.own.addr))
        .env("AGENTCARD_OWNER_LINK", owner["link"].as_str().unwrap())
        .env("AGENTCARD_CLIENT_IP_HEADER", CLIENT_IP_HEADER)
        .env("AGENTCARD_CLIENT_IP", "203.0.113.78")
        .output()
        .expect("run tests/browser/connect.py with the project's Python (.venv/)");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    println!("{stdout}");
    assert!(
        output.status.success(),
        "the connect journey failed (screenshots in {}):\n{stdout}\n{stderr}",
        screenshots.display()
    );
    assert!(stdout.contains("the edge is connected"), "{stdout}");
}

/// `agentcard admin ARGS…` on this test's database: its JSON object.
fn admin(args: &[&str], settings: &[(&str, &str)]) -> Value {
    let (ok, stdout, stderr) = agentcard(&[&["admin"], args].concat(), settings);
    assert!(ok, "admin {args:?}: {stderr}");
    serde_json::from_str(&stdout).expect("one JSON object")
}

/// Every console page a signed-in person reads (`GET`), at a phone's width: a journey of
/// `tests/browser/phone.py` signs in as the demo's owner at 390×844, follows every link of the
/// console from the home page, and checks each page with axe (WCAG 2 A and AA, 2.2's target
/// size) and that nothing scrolls sideways (WCAG 1.4.10 Reflow). Each page of the table is
/// reached, through a link of the console, with data for each of its captures.
#[test]
fn every_console_page_reads_at_a_phone_width() {
    let server = ConsoleServer::start();
    let demo = server.admin(&["demo", "--format", "json"]);
    let org_id = demo["organisation"]["id"].as_str().unwrap();
    server.admin(&[
        "user",
        "create",
        "--email",
        "member@phone.example",
        "--org",
        org_id,
        "--role",
        "member",
    ]);
    server.admin(&[
        "member",
        "invite",
        "--org",
        org_id,
        "--email",
        "invited@phone.example",
    ]);
    // A revoked key: its deletion's confirmation is a page too.
    let api = Client::new(server.own.addr).token(demo["management_token"].as_str().unwrap());
    let made = api.post("/v1/keys", &serde_json::json!({"name": "old edge"}));
    assert_eq!(made.status, 201, "{}", made.text());
    let revoked = api.delete(&format!("/v1/keys/{}", made.json()["id"].as_str().unwrap()));
    assert_eq!(revoked.status, 200, "{}", revoked.text());

    let pages: Vec<&str> = agentcard::console::page_table()
        .into_iter()
        .filter(|page| page.method == "GET" && !page.pattern.ends_with(".css"))
        .filter(|page| !page.pattern.ends_with(".js"))
        .map(|page| page.pattern)
        .collect();
    let screenshots = Path::new(env!("CARGO_TARGET_TMPDIR")).join("phone-screenshots");
    let output = python_tool("python")
        .arg(browser_tests().join("phone.py"))
        .current_dir(browser_tests())
        .env("SE_OFFLINE", "true")
        .env("AGENTCARD_SCREENSHOTS", &screenshots)
        .env("AGENTCARD_CONSOLE", &server.console)
        .env(
            "AGENTCARD_OWNER_LINK",
            demo["console"]["set_password_link"].as_str().unwrap(),
        )
        .env("AGENTCARD_PAGES", serde_json::to_string(&pages).unwrap())
        .output()
        .expect("run tests/browser/phone.py with the project's Python (.venv/)");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    println!("{stdout}");
    assert!(
        output.status.success(),
        "the phone-width pass failed (screenshots in {}):\n{stdout}\n{stderr}",
        screenshots.display()
    );
    assert!(stdout.contains("every page passed at 390x844"), "{stdout}");
}
