//! The console's Reports page over real HTTP, after real `/fragment` requests: the same
//! requests, served and fill rate as `agentcard admin report` for the same window, the CSV of a
//! view equal to `admin report --format csv`, a point of the chart per bucket, groups named and
//! linked, no-fill reasons with where to act, refusals next to their field with nothing run,
//! and another organisation's numbers never shown.

use crate::console_fixtures::{person, Browser};
use crate::console_wiring::parse_csv;
use crate::fixtures::{admin_output, CardSpec, World};
use crate::harness::{self, Resp};
use agentcard::domain::Role;
use agentcard::ops::reports::{ConsoleWindow, NOT_YET_WRITTEN};
use jiff::Timestamp;
use serde_json::Value;
use std::time::{Duration, Instant};

/// A moment as the console writes it: `27 Nov 2026, 20:41 UTC`.
fn in_words(at: Timestamp) -> String {
    at.strftime("%-d %b %Y, %H:%M UTC").to_string()
}

/// A publisher whose agents asked for two fragments: `SERVED` requests served by its card on
/// `/home`, `PAUSED` answered without a card by the paused `/off`.
struct Scene {
    w: World,
    member: Browser,
    home: String,
    off: String,
    card: String,
}

const SERVED: i64 = 5;
const PAUSED: i64 = 3;

/// The `page_url` parameter of a page of the publisher's site.
fn page(path: &str) -> String {
    format!("&page_url=https%3A%2F%2Fnumbers.example%2F{path}")
}

fn scene() -> Scene {
    let mut w = World::new();
    let site = w.site("numbers.example");
    let home = w.fragment(site, "/home", true);
    let off = w.fragment(site, "/off", false);
    let card = w.card(CardSpec::default(), &[&home]);
    harness::sync_cache();
    for _ in 0..SERVED {
        let resp = w.fetch_with(&home, &page("home"), &[("User-Agent", "GPTBot/1.1")]);
        assert_eq!(resp.status, 200, "{}", resp.text());
    }
    for _ in 0..PAUSED {
        let resp = w.fetch_with(&off, &page("off"), &[("User-Agent", "ClaudeBot/1.0")]);
        assert_eq!(resp.status, 204, "{}", resp.text());
    }
    let member = Browser::signed_in(&person(Some(&w.org_id), Role::Member));
    let scene = Scene {
        w,
        member,
        home,
        off,
        card,
    };
    // The counters reach the database every few seconds: wait for all of them.
    let started = Instant::now();
    while scene.report(ConsoleWindow::Last7Days, &[])["requests"] != SERVED + PAUSED {
        assert!(
            started.elapsed().as_secs() < 60,
            "the requests are never counted"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    scene
}

/// The window's `--since` and `--until`, as the console computes it now.
fn window_args(window: ConsoleWindow) -> Vec<String> {
    let bounds = window.bounds(Timestamp::now());
    vec![
        "--since".into(),
        bounds.since().to_string(),
        "--until".into(),
        bounds.until().to_string(),
    ]
}

impl Scene {
    /// `admin report` for the console's window, as JSON.
    fn report(&self, window: ConsoleWindow, args: &[&str]) -> Value {
        let text = self.report_text(window, &[args, &["--format", "json"]].concat());
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
    }

    fn report_text(&self, window: ConsoleWindow, args: &[&str]) -> String {
        let bounds = window_args(window);
        let bounds: Vec<&str> = bounds.iter().map(String::as_str).collect();
        let all = [&["report", "--org", &self.w.org_id][..], &bounds, args].concat();
        let (ok, stdout, stderr) = admin_output(&all);
        assert!(ok, "{stderr}");
        stdout
    }

    fn page(&self, query: &str) -> String {
        let resp = self.member.get(&format!("/reports{query}"));
        assert_eq!(resp.status, 200, "{query}: {}", resp.text());
        resp.text()
    }
}

/// The text of the element with this id (`<dd id="total-requests">8</dd>`).
fn by_id<'p>(page: &'p str, id: &str) -> &'p str {
    let start = format!("id=\"{id}\">");
    let at = page
        .find(&start)
        .unwrap_or_else(|| panic!("no {id} in {page}"))
        + start.len();
    let rest = &page[at..];
    &rest[..rest.find('<').unwrap()]
}

/// The page's totals, `(requests, served, fill rate)`, and the same of the CLI's JSON.
fn totals(page: &str) -> (String, String, String) {
    let [requests, served, fill] =
        ["total-requests", "total-served", "total-fill"].map(|id| by_id(page, id).to_string());
    (requests, served, fill)
}

fn cli_totals(report: &Value) -> (String, String, String) {
    let fill = report["fill_rate"].as_f64().unwrap() * 100.0;
    (
        report["requests"].to_string(),
        report["served"].to_string(),
        format!("{fill:.1} %"),
    )
}

