//! `agentcard admin report` over the aggregates: counts written with SQL as the report writer
//! leaves them (minutes, hours rolled up past 48 hours, hourly pages) for a fresh organisation,
//! beside another organisation's and requests refused before any organisation was known, in
//! the same buckets. Totals, groupings that add up, window edges and words, the three formats
//! with every reason and purpose listed, refused requests apart, bad values.

use crate::fixtures::{admin, admin_output, fragment};
use crate::harness::{self, db};
use agentcard::domain::Refused;
use agentcard::ops::reports::{self as ops_report, By};
use jiff::{SignedDuration, Timestamp};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::time::SystemTime;

/// The publisher's requests. A row: the bucket, as an offset from the anchor A (in hours: an
/// hour rolled up into `report_hours`, 48 hours old or more; in minutes: a minute of
/// `report_minutes`), site, requested fragment, resolved fragment, card, reason, agent,
/// purpose, requests; `-` where a dimension does not apply. 34 requests, 26 served, 4 refused
/// (`fragment_not_the_keys`: a fragment of the neighbour). `crd_one` is the publisher's card, `crd_two` a
/// platform card.
const REQUESTS: &str = "
| -72h | a.example | home    | home  | crd_one | served           | GPTBot        | training | 10 |
| -71h | a.example | home    | home  | -       | serving_error    | Amazonbot     | unknown  |  1 |
| -49h | b.example | sport   | sport | crd_two | served           | Claude-User   | query    |  6 |
|   0m | a.example | home    | home  | crd_one | served           | GPTBot        | training |  5 |
|   0m | a.example | home    | home  | -       | no_eligible_card | ClaudeBot     | training |  2 |
|   1m | b.example | sport   | sport | crd_one | served           | OAI-SearchBot | search   |  3 |
|  59m | b.example | sport   | sport | -       | fragment_paused  | none          | none     |  1 |
|  60m | -         | foreign | -     | -       | fragment_not_the_keys | none     | none     |  4 |
|  61m | a.example | sport   | home  | crd_two | served           | ChatGPT-User  | query    |  2 |
";

/// The publisher's pages. A row: the hour, as an offset from the anchor, page, purpose,
/// requests, served. 27 requests, 20 served: the page rows of some requests are not written
/// yet.
const PAGES: &str = "
| -72h | a.example/home  | training | 10 | 10 |
|   0h | a.example/home  | training |  7 |  5 |
|   0h | b.example/sport | search   |  3 |  3 |
|   0h | (other pages)   | query    |  2 |  2 |
|   1h | (no page)       | none     |  5 |  0 |
";

/// The neighbour's requests and pages, in the publisher's buckets. Their card's id is one no
/// random id begins with (`crd_x` was the start of one of the publisher's, now and then).
const THEIR_REQUESTS: &str = "
| -72h | other.example | foreign | foreign | crd_neighbour | served | GPTBot | training | 100 |
|   0m | other.example | foreign | foreign | crd_neighbour | served | GPTBot | training | 100 |
|  61m | other.example | foreign | foreign | crd_neighbour | served | GPTBot | training | 100 |
";
const THEIR_PAGES: &str = "| 0h | other.example/secret | training | 50 | 50 |";

/// Requests refused before an organisation was known, in the same buckets.
const NOBODYS_REQUESTS: &str = "
| -72h | - | - | - | - | invalid_request | none   | none     | 9 |
|   0m | - | - | - | - | invalid_key     | GPTBot | training | 7 |
|  61m | - | - | - | - | invalid_key     | GPTBot | training | 7 |
";
const NOBODYS_PAGES: &str = "| 0h | (no page) | training | 16 | 0 |";

/// The cells of each row of a table written `| a | b | … |`, trimmed.
fn rows(table: &str) -> impl Iterator<Item = Vec<&str>> {
    table
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .map(|line| {
            let cells = line.trim_matches('|').split('|');
            cells.map(str::trim).collect()
        })
}

/// `-72h` or `61m` after `at`, and the table of that bucket size.
fn bucket(at: Timestamp, offset: &str) -> (Timestamp, &'static str) {
    let (count, unit) = offset.split_at(offset.len() - 1);
    let count: i64 = count.parse().expect(offset);
    match unit {
        "h" => (at + hours(count), "report_hours"),
        "m" => (at + minutes(count), "report_minutes"),
        _ => panic!("bucket {offset}"),
    }
}

/// Adds the requests of `table` (rows as in [`REQUESTS`], fragments and cards named in `ids`)
/// to `org`'s buckets after `at` as the writer's upserts do; returns each row's bucket and count.
fn add_requests(
    org: &str,
    at: Timestamp,
    ids: &[(&str, &str)],
    table: &str,
) -> Vec<(Timestamp, i64)> {
    let mut db = db();
    let mut counted = Vec::new();
    for row in rows(table) {
        let [offset, site, requested, resolved, card, reason, agent, purpose, requests] = row[..]
        else {
            panic!("a row of nine cells: {row:?}");
        };
        let (bucket, table) = bucket(at, offset);
        let value = |cell: &str| match ids.iter().find(|(name, _)| *name == cell) {
            Some((_, id)) => id.to_string(),
            None if cell == "-" => String::new(),
            None => cell.to_string(),
        };
        let outcome = match reason {
            "served" => "served",
            "no_eligible_card" | "fragment_paused" | "serving_error" => "no_fill",
            _ => "refused",
        };
        let (lang, format) = if outcome == "refused" {
            ("", "")
        } else {
            ("fr", "html")
        };
        let requests: i64 = requests.parse().unwrap();
        db.execute(
            &format!(
                "INSERT INTO {table} AS t (bucket, org_id, site, requested_fragment_id,
                     resolved_fragment_id, card_id, key_id, lang, format, outcome, reason,
                     agent, purpose, requests)
                 VALUES ($1, $2, $3, $4, $5, $6, '', $7, $8, $9, $10, $11, $12, $13)
                 ON CONFLICT (org_id, bucket, site, requested_fragment_id, resolved_fragment_id,
                              card_id, key_id, lang, format, outcome, reason, agent, purpose)
                 DO UPDATE SET requests = t.requests + excluded.requests"
            ),
            &[
                &SystemTime::from(bucket),
                &org,
                &value(site),
                &value(requested),
                &value(resolved),
                &value(card),
                &lang,
                &format,
                &outcome,
                &reason,
                &agent,
                &purpose,
                &requests,
            ],
        )
        .unwrap();
        counted.push((bucket, requests));
    }
    counted
}

