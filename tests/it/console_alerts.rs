//! Alerts (decisions.md, "Alerts"): the Alerts page's forms (owners change them, every person
//! of the organisation reads them and chooses their mail), the banner on every page while one
//! holds, and, with three instances on one database and an SMTP sink, the fill-rate alert's
//! start and end mailed once each to every subscriber. Time is moved by the test clock's file
//! (`AGENTCARD_TEST_CLOCK_FILE`), never waited for.

use crate::console_fixtures::{assert_refusal, new_org, person, person_in, Browser, SmtpSink};
use crate::fixtures::World;
use crate::harness::{self, db, server, start_server, OwnServer, CLIENT_IP_HEADER};
use agentcard::domain::Role;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Every value of the owners' form, each alert on.
const ALL_ON: &[(&str, &str)] = &[
    ("fill_rate", "on"),
    ("fill_rate_below", "40"),
    ("fill_rate_min_requests", "5"),
    ("silence", "on"),
    ("silence_hours", "12"),
    ("refused", "on"),
    ("refused_above", "20"),
];

/// The fill-rate alert alone on (under 40 % with at least 5 requests).
const FILL_RATE_ALONE: &[(&str, &str)] = &[
    ("fill_rate", "on"),
    ("fill_rate_below", "40"),
    ("fill_rate_min_requests", "5"),
    ("silence", "off"),
    ("silence_hours", "12"),
    ("refused", "off"),
    ("refused_above", "20"),
];

/// A site of the world whose fragment `/home` has no card, so that every request to it goes
/// unfilled; the fragment's id.
fn unfilled(world: &mut World, domain: &str) -> String {
    let site = world.site(domain);
    world.fragment(site, "/home", true)
}

/// The alerts as stored: kind, on, threshold, least requests, holding.
fn stored(db: &mut postgres::Client, org: &str) -> Vec<(String, bool, i32, i32, bool)> {
    db.query(
        "SELECT kind, enabled, threshold, min_requests, holding FROM alerts
          WHERE org_id = $1 ORDER BY kind",
        &[&org],
    )
    .unwrap()
    .iter()
    .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3), r.get(4)))
    .collect()
}

fn subscribers(db: &mut postgres::Client, org: &str) -> i64 {
    db.query_one(
        "SELECT count(*) FROM alert_subscriptions WHERE org_id = $1",
        &[&org],
    )
    .unwrap()
    .get(0)
}

