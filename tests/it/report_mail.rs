//! Scheduled reports by mail (issue 44, item 4): a person's subscriptions on their own page
//! (viewers too), the weekly report mailed once per subscriber by a fleet of three instances
//! on one database, and once again after the fleet restarts having missed a week (the last
//! period only); its content against the requests the test made through `/fragment`; RFC
//! 8058's one-click unsubscribe from the mail's header; a forged or altered token refused,
//! changing nothing. Time moves by the clock file (`AGENTCARD_TEST_CLOCK_FILE`), never by
//! waiting; every wait polls for a state.

use crate::console_fixtures::{person, Browser, SmtpSink};
use crate::fixtures::{CardSpec, World};
use crate::harness::{self, server, start_server, Client, OwnServer, CONSOLE_HOST};
use agentcard::domain::{Cadence, Role};
use agentcard::ops::reports::{self, Bounds, By, NOT_YET_WRITTEN};
use jiff::{Timestamp, ToSpan};
use std::time::{Duration, Instant};

/// The agents of the scene, the requests of each (each on a page of its own, `/a1`…), and
/// whether its fragment serves a card: the sixth ranks out of the top five.
const AGENTS: [(&str, i64, bool); 6] = [
    ("GPTBot", 6, true),
    ("ClaudeBot", 5, true),
    ("CCBot", 4, false),
    ("Bytespider", 3, true),
    ("AI2Bot", 2, false),
    ("Meta-ExternalAgent", 1, true),
];

/// A publisher whose agents made the requests of [`AGENTS`] this week, counted.
fn scene() -> World {
    let mut w = World::new();
    let site = w.site("digest.example");
    let home = w.fragment(site, "/home", true);
    let off = w.fragment(site, "/off", false);
    w.card(CardSpec::default(), &[&home]);
    harness::sync_cache();
    for (n, (agent, requests, served)) in AGENTS.iter().enumerate() {
        let fragment = if *served { &home } else { &off };
        let page = format!("&page_url=https%3A%2F%2Fdigest.example%2Fa{}", n + 1);
        for _ in 0..*requests {
            let resp = w.fetch_with(fragment, &page, &[("User-Agent", &format!("{agent}/1.0"))]);
            assert_eq!(resp.status, if *served { 200 } else { 204 }, "{agent}");
        }
    }
    w
}

/// Waits until the report of the week under way holds every request of the scene, page rows
/// included (they are written every tenth flush).
fn counted(w: &World) {
    let mut db = harness::db();
    let org = agentcard::ops::orgs::find_org(&mut db, &crate::console_fixtures::org_id(&w.org_id))
        .unwrap();
    let bounds = Bounds::past(Cadence::Weekly, next_monday());
    let expected: i64 = AGENTS.iter().map(|(_, n, _)| n).sum();
    poll("the requests counted, pages included", || {
        let report = reports::report(&mut db, &org, bounds, Some(By::Page)).unwrap();
        let groups = report.groups.map(|(_, groups)| groups).unwrap_or_default();
        let unwritten = groups
            .iter()
            .any(|g| g.key == reports::Key::Page(NOT_YET_WRITTEN.into()));
        report.total.requests == expected && !unwritten
    });
}