/// Adds the page counts of `table` (rows as in [`PAGES`]) to `org`'s hours after `at`.
fn add_pages(org: &str, at: Timestamp, table: &str) {
    let mut db = db();
    for row in rows(table) {
        let [offset, page, purpose, requests, served] = row[..] else {
            panic!("a row of five cells: {row:?}");
        };
        let (hour, _) = bucket(at, offset);
        let (requests, served): (i64, i64) = (requests.parse().unwrap(), served.parse().unwrap());
        db.execute(
            "INSERT INTO report_pages AS t (hour, org_id, page, purpose, requests, served)
             VALUES ($1, $2, $3, $4, $5, $6)
             ON CONFLICT (org_id, hour, page, purpose)
             DO UPDATE SET requests = t.requests + excluded.requests,
                           served = t.served + excluded.served",
            &[
                &SystemTime::from(hour),
                &org,
                &page,
                &purpose,
                &requests,
                &served,
            ],
        )
        .unwrap();
    }
}

fn new_org(name: &str) -> String {
    harness::new_org(&mut db(), name).to_string()
}

/// An active card named `name`, of `org` or (`None`) of the platform.
fn new_card(org: Option<&str>, name: &str) -> String {
    let id = agentcard::ids::CardId::generate().to_string();
    db().execute(
        "INSERT INTO cards (id, org_id, status, name, lang, brand, title, body)
         VALUES ($1, $2, 'active', $3, 'fr', 'Brand', 'Title', 'Body')",
        &[&id, &org, &name],
    )
    .unwrap();
    id
}

/// Every agent purpose, zeros included, with the counts given.
fn purposes(counted: Value) -> Value {
    every(&["none", "query", "search", "training", "unknown"], counted)
}

/// Every reason of a refusal, zeros included, with the counts given.
fn refusals(counted: Value) -> Value {
    let names: Vec<&str> = Refused::ALL.iter().map(|r| r.as_str()).collect();
    every(&names, counted)
}

/// Every no-fill reason, zeros included, with the counts given.
fn reasons(counted: Value) -> Value {
    every(
        &["fragment_paused", "no_eligible_card", "serving_error"],
        counted,
    )
}

fn every(names: &[&str], counted: Value) -> Value {
    let mut all: Map<String, Value> = names.iter().map(|n| (n.to_string(), json!(0))).collect();
    all.extend(counted.as_object().expect("counts").clone());
    Value::Object(all)
}

/// The start of the UTC hour two hours before this one: every bucket of the tables starts
/// before `anchor + 2h`, which is before now.
fn anchor() -> Timestamp {
    let hour = Timestamp::now().as_second().div_euclid(3600) * 3600;
    Timestamp::from_second(hour - 7200).unwrap()
}

fn minutes(minutes: i64) -> SignedDuration {
    SignedDuration::from_mins(minutes)
}

fn hours(hours: i64) -> SignedDuration {
    SignedDuration::from_hours(hours)
}

/// A fresh organisation with the sites and fragments of [`REQUESTS`] and its counts; a
/// neighbour (whose fragment it requested, refused) and nobody (requests refused before an
/// organisation was known) have counts in the same buckets.
struct Publisher {
    org: String,
    /// The anchor, A.
    at: Timestamp,
    home: String,
    sport: String,
    /// The neighbour's fragment.
    foreign: String,
    /// The publisher's card and a platform card.
    card_one: String,
    card_two: String,
    /// Every bucket of the requests, with its count.
    buckets: Vec<(Timestamp, i64)>,
}

impl Publisher {
    fn new() -> Publisher {
        let org = new_org("Report Publisher");
        let home = fragment(&org, "a.example", Some("/home"));
        let sport = fragment(&org, "b.example", Some("/sport"));
        let neighbour = new_org("Report Neighbour");
        let foreign = fragment(&neighbour, "other.example", Some("/secret"));
        let card_one = new_card(Some(&org), "Carte du Quotidien");
        let card_two = new_card(None, "Carte de la plateforme");
        let at = anchor();
        let ids = [
            ("home", &*home),
            ("sport", &*sport),
            ("foreign", &*foreign),
            ("crd_one", &*card_one),
            ("crd_two", &*card_two),
        ];
        let buckets = add_requests(&org, at, &ids, REQUESTS);
        add_pages(&org, at, PAGES);
        add_requests(&neighbour, at, &ids, THEIR_REQUESTS);
        add_pages(&neighbour, at, THEIR_PAGES);
        add_requests("", at, &[], NOBODYS_REQUESTS);
        add_pages("", at, NOBODYS_PAGES);
        Publisher {
            org,
            at,
            home,
            sport,
            foreign,
            card_one,
            card_two,
            buckets,
        }
    }

