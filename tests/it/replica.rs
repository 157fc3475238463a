//! A second database: the reports read on a replica (`AGENTCARD_REPLICA_URL`), a second
//! clone of the template standing in for it with numbers of its own, what is read there is
//! what the Reports page, its CSV and `admin report` show, and without the setting (or while
//! the replica does not answer) the primary's; and a primary that stops accepting writes
//! (`default_transaction_read_only`, its connections cut, as a demotion does): `/v1` answers
//! `503 unavailable` with `Retry-After`, never `500`, writes nothing, and writes again once it
//! accepts them, without a restart.

use crate::console_fixtures::{person_in, Browser, PASSWORD};
use crate::fixtures::{agentcard, assert_error, new_site};
use crate::harness::{self, new_org, OwnServer, Resp, TestDatabase};
use agentcard::db;
use agentcard::domain::Role;
use jiff::{SignedDuration, Timestamp};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// A state that has not come after this long is a hang, even on a loaded machine.
const HANG: Duration = Duration::from_secs(60);

/// `requests` served two hours ago to the organisation, in the report's hours.
fn add_served(db: &mut postgres::Client, org: &str, requests: i64) {
    let two_hours_ago = Timestamp::now()
        .checked_sub(SignedDuration::from_hours(2))
        .unwrap();
    let hour = two_hours_ago.strftime("%Y-%m-%dT%H:00:00Z").to_string();
    db.execute(
        "INSERT INTO report_hours VALUES ($1::text::timestamptz, $2, 'replica.example', '',
                '', '', '', 'en', 'html', 'served', 'served', 'GPTBot', 'training', $3)",
        &[&hour, &org, &requests],
    )
    .unwrap();
}

/// The Reports page's total of requests.
fn total_requests(page: &Resp) -> i64 {
    assert_eq!(page.status, 200, "{}", page.text());
    let text = page.text();
    let start = text.find("id=\"total-requests\">").expect("the total") + 20;
    let digits = text[start..].split('<').next().unwrap();
    digits.parse().unwrap()
}

/// The CSV's `requests` column, summed over its lines.
fn csv_requests(csv: &Resp) -> i64 {
    assert_eq!(csv.status, 200, "{}", csv.text());
    let text = csv.text();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let column = header.iter().position(|h| *h == "requests").unwrap();
    lines
        .map(|line| line.split(',').nth(column).unwrap().parse::<i64>().unwrap())
        .sum()
}

/// An organisation of the test's database with a viewer (its id and email), and `requests`
/// served to it there.
fn publisher(db: &mut postgres::Client, requests: i64) -> (String, String) {
    let org = new_org(db, "Replicated Publisher").to_string();
    let email = person_in(db, Some(&org), Role::Viewer);
    add_served(db, &org, requests);
    (org, email)
}

/// A server on the test's database reading the reports at `replica`, and a browser of the
/// person `email` signed in to its console.
fn reading_on(replica: &str, email: &str) -> (OwnServer, Browser) {
    let primary = harness::server();
    let server =
        harness::start_server(&primary.database_url, &[("AGENTCARD_REPLICA_URL", replica)]);
    let mut browser = Browser::on(server.addr);
    assert_eq!(browser.sign_in(email, PASSWORD).status, 303);
    (server, browser)
}

#[test]
fn the_reports_read_the_replica_when_one_is_set_and_the_primary_otherwise() {
    let primary = harness::server();
    let (org, email) = publisher(&mut primary.db(), 3);
    let replica = TestDatabase::create();
    let mut on_replica = db::connect(&replica.url).unwrap();
    on_replica
        .execute(
            "INSERT INTO orgs (id, name) VALUES ($1, 'Replicated Publisher')",
            &[&org],
        )
        .unwrap();
    add_served(&mut on_replica, &org, 7);

    let (_server, browser) = reading_on(&replica.url, &email);
    let page = browser.get("/reports?window=7d");
    assert_eq!(total_requests(&page), 7, "the replica's numbers");
    assert!(
        !page.text().contains("replica-lag"),
        "a replica that is not behind is not said to be"
    );
    assert_eq!(csv_requests(&browser.get("/reports.csv?window=7d")), 7);

    let plain = Browser::signed_in_to(&primary, &email);
    assert_eq!(total_requests(&plain.get("/reports?window=7d")), 3);
    assert_eq!(csv_requests(&plain.get("/reports.csv?window=7d")), 3);

    let report = |env: &[(&str, &str)]| {
        let args = ["admin", "report", "--org", &org, "--format", "json"];
        let (ok, stdout, stderr) = agentcard(&args, env);
        assert!(ok, "{stderr}");
        serde_json::from_str::<Value>(&stdout).unwrap()["requests"].clone()
    };
    assert_eq!(
        report(&[("AGENTCARD_REPLICA_URL", replica.url.as_str())]),
        7
    );
    assert_eq!(report(&[]), 3);
}

#[test]
fn a_replica_that_does_not_answer_leaves_the_reports_to_the_primary() {
    let (_, email) = publisher(&mut harness::server().db(), 3);
    let gone = format!("{}_no_such_replica", harness::server().database_url);
    let (_server, browser) = reading_on(&gone, &email);
    assert_eq!(total_requests(&browser.get("/reports?window=7d")), 3);
    assert_eq!(csv_requests(&browser.get("/reports.csv?window=7d")), 3);
}

/// Polls `done` every 50 ms; panics naming `what` if it is still false after `HANG`.
fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < HANG, "{what}: not within {HANG:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Sets whether new sessions of the test's database are read-only, and cuts the sessions
/// there are (but this one), as a primary's demotion does.
fn read_only(db: &mut postgres::Client, on: bool) {
    let setting = if on { "on" } else { "off" };
    db.batch_execute(&format!(
        "DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET default_transaction_read_only = {setting}',
                                    current_database()); END $$"
    ))
    .unwrap();
    db.execute(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE datname = current_database() AND pid <> pg_backend_pid()",
        &[],
    )
    .unwrap();
}

#[test]
fn writes_meet_a_primary_that_accepts_none_with_503_until_it_does_again() {
    let server = harness::server();
    let t = server.tenant();
    new_site(&t, "before.example");
    let mut db = server.db();
    read_only(&mut db, true);

    let during = t.client.put("/v1/sites/during.example", &json!({}));
    assert_error(&during, 503, "unavailable", None);
    assert_eq!(during.header("retry-after"), Some("5"));
    let read = t.client.get("/v1/sites");
    assert_error(&read, 503, "unavailable", None);
    let ready = server.client().get("/ready");
    assert_eq!(ready.json()["database"], "down", "{}", ready.text());

    read_only(&mut db, false);
    wait_until("the pool back on a server that accepts writes", || {
        server.app.pool.database_up()
    });
    new_site(&t, "after.example");
    let sites: Vec<String> = db
        .query(
            "SELECT domain FROM sites WHERE org_id = $1 ORDER BY domain",
            &[&t.org_id],
        )
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
    assert_eq!(sites, ["after.example", "before.example"]);
}