/// How many buckets of `window` the chart's table covers: a row each, or a row for a run of
/// two or more without a request ("No requests from A to B"). Each row is checked: a bucket's
/// label, or a run's first and last.
fn covered(table: &str, window: ConsoleWindow) -> usize {
    let format = match window {
        ConsoleWindow::Last24Hours => "%-d %b %Y, %H:00 UTC",
        _ => "%-d %b %Y",
    };
    let labels: Vec<String> = (window.buckets(Timestamp::now()).iter())
        .map(|start| start.strftime(format).to_string())
        .collect();
    let index = |label: &str| {
        let found = labels.iter().position(|l| l == label);
        found.unwrap_or_else(|| panic!("{label} is no bucket of {labels:?}"))
    };
    let body = between(table, "<tbody>", "</tbody>");
    (body.split("<tr").skip(1))
        .map(|row| match row.find("No requests from ") {
            Some(at) => {
                let run = &row[at + "No requests from ".len()..];
                let (from, to) = run[..run.find('<').unwrap()].split_once(" to ").unwrap();
                let (from, to) = (index(from), index(to));
                assert!(to > from, "a run of one bucket is folded: {row}");
                to - from + 1
            }
            None => {
                index(between(row, "<th scope=\"row\">", "</th>"));
                1
            }
        })
        .sum()
}

fn points(page: &str) -> usize {
    page.matches("<circle class=\"point requests\"").count()
}

#[test]
fn the_page_shows_the_numbers_admin_report_prints_for_each_window() {
    let s = scene();
    let windows = [
        ("", ConsoleWindow::Last7Days, 7),
        ("?window=7d", ConsoleWindow::Last7Days, 7),
        ("?window=24h", ConsoleWindow::Last24Hours, 24),
        ("?window=30d", ConsoleWindow::Last30Days, 30),
    ];
    for (query, window, buckets) in windows {
        let page = s.page(query);
        let cli = s.report(window, &[]);
        assert_eq!(totals(&page), cli_totals(&cli), "{query}");
        assert_eq!(cli["requests"], SERVED + PAUSED);
        assert_eq!(points(&page), buckets, "{query}");
        assert_eq!(
            page.matches("<circle class=\"point served\"").count(),
            buckets
        );
        assert!(page.contains("<svg role=\"group\""), "{page}");
        assert!(page.contains("aria-labelledby=\"window-title window-desc\""));
        assert!(page.contains("UTC"));
        // The table under the chart: a row per bucket, runs of empty ones folded.
        let table = between(&page, "<table class=\"series\">", "</table>");
        assert_eq!(covered(table, window), buckets, "{table}");
    }
    // Two dates: today alone, one point.
    let today = Timestamp::now().strftime("%Y-%m-%d").to_string();
    let page = s.page(&format!("?window=dates&from={today}&to={today}"));
    assert_eq!(points(&page), 1);
    assert_eq!(totals(&page).0, (SERVED + PAUSED).to_string());
    // The point says its numbers on hover (its title) and while it has the focus.
    let day = Timestamp::now().strftime("%-d %b %Y");
    let value = format!(
        "{day}: {} requests, {SERVED} served (62.5 % fill)",
        SERVED + PAUSED
    );
    assert!(
        page.contains(&format!(
            "<g class=\"point\" tabindex=\"0\" role=\"img\" aria-label=\"{value}\"><title>{value}</title>"
        )),
        "{page}"
    );
}