    /// The anchor moved by `offset`, in RFC 3339.
    fn time(&self, offset: SignedDuration) -> String {
        (self.at + offset).to_string()
    }

    /// `admin report --org ORG ARGS…` as JSON.
    #[track_caller]
    fn report(&self, args: &[&str]) -> Value {
        report(&self.org, args)
    }
}

/// `admin report --org ORG ARGS…` as JSON.
#[track_caller]
fn report(org: &str, args: &[&str]) -> Value {
    let text = report_text(org, args);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{args:?}: {e}: {text}"))
}

/// `admin report --org ORG ARGS…` as text.
#[track_caller]
fn report_text(org: &str, args: &[&str]) -> String {
    let (ok, stdout, stderr) = admin_output(&[&["report", "--org", org], args].concat());
    assert!(ok, "{args:?}: {stderr}");
    stdout
}

/// The counts of a report or a group: requests, served, refused and reasons (when given) and
/// purposes.
fn counts(object: &Value) -> Value {
    let names = [
        "requests",
        "served",
        "refused",
        "refused_reasons",
        "no_fill_reasons",
        "agent_purposes",
    ];
    let members = names
        .into_iter()
        .filter_map(|name| Some((name.to_string(), object.get(name)?.clone())));
    Value::Object(members.collect())
}

/// The sums of the groups' requests, served, refused and reasons (when they have some) and
/// purposes.
fn sum_of_groups(report: &Value) -> Value {
    let groups = report["groups"].as_array().expect("groups");
    let total = |name: &str| {
        groups
            .iter()
            .map(|g| g[name].as_i64().unwrap())
            .sum::<i64>()
    };
    let merged = |name: &str| {
        let mut sums: BTreeMap<String, i64> = BTreeMap::new();
        for group in groups {
            for (key, n) in group[name].as_object().into_iter().flatten() {
                *sums.entry(key.clone()).or_default() += n.as_i64().unwrap();
            }
        }
        json!(sums)
    };
    let mut sums = Map::new();
    sums.insert("requests".into(), json!(total("requests")));
    sums.insert("served".into(), json!(total("served")));
    if groups.iter().all(|g| g.get("refused").is_some()) {
        sums.insert("refused".into(), json!(total("refused")));
    }
    if groups.iter().all(|g| g.get("refused_reasons").is_some()) {
        sums.insert("refused_reasons".into(), merged("refused_reasons"));
    }
    if groups.iter().all(|g| g.get("no_fill_reasons").is_some()) {
        sums.insert("no_fill_reasons".into(), merged("no_fill_reasons"));
    }
    sums.insert("agent_purposes".into(), merged("agent_purposes"));
    Value::Object(sums)
}

/// Each group's key (its one key member) and requests, in the report's order.
fn keyed_requests(report: &Value, key: &str) -> Vec<(Value, i64)> {
    let groups = report["groups"].as_array().expect("groups");
    let keyed = groups
        .iter()
        .map(|g| (g[key].clone(), g["requests"].as_i64().unwrap()));
    keyed.collect()
}

#[test]
fn the_report_totals_the_organisations_minutes_and_rolled_hours() {
    let p = Publisher::new();
    let until = p.time(hours(2));
    let report = p.report(&["--until", &until]);
    assert_eq!(
        report,
        json!({
            "org_id": p.org,
            "org_name": "Report Publisher",
            "window": format!("before {until}"),
            "since": "1970-01-01T00:00:00Z",
            "until": until,
            "requests": 34,
            "served": 26,
            "fill_rate": 0.765,
            "refused": 4,
            "refused_reasons": refusals(json!({"fragment_not_the_keys": 4})),
            "no_fill_reasons": {"fragment_paused": 1, "no_eligible_card": 2, "serving_error": 1},
            "agent_purposes": {"none": 5, "query": 8, "search": 3, "training": 17, "unknown": 1},
        })
    );
    // By default, up to now: the same counts, and `until` the time of the run in seconds.
    let before = Timestamp::now().as_second();
    let report = p.report(&[]);
    let after = Timestamp::now().as_second();
    assert_eq!(report["requests"], 34);
    assert_eq!(report["window"], "all time");
    let until: Timestamp = report["until"].as_str().unwrap().parse().unwrap();
    assert!((before..=after).contains(&until.as_second()), "{until}");
    assert_eq!(until.subsec_nanosecond(), 0);
}