#[test]
fn owners_change_the_alerts_and_everyone_of_the_organisation_reads_them_and_chooses_their_mail() {
    let org = new_org();
    let owner = Browser::signed_in(&person(Some(&org), Role::Owner));
    let member = Browser::signed_in(&person(Some(&org), Role::Member));
    let viewer = Browser::signed_in(&person(Some(&org), Role::Viewer));

    let page = owner.get("/alerts");
    assert_eq!(page.status, 200);
    let text = page.text();
    assert!(
        text.contains("<form method=\"post\" action=\"/alerts\""),
        "{text}"
    );
    assert!(
        text.contains("the fill rate under 50 % over the last hour, with at least 100 requests")
    );
    assert!(text.contains("href=\"/alerts\">Alerts</a>"), "in the menu");

    let saved = owner.write("/alerts", ALL_ON);
    assert_eq!(saved.status, 303, "{}", saved.text());
    assert_eq!(
        saved.header("Location"),
        Some("/alerts?notice=alerts-saved")
    );
    let expected = vec![
        ("fill_rate".to_string(), true, 40, 5, false),
        ("refused".to_string(), true, 20, 0, false),
        ("silence".to_string(), true, 12, 0, false),
    ];
    assert_eq!(stored(&mut db(), &org), expected);
    let audit = owner.get("/audit").text();
    assert!(
        audit.contains("alerts saved: fill rate alert off → on; fill rate under % 50 → 40"),
        "{audit}"
    );

    // A member or a viewer reads them, and may not change them.
    for (who, browser) in [("member", &member), ("viewer", &viewer)] {
        let read = browser.get("/alerts").text();
        assert!(
            read.contains("the fill rate under 40 % over the last hour, with at least 5 requests"),
            "{who}"
        );
        assert!(
            !read.contains("action=\"/alerts\""),
            "{who} is offered no owners' form"
        );
        let refused = browser.write("/alerts", &[("fill_rate", "off")]);
        assert_refusal(
            &refused,
            403,
            "this is for the organisation&#39;s owners only: ask an owner",
        );
    }
    assert_eq!(stored(&mut db(), &org), expected, "nothing changed");

    // Bad values: each refused next to its input, nothing changed.
    let mut bad = ALL_ON.to_vec();
    bad[0] = ("fill_rate", "maybe");
    bad[1] = ("fill_rate_below", "0");
    bad[4] = ("silence_hours", "500");
    bad[6] = ("refused_above", "12.5");
    let refused = owner.write("/alerts", &bad);
    assert_eq!(refused.status, 422, "{}", refused.text());
    let text = refused.text();
    for (field, message) in [
        (
            "fill_rate",
            "fill_rate must be &#34;on&#34; or &#34;off&#34;",
        ),
        (
            "fill_rate_below",
            "fill_rate_below must be a whole number from 1 to 100",
        ),
        (
            "silence_hours",
            "silence_hours must be a whole number from 1 to 168",
        ),
        (
            "refused_above",
            "refused_above must be a whole number from 1 to 100",
        ),
    ] {
        let said = format!(
            "<span class=\"error\" id=\"{field}-error\" data-field=\"{field}\">{message}</span>"
        );
        assert!(text.contains(&said), "{said}: {text}");
    }
    assert!(text.contains("value=\"500\""), "the form as sent");
    assert_eq!(stored(&mut db(), &org), expected, "nothing changed");

    // Every person of the organisation chooses their own mail.
    for browser in [&owner, &member, &viewer] {
        let page = browser.get("/alerts").text();
        assert!(page.contains("action=\"/alerts/mail\""), "{page}");
        let chosen = browser.write("/alerts/mail", &[("mail", "on")]);
        assert_eq!(
            chosen.header("Location"),
            Some("/alerts?notice=alert-mail-saved")
        );
    }
    assert_eq!(subscribers(&mut db(), &org), 3);
    assert!(viewer
        .get("/alerts")
        .text()
        .contains("name=\"mail\" checked"));
    let stopped = viewer.write("/alerts/mail", &[]);
    assert_eq!(stopped.status, 303);
    assert_eq!(subscribers(&mut db(), &org), 2);
    assert!(!viewer
        .get("/alerts")
        .text()
        .contains("name=\"mail\" checked"));
    let odd = member.write("/alerts/mail", &[("mail", "yes")]);
    assert_eq!(odd.status, 400, "{}", odd.text());
    assert_eq!(subscribers(&mut db(), &org), 2);
}

/// The banner a page shows while the fill-rate alert holds.
const FILL_RATE_BANNER: &str = "<p class=\"banner\"><strong>Alert:</strong> the fill rate is \
                                under the alert&#39;s threshold over the last hour.";

#[test]
fn an_alert_that_holds_is_a_banner_on_every_page_of_its_organisation_only() {
    let mut world = World::new();
    let fragment = unfilled(&mut world, "alerted.example");
    harness::sync_cache();
    let owner = Browser::signed_in(&person(Some(&world.org_id), Role::Owner));
    let member = Browser::signed_in(&person(Some(&world.org_id), Role::Member));
    let elsewhere = Browser::signed_in(&person(Some(&new_org()), Role::Owner));
    assert_eq!(owner.write("/alerts", FILL_RATE_ALONE).status, 303);
    for _ in 0..5 {
        assert_eq!(world.fetch(&fragment, "").status, 204);
    }
    counted(&mut db(), &world.org_id, 5);
    assert!(
        !member.get("/").text().contains("class=\"banner\""),
        "not evaluated yet"
    );

    evaluate_ahead(Duration::from_secs(5 * 60));
    for path in ["/", "/sites", "/reports", "/alerts", "/password"] {
        let page = member.get(path).text();
        assert!(page.contains(FILL_RATE_BANNER), "{path}: {page}");
        assert_eq!(page.matches("class=\"banner\"").count(), 1, "{path}");
    }
    assert!(member
        .get("/alerts")
        .text()
        .contains("<strong>holds</strong>, since"));
    assert!(
        !elsewhere.get("/").text().contains("class=\"banner\""),
        "another organisation"
    );

    // Turned off, it is no banner, at once.
    let mut off = FILL_RATE_ALONE.to_vec();
    off[0] = ("fill_rate", "off");
    assert_eq!(owner.write("/alerts", &off).status, 303);
    assert!(!member.get("/").text().contains("class=\"banner\""));
}