#[test]
fn groups_carry_names_and_links_and_no_fill_reasons_say_where_to_act() {
    let s = scene();
    let page = s.page("?by=fragment");
    assert!(
        page.contains(&format!("<a href=\"/fragments/{}\">", s.home)),
        "{page}"
    );
    assert!(page.contains(&format!("<code>{}</code>", s.off)));
    // The top groups by requests, most first (home's 5 before off's 3), the page says so; two
    // groups are within the top 100: no "(all others)" row.
    let table = between(&page, "<table class=\"groups\" id=\"groups\">", "</table>");
    let home = table
        .find(&format!("<code>{}</code>", s.home))
        .expect(table);
    assert!(home < table.find(&format!("<code>{}</code>", s.off)).unwrap());
    assert!(!table.contains("(all others)"), "{table}");
    assert!(
        by_id(&page, "groups-top").starts_with("The 100 groups with the most requests"),
        "{page}"
    );
    let page = s.page("?by=card");
    assert!(
        page.contains(&format!("<a href=\"/cards/{}\">card</a>", s.card)),
        "{page}"
    );
    let page = s.page("?by=site");
    assert!(
        page.contains("<a href=\"/sites/numbers.example\">"),
        "{page}"
    );
    // By page: whole hours; what the page rows do not hold yet is its own group, and the
    // groups add up to the totals.
    let page = s.page("?by=page");
    let table = between(&page, "<table class=\"groups\" id=\"groups\">", "</table>");
    let requests: i64 = (table.split("<tr><th scope=\"row\">").skip(1))
        .map(|row| {
            let cell = between(row, "<td data-label=\"Requests\">", "</td>");
            cell.parse::<i64>().expect(row)
        })
        .sum();
    assert_eq!(requests, SERVED + PAUSED, "{table}");
    assert!(
        table.contains("<th scope=\"row\">numbers.example/home</th>")
            || table.contains("(not yet written)"),
        "{table}"
    );
    let page = s.page("?by=agent");
    for agent in ["GPTBot", "ClaudeBot"] {
        assert!(
            page.contains(&format!("<th scope=\"row\">{agent}</th>")),
            "{page}"
        );
    }
    // The paused fragment's requests: its page, where to activate it.
    let page = s.page("");
    let reason = &page[page.find("id=\"reason-fragment_paused\"").expect(&page)..];
    assert!(reason.starts_with(&format!(
        "id=\"reason-fragment_paused\"><code>fragment_paused</code>: {PAUSED}"
    )));
    assert!(
        reason.contains(&format!("<a href=\"/fragments/{}\">", s.off)),
        "{reason}"
    );
    assert!(!page.contains("id=\"reason-no_eligible_card\""));
}

#[test]
fn each_view_downloads_as_the_csv_admin_report_prints() {
    let s = scene();
    for by in ["", "agent", "site", "fragment", "card"] {
        let resp = s.member.get(&format!("/reports.csv?window=7d&by={by}"));
        assert_eq!(resp.status, 200, "{by}: {}", resp.text());
        assert_eq!(resp.header("Content-Type"), Some("text/csv; charset=utf-8"));
        let disposition = resp.header("Content-Disposition").unwrap();
        assert!(
            disposition.starts_with("attachment; filename=\"agentcard-report-"),
            "{disposition}"
        );
        let grouping = if by.is_empty() { "day" } else { by };
        let cli = s.report_text(
            ConsoleWindow::Last7Days,
            &["--format", "csv", "--by", grouping],
        );
        assert_eq!(resp.text(), cli, "{by}");
        // The page's link is this download.
        let page = s.page(&format!("?window=7d&by={by}"));
        let link = format!(
            "href=\"/reports.csv?window=7d{}\" download",
            if by.is_empty() {
                String::new()
            } else {
                format!("&#38;by={by}")
            }
        );
        assert!(page.contains(&link), "{link}: {page}");
    }
    // The same through ?format=csv.
    let resp = s.member.get("/reports?window=24h&by=agent&format=csv");
    let cli = s.report_text(
        ConsoleWindow::Last24Hours,
        &["--format", "csv", "--by", "agent"],
    );
    assert_eq!(resp.text(), cli);
}

#[track_caller]
fn assert_refused_next_to(resp: &Resp, field: &str) {
    assert_eq!(resp.status, 422, "{}", resp.text());
    let page = resp.text();
    let error = format!("id=\"report-{field}-error\" data-field=\"{field}\"");
    assert!(page.contains(&error), "{field}: {page}");
    assert!(
        !page.contains("id=\"total-requests\""),
        "something ran: {page}"
    );
    assert!(!page.contains("<svg"));
}

#[test]
fn bad_windows_and_groups_are_refused_next_to_their_field_and_nothing_runs() {
    let member = Browser::signed_in(&person(
        Some(&crate::console_fixtures::new_org()),
        Role::Member,
    ));
    let today = Timestamp::now().to_zoned(jiff::tz::TimeZone::UTC).date();
    let long_ago = today.saturating_sub(jiff::Span::new().days(400));
    let tomorrow = today.tomorrow().unwrap();
    let cases = [
        ("?by=nope".to_string(), "by"),
        ("?by=hour".to_string(), "by"),
        ("?window=1y".to_string(), "window"),
        (format!("?window=dates&from={today}&to={long_ago}"), "from"),
        (format!("?window=dates&from={long_ago}&to={today}"), "from"),
        (format!("?window=dates&from={today}&to={tomorrow}"), "to"),
        (
            "?window=dates&from=2026-13-01&to=2026-01-01".to_string(),
            "from",
        ),
        ("?window=dates&from=yesterday".to_string(), "from"),
        (format!("?from={today}&to=x"), "to"),
    ];
    for (query, field) in cases {
        assert_refused_next_to(&member.get(&format!("/reports{query}")), field);
        let csv = member.get(&format!("/reports.csv{query}"));
        assert_eq!(csv.status, 422, "{query}");
        assert_ne!(csv.header("Content-Type"), Some("text/csv; charset=utf-8"));
    }
    let resp = member.get("/reports?window=%00");
    assert_eq!(resp.status, 422);
}