#[test]
fn every_grouping_adds_up_to_the_totals() {
    let p = Publisher::new();
    let until = p.time(hours(2));
    for by in ["site", "fragment", "card", "agent", "hour", "day", "page"] {
        let report = p.report(&["--by", by, "--until", &until]);
        // Page groups have no refused nor reasons: the sums they have.
        let sums = sum_of_groups(&report);
        let totals = counts(&report);
        let totals: Map<String, Value> = (sums.as_object().unwrap().keys())
            .map(|name| (name.clone(), totals[name].clone()))
            .collect();
        assert_eq!(sums, Value::Object(totals), "--by {by}");
        assert_eq!(report["requests"], 34, "--by {by}: the same totals");
        let groups = report["groups"].as_array().unwrap();
        assert!(!groups.is_empty(), "--by {by}");
        for group in groups {
            let fill_rate = group["fill_rate"].as_f64().unwrap();
            let served = group["served"].as_f64().unwrap();
            let requests = group["requests"].as_f64().unwrap();
            assert!((fill_rate - served / requests).abs() <= 0.0005, "{group}");
        }
    }

    let by_site = p.report(&["--by", "site", "--until", &until]);
    assert_eq!(
        by_site["groups"],
        json!([
            {
                "site": "a.example", "requests": 20, "served": 17, "fill_rate": 0.85,
                "refused": 0,
                "refused_reasons": refusals(json!({})),
                "no_fill_reasons": reasons(json!({"no_eligible_card": 2, "serving_error": 1})),
                "agent_purposes": purposes(json!({"query": 2, "training": 17, "unknown": 1})),
            },
            {
                "site": "b.example", "requests": 10, "served": 9, "fill_rate": 0.9,
                "refused": 0,
                "refused_reasons": refusals(json!({})),
                "no_fill_reasons": reasons(json!({"fragment_paused": 1})),
                "agent_purposes": purposes(json!({"none": 1, "query": 6, "search": 3})),
            },
            {
                "site": null, "requests": 4, "served": 0, "fill_rate": 0.0,
                "refused": 4,
                "refused_reasons": refusals(json!({"fragment_not_the_keys": 4})),
                "no_fill_reasons": reasons(json!({})),
                "agent_purposes": purposes(json!({"none": 4})),
            },
        ])
    );

    // The resolved fragment, else the requested one; a ref only for the organisation's own.
    let by_fragment = p.report(&["--by", "fragment"]);
    let mut fragments: Vec<(Value, Value, i64)> = by_fragment["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            (
                g["fragment_id"].clone(),
                g["ref"].clone(),
                g["requests"].as_i64().unwrap(),
            )
        })
        .collect();
    fragments.sort_by_key(|(id, _, _)| id.to_string());
    let mut expected = vec![
        (json!(p.home), json!("/home"), 20),
        (json!(p.sport), json!("/sport"), 10),
        (json!(p.foreign), Value::Null, 4),
    ];
    expected.sort_by_key(|(id, _, _)| id.to_string());
    assert_eq!(fragments, expected);

    // Cards by id and name, the platform's included; none served last.
    let by_card = p.report(&["--by", "card"]);
    let cards: Vec<(Value, Value, i64)> = by_card["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            let requests = g["requests"].as_i64().unwrap();
            (g["card_id"].clone(), g["card_name"].clone(), requests)
        })
        .collect();
    let mut served = vec![
        (json!(p.card_one), json!("Carte du Quotidien"), 18),
        (json!(p.card_two), json!("Carte de la plateforme"), 8),
    ];
    served.sort_by_key(|(id, _, _)| id.to_string());
    served.push((Value::Null, Value::Null, 8));
    assert_eq!(cards, served);

    let by_agent = p.report(&["--by", "agent"]);
    assert_eq!(
        keyed_requests(&by_agent, "agent"),
        [
            (json!("Amazonbot"), 1),
            (json!("ChatGPT-User"), 2),
            (json!("Claude-User"), 6),
            (json!("ClaudeBot"), 2),
            (json!("GPTBot"), 15),
            (json!("OAI-SearchBot"), 3),
            (json!("none"), 5),
        ]
    );

    let by_hour = p.report(&["--by", "hour"]);
    assert_eq!(
        keyed_requests(&by_hour, "hour"),
        [
            (json!(p.time(hours(-72))), 10),
            (json!(p.time(hours(-71))), 1),
            (json!(p.time(hours(-49))), 6),
            (json!(p.time(hours(0))), 11),
            (json!(p.time(hours(1))), 6),
        ]
    );

    let by_day = p.report(&["--by", "day"]);
    let mut days: BTreeMap<String, i64> = BTreeMap::new();
    for (at, requests) in &p.buckets {
        *days.entry(at.strftime("%Y-%m-%d").to_string()).or_default() += requests;
    }
    let days: Vec<(Value, i64)> = days.into_iter().map(|(d, n)| (json!(d), n)).collect();
    assert_eq!(keyed_requests(&by_day, "day"), days);

    // Pages: the same totals, groups with their refusals and reasons, and what the page rows
    // do not hold yet in a group of its own, last.
    let by_page = p.report(&["--by", "page"]);
    assert_eq!(counts(&by_page), counts(&p.report(&[])));
    assert_eq!(
        by_page["groups"],
        json!([
            {
                "page": "(no page)", "requests": 5, "served": 0, "fill_rate": 0.0,
                "refused": 0, "refused_reasons": refusals(json!({})), "no_fill_reasons": reasons(json!({})),
                "agent_purposes": purposes(json!({"none": 5})),
            },
            {
                "page": "(other pages)", "requests": 2, "served": 2, "fill_rate": 1.0,
                "refused": 0, "refused_reasons": refusals(json!({})), "no_fill_reasons": reasons(json!({})),
                "agent_purposes": purposes(json!({"query": 2})),
            },
            {
                "page": "a.example/home", "requests": 17, "served": 15, "fill_rate": 0.882,
                "refused": 0, "refused_reasons": refusals(json!({})), "no_fill_reasons": reasons(json!({})),
                "agent_purposes": purposes(json!({"training": 17})),
            },
            {
                "page": "b.example/sport", "requests": 3, "served": 3, "fill_rate": 1.0,
                "refused": 0, "refused_reasons": refusals(json!({})), "no_fill_reasons": reasons(json!({})),
                "agent_purposes": purposes(json!({"search": 3})),
            },
            {
                "page": "(not yet written)", "requests": 7, "served": 6, "fill_rate": 0.857,
                "refused": 4, "refused_reasons": refusals(json!({"fragment_not_the_keys": 4})), "no_fill_reasons": reasons(json!({"fragment_paused": 1, "no_eligible_card": 2, "serving_error": 1})),
                "agent_purposes": purposes(json!({"query": 6, "unknown": 1})),
            },
        ])
    );
}

