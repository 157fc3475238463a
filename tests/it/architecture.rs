//! The lines of ARCHITECTURE.md a program can check against the running code (the module map
//! and the layers are `scripts/check-deps.py`'s): which files the console serves to anyone.

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