#[test]
fn another_organisations_numbers_never_appear() {
    let s = scene();
    let neighbour = Browser::signed_in(&person(
        Some(&crate::console_fixtures::new_org()),
        Role::Member,
    ));
    for query in [
        "",
        "?window=24h",
        "?by=fragment",
        "?by=card",
        "?by=agent",
        "?by=site",
    ] {
        let resp = neighbour.get(&format!("/reports{query}"));
        assert_eq!(resp.status, 200);
        let page = resp.text();
        assert_eq!(by_id(&page, "total-requests"), "0", "{query}");
        for theirs in [s.home.as_str(), &s.off, &s.card, "numbers.example"] {
            assert!(!page.contains(theirs), "{query}: {theirs}");
        }
    }
    let csv = neighbour.get("/reports.csv?by=fragment").text();
    assert!(!csv.contains(&s.home));
}

#[test]
fn the_home_page_shows_the_last_24_hours_as_admin_report_prints_them() {
    let s = scene();
    let resp = s.member.get("/");
    assert_eq!(resp.status, 200);
    let page = resp.text();
    let cli = s.report(ConsoleWindow::Last24Hours, &[]);
    let shown =
        ["glance-requests", "glance-served", "glance-fill"].map(|id| by_id(&page, id).to_string());
    let (requests, served, fill) = cli_totals(&cli);
    assert_eq!(shown, [requests, served, fill]);
    assert_eq!(points(&page), 24);
    assert!(
        page.contains("<th scope=\"row\">GPTBot</th><td data-label=\"Requests\">5</td><td data-label=\"Served\">5</td>"),
        "{page}"
    );
    assert!(
        page.contains("<th scope=\"row\">ClaudeBot</th><td data-label=\"Requests\">3</td><td data-label=\"Served\">0</td>"),
        "{page}"
    );
    // The paused fragment answered and filled nothing: linked; the served one is not listed.
    let unfilled = &page[page.find("<ul class=\"unfilled\">").expect(&page)..];
    let unfilled = &unfilled[..unfilled.find("</ul>").unwrap()];
    assert!(
        unfilled.contains(&format!("<a href=\"/fragments/{}\">", s.off)),
        "{unfilled}"
    );
    assert!(!unfilled.contains(&s.home));
}

/// The text of an HTML escape, back: what the page's `<pre>` shows.
fn unescape(html: &str) -> String {
    let pairs = [
        ("&lt;", "<"),
        ("&#60;", "<"),
        ("&gt;", ">"),
        ("&#62;", ">"),
        ("&quot;", "\""),
        ("&#34;", "\""),
        ("&#39;", "'"),
        ("&#x27;", "'"),
        ("&amp;", "&"),
        ("&#38;", "&"),
    ];
    let mut text = html.to_string();
    for (escaped, raw) in pairs {
        text = text.replace(escaped, raw);
    }
    text
}

/// The part of `page` between `start` (after it) and `end`.
fn between<'p>(page: &'p str, start: &str, end: &str) -> &'p str {
    let at = page
        .find(start)
        .unwrap_or_else(|| panic!("no {start} in {page}"))
        + start.len();
    &page[at..at + page[at..].find(end).unwrap()]
}