#[test]
fn a_window_counts_the_buckets_starting_at_since_and_before_until() {
    let p = Publisher::new();
    let window = |since: SignedDuration, until: SignedDuration, by: &[&str]| {
        let (since, until) = (p.time(since), p.time(until));
        let report = p.report(&[&["--since", &since, "--until", &until], by].concat());
        assert_eq!(
            (&report["since"], &report["until"]),
            (&json!(since), &json!(until))
        );
        let words = format!("from {since} to {until} (excluded)");
        assert_eq!(report["window"], json!(words));
        (
            report["requests"].as_i64().unwrap(),
            report["served"].as_i64().unwrap(),
        )
    };
    // Minutes: the one at `since` counts, the one at `until` does not.
    assert_eq!(window(minutes(1), minutes(60), &[]), (4, 3));
    assert_eq!(window(minutes(0), minutes(1), &[]), (7, 5));
    assert_eq!(window(minutes(59), minutes(61), &[]), (5, 0));
    // Rolled hours alike, and a window over both tables.
    assert_eq!(window(hours(-72), hours(-71), &[]), (10, 10));
    assert_eq!(window(hours(-71), hours(-49), &[]), (1, 0));
    assert_eq!(window(hours(-49), minutes(1), &[]), (13, 11));
    assert_eq!(window(minutes(-1), minutes(0), &[]), (0, 0));
    // A view by page covers whole hours, its totals included: the hour at A starts before
    // A+1m, and the one starting before A+61m ends at A+2h.
    let pages = ["--by", "page"];
    assert_eq!(window(hours(0), hours(1), &pages), (11, 8));
    assert_eq!(window(hours(-72), hours(1), &pages), (28, 24));
    let report = p.report(&[
        "--by",
        "page",
        "--since",
        &p.time(minutes(1)),
        "--until",
        &p.time(minutes(61)),
    ]);
    let (since, until) = (p.time(hours(1)), p.time(hours(2)));
    assert_eq!(
        (&report["since"], &report["until"], &report["requests"]),
        (&json!(since), &json!(until), &json!(6))
    );
    // Another offset than Z is the same instant, printed back in UTC.
    let offset = jiff::tz::Offset::from_seconds(-(3 * 3600 + 1800)).unwrap();
    let since = (p.at + minutes(1)).display_with_offset(offset).to_string();
    assert!(since.ends_with("-03:30"), "{since}");
    let report = p.report(&["--since", &since, "--until", &p.time(minutes(60))]);
    assert_eq!(report["since"], json!(p.time(minutes(1))));
    assert_eq!(report["requests"], 4, "{report}");
    // A duration back from now: 30 days hold every bucket; 50 hours (now is between A+2h and
    // A+3h) the minutes only.
    let since_30_days = p.report(&["--since", "30d"]);
    assert_eq!(since_30_days["requests"], 34);
    let words = format!("since {}", since_30_days["since"].as_str().unwrap());
    assert_eq!(since_30_days["window"], json!(words));
    assert_eq!(p.report(&["--since", "3000m"])["requests"], 17);
}

#[test]
fn fill_rate_is_rounded_to_three_decimals_and_zero_without_requests() {
    let org = new_org("Report Rounding");
    let at = anchor();
    // 2 of 3; 1 of 16 (exactly half way); 3 of 2000 (half way, which floating point would
    // round down).
    let requests = "
        | 0m | a.example | - | - | crd_one | served           | none | none |    2 |
        | 0m | a.example | - | - | -       | no_eligible_card | none | none |    1 |
        | 1m | a.example | - | - | crd_one | served           | none | none |    1 |
        | 1m | a.example | - | - | -       | no_eligible_card | none | none |   15 |
        | 2m | a.example | - | - | crd_one | served           | none | none |    3 |
        | 2m | a.example | - | - | -       | no_eligible_card | none | none | 1997 |
    ";
    add_requests(&org, at, &[], requests);
    let cases = [(0, 0.667), (1, 0.063), (2, 0.002)];
    for (minute, fill_rate) in cases {
        let since = (at + minutes(minute)).to_string();
        let until = (at + minutes(minute + 1)).to_string();
        let report = report(&org, &["--since", &since, "--until", &until]);
        assert_eq!(report["fill_rate"].as_f64(), Some(fill_rate), "{report}");
    }
    let empty = report(&org, &["--since", "0m", "--by", "site"]);
    assert_eq!(
        counts(&empty),
        json!({
            "requests": 0, "served": 0, "refused": 0, "refused_reasons": refusals(json!({})),
            "no_fill_reasons": reasons(json!({})), "agent_purposes": purposes(json!({})),
        })
    );
    assert_eq!(empty["fill_rate"].as_f64(), Some(0.0));
    assert_eq!(empty["groups"], json!([]));
}