#[test]
fn silence_and_refused_requests_hold_from_the_reports_counts() {
    let mut world = World::new();
    let fragment = unfilled(&mut world, "watched.example");
    harness::sync_cache();
    let owner = Browser::signed_in(&person(Some(&world.org_id), Role::Owner));
    let mut two = ALL_ON.to_vec();
    two[0] = ("fill_rate", "off");
    two[4] = ("silence_hours", "2");
    assert_eq!(owner.write("/alerts", &two).status, 303);
    // One request unfilled, three refused with the organisation's key: 75 % refused.
    assert_eq!(world.fetch(&fragment, "").status, 204);
    for _ in 0..3 {
        assert_eq!(world.fetch(&fragment, "&format=bogus").status, 400);
    }
    counted(&mut db(), &world.org_id, 4);
    let holding = |kind: &str| -> bool {
        let row = stored(&mut db(), &world.org_id);
        row.iter()
            .any(|(k, _, _, _, holding)| k == kind && *holding)
    };

    evaluate_ahead(Duration::from_secs(5 * 60));
    assert!(holding("refused") && !holding("silence"));
    assert!(owner
        .get("/")
        .text()
        .contains("refused requests are over the alert"));

    // Past the two hours: no request in the last hour (refused ends), none for two (silence).
    evaluate_ahead(Duration::from_secs(2 * 3600 + 5 * 60));
    assert!(!holding("refused") && holding("silence"));
    let page = owner.get("/").text();
    assert!(page.contains("no request has come for longer than the alert allows."));
    assert_eq!(page.matches("class=\"banner\"").count(), 1);
}

/// Evaluates the alerts of the test's database as a scheduled run at the system's time plus
/// `ahead` would (ahead of the minute its server's own schedule may have claimed).
fn evaluate_ahead(ahead: Duration) {
    let now = jiff::Timestamp::now() + jiff::SignedDuration::try_from(ahead).unwrap();
    agentcard::ops::alerts::evaluate(&mut db(), None, None, now).unwrap();
}

/// Waits until the report holds `expected` requests of the organisation.
fn counted(db: &mut postgres::Client, org: &str, expected: i64) {
    poll("the requests counted", || {
        let counted: i64 = db
            .query_one(
                "SELECT coalesce(sum(requests), 0)::int8 FROM report_minutes WHERE org_id = $1",
                &[&org],
            )
            .unwrap()
            .get(0);
        counted >= expected
    });
}

/// Polls `done` until it holds; fails after a generous bound.
fn poll(what: &str, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < Duration::from_secs(60), "{what}: never");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The test clock's file: moved by writing an instant into it whole (a rename).
struct TestClock(PathBuf);

impl TestClock {
    fn new() -> TestClock {
        let name = agentcard::ids::new_id("clock_");
        TestClock(std::env::temp_dir().join(format!("agentcard-{name}")))
    }

    fn path(&self) -> &Path {
        &self.0
    }

    /// The fleet's time becomes the system's plus `ahead`.
    fn set_ahead(&self, ahead: Duration) {
        let at = jiff::Timestamp::now() + jiff::SignedDuration::try_from(ahead).unwrap();
        let written = self.0.with_extension("new");
        std::fs::write(&written, at.to_string()).unwrap();
        std::fs::rename(&written, &self.0).unwrap();
    }
}

impl Drop for TestClock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// The mails the sink printed: each one's recipient and subject.
fn mails(printed: &str) -> Vec<(String, String)> {
    printed
        .split("MESSAGE FOLLOWS")
        .skip(1)
        .map(|mail| {
            let header = |name: &str| {
                mail.lines()
                    .find_map(|line| line.strip_prefix(name))
                    .unwrap_or_default()
                    .to_string()
            };
            (header("To: "), header("Subject: "))
        })
        .collect()
}