#[test]
fn why_this_card_names_the_card_and_the_answer_fragment_serves() {
    let mut w = World::new();
    let site = w.site("why.example");
    let ruled = w.fragment(site, "/sport", true);
    let default = w.fragment(site, "/home", true);
    let lone = w.fragment(site, "/lone", true);
    let paused = w.fragment(site, "/off", false);
    w.route(site, "/sport/", false, &ruled);
    w.default_fragment(site, &default);
    let cards = [&ruled, &default, &lone].map(|f| w.card(CardSpec::default(), &[f]));
    let english = CardSpec {
        lang: "en",
        ..CardSpec::default()
    };
    let other_language = w.card(english, &[&ruled]);
    harness::sync_cache();
    let member = Browser::signed_in(&person(Some(&w.org_id), Role::Member));
    // A page resolved by a rule, by the default, by none (the edge's fragment_id serves).
    let pages = [
        (
            "https://why.example/sport/today",
            0,
            "matches the prefix rule /sport/",
        ),
        ("https://why.example/about", 1, "the site default"),
        (
            "https://elsewhere.example/x",
            2,
            "is not a site of this organisation",
        ),
    ];
    for (url, served, resolution) in pages {
        let query: String = url::form_urlencoded::Serializer::new(String::new())
            .append_pair("page_url", url)
            .append_pair("lang", "fr")
            .append_pair("fragment_id", &lone)
            .append_pair("user_agent", "Mozilla/5.0 (compatible; GPTBot/1.1)")
            .finish();
        let resp = member.get(&format!("/sites/why.example/why?{query}"));
        assert_eq!(resp.status, 200, "{}", resp.text());
        let page = resp.text();
        let extra = format!(
            "&page_url={}",
            url::form_urlencoded::byte_serialize(url.as_bytes()).collect::<String>()
        );
        let fragment = w.fetch(&lone, &extra);
        let card = crate::fixtures::served_card(&fragment);
        assert_eq!(card, cards[served], "{url}");
        assert_eq!(
            between(&page, "id=\"why-served\" data-card=\"", "\""),
            card,
            "{url}"
        );
        assert_eq!(between(&page, "<span id=\"why-status\">", "<"), "200");
        assert_eq!(
            unescape(between(
                &page,
                "<pre id=\"why-body\" tabindex=\"0\">",
                "</pre>"
            )),
            fragment.text(),
            "{url}"
        );
        assert!(
            between(&page, "<p id=\"why-resolution\">", "</p>").contains(resolution),
            "{page}"
        );
        assert!(page.contains("marker GPTBot, purpose training"), "{page}");
        // The other cards never looked at, and why.
        for (i, other) in cards.iter().enumerate().filter(|(i, _)| *i != served) {
            let line = format!("<code>{other}</code>: active, but not eligible on this fragment");
            assert!(page.contains(&line), "{i}: {page}");
        }
    }
    // The English card was looked at on /sport, and dropped for its language.
    let resp =
        member.get("/sites/why.example/why?page_url=https%3A%2F%2Fwhy.example%2Fsport&lang=fr");
    let line =
        format!("<code>{other_language}</code>: dropped: in en, not the request&#39;s language");
    let page = resp.text();
    assert!(
        page.contains(&line) || page.contains(&line.replace("&#39;", "'")),
        "{page}"
    );
    // A paused fragment: a 204, no card looked at.
    let resp = member.get(&format!("/sites/why.example/why?page_url=https%3A%2F%2Fnone.example%2F&lang=fr&fragment_id={paused}"));
    let page = resp.text();
    assert_eq!(between(&page, "<span id=\"why-status\">", "<"), "204");
    assert_eq!(w.fetch(&paused, "").status, 204);
}

#[test]
fn why_this_card_refuses_what_fragment_would_next_to_the_field() {
    let w = World::new();
    let mut w = w;
    let site = w.site("refuse.example");
    let fragment = w.fragment(site, "/f", true);
    harness::sync_cache();
    let member = Browser::signed_in(&person(Some(&w.org_id), Role::Member));
    let long = format!("https://refuse.example/{}", "a".repeat(2048));
    let cases = [
        ("ftp://refuse.example/".to_string(), "fr", "", "page_url"),
        ("https://".to_string(), "fr", "", "page_url"),
        ("/no/scheme".to_string(), "fr", "", "page_url"),
        (long, "fr", "", "page_url"),
        ("https://refuse.example/".to_string(), "xx", "", "lang"),
        (
            "https://refuse.example/".to_string(),
            "fr",
            "novalue",
            "ctx",
        ),
        // /fragment refuses a request without fragment_id; the site has no default to fill in.
        (
            "https://refuse.example/".to_string(),
            "fr",
            "",
            "fragment_id",
        ),
    ];
    for (url, lang, ctx, field) in cases {
        let fragment_id = if field == "fragment_id" {
            ""
        } else {
            &fragment
        };
        let query: String = url::form_urlencoded::Serializer::new(String::new())
            .append_pair("page_url", &url)
            .append_pair("lang", lang)
            .append_pair("ctx", ctx)
            .append_pair("fragment_id", fragment_id)
            .finish();
        let resp = member.get(&format!("/sites/refuse.example/why?{query}"));
        assert_eq!(resp.status, 422, "{field}: {}", resp.text());
        let page = resp.text();
        assert!(
            page.contains(&format!("id=\"why-{field}-error\"")),
            "{field}: {page}"
        );
        assert!(!page.contains("id=\"why-result\""));
    }
    // Another organisation's site is not found.
    let neighbour = Browser::signed_in(&person(
        Some(&crate::console_fixtures::new_org()),
        Role::Member,
    ));
    assert_eq!(neighbour.get("/sites/refuse.example/why").status, 404);
}