#[test]
fn csv_has_a_header_then_a_line_per_group_or_one_of_totals() {
    let p = Publisher::new();
    let until = p.time(hours(2));
    let header_counts = "requests,served,fill_rate,refused,\
        refused_reasons.forbidden,refused_reasons.format_invalid,\
        refused_reasons.fragment_id_missing,refused_reasons.fragment_not_the_keys,\
        refused_reasons.invalid_key,refused_reasons.key_revoked,refused_reasons.lang_invalid,\
        refused_reasons.lang_missing,refused_reasons.partner_id_missing,\
        refused_reasons.partner_not_the_keys,no_fill_reasons.fragment_paused,no_fill_reasons.no_eligible_card,\
        no_fill_reasons.serving_error,agent_purposes.none,agent_purposes.query,\
        agent_purposes.search,agent_purposes.training,agent_purposes.unknown";
    assert_eq!(
        report_text(&p.org, &["--format", "csv", "--until", &until]),
        format!(
            "org_id,org_name,since,until,{header_counts}\n\
             {},Report Publisher,1970-01-01T00:00:00Z,{until},34,26,0.765,4,0,0,0,4,0,0,0,0,0,0,1,2,1,5,8,3,17,1\n",
            p.org
        )
    );
    // The same count columns for every grouping, and for an organisation without requests.
    let empty = new_org("Report Empty Columns");
    for by in ["site", "fragment", "card", "page", "agent", "hour", "day"] {
        for org in [&p.org, &empty] {
            let csv = report_text(org, &["--format", "csv", "--by", by]);
            let header = csv.lines().next().unwrap();
            assert!(
                header.ends_with(&format!(",{header_counts}")),
                "--by {by}: {csv}"
            );
        }
    }
    // No refusal of any reason.
    let none = ["0"; 10].join(",");
    assert_eq!(
        report_text(
            &p.org,
            &["--format", "csv", "--by", "site", "--until", &until]
        ),
        format!(
            "site,{header_counts}\n\
             a.example,20,17,0.85,0,{none},0,2,1,0,2,0,17,1\n\
             b.example,10,9,0.9,0,{none},1,0,0,1,6,3,0,0\n\
             ,4,0,0,4,0,0,0,4,0,0,0,0,0,0,0,0,0,4,0,0,0,0\n"
        )
    );
    // Fields with a comma or a quote are quoted.
    let org = new_org("Report Quoting");
    add_pages(&org, anchor(), "| 0h | q.example/a,b | search | 2 | 1 |");
    add_pages(
        &org,
        anchor(),
        "| 0h | q.example/say-\"hi\" | query | 1 | 1 |",
    );
    // Refused, its reasons and the no-fill reasons, counted by page too: 14 zeros.
    let unknown = "0,".repeat(14);
    assert_eq!(
        report_text(&org, &["--format", "csv", "--by", "page"]),
        format!(
            "page,{header_counts}\n\
             \"q.example/a,b\",2,1,0.5,{unknown}0,0,2,0,0\n\
             \"q.example/say-\"\"hi\"\"\",1,1,1,{unknown}0,1,0,0,0\n"
        )
    );
}

#[test]
fn the_table_shows_the_organisations_numbers_in_aligned_columns() {
    let p = Publisher::new();
    let until = p.time(hours(2));
    let table = report_text(
        &p.org,
        &["--format", "table", "--by", "site", "--until", &until],
    );
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(
        lines[0],
        format!("Requests of Report Publisher ({}), before {until}", p.org)
    );
    let row = |first: &str| {
        let line = lines.iter().find(|l| l.starts_with(first));
        line.unwrap_or_else(|| panic!("no {first} row: {table}"))
            .split_whitespace()
            .collect::<Vec<_>>()
    };
    let header = [
        "site", "requests", "served", "fill", "rate", "refused", "refused", "reasons", "no-fill",
    ];
    assert_eq!(row("site")[..9], header);
    assert_eq!(
        row("a.example")[..5],
        ["a.example", "20", "17", "85.0%", "0"]
    );
    assert_eq!(
        row("b.example")[..5],
        ["b.example", "10", "9", "90.0%", "0"]
    );
    let refused = [
        "(none)",
        "4",
        "0",
        "0.0%",
        "4",
        "fragment_not_the_keys",
        "4",
        "-",
    ];
    assert_eq!(row("(none)")[..8], refused);
    assert_eq!(row("total")[..5], ["total", "34", "26", "76.5%", "4"]);
    // Reasons and purposes counted, without the zeros.
    assert_eq!(
        row("a.example")[5..].join(" "),
        "- no_eligible_card 2, serving_error 1 query 2, training 17, unknown 1"
    );
    // What to fix, for each reason of the refusals counted.
    let fix = Refused::FragmentNotTheKeys.fix();
    let fixes = format!("Refused, what to fix:\n  fragment_not_the_keys: {fix}\n");
    assert!(table.contains(&fixes), "{table}");
    // Columns aligned: each row's `requests` ends where the header's does (rows end at the
    // blank line before the note).
    let end = lines[2].find("requests").unwrap() + "requests".len();
    let rows = lines[3..].iter().take_while(|line| !line.is_empty());
    assert_eq!(rows.clone().count(), 4, "{table}");
    for line in rows {
        let bytes = line.as_bytes();
        assert!(
            bytes[end - 1].is_ascii_digit() && bytes[end] == b' ',
            "{table}"
        );
    }
    let totals = report_text(&p.org, &["--format", "table"]);
    assert!(
        totals.starts_with(&format!(
            "Requests of Report Publisher ({}), all time\n",
            p.org
        )),
        "{totals}"
    );
    assert!(
        totals
            .lines()
            .any(|l| l.starts_with("total") && l.contains(" 34 ")),
        "{totals}"
    );
}

#[test]
fn bad_option_values_print_nothing_and_exit_non_zero() {
    let org = new_org("Report Bad Values");
    let cases: &[&[&str]] = &[
        &["--since", "yesterday-ish"],
        &["--since", "5"],
        &["--since", "2026-11-24T13:00:00"],
        &["--until=-3h"],
        &["--since", "1h", "--until", "2h"],
        &[
            "--since",
            "2026-11-24T13:00:00Z",
            "--until",
            "2026-11-24T12:59:59Z",
        ],
        &["--since", "99999999d"],
        &["--by", "week"],
        &["--format", "xml"],
    ];
    for args in cases {
        let (ok, stdout, stderr) = admin_output(&[&["report", "--org", &org], *args].concat());
        assert!(
            !ok && stdout.is_empty() && !stderr.is_empty(),
            "{args:?}: {stdout}"
        );
    }
    for unknown in ["acc_unknown", ""] {
        let (ok, stdout, stderr) = admin_output(&["report", "--org", unknown]);
        assert!(
            !ok && stdout.is_empty() && !stderr.is_empty(),
            "{unknown:?}: {stdout}"
        );
    }
}