/// Polls `done` until it holds, up to a generous cap.
fn poll(what: &str, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < Duration::from_secs(60), "never: {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The first Monday after today (UTC), five minutes past midnight: when this week's report
/// is due.
fn next_monday() -> Timestamp {
    let today = Timestamp::now().to_zoned(jiff::tz::TimeZone::UTC).date();
    let days = 7 - i64::from(today.weekday().to_monday_zero_offset());
    let monday = today.checked_add(days.days()).unwrap();
    monday
        .to_zoned(jiff::tz::TimeZone::UTC)
        .unwrap()
        .timestamp()
        + 5.minutes()
}

/// The fleet's clock: the file its instances read the time from.
struct Clock(std::path::PathBuf);

impl Clock {
    fn new() -> Clock {
        let name = agentcard::ids::new_id("agentcard-clock-");
        Clock(std::env::temp_dir().join(name))
    }

    fn set(&self, at: Timestamp) {
        std::fs::write(&self.0, at.to_string()).unwrap();
    }
}

impl Drop for Clock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// `n` instances on the test's database, with mail, the clock file and a short period.
fn fleet(sink: &SmtpSink, clock: &Clock, n: usize) -> Vec<OwnServer> {
    let url = sink.url();
    let file = clock.0.to_str().unwrap().to_string();
    let settings = [
        ("AGENTCARD_SMTP_URL", url.as_str()),
        ("AGENTCARD_SCHEDULE_MS", "50"),
        ("AGENTCARD_TEST_CLOCK_FILE", file.as_str()),
    ];
    (0..n)
        .map(|_| start_server(&server().database_url, &settings))
        .collect()
}

/// One mail as the sink printed it: its headers (unfolded) and its two parts, decoded.
struct Printed {
    headers: String,
    text: String,
    html: String,
}

impl Printed {
    fn header(&self, name: &str) -> Option<&str> {
        let start = format!("\n{name}: ");
        let at = self.headers.find(&start)? + start.len();
        let rest = &self.headers[at..];
        Some(&rest[..rest.find('\n').unwrap_or(rest.len())])
    }
}

/// Every mail the sink printed to `to`, in order.
fn mails_to(printed: &str, to: &str) -> Vec<Printed> {
    let messages = printed
        .split("---------- MESSAGE FOLLOWS ----------")
        .skip(1);
    messages
        .map(|message| message.split("------------ END MESSAGE").next().unwrap())
        .map(parse)
        .filter(|mail| mail.header("To") == Some(to))
        .collect()
}

fn parse(message: &str) -> Printed {
    let (head, body) = message.split_once("\n\n").unwrap();
    let headers = format!(
        "\n{}\n",
        head.trim_start().replace("\n ", " ").replace("\n\t", " ")
    );
    let boundary = headers
        .split("boundary=\"")
        .nth(1)
        .expect("a multipart mail");
    let boundary = format!("--{}", &boundary[..boundary.find('"').unwrap()]);
    let part = |kind: &str| {
        let found = body.split(boundary.as_str()).find(|part| {
            part.to_ascii_lowercase()
                .contains(&format!("content-type: {kind}"))
        });
        let (part_head, text) = found.expect(kind).split_once("\n\n").unwrap();
        match part_head.to_ascii_lowercase().contains("quoted-printable") {
            true => quoted_printable(text),
            false => text.to_string(),
        }
    };
    Printed {
        text: part("text/plain"),
        html: part("text/html"),
        headers,
    }
}

/// Quoted-printable decoded (its soft line breaks already joined by the sink).
fn quoted_printable(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let escaped = (bytes[i] == b'=' && i + 2 < bytes.len())
            .then(|| std::str::from_utf8(&bytes[i + 1..i + 3]).ok())
            .flatten()
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match escaped {
            Some(byte) => {
                out.push(byte);
                i += 3;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8(out).unwrap()
}

/// The person's subscriptions, read back from the database.
fn subscriptions_of(email: &str) -> Vec<String> {
    let rows = harness::db()
        .query(
            "SELECT s.org_id || ' ' || s.cadence FROM report_subscriptions s
               JOIN persons p ON p.id = s.person_id WHERE lower(p.email) = lower($1)
              ORDER BY 1",
            &[&email],
        )
        .unwrap();
    rows.iter().map(|row| row.get(0)).collect()
}

/// Subscribes `browser`'s person to `org`'s report (`none`, `weekly`, `monthly`, `both`).
fn subscribe(browser: &Browser, org: &str, reports: &str) {
    let resp = browser.write("/subscriptions", &[("org", org), ("reports", reports)]);
    assert_eq!(resp.status, 303, "{}", resp.text());
    assert_eq!(
        resp.header("Location"),
        Some("/subscriptions?notice=subscription-saved")
    );
}

/// A `POST` as a mail client sends RFC 8058's one-click unsubscribe: no cookie, no origin.
fn one_click(url: &str) -> harness::Resp {
    let path = url.strip_prefix("https://console.test").expect(url);
    let headers = [("Content-Type", "application/x-www-form-urlencoded")];
    Client::new(server().addr).host(CONSOLE_HOST).request(
        "POST",
        path,
        &headers,
        Some(b"List-Unsubscribe=One-Click"),
    )
}

#[test]
fn a_fleet_of_three_mails_each_weekly_report_once_and_one_click_ends_it() {
    let mut sink = SmtpSink::start();
    let clock = Clock::new();
    let w = scene();
    let owner = person(Some(&w.org_id), Role::Owner);
    let viewer = person(Some(&w.org_id), Role::Viewer);
    let monthly = person(Some(&w.org_id), Role::Member);
    subscribe(&Browser::signed_in(&owner), &w.org_id, "weekly");
    subscribe(&Browser::signed_in(&viewer), &w.org_id, "both");
    subscribe(&Browser::signed_in(&monthly), &w.org_id, "monthly");
    assert_eq!(subscriptions_of(&owner), [format!("{} weekly", w.org_id)]);
    let page = Browser::signed_in(&viewer).get("/subscriptions").text();
    assert!(page.contains("<option value=\"both\" selected>"), "{page}");
    counted(&w);

    // Monday, 00:05: the week is due. Three instances, one mail per subscriber.
    let monday = next_monday();
    let instances = fleet(&sink, &clock, 3);
    clock.set(monday);
    sink.until_whole(&format!("To: {viewer}"));
    let printed = sink.until_whole(&format!("To: {owner}"));
    let mail = &mails_to(&printed, &owner)[0];

    // The content: the totals, their change, the top five, the links.
    let week = in_words(monday);
    let subject = mail.header("Subject").unwrap();
    assert!(subject.contains("your weekly report"), "{subject}");
    let text = &mail.text;
    for line in [
        format!("Test Publisher: weekly report, {week} (UTC)"),
        "Requests: 21 (+21 from 0)".into(),
        "Served: 15 (+15 from 0)".into(),
        "Fill rate: 71.4 % (no requests before)".into(),
        "Refused: 0 (unchanged from 0)".into(),
        "- fragment_paused: 6 requests.".into(),
    ] {
        assert!(text.contains(&line), "{line:?} in {text}");
    }
    let listed = |what: &str, name: &dyn Fn(usize, &str) -> String| {
        let mut at = text.find(what).unwrap();
        for (n, (agent, requests, served)) in AGENTS.iter().enumerate().take(5) {
            let served = if *served { *requests } else { 0 };
            let line = format!("- {}: {requests} requests, {served} served", name(n, agent));
            let found = text[at..]
                .find(&line)
                .unwrap_or_else(|| panic!("{line} in {text}"));
            at += found;
        }
    };
    listed("Top agents", &|_, agent| agent.to_string());
    listed("Top pages", &|n, _| format!("digest.example/a{}", n + 1));
    assert!(!text.contains("Meta-ExternalAgent") && !text.contains("digest.example/a6"));
    let from = (monday - 5.minutes() - 168.hours()).strftime("%Y-%m-%d");
    let to = (monday - 5.minutes() - 24.hours()).strftime("%Y-%m-%d");
    let link = format!("https://console.test/reports?window=dates&from={from}&to={to}");
    assert!(text.contains(&link), "{link} in {text}");
    assert!(mail.html.contains("<td>21</td>"), "{}", mail.html);
    assert!(mail.html.contains("GPTBot") && mail.html.contains("+21 from 0"));
    let unsubscribe = mail.header("List-Unsubscribe").unwrap();
    assert_eq!(
        mail.header("List-Unsubscribe-Post"),
        Some("List-Unsubscribe=One-Click")
    );
    let unsubscribe = unsubscribe
        .strip_prefix("<https://console.test/unsubscribe/")
        .and_then(|rest| rest.strip_suffix('>'))
        .unwrap_or_else(|| panic!("{unsubscribe}"))
        .to_string();

    // The fleet restarts after missing a week: one mail each, of the last week only.
    drop(instances);
    clock.set(monday + 336.hours());
    let instances = fleet(&sink, &clock, 3);
    sink.until_whole(&in_words(monday + 336.hours()));
    // A subscriber made now gets the same week's report, in a later turn of the fleet.
    let late = person(Some(&w.org_id), Role::Member);
    subscribe(&Browser::signed_in(&late), &w.org_id, "weekly");
    sink.until_whole(&format!("To: {late}"));
    let printed = sink.until_whole(&format!("To: {owner}"));
    let weekly = |email: &str| {
        let mails = mails_to(&printed, email).into_iter();
        let weekly = |mail: &Printed| mail.header("Subject").unwrap().contains("weekly");
        mails.filter(weekly).collect::<Vec<Printed>>()
    };
    for email in [&owner, &viewer] {
        let mails = weekly(email);
        let subjects: Vec<&str> = mails.iter().map(|m| m.header("Subject").unwrap()).collect();
        assert_eq!(mails.len(), 2, "{email}: {subjects:?}");
        assert!(subjects[0].contains(&week), "{subjects:?}");
        assert!(
            subjects[1].contains(&in_words(monday + 336.hours())),
            "{subjects:?}"
        );
        assert!(mails[1].text.contains("Requests: 0 (unchanged from 0)"));
    }
    assert!(weekly(&monthly).is_empty(), "no weekly report");
    let claimed: i64 = harness::db()
        .query_one(
            "SELECT count(*) FROM report_mailings WHERE cadence = 'weekly'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(
        claimed, 5,
        "two weeks of two subscribers, one of the late one"
    );
    drop(instances);

    // A forged or altered token changes nothing; one click on the real one ends the owner's.
    let (value, mac) = unsubscribe.split_once('.').unwrap();
    let flipped = |text: &str| {
        let last = text.chars().last().unwrap();
        let other = if last == '0' { '1' } else { '0' };
        format!("{}{other}", &text[..text.len() - 1])
    };
    for forged in [
        format!("{}.{mac}", flipped(value)),
        format!("{value}.{}", flipped(mac)),
        format!("{value}.{}", "0".repeat(64)),
        value.to_string(),
        "not-a-token".to_string(),
    ] {
        let url = format!("https://console.test/unsubscribe/{forged}");
        assert_eq!(one_click(&url).status, 404, "{forged}");
        let page = Browser::new().get(&url[CONSOLE_HOST.len() + 8..]);
        assert_eq!(page.status, 404, "{forged}");
    }
    assert_eq!(subscriptions_of(&owner), [format!("{} weekly", w.org_id)]);
    let url = format!("https://console.test/unsubscribe/{unsubscribe}");
    let page = Browser::new().get(&url[CONSOLE_HOST.len() + 8..]);
    assert_eq!(page.status, 200);
    assert!(page.text().contains("Stop this report"), "{}", page.text());
    assert_eq!(
        subscriptions_of(&owner),
        [format!("{} weekly", w.org_id)],
        "a read ends nothing"
    );
    let resp = one_click(&url);
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert!(resp
        .text()
        .contains("You will no longer get the weekly report"));
    assert!(
        subscriptions_of(&owner).is_empty(),
        "the owner's subscription ended"
    );
    assert_eq!(subscriptions_of(&viewer).len(), 2, "the others' stay");
    let again = one_click(&url);
    assert_eq!(again.status, 200, "a second click is answered the same");
    let page = Browser::signed_in(&owner).get("/subscriptions").text();
    assert!(page.contains("<option value=\"none\" selected>"), "{page}");
}

/// The week of a report due at `due` in the mail's words: `23 Nov to 29 Nov 2026`.
fn in_words(due: Timestamp) -> String {
    let end = due - 5.minutes();
    let (first, last) = (end - 168.hours(), end - 24.hours());
    format!(
        "{} to {}",
        first.strftime("%-d %b"),
        last.strftime("%-d %b %Y")
    )
}

#[test]
fn the_report_mail_page_sets_each_organisations_subscription_and_refuses_the_rest() {
    let org = crate::console_fixtures::new_org();
    let other = crate::console_fixtures::new_org();
    let viewer = person(Some(&org), Role::Viewer);
    let browser = Browser::signed_in(&viewer);
    let page = browser.get("/subscriptions");
    assert_eq!(page.status, 200);
    assert!(page.text().contains("<option value=\"none\" selected>"));
    subscribe(&browser, &org, "monthly");
    assert_eq!(subscriptions_of(&viewer), [format!("{org} monthly")]);
    subscribe(&browser, &org, "both");
    assert_eq!(
        subscriptions_of(&viewer),
        [format!("{org} monthly"), format!("{org} weekly")]
    );
    let refused = browser.write("/subscriptions", &[("org", &org), ("reports", "daily")]);
    assert_eq!(refused.status, 422);
    assert!(refused
        .text()
        .contains("expected one of none, weekly, monthly, both"));
    let stranger = browser.write("/subscriptions", &[("org", &other), ("reports", "weekly")]);
    assert_eq!(
        stranger.status, 404,
        "an organisation not open to the person"
    );
    let forged = browser.post("/subscriptions", &[("org", &org), ("reports", "none")]);
    assert_eq!(forged.status, 403, "without the form token");
    assert_eq!(subscriptions_of(&viewer).len(), 2, "nothing changed");
    subscribe(&browser, &org, "none");
    assert!(subscriptions_of(&viewer).is_empty());
}

#[test]
fn a_monthly_report_on_the_1st_is_of_the_past_month_against_the_one_before() {
    let mut sink = SmtpSink::start();
    let clock = Clock::new();
    let w = scene();
    let reader = person(Some(&w.org_id), Role::Viewer);
    subscribe(&Browser::signed_in(&reader), &w.org_id, "monthly");
    counted(&w);
    let today = Timestamp::now().to_zoned(jiff::tz::TimeZone::UTC).date();
    let first = today.first_of_month().checked_add(1.month()).unwrap();
    let due = first.to_zoned(jiff::tz::TimeZone::UTC).unwrap().timestamp() + 5.minutes();
    let _instance = fleet(&sink, &clock, 1);
    clock.set(due);
    let printed = sink.until_whole(&format!("To: {reader}"));
    let mails = mails_to(&printed, &reader);
    assert_eq!(mails.len(), 1);
    let month = today.strftime("%B %Y").to_string();
    let before = today.first_of_month().checked_sub(1.month()).unwrap();
    let subject = mails[0].header("Subject").unwrap();
    assert!(
        subject.ends_with(&format!("your monthly report, {month}")),
        "{subject}"
    );
    let text = &mails[0].text;
    assert!(text.contains("Requests: 21 (+21 from 0)"), "{text}");
    let compared = format!("Each change is against {}.", before.strftime("%B %Y"));
    assert!(text.contains(&compared), "{compared} in {text}");
}