#[test]
fn the_card_page_shows_what_it_served_each_of_the_last_7_days() {
    let s = scene();
    let resp = s.member.get(&format!("/cards/{}", s.card));
    assert_eq!(resp.status, 200, "{}", resp.text());
    let page = resp.text();
    let cli = s.report(ConsoleWindow::Last7Days, &["--by", "card"]);
    let groups = cli["groups"].as_array().unwrap();
    let ours = groups
        .iter()
        .find(|g| g["card_id"] == s.card.as_str())
        .unwrap();
    assert_eq!(by_id(&page, "week-served"), ours["served"].to_string());
    assert_eq!(ours["served"], SERVED);
    let table = between(&page, "<table class=\"week\">", "</table>");
    assert_eq!(table.matches("<th scope=\"row\">").count(), 7);
    let today = Timestamp::now().strftime("%-d %b %Y").to_string();
    assert!(
        table.contains(&format!(
            "<th scope=\"row\">{today}</th><td data-label=\"Served\">{SERVED}</td>"
        )),
        "{table}"
    );
}

/// The rows of a card page's table of pages: page, requests served, "Why this card?" link.
fn card_pages(page: &str) -> Vec<(String, i64, Option<String>)> {
    if !page.contains("<table class=\"week-pages\">") {
        return Vec::new();
    }
    let body = between(page, "<table class=\"week-pages\">", "</table>");
    let body = between(body, "<tbody>", "</tbody>");
    (body.split("<tr>").skip(1))
        .map(|row| {
            let name = unescape(between(row, "<th scope=\"row\">", "</th>"));
            let served = between(row, "</th><td data-label=\"Requests served\">", "</td>");
            let served = served.parse().unwrap();
            let why = row
                .contains("<a href=\"")
                .then(|| unescape(between(row, "<a href=\"", "\"")));
            (name, served, why)
        })
        .collect()
}

#[test]
fn the_card_page_lists_the_pages_that_got_it_most_and_another_card_page_does_not() {
    let mut w = World::new();
    let site = w.site("card-pages.example");
    let first = w.fragment(site, "/first", true);
    let second = w.fragment(site, "/second", true);
    let ours = w.card(CardSpec::default(), &[&first]);
    let other = w.card(CardSpec::default(), &[&second]);
    harness::sync_cache();
    let page_of = |path: &str| format!("&page_url=https%3A%2F%2Fcard-pages.example%2F{path}");
    // Ours: /a 3 times, /c and /d twice each (a tie: byte order), /b once and a request
    // without a page (a tie too); the other card: /a and /z.
    let sent = [
        (&first, "a"),
        (&first, "b"),
        (&first, "d"),
        (&first, "a"),
        (&first, "c"),
        (&first, "d"),
        (&first, "c"),
        (&first, "a"),
        (&second, "a"),
        (&second, "z"),
    ];
    for (fragment, path) in sent {
        let resp = w.fetch(fragment, &page_of(path));
        assert_eq!(resp.status, 200, "{}", resp.text());
    }
    assert_eq!(w.fetch(&first, "").status, 200);
    let requests = sent.len() as i64 + 1;
    // Page rows (and the cards' rows with them) are written every few seconds: wait until the
    // view by page holds every request.
    let started = Instant::now();
    let written = |report: &Value| {
        let groups = report["groups"].as_array().unwrap();
        let on_pages = (groups.iter()).filter(|g| g["page"] != "(not yet written)");
        on_pages
            .map(|g| g["requests"].as_i64().unwrap())
            .sum::<i64>()
            == requests
    };
    let args = [
        "report", "--org", &w.org_id, "--since", "7d", "--by", "page",
    ];
    let args = [&args[..], &["--format", "json"]].concat();
    loop {
        let (ok, stdout, stderr) = admin_output(&args);
        assert!(ok, "{stderr}");
        if written(&serde_json::from_str(&stdout).unwrap()) {
            break;
        }
        assert!(started.elapsed().as_secs() < 60, "never written: {stdout}");
        std::thread::sleep(Duration::from_millis(50));
    }
    let member = Browser::signed_in(&person(Some(&w.org_id), Role::Member));
    let resp = member.get(&format!("/cards/{ours}"));
    assert_eq!(resp.status, 200, "{}", resp.text());
    let listed = card_pages(&resp.text());
    // Pages read as requested (`/a`, the canonical `/a/` without its slash); "Why this card?"
    // asks about the canonical page, in the card's language.
    let why = |path: &str| {
        let url = format!("https%3A%2F%2Fcard-pages.example%2F{path}%2F");
        Some(format!(
            "/sites/card-pages.example/why?page_url={url}&lang=fr"
        ))
    };
    let row = |path: &str, n| (format!("card-pages.example/{path}"), n, why(path));
    assert_eq!(
        listed,
        [
            row("a", 3),
            row("c", 2),
            row("d", 2),
            ("(no page)".to_string(), 1, None),
            row("b", 1),
        ]
    );
    let asked = member.get(listed[0].2.as_deref().unwrap());
    assert_eq!(asked.status, 200, "{}", asked.text());
    let theirs = member.get(&format!("/cards/{other}")).text();
    assert_eq!(
        card_pages(&theirs),
        [row("a", 1), row("z", 1)],
        "the other card's page lists its own pages only"
    );
}