#[test]
fn no_other_organisations_counts_and_none_without_an_organisation_appear() {
    // A fresh organisation beside a publisher, its neighbour and requests of no organisation,
    // all in the same buckets: its report is empty in every grouping.
    let p = Publisher::new();
    let org = new_org("Report Empty");
    for by in ["site", "fragment", "card", "page", "agent", "hour", "day"] {
        let report = report(&org, &["--by", by, "--since", &p.time(hours(-73))]);
        assert_eq!(report["requests"], 0, "--by {by}: {report}");
        assert_eq!(report["groups"], json!([]), "--by {by}: {report}");
    }
    // The publisher's own counts leave theirs out, whatever the grouping.
    for by in ["site", "fragment", "card", "page", "agent", "hour", "day"] {
        let text = report_text(&p.org, &["--by", by, "--format", "csv"]);
        for theirs in ["other.example", "crd_neighbour", "/secret"] {
            assert!(!text.contains(theirs), "--by {by}: {theirs} in {text}");
        }
    }
    // Nor the refusals of nobody's keys.
    let report = report(&p.org, &[]);
    assert_eq!(report["refused_reasons"]["invalid_key"], 0, "{report}");
    assert_eq!(report["refused"], 4, "{report}");
}

#[test]
fn json_is_the_default_when_standard_output_is_not_a_terminal() {
    let org = new_org("Report Default Format");
    let (ok, report, stderr) = admin(&["report", "--org", &org]);
    assert!(ok, "{stderr}");
    assert_eq!(report["org_id"], json!(org));
    assert_eq!(report["org_name"], "Report Default Format");
    assert_eq!(report["window"], "all time");
    assert_eq!(report["since"], "1970-01-01T00:00:00Z");
}

