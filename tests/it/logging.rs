//! The operator's log: at the default filter (no `RUST_LOG`) it carries our events, not a
//! line per request or per connection.

use crate::fixtures::{CardSpec, ServeProcess, World};
use crate::harness::Client;

#[test]
fn served_requests_write_no_log_line_at_the_default_filter() {
    let mut w = World::new();
    let site = w.site("quiet-log.example");
    let fragment = w.fragment(site, "/home", true);
    w.card(CardSpec::default(), &[&fragment]);
    let token = w.management_token();
    // Started after the data exists: its first snapshot holds it.
    let process = ServeProcess::start_with(&[]);
    let w = w.served_by(process.addr);
    let started = process.log();
    assert!(started.contains("listening on"), "{started}");

    let mut statuses = Vec::new();
    for _ in 0..3 {
        statuses.push(w.fetch(&fragment, "").status);
        statuses.push(w.fetch("frg_unknown", "").status);
        let client = Client::new(process.addr);
        statuses.push(client.token(&token).get("/v1/me").status);
        statuses.push(Client::new(process.addr).get("/v1/me").status);
    }
    assert!(
        statuses.contains(&200) && statuses.contains(&401),
        "{statuses:?}"
    );
    assert_eq!(process.log(), started, "requests were logged");
}
