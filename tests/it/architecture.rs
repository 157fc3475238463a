//! The lines of ARCHITECTURE.md a program can check against the running code (the module map
//! and the layers are `scripts/check-deps.py`'s): which files the console serves to anyone, and
//! that no test keeps a server beyond its own end.

use crate::console_fixtures::console;
use agentcard::console::{page_table, Access};

/// The map's invariant names the files the console serves without a session; they are the
/// public pages of the table that answer something other than HTML.
#[test]
fn the_files_the_console_serves_without_a_session_are_those_the_map_names() {
    let map = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/ARCHITECTURE.md"))
        .expect("ARCHITECTURE.md");
    let text = map.split_whitespace().collect::<Vec<_>>().join(" ");
    let (_, after) = text
        .split_once("without a session no file but ")
        .expect("the map names the console's files served without a session");
    let (listed, _) = after.split_once(". ").unwrap();
    let mut named: Vec<&str> = listed.split('`').filter(|s| s.starts_with('/')).collect();
    named.sort();

    let mut served = Vec::new();
    for page in page_table() {
        if page.method != "GET" || page.access != Access::Public {
            continue;
        }
        let resp = console().get(&page.path);
        let kind = resp.header("Content-Type").unwrap_or_default().to_string();
        if resp.status == 200 && !kind.starts_with("text/html") {
            served.push(page.path);
        }
    }
    served.sort();
    assert_eq!(
        served, named,
        "ARCHITECTURE.md's list of the console's files"
    );
}

/// The map's invariant that no test shares a server with another: the harness keeps each
/// test's server for that test only, and no other file of the tests keeps one for longer (in a
/// `static`, or behind a `server()` of its own that would shadow the harness's).
#[test]
fn no_test_module_keeps_a_server_beyond_its_test() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/it");
    let mut kept = Vec::new();
    for file in rust_files(std::path::Path::new(dir)) {
        if file.ends_with("harness.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&file).expect("a test file");
        for (n, line) in text.lines().enumerate() {
            let line = line.trim_start();
            let in_static = line.starts_with("static ") && line.contains("Server");
            if in_static || line.starts_with("fn server(") {
                kept.push(format!("{}:{}: {line}", file.display(), n + 1));
            }
        }
    }
    assert!(kept.is_empty(), "a server kept beyond its test: {kept:#?}");
}

/// The `.rs` files under `dir`, its folders' included.
fn rust_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).expect("the tests' folder") {
        let path = entry.expect("a test file").path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            files.push(path);
        }
    }
    files
}