/// Right after a burst of `/fragment` requests, before the page rows (written every tenth
/// flush) hold them all: a view by page has the plain report's totals, and its groups add up
/// to them, what the page rows do not hold yet under `(not yet written)`.
#[test]
fn a_view_by_page_has_the_totals_of_every_view_while_its_rows_lag() {
    use crate::fixtures::{CardSpec, World};
    let mut w = World::new();
    let site = w.site("burst.example");
    let fragment = w.fragment(site, "/home", true);
    w.card(CardSpec::default(), &[&fragment]);
    harness::sync_cache();
    let burst = 30;
    for n in 0..burst {
        let page = format!("&page_url=https%3A%2F%2Fburst.example%2Fp{}", n % 3);
        let gptbot = [("User-Agent", "GPTBot/1.1")];
        assert_eq!(w.fetch_with(&fragment, &page, &gptbot).status, 200);
    }
    // The minutes hold the burst once the plain report counts it all.
    let started = std::time::Instant::now();
    while report(&w.org_id, &[])["requests"] != burst {
        assert!(
            started.elapsed().as_secs() < 30,
            "the burst is never counted"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let by_page = report(&w.org_id, &["--by", "page"]);
    let page_rows: i64 = db()
        .query_one(
            "SELECT coalesce(sum(requests), 0)::int8 FROM report_pages WHERE org_id = $1",
            &[&w.org_id],
        )
        .unwrap()
        .get(0);
    assert_eq!(counts(&by_page), counts(&report(&w.org_id, &[])));
    assert_eq!(by_page["requests"], burst);
    let groups = keyed_requests(&by_page, "page");
    assert_eq!(groups.iter().map(|(_, n)| n).sum::<i64>(), burst);
    let not_yet = groups.iter().find(|(page, _)| page == "(not yet written)");
    // The page rows read after the report hold at least what it found written.
    match not_yet {
        Some((_, n)) => assert!(burst - n <= page_rows, "{by_page}"),
        None => assert_eq!(page_rows, burst, "{by_page}"),
    }
    // Once written, the pages alone.
    let started = std::time::Instant::now();
    let written = loop {
        let by_page = report(&w.org_id, &["--by", "page"]);
        let groups = keyed_requests(&by_page, "page");
        if groups.iter().all(|(page, _)| page != "(not yet written)") {
            break groups;
        }
        assert!(
            started.elapsed().as_secs() < 30,
            "the page rows are never written"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert_eq!(
        written,
        [
            (json!("burst.example/p0/"), 10),
            (json!("burst.example/p1/"), 10),
            (json!("burst.example/p2/"), 10),
        ]
    );
}

/// The console's view by site, fragment, card or page (`ops::reports::top`): the n groups with
/// the most requests, most first, ties in the whole view's key order, with their requests and
/// served; then the other groups together (by page, before what the page rows do not hold yet,
/// which stays a group with its purposes): the same totals as the whole view, which groups
/// and others add up to.
#[test]
fn the_consoles_top_groups_and_all_others_add_up_to_the_totals() {
    let p = Publisher::new();
    let mut db = db();
    let id = agentcard::ids::OrgId::parse(&p.org).unwrap();
    let org = agentcard::db::orgs::find_org(&mut db, &id)
        .unwrap()
        .unwrap();
    let time = |offset| ops_report::parse_time(&p.time(offset)).unwrap();
    let bounds = ops_report::Bounds::of_args(
        Some(time(hours(-80))),
        Some(time(hours(2))),
        Timestamp::now(),
    )
    .unwrap();
    let mut seen_others = 0;
    for by in [By::Site, By::Fragment, By::Card, By::Page] {
        let whole = ops_report::report(&mut db, &org, bounds, Some(by)).unwrap();
        let (_, mut groups) = whole.groups.clone().unwrap();
        let not_written = groups
            .iter()
            .position(|g| g.key == ops_report::Key::Page(ops_report::NOT_YET_WRITTEN.into()))
            .map(|at| groups.remove(at))
            // The top view's groups count requests, served and a page's purposes, not its
            // refusals and reasons (`ops::reports::top`).
            .map(|mut group| {
                group.counts.refused = None;
                group.counts.refused_reasons = None;
                group.counts.no_fill_reasons = None;
                group
            });
        // Most requests first; a stable sort keeps the whole view's key order among ties.
        groups.sort_by_key(|group| std::cmp::Reverse(group.counts.requests));
        assert!(groups.len() >= 3, "{by:?}: {groups:?}");
        for n in [0, 1, 2, groups.len()] {
            let top = ops_report::top(&mut db, &org, bounds, by, n as i64).unwrap();
            assert_eq!(top.total, whole.total, "{by:?} {n}");
            assert_eq!(top.bounds, whole.bounds, "{by:?} {n}");
            let tally = |groups: &[ops_report::Group]| {
                let sum = |count: fn(&ops_report::Counts) -> i64| {
                    groups.iter().map(|g| count(&g.counts)).sum::<i64>()
                };
                ops_report::Counts::tally(sum(|c| c.requests), sum(|c| c.served))
            };
            let mut expected: Vec<_> = (groups[..n].iter())
                .map(|group| ops_report::Group {
                    key: group.key.clone(),
                    counts: tally(std::slice::from_ref(group)),
                })
                .collect();
            expected.extend(not_written.clone());
            assert_eq!(top.groups, Some((by, expected)), "{by:?} {n}");
            let rest = &groups[n..];
            let others = (!rest.is_empty()).then(|| tally(rest));
            assert_eq!(top.others, others, "{by:?} {n}");
            seen_others += usize::from(others.is_some());
            // Groups and others add up to the totals.
            let (_, shown) = top.groups.as_ref().unwrap();
            let sum = shown.iter().map(|g| g.counts.requests).sum::<i64>()
                + top.others.as_ref().map_or(0, |o| o.requests);
            assert_eq!(sum, top.total.requests, "{by:?} {n}");
        }
    }
    assert_eq!(seen_others, 12, "every view has others below its size");

    // The no-fill reasons' fragments: those with requests answered without a card, most such
    // requests first, their counts those requests only.
    let whole = ops_report::report(&mut db, &org, bounds, Some(By::Fragment)).unwrap();
    let mut expected: Vec<_> = (whole.groups.unwrap().1.into_iter())
        .filter_map(|group| {
            let reasons = group.counts.no_fill_reasons.clone().unwrap();
            let unfilled: i64 = reasons.values().sum();
            (unfilled > 0).then_some((group.key, unfilled, reasons))
        })
        .collect();
    expected.sort_by_key(|(_, unfilled, _)| std::cmp::Reverse(*unfilled));
    assert!(expected.len() >= 2, "{expected:?}");
    let unfilled = ops_report::unfilled(&mut db, &org, bounds, 100).unwrap();
    let (_, groups) = unfilled.groups.unwrap();
    let got: Vec<_> = (groups.into_iter())
        .map(|g| {
            assert_eq!((g.counts.served, g.counts.refused), (0, Some(0)), "{g:?}");
            (g.key, g.counts.requests, g.counts.no_fill_reasons.unwrap())
        })
        .collect();
    assert_eq!(got, expected);
    assert_eq!(unfilled.others, None);
}

/// A stored reason or purpose that is none of the report's (a row gone wrong) makes the
/// report an internal error, never a count of its own, and never a panic: by page too.
#[test]
fn a_stored_name_none_of_the_reports_is_an_internal_error() {
    let org = new_org("Report Bad Names");
    let at = anchor();
    let mut db = db();
    let id = agentcard::ids::OrgId::parse(&org).unwrap();
    let org_row = agentcard::db::orgs::find_org(&mut db, &id)
        .unwrap()
        .unwrap();
    let bounds = ops_report::Bounds::of_args(
        Some(ops_report::parse_time(&(at - hours(1)).to_string()).unwrap()),
        Some(ops_report::parse_time(&(at + hours(2)).to_string()).unwrap()),
        Timestamp::now(),
    )
    .unwrap();
    let is_internal = |result: Result<ops_report::Report, agentcard::error::ApiError>| {
        matches!(result, Err(agentcard::error::ApiError::Internal(_)))
    };
    add_requests(
        &org,
        at,
        &[],
        "| 0m | - | - | - | - | served | none | none | 1 |",
    );
    let good = ops_report::report(&mut db, &org_row, bounds, None).unwrap();
    assert_eq!(good.total.requests, 1);

    add_requests(
        &org,
        at,
        &[],
        "| 1m | - | - | - | - | made_up | none | none | 1 |",
    );
    assert!(is_internal(ops_report::report(
        &mut db, &org_row, bounds, None
    )));
    let org = new_org("Report Bad Purposes");
    let id = agentcard::ids::OrgId::parse(&org).unwrap();
    let org_row = agentcard::db::orgs::find_org(&mut db, &id)
        .unwrap()
        .unwrap();
    add_pages(&org, at, "| 0h | a.example/ | made_up | 1 | 1 |");
    let by_page = ops_report::report(&mut db, &org_row, bounds, Some(By::Page));
    assert!(is_internal(by_page));
}