#[test]
fn with_three_instances_the_fill_rate_alerts_start_and_end_are_mailed_once_to_each_subscriber() {
    let mut sink = SmtpSink::start();
    let url = sink.url();
    let clock = TestClock::new();
    let clock_file = clock.path().to_str().unwrap().to_string();
    let database_url = server().database_url.clone();
    let fleet: Vec<OwnServer> = (0..3)
        .map(|_| {
            start_server(
                &database_url,
                &[
                    ("AGENTCARD_SMTP_URL", &url),
                    ("AGENTCARD_SCHEDULE_MS", "20"),
                    ("AGENTCARD_TEST_CLOCK_FILE", &clock_file),
                    ("AGENTCARD_CLIENT_IP_HEADER", CLIENT_IP_HEADER),
                    ("AGENTCARD_TRUSTED_PROXIES", "127.0.0.0/8"),
                ],
            )
        })
        .collect();
    let mut world = World::on(&database_url, fleet[0].addr);
    let fragment = unfilled(&mut world, "fleet.example");
    let mut db = db();
    let org = world.org_id.clone();
    let owner = person_in(&mut db, Some(&org), Role::Owner);
    let member = person_in(&mut db, Some(&org), Role::Member);
    // Not subscribed: each instance mails them a password link, after its alert mails.
    let quiet: Vec<String> = (0..3)
        .map(|_| person_in(&mut db, Some(&org), Role::Member))
        .collect();
    let signed_in = |at: usize, email: &str| {
        let mut browser = Browser::on(fleet[at].addr);
        assert_eq!(
            browser
                .sign_in(email, crate::console_fixtures::PASSWORD)
                .status,
            303
        );
        browser
    };
    assert_eq!(
        signed_in(0, &owner)
            .write("/alerts", FILL_RATE_ALONE)
            .status,
        303
    );
    for (at, subscriber) in [(1, &owner), (2, &member)] {
        let chosen = signed_in(at, subscriber).write("/alerts/mail", &[("mail", "on")]);
        assert_eq!(chosen.status, 303);
    }

    // Five unfilled requests on each instance, counted by each one's flush.
    for server in &fleet {
        server.app.delivery.cache.refresh_changed(&mut db).unwrap();
        for _ in 0..5 {
            let resp = world.fetch_from(server.addr, &fragment, "", &[]);
            assert_eq!(resp.status, 204);
        }
    }
    counted(&mut db, &org, 15);
    clock.set_ahead(Duration::from_secs(60));
    sink.until("Subject: Alert started");
    let started = sink.until("END MESSAGE");
    assert!(
        started.contains("over the last hour, with at least 5 requests holds."),
        "{started}"
    );
    assert!(
        started.contains("Over the last hour: 15 requests, 0 served, 0 refused."),
        "{started}"
    );
    assert!(
        started.contains("The Alerts page: https://console.test/alerts"),
        "{started}"
    );

    // Two hours later the hour holds no request: fewer than 5, it ends.
    clock.set_ahead(Duration::from_secs(2 * 3600));
    sink.until("Subject: Alert ended");
    let held: bool = db
        .query_one(
            "SELECT holding FROM alerts WHERE org_id = $1 AND kind = 'fill_rate'",
            &[&org],
        )
        .unwrap()
        .get(0);
    assert!(!held);

    // A mail sent after them by each instance: every alert mail an instance queued is out
    // once its own has come (an instance sends its mails in order).
    for (server, quiet) in fleet.iter().zip(&quiet) {
        let asked = Browser::on(server.addr).post("/forgot-password", &[("email", quiet)]);
        assert_eq!(asked.status, 200, "{}", asked.text());
    }
    let mut printed = String::new();
    for quiet in &quiet {
        printed = sink.until(&format!("To: {quiet}"));
    }
    let mut alert_mails: Vec<(String, String)> = mails(&printed)
        .into_iter()
        .filter(|(to, _)| !quiet.contains(to))
        .collect();
    alert_mails.sort();
    let subject = |what: &str| format!("Alert {what}: fill rate, Test Publisher");
    let mut expected = vec![
        (member.clone(), subject("ended")),
        (member.clone(), subject("started")),
        (owner.clone(), subject("ended")),
        (owner.clone(), subject("started")),
    ];
    expected.sort();
    assert_eq!(alert_mails, expected, "{printed}");
}