#[test]
fn the_user_agents_that_matched_no_marker_are_listed_for_their_organisation_only() {
    let (w, fragment) = World::with_a_served_fragment("unmatched.example");
    harness::sync_cache();
    let agent = "Curious-Crawler/0.1 (+https://crawler.example)";
    for _ in 0..3 {
        let resp = w.fetch_with(&fragment, &page("x"), &[("User-Agent", agent)]);
        assert_eq!(resp.status, 200, "{}", resp.text());
    }
    let member = Browser::signed_in(&person(Some(&w.org_id), Role::Member));
    let row = format!(
        "<tr><td data-label=\"User-Agent\"><code>{agent}</code></td><td data-label=\"Requests\">3</td></tr>"
    );
    let started = Instant::now();
    loop {
        let resp = member.get("/reports?window=24h");
        assert_eq!(resp.status, 200);
        if resp.text().contains(&row) {
            break;
        }
        assert!(
            started.elapsed().as_secs() < 60,
            "never listed: {}",
            resp.text()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let neighbour = Browser::signed_in(&person(
        Some(&crate::console_fixtures::new_org()),
        Role::Member,
    ));
    assert!(!neighbour
        .get("/reports?window=24h")
        .text()
        .contains("Curious-Crawler"));
}

/// The text of a group row's cells after its name, by their `data-label`.
fn group_rows(page: &str) -> Vec<(String, i64)> {
    let table = between(page, "<table class=\"groups\" id=\"groups\">", "</table>");
    (between(table, "<tbody>", "</tbody>").split("<tr>").skip(1))
        .map(|row| {
            let name = unescape(between(row, "<th scope=\"row\">", "</th>"));
            let requests = between(row, "<td data-label=\"Requests\">", "</td>");
            (name, requests.parse().expect(row))
        })
        .collect()
}

#[test]
fn groups_come_most_requests_first_under_readable_headers() {
    let s = scene();
    // By agent: GPTBot's 5 before ClaudeBot's 3 (by name it would be the other way round);
    // agents have no id: no Id column.
    let page = s.page("?by=agent");
    assert_eq!(
        group_rows(&page),
        [("GPTBot".to_string(), SERVED), ("ClaudeBot".into(), PAUSED)]
    );
    let table = between(&page, "<table class=\"groups\" id=\"groups\">", "</table>");
    assert!(
        table.contains("<th scope=\"col\">Agent</th><th scope=\"col\">Requests</th>"),
        "{table}"
    );
    assert!(!table.contains("Id</th>"), "{table}");
    assert!(
        page.contains("<option value=\"agent\" selected>Agent</option>"),
        "{page}"
    );
    // By fragment: the id beside each name.
    let page = s.page("?by=fragment");
    let table = between(&page, "<table class=\"groups\" id=\"groups\">", "</table>");
    assert!(table.contains("<th scope=\"col\">Fragment</th><th scope=\"col\">Id</th>"));
    let requests: Vec<i64> = group_rows(&page).iter().map(|(_, n)| *n).collect();
    assert_eq!(requests, [SERVED, PAUSED]);
}

#[test]
fn each_total_shows_its_change_against_the_window_before() {
    let s = scene();
    // Two requests served ten days ago: in the 7 days before the last 7.
    let ten_days_ago = Timestamp::now()
        .checked_sub(jiff::SignedDuration::from_hours(240))
        .unwrap();
    let hour = ten_days_ago.strftime("%Y-%m-%dT%H:00:00Z").to_string();
    harness::db()
        .execute(
            "INSERT INTO report_hours VALUES ($1::text::timestamptz, $2, 'numbers.example', '',
                    '', '', '', 'en', 'html', 'served', 'served', 'GPTBot', 'training', 2)",
            &[&hour, &s.w.org_id],
        )
        .unwrap();
    let before = ConsoleWindow::Last7Days
        .bounds(Timestamp::now())
        .preceding();
    let (since, until) = (before.since().to_string(), before.until().to_string());
    let args = [
        "report",
        "--org",
        &s.w.org_id,
        "--since",
        &since,
        "--until",
        &until,
    ];
    let (ok, stdout, stderr) = admin_output(&[&args[..], &["--format", "json"]].concat());
    assert!(ok, "{stderr}");
    let cli: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!((&cli["requests"], &cli["served"]), (&2.into(), &2.into()));
    let page = s.page("?window=7d");
    let changes = ["requests", "served", "fill", "refused"]
        .map(|name| unescape(by_id(&page, &format!("change-{name}"))));
    assert_eq!(
        changes,
        [
            "+6 (+300.0 %) from 2",
            "+3 (+150.0 %) from 2",
            "-37.5 points from 100.0 %",
            "unchanged from 0",
        ]
    );
    let before = format!(
        "before it, from <time datetime=\"{since}\">{}</time> to <time datetime=\"{until}\">",
        in_words(before.since())
    );
    assert!(page.contains(&before), "{page}");
    // Another organisation had nothing before, nor now.
    let neighbour = Browser::signed_in(&person(
        Some(&crate::console_fixtures::new_org()),
        Role::Member,
    ));
    let page = neighbour.get("/reports").text();
    assert_eq!(by_id(&page, "change-requests"), "unchanged from 0");
    assert_eq!(by_id(&page, "total-fill"), "—");
    assert_eq!(by_id(&page, "change-fill"), "no requests before");
}

#[test]
fn every_csv_has_every_count_of_every_line() {
    let s = scene();
    for by in ["", "agent", "site", "fragment", "card", "page"] {
        let csv = s
            .member
            .get(&format!("/reports.csv?window=7d&by={by}"))
            .text();
        let mut lines = csv.lines();
        let header: Vec<&str> = lines.next().unwrap().split(',').collect();
        let first_count = header.iter().position(|c| *c == "requests").unwrap();
        for line in lines {
            let cells: Vec<&str> = line.split(',').collect();
            assert_eq!(cells.len(), header.len(), "{by}: {line}");
            for (name, cell) in header.iter().zip(&cells).skip(first_count) {
                assert!(!cell.is_empty(), "{by}: {name} empty in {line}");
            }
        }
    }
}

/// The cells of a CSV line by their header, from `requests` on (the counts).
fn counts_of(header: &[String], line: &[String]) -> Vec<(String, String)> {
    let first = header.iter().position(|c| c == "requests").unwrap();
    let cells = header.iter().zip(line).skip(first);
    cells
        .map(|(name, cell)| (name.clone(), cell.clone()))
        .collect()
}

#[test]
fn the_csv_by_page_counts_refused_and_no_fill_reasons_per_page_adding_up_to_the_totals() {
    const REFUSED: i64 = 2;
    let s = scene();
    let refused = format!("{}&format=nope", page("home"));
    for _ in 0..REFUSED {
        let resp =
            s.w.fetch_with(&s.home, &refused, &[("User-Agent", "GPTBot/1.1")]);
        assert_eq!(resp.status, 400, "{}", resp.text());
    }
    let all = SERVED + PAUSED + REFUSED;
    // Page rows are written less often than the totals: wait until they hold every request.
    let started = Instant::now();
    let (total, pages) = loop {
        let total = parse_csv(&s.member.get("/reports.csv?window=7d").text());
        let pages = parse_csv(&s.member.get("/reports.csv?window=7d&by=page").text());
        let counted = |csv: &[Vec<String>]| counts_of(&csv[0], &csv[1])[0].1.clone();
        let written = !pages.iter().any(|line| line[0] == NOT_YET_WRITTEN);
        if written && counted(&total) == all.to_string() {
            break (total, pages);
        }
        assert!(started.elapsed().as_secs() < 60, "never written: {pages:?}");
        std::thread::sleep(Duration::from_millis(100));
    };
    let totals = counts_of(&total[0], &total[1]);
    let page_lines: Vec<Vec<(String, String)>> = (pages[1..].iter())
        .map(|line| counts_of(&pages[0], line))
        .collect();
    for (column, (name, said)) in totals.iter().enumerate() {
        if name == "fill_rate" {
            continue;
        }
        let cells = page_lines.iter().map(|line| &line[column].1);
        let sum: i64 = cells.map(|cell| cell.parse::<i64>().unwrap()).sum();
        assert_eq!(sum.to_string(), *said, "{name}: {pages:?}");
    }
    let cell = |page: &str, name: &str| {
        let line = (pages[1..].iter()).find(|line| line[0].trim_end_matches('/').ends_with(page));
        let line = counts_of(
            &pages[0],
            line.unwrap_or_else(|| panic!("{page}: {pages:?}")),
        );
        (line.into_iter()).find(|(n, _)| n == name).unwrap().1
    };
    assert_eq!(
        cell("/off", "no_fill_reasons.fragment_paused"),
        PAUSED.to_string()
    );
    assert_eq!(cell("/off", "refused"), "0");
    // A refusal counts under the page it names, or "(no page)" when refused before its page
    // was read: on one line, with its reason.
    let refused_on = |line: &Vec<(String, String)>, name: &str| {
        (line.iter()).any(|(n, cell)| n == name && *cell == REFUSED.to_string())
    };
    assert!(
        page_lines.iter().any(|line| refused_on(line, "refused")
            && refused_on(line, "refused_reasons.format_invalid")),
        "{pages:?}"
    );
}
