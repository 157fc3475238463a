//! The report counts every `/fragment` request exactly once (decisions.md, "Reporting"): its
//! dimensions, its page, an unmatched User-Agent; hostile text costs no count; a graceful stop
//! flushes; pages past the bound count under `(other pages)`, for the card served too; the
//! roll-up keeps the sums; a flush sent again (its commit's answer lost) adds nothing; the
//! per-request table of earlier versions is folded in. Across processes, a restart and a
//! database outage: `outage`.

use crate::fixtures::{CardSpec, ServeProcess, World};
use crate::harness::{self, exchange, Client};
use crate::pg_proxy::PgProxy;
use agentcard::db::counting::{self, Retention};
use agentcard::domain::{Ending, Format, Lang, Purpose};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant, SystemTime};

/// A flush runs every `REPORT_FLUSH_MS`; a count arrives well within this.
const COUNTED_WITHIN: Duration = Duration::from_secs(10);

/// What `read` gives once `done` holds of it, or at the bound: flushes run every
/// `REPORT_FLUSH_MS`, page counters every few periods.
fn read_until<T>(read: impl Fn() -> T, done: impl Fn(&T) -> bool) -> T {
    let started = Instant::now();
    loop {
        let value = read();
        if done(&value) || started.elapsed() > COUNTED_WITHIN {
            return value;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The organisation's requests in the report, once they reach `expected` (or the bound).
fn counted(org_id: &str, expected: i64) -> i64 {
    let total = || -> i64 {
        harness::db()
            .query_one(
                "SELECT coalesce(sum(requests), 0)::bigint FROM report_minutes WHERE org_id = $1",
                &[&org_id],
            )
            .unwrap()
            .get(0)
    };
    read_until(total, |total| *total >= expected)
}

/// The organisation's counts by every dimension but the minute, sorted.
fn dimensions(org_id: &str) -> Vec<Vec<String>> {
    harness::db()
        .query(
            "SELECT site, requested_fragment_id, resolved_fragment_id, card_id, key_id, lang,
                    format, outcome, reason, agent, purpose, sum(requests)::text
               FROM report_minutes WHERE org_id = $1
              GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 ORDER BY 8, 10",
            &[&org_id],
        )
        .unwrap()
        .iter()
        .map(|row| (0..12).map(|i| row.get::<_, String>(i)).collect())
        .collect()
}

/// The organisation's page counts, once they add up to `expected` requests (or the bound).
fn pages(org_id: &str, expected: i64) -> Vec<(String, String, i64, i64)> {
    let read = || -> Vec<(String, String, i64, i64)> {
        harness::db()
            .query(
                "SELECT page, purpose, sum(requests)::bigint, sum(served)::bigint
                   FROM report_pages WHERE org_id = $1 GROUP BY 1, 2 ORDER BY 1, 2",
                &[&org_id],
            )
            .unwrap()
            .iter()
            .map(|row| (row.get(0), row.get(1), row.get(2), row.get(3)))
            .collect()
    };
    read_until(read, |pages| {
        pages.iter().map(|p| p.2).sum::<i64>() >= expected
    })
}

/// The organisation's requests served per card and page, `(card, page, served)`, in order.
fn card_pages(db: &mut postgres::Client, org_id: &str) -> Vec<(String, String, i64)> {
    db.query(
        "SELECT card_id, page, sum(served)::bigint FROM report_card_pages
          WHERE org_id = $1 GROUP BY 1, 2 ORDER BY 1, 2",
        &[&org_id],
    )
    .unwrap()
    .iter()
    .map(|row| (row.get(0), row.get(1), row.get(2)))
    .collect()
}

fn unmatched_agents(org_id: &str) -> Vec<(String, i64)> {
    harness::db()
        .query(
            "SELECT user_agent, sum(requests)::bigint FROM report_unmatched_agents
              WHERE org_id = $1 GROUP BY 1 ORDER BY 1",
            &[&org_id],
        )
        .unwrap()
        .iter()
        .map(|row| (row.get(0), row.get(1)))
        .collect()
}

/// A site with one fragment and one card on it, in the test's server's cache.
fn counted_world(domain: &str) -> (World, String, String) {
    let mut w = World::new();
    let site = w.site(domain);
    let fragment = w.fragment(site, "/home", true);
    let card = w.card(CardSpec::default(), &[&fragment]);
    harness::sync_cache();
    (w, fragment, card)
}

fn row(cells: &[&str]) -> Vec<String> {
    cells.iter().map(|c| c.to_string()).collect()
}

#[test]
fn every_request_is_counted_with_its_dimensions_page_and_agent() {
    let (w, fragment, card) = counted_world("counted.example");
    let page = "&page_url=https%3A%2F%2Fcounted.example%2Fa%3Fq%3D1";
    let gptbot = [("User-Agent", "Mozilla/5.0 (compatible; GPTBot/1.1)")];
    assert_eq!(w.fetch_with(&fragment, page, &gptbot).status, 200);
    assert_eq!(w.fetch_with(&fragment, page, &gptbot).status, 200);
    let claude = [("X-Agent-UA", "Claude-User/1.0"), ("User-Agent", "edge/1")];
    assert_eq!(w.fetch_with(&fragment, "&format=json", &claude).status, 200);
    let curl = [("User-Agent", "curl/8.5")];
    assert_eq!(w.fetch_with("frg_not_ours", "", &curl).status, 403);

    assert_eq!(counted(&w.org_id, 4), 4);
    let key = w.key_id.as_str();
    let (site, f, c) = ("counted.example", fragment.as_str(), card.as_str());
    assert_eq!(
        dimensions(&w.org_id),
        [
            row(&[
                "",
                "",
                "",
                "",
                key,
                "fr",
                "html",
                "refused",
                "fragment_not_the_keys",
                "none",
                "none",
                "1"
            ]),
            row(&[
                "",
                f,
                f,
                c,
                key,
                "fr",
                "json",
                "served",
                "served",
                "Claude-User",
                "query",
                "1"
            ]),
            row(&[site, f, f, c, key, "fr", "html", "served", "served", "GPTBot", "training", "2"]),
        ]
    );
    assert_eq!(
        pages(&w.org_id, 4),
        [
            ("(no page)".to_string(), "none".to_string(), 1, 0),
            ("(no page)".to_string(), "query".to_string(), 1, 1),
            (
                "counted.example/a/".to_string(),
                "training".to_string(),
                2,
                2
            ),
        ]
    );
    assert_eq!(unmatched_agents(&w.org_id), [("curl/8.5".to_string(), 1)]);
    let key_used: bool = harness::db()
        .query_one(
            "SELECT last_used_at IS NOT NULL FROM delivery_keys WHERE id = $1",
            &[&w.key_id],
        )
        .unwrap()
        .get(0);
    assert!(key_used, "a flush records the key's last use");
}

#[test]
fn nul_and_invalid_bytes_in_every_reported_text_cost_no_count() {
    let (w, fragment, _) = counted_world("hostile-text.example");
    let query = |extra: &str| {
        format!(
            "/fragment?partner_id={}&fragment_id={fragment}&lang=fr&api_key={}{extra}",
            w.org_id, w.key
        )
    };
    let hostile = [
        "&agent_ua=%00",
        "&agent_ua=a%00b%FF%FE",
        "&page_url=https%3A%2F%2Fhostile-text.example%2F%00%FF",
        "&page_url=%00",
        "&ctx.x=%00%FF",
        "&placement_id=%00%FF",
    ];
    let mut sent = 0;
    for extra in hostile {
        Client::new(harness::server().addr).get(&query(extra));
        assert_eq!(w.fetch(&fragment, "").status, 200, "an ordinary request");
        sent += 2;
    }
    let forbidden = format!(
        "/fragment?partner_id={}&fragment_id=frg%00%FF&lang=fr&api_key={}",
        w.org_id, w.key
    );
    assert_eq!(
        Client::new(harness::server().addr).get(&forbidden).status,
        403
    );
    sent += 1;
    // A header value with a byte that is not UTF-8 (`~` stands for it in the text).
    let mut raw = format!(
        "GET {} HTTP/1.1\r\nHost: x\r\nX-Agent-UA: bad~agent\r\nConnection: close\r\n\r\n",
        query("")
    )
    .into_bytes();
    let at = raw.iter().position(|&b| b == b'~').unwrap();
    raw[at] = 0xff;
    assert_eq!(exchange(harness::server().addr, &raw)[0].status, 200);
    sent += 1;

    assert_eq!(counted(&w.org_id, sent), sent);
    // The User-Agents are flushed with the pages.
    assert_eq!(
        pages(&w.org_id, sent).iter().map(|p| p.2).sum::<i64>(),
        sent
    );
    for (agent, _) in unmatched_agents(&w.org_id) {
        assert!(!agent.chars().any(char::is_control), "{agent:?}");
    }
}

#[test]
fn a_graceful_stop_answers_what_is_in_flight_refuses_the_rest_and_flushes() {
    let (w, fragment, _) = counted_world("graceful-stop.example");
    // Flushes only at the stop: what the report holds then was written by the last flush.
    let mut process = ServeProcess::start_with(&[
        ("RUST_LOG", "info"),
        ("AGENTCARD_REPORT_FLUSH_MS", "600000"),
        ("AGENTCARD_DRAIN_MS", "300"),
    ]);
    let w = w.served_by(process.addr);
    for _ in 0..5 {
        assert_eq!(w.fetch(&fragment, "").status, 200);
    }
    let mut in_flight = TcpStream::connect(process.addr).unwrap();
    in_flight
        .write_all(b"GET /ready HTTP/1.1\r\nHost: x\r\n")
        .unwrap();

    process.terminate();
    // The drain ends, and with it the listener.
    let started = Instant::now();
    while TcpStream::connect(process.addr).is_ok() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "still accepting"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    in_flight.write_all(b"\r\n").unwrap();
    in_flight
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut answer = Vec::new();
    in_flight.read_to_end(&mut answer).unwrap();
    let answer = harness::parse_responses(&answer).remove(0);
    assert_eq!(answer.status, 503, "{}", answer.text());
    assert_eq!(answer.json()["status"], "stopping");
    assert_eq!(answer.header("Connection"), Some("close"));

    let status = process.wait_exit(Duration::from_secs(10));
    assert_eq!(status.code(), Some(0), "{}", process.log());
    assert_eq!(counted(&w.org_id, 5), 5);
    assert!(process.log().contains("shutting down"), "{}", process.log());
}

/// One response read from a connection left open: its head, then as many body bytes as its
/// `Content-Length` says; `None` when the connection closed first.
fn read_response(stream: &mut TcpStream) -> Option<harness::Resp> {
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut received = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(resp) = harness::parse_responses(&received).pop() {
            let length = resp.header("Content-Length").and_then(|n| n.parse().ok());
            if length == Some(resp.body.len()) {
                return Some(resp);
            }
        }
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => return None,
            Ok(n) => received.extend_from_slice(&chunk[..n]),
        }
    }
}

#[test]
fn a_stop_drains_ready_says_503_while_every_request_is_answered_and_counted() {
    let (w, fragment, _) = counted_world("drain.example");
    // Long enough for the requests below on a loaded machine; the test waits for states, never
    // for the time.
    let mut process = ServeProcess::start_with(&[
        ("RUST_LOG", "warn"),
        ("AGENTCARD_REPORT_FLUSH_MS", "600000"),
        ("AGENTCARD_DRAIN_MS", "10000"),
    ]);
    let w = w.served_by(process.addr);
    let path = format!(
        "/fragment?partner_id={}&fragment_id={fragment}&lang=fr&api_key={}",
        w.org_id, w.key
    );
    let request = format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n");
    let mut kept_alive = TcpStream::connect(process.addr).unwrap();
    kept_alive.write_all(request.as_bytes()).unwrap();
    let first = read_response(&mut kept_alive).expect("an answer before the stop");
    assert_eq!((first.status, first.header("Connection")), (200, None));

    // Once the stop has begun (the signal is handled on a thread of the server's: `/ready`
    // says when), a request on the kept-alive connection is answered, and its answer closes
    // the connection.
    process.terminate();
    let addr = process.addr;
    let stopping = read_until(
        || Client::new(addr).get("/ready"),
        |resp| resp.status == 503,
    );
    assert_eq!(stopping.status, 503);
    assert_eq!(stopping.json()["status"], "stopping");
    kept_alive.write_all(request.as_bytes()).unwrap();
    let second = read_response(&mut kept_alive).expect("an answer during the drain");
    assert_eq!(
        (second.status, second.header("Connection")),
        (200, Some("close"))
    );
    assert!(read_response(&mut kept_alive).is_none(), "closed after it");
    for _ in 0..5 {
        let resp = w.fetch(&fragment, "");
        assert_eq!(
            (resp.status, resp.header("Connection")),
            (200, Some("close"))
        );
    }

    let status = process.wait_exit(Duration::from_secs(60));
    assert_eq!(status.code(), Some(0), "{}", process.log());
    assert_eq!(counted(&w.org_id, 7), 7);
}

#[test]
fn pages_past_the_bound_of_an_hour_count_under_other_pages() {
    let (w, fragment, card) = counted_world("many-pages.example");
    let process = ServeProcess::start_with(&[
        ("RUST_LOG", "warn"),
        ("AGENTCARD_REPORT_FLUSH_MS", "100"),
        ("AGENTCARD_REPORT_PAGES_PER_HOUR", "3"),
    ]);
    let w = w.served_by(process.addr);
    let mut sent = 0;
    for page in ["a", "b", "a", "c", "d", "e", "a", "e"] {
        let extra = format!("&page_url=https%3A%2F%2Fmany-pages.example%2F{page}");
        assert_eq!(w.fetch(&fragment, &extra).status, 200);
        sent += 1;
    }
    assert_eq!(counted(&w.org_id, sent), sent);
    let pages = pages(&w.org_id, sent);
    let names: Vec<&str> = pages.iter().map(|p| p.0.as_str()).collect();
    assert_eq!(names.len(), 4, "three pages and the others: {pages:?}");
    assert!(names.contains(&"(other pages)"), "{pages:?}");
    assert_eq!(pages.iter().map(|p| p.2).sum::<i64>(), sent);
    assert_eq!(pages.iter().map(|p| p.3).sum::<i64>(), sent);
    // Written with the pages: the card served every request, under the same names.
    let served: Vec<(String, String, i64)> = (pages.iter())
        .map(|(page, _, _, served)| (card.clone(), page.clone(), *served))
        .collect();
    assert_eq!(card_pages(&mut harness::db(), &w.org_id), served);
}

#[test]
fn the_roll_up_replaces_old_minutes_by_their_hourly_sums() {
    // A database of its own, which no server rolls up meanwhile.
    let database = harness::TestDatabase::create();
    let mut db = agentcard::db::connect(&database.url).unwrap();
    let org = harness::new_org(&mut db, "Rolled").to_string();
    let hour = |hours_ago: u64| {
        let now = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        SystemTime::UNIX_EPOCH + Duration::from_secs((now / 3600 - hours_ago) * 3600)
    };
    let insert = |db: &mut postgres::Client, at: SystemTime, agent: &str, n: i64| {
        db.execute(
            "INSERT INTO report_minutes VALUES ($1, $2, '', '', '', '', '', 'fr', 'html',
                    'no_fill', 'no_eligible_card', $3, 'none', $4)",
            &[&at, &org, &agent, &n],
        )
        .unwrap();
    };
    let minute = Duration::from_secs(60);
    insert(&mut db, hour(5), "none", 2);
    insert(&mut db, hour(5) + minute, "none", 3);
    insert(&mut db, hour(5) + 59 * minute, "GPTBot", 4);
    insert(&mut db, hour(4) + minute, "none", 5);
    insert(&mut db, hour(0), "none", 7);

    let retention = Retention {
        minutes: Duration::from_secs(2 * 3600),
        hours: Duration::from_secs(400 * 24 * 3600),
    };
    assert!(
        counting::roll_up(&mut db, retention).unwrap(),
        "the roll-up lock is free"
    );
    let hours: Vec<(SystemTime, String, i64)> = db
        .query(
            "SELECT bucket, agent, requests FROM report_hours WHERE org_id = $1 ORDER BY 1, 2",
            &[&org],
        )
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect();
    assert_eq!(
        hours,
        [
            (hour(5), "GPTBot".to_string(), 4),
            (hour(5), "none".to_string(), 5),
            (hour(4), "none".to_string(), 5),
        ]
    );
    let minutes_left: Vec<(SystemTime, i64)> = db
        .query(
            "SELECT bucket, requests FROM report_minutes WHERE org_id = $1",
            &[&org],
        )
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    assert_eq!(minutes_left, [(hour(0), 7)]);
}

/// The rows of `report_days` and `report_day_totals` that differ from the sums of the hours
/// of their UTC day (the fragment: the resolved one, else the requested one), both ways.
fn days_unlike_their_hours(db: &mut postgres::Client) -> Vec<String> {
    let hours_by_day = "SELECT date_trunc('day', bucket AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
                               AS bucket, org_id, site,
                               coalesce(nullif(resolved_fragment_id, ''), requested_fragment_id)
                               AS fragment, card_id, agent, outcome, reason, purpose,
                               sum(requests) AS requests
                          FROM report_hours GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9";
    let keyed = "bucket, org_id, site, fragment, card_id, agent, outcome, reason, purpose";
    let totals = "bucket, org_id, agent, outcome, reason, purpose";
    let mut unlike = Vec::new();
    for (table, key) in [("report_days", keyed), ("report_day_totals", totals)] {
        let query = format!(
            "SELECT format('%s %s: %s in the hours, %s in the day', '{table}', ROW({key}),
                           h.requests, d.requests)
               FROM (SELECT {key}, sum(requests) AS requests FROM ({hours_by_day}) x
                      GROUP BY {key}) h
               FULL JOIN {table} d USING ({key})
              WHERE h.requests IS DISTINCT FROM d.requests"
        );
        unlike.extend(db.query(&query, &[]).unwrap().iter().map(|row| row.get(0)));
    }
    unlike
}

/// Whole days are read from the days (`sql/011_report_days.sql`): the database adds every
/// hour, whichever version wrote it, to its day, and the migration filled the days of the
/// hours already there; the roll-up deletes a day once all its hours are past the retention.
#[test]
fn each_day_holds_the_sums_of_its_hours_whoever_wrote_them() {
    let url = harness::empty_database();
    let mut db = agentcard::db::connect(&url).unwrap();
    agentcard::db::migrate::run_to(&mut db, 9).unwrap();
    let add_hour = |db: &mut postgres::Client, at: &str, resolved: &str, agent: &str, n: i64| {
        db.execute(
            "INSERT INTO report_hours VALUES ($1::text::timestamptz, 'acc_1', 'a.example',
                    'frg_asked', $2, 'crd_1', 'key_1', 'fr', 'html', 'served', 'served', $3,
                    'training', $4)
             ON CONFLICT (org_id, bucket, site, requested_fragment_id, resolved_fragment_id,
                    card_id, key_id, lang, format, outcome, reason, agent, purpose)
             DO UPDATE SET requests = report_hours.requests + excluded.requests",
            &[&at, &resolved, &agent, &n],
        )
        .unwrap();
    };
    // Before the migration: two hours of a day, one of the next, one fragment unresolved.
    add_hour(&mut db, "2026-11-20T10:00:00Z", "frg_1", "GPTBot", 3);
    add_hour(&mut db, "2026-11-20T23:00:00Z", "frg_1", "GPTBot", 4);
    add_hour(&mut db, "2026-11-21T00:00:00Z", "", "GPTBot", 5);
    agentcard::db::migrate::run(&mut db).unwrap();
    assert_eq!(days_unlike_their_hours(&mut db), Vec::<String>::new());
    let day = |db: &mut postgres::Client, fragment: &str| -> Vec<(String, i64)> {
        let rows = db
            .query(
                "SELECT to_char(bucket AT TIME ZONE 'UTC', 'YYYY-MM-DD'), requests
                   FROM report_days WHERE fragment = $1 ORDER BY bucket",
                &[&fragment],
            )
            .unwrap();
        rows.iter().map(|row| (row.get(0), row.get(1))).collect()
    };
    assert_eq!(day(&mut db, "frg_1"), [("2026-11-20".to_string(), 7)]);
    assert_eq!(day(&mut db, "frg_asked"), [("2026-11-21".to_string(), 5)]);

    // After it: a new hour, an hour added to (the upsert's update), another agent.
    add_hour(&mut db, "2026-11-20T11:00:00Z", "frg_1", "GPTBot", 1);
    add_hour(&mut db, "2026-11-20T10:00:00Z", "frg_1", "GPTBot", 2);
    add_hour(&mut db, "2026-11-21T00:00:00Z", "", "ClaudeBot", 6);
    assert_eq!(days_unlike_their_hours(&mut db), Vec::<String>::new());
    assert_eq!(day(&mut db, "frg_1"), [("2026-11-20".to_string(), 10)]);

    // The roll-up's minutes into hours, into days.
    let minute_ago = SystemTime::now() - Duration::from_secs(3 * 3600);
    db.execute(
        "INSERT INTO report_minutes VALUES ($1, 'acc_1', 'a.example', 'frg_1', 'frg_1',
                'crd_1', 'key_1', 'fr', 'html', 'served', 'served', 'GPTBot', 'training', 8)",
        &[&minute_ago],
    )
    .unwrap();
    let keep_all = Retention {
        minutes: Duration::from_secs(3600),
        hours: Duration::from_secs(4000 * 24 * 3600),
    };
    assert!(counting::roll_up(&mut db, keep_all).unwrap());
    assert_eq!(days_unlike_their_hours(&mut db), Vec::<String>::new());
    let rolled: i64 = db
        .query_one("SELECT sum(requests)::int8 FROM report_day_totals", &[])
        .unwrap()
        .get(0);
    assert_eq!(rolled, 3 + 4 + 5 + 1 + 2 + 6 + 8);

    // Past the retention: the hours go, and a day once all its hours have (today stays until
    // it is over: no window within the retention holds it whole).
    let keep_none = Retention {
        minutes: Duration::from_secs(3600),
        hours: Duration::from_secs(60),
    };
    assert!(counting::roll_up(&mut db, keep_none).unwrap());
    let hours: i64 = db
        .query_one("SELECT count(*) FROM report_hours", &[])
        .unwrap()
        .get(0);
    assert_eq!(hours, 0);
    // The minute rolled up 3 hours ago is of today, unless today began less than 3 hours ago.
    let of_today: bool = db
        .query_one(
            "SELECT date_trunc('day', $1::timestamptz AT TIME ZONE 'UTC')
                  = date_trunc('day', now() AT TIME ZONE 'UTC')",
            &[&minute_ago],
        )
        .unwrap()
        .get(0);
    for table in ["report_days", "report_day_totals"] {
        let query = format!(
            "SELECT count(*) FILTER (WHERE bucket < date_trunc('day', now() AT TIME ZONE 'UTC')
                                                     AT TIME ZONE 'UTC'),
                    count(*) FROM {table}"
        );
        let row = db.query_one(&query, &[]).unwrap();
        let (past, all): (i64, i64) = (row.get(0), row.get(1));
        assert_eq!(past, 0, "{table}: the days over");
        assert_eq!(
            all,
            i64::from(of_today),
            "{table}: today's, when the minute was today"
        );
    }
}

#[test]
fn the_roll_up_deletes_the_cards_pages_past_the_retention_with_the_pages() {
    let database = harness::TestDatabase::create();
    let mut db = agentcard::db::connect(&database.url).unwrap();
    let org = harness::new_org(&mut db, "Rolled cards").to_string();
    let now = SystemTime::now();
    let long_ago = now - Duration::from_secs(401 * 24 * 3600);
    for at in [long_ago, now] {
        db.execute(
            "INSERT INTO report_pages VALUES ($1, $2, 'a.example/', 'none', 1, 1)",
            &[&at, &org],
        )
        .unwrap();
        db.execute(
            "INSERT INTO report_card_pages VALUES ($1, 'crd_1', $2, 'a.example/', 1)",
            &[&org, &at],
        )
        .unwrap();
    }
    let retention = Retention {
        minutes: Duration::from_secs(2 * 3600),
        hours: Duration::from_secs(400 * 24 * 3600),
    };
    assert!(counting::roll_up(&mut db, retention).unwrap());
    let left = |db: &mut postgres::Client, table: &str| -> Vec<SystemTime> {
        let query = format!("SELECT hour FROM {table} WHERE org_id = $1");
        let rows = db.query(&query, &[&org]).unwrap();
        rows.iter().map(|row| row.get(0)).collect()
    };
    assert_eq!(left(&mut db, "report_pages").len(), 1);
    assert_eq!(
        left(&mut db, "report_card_pages"),
        left(&mut db, "report_pages")
    );
}

#[test]
fn the_rows_of_the_per_request_table_are_folded_into_the_aggregates() {
    let url = harness::empty_database();
    let mut db = agentcard::db::connect(&url).unwrap();
    agentcard::db::migrate::run_to(&mut db, 4).unwrap();
    db.batch_execute(
        "INSERT INTO fragment_requests (at, org_id, key_id, requested_fragment_id,
                resolved_fragment_id, site_domain, page_url, lang, format, status, outcome,
                reason, card_id, agent_ua, agent_purpose) VALUES
           ('2026-11-20T10:15:30Z', 'acc_1', 'key_1', 'frg_1', 'frg_2', 'a.example',
            'https://a.example/x', 'fr', 'html', 200, 'served', 'served', 'crd_1',
            'Mozilla/5.0 (compatible; GPTBot/1.1)', 'training'),
           ('2026-11-20T10:15:50Z', 'acc_1', 'key_1', 'frg_1', 'frg_2', 'a.example',
            'https://a.example/y', 'fr', 'html', 200, 'served', 'served', 'crd_1',
            'gptbot/2', 'training'),
           ('2026-11-20T10:16:00Z', 'acc_1', 'key_1', 'frg_1', 'frg_1', NULL, NULL, 'fr',
            'json', 204, 'no_fill', 'fragment_paused', NULL, 'curl/8', 'none'),
           ('2026-11-20T10:17:00Z', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 400,
            'refused', 'invalid_request', NULL, NULL, NULL)",
    )
    .unwrap();
    agentcard::db::migrate::run(&mut db).unwrap();
    let minutes: Vec<(String, String, String, i64)> = db
        .query(
            "SELECT org_id, reason, agent, requests FROM report_minutes ORDER BY bucket",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3)))
        .collect();
    let owned = |org: &str, reason: &str, agent: &str, n| {
        (org.to_string(), reason.to_string(), agent.to_string(), n)
    };
    assert_eq!(
        minutes,
        [
            owned("acc_1", "served", "GPTBot", 2),
            owned("acc_1", "fragment_paused", "none", 1),
            owned("", "invalid_request", "none", 1),
        ]
    );
    let pages: (String, i64, i64) = db
        .query_one(
            "SELECT page, sum(requests)::bigint, sum(served)::bigint FROM report_pages GROUP BY 1",
            &[],
        )
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .unwrap();
    assert_eq!(pages, ("(other pages)".to_string(), 3, 2));
    let agents: Vec<(String, i64)> = db
        .query(
            "SELECT user_agent, requests FROM report_unmatched_agents",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    assert_eq!(agents, [("curl/8".to_string(), 1)]);
    let table_left: bool = db
        .query_one("SELECT to_regclass('fragment_requests') IS NOT NULL", &[])
        .unwrap()
        .get(0);
    assert!(!table_left);
}

/// A counter of `requests` no-fills of the organisation in a minute long past.
fn no_fills(org_id: &str, agent: &str, requests: i64) -> counting::RequestCount {
    counting::RequestCount {
        minute: SystemTime::UNIX_EPOCH + Duration::from_secs(29_000_000 * 60),
        org_id: org_id.to_string(),
        site: String::new(),
        requested_fragment_id: String::new(),
        resolved_fragment_id: String::new(),
        card_id: String::new(),
        key_id: String::new(),
        lang: Some(Lang::Fr),
        format: Some(Format::Html),
        ending: Ending::NoEligibleCard,
        refused: None,
        agent: agent.into(),
        purpose: Purpose::None,
        requests,
    }
}

const BOUNDS: counting::Bounds = counting::Bounds {
    pages_per_hour: 10,
    unmatched_agents_per_day: 10,
};

fn total_of(db: &mut postgres::Client, org_id: &str) -> i64 {
    db.query_one(
        "SELECT coalesce(sum(requests), 0)::bigint FROM report_minutes WHERE org_id = $1",
        &[&org_id],
    )
    .unwrap()
    .get(0)
}

/// A flush of page rows of the current hour, each request served by `card_id`, with its card
/// rows: `(page, served)`.
fn served_pages(org_id: &str, card_id: &str, served: &[(&str, i64)]) -> counting::Flush {
    let now = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH);
    let hour = SystemTime::UNIX_EPOCH + Duration::from_secs(now.unwrap().as_secs() / 3600 * 3600);
    let pages = served.iter().map(|&(page, n)| counting::PageCount {
        hour,
        org_id: org_id.into(),
        page: page.into(),
        purpose: Purpose::None,
        requests: n,
        served: n,
    });
    let cards = served.iter().map(|&(page, n)| counting::CardPageCount {
        org_id: org_id.into(),
        card_id: card_id.into(),
        hour,
        page: page.into(),
        served: n,
    });
    counting::Flush {
        pages: pages.collect(),
        card_pages: cards.collect(),
        ..counting::Flush::default()
    }
}

#[test]
fn a_page_past_the_bound_in_the_database_is_other_pages_for_its_card_too() {
    let mut db = harness::db();
    let org = harness::new_org(&mut db, "Card pages").to_string();
    let bounds = counting::Bounds {
        pages_per_hour: 2,
        ..BOUNDS
    };
    let mut apply = |flush: &counting::Flush| {
        let instance = agentcard::ids::new_id(agentcard::ids::INSTANCE);
        let applied = counting::apply_flush(&mut db, &instance, 1, flush, bounds).unwrap();
        let nothing_refused = counting::Applied::Now {
            refused: counting::Flush::default(),
        };
        assert_eq!(applied, nothing_refused);
        let again = counting::apply_flush(&mut db, &instance, 1, flush, bounds).unwrap();
        assert_eq!(again, counting::Applied::Before, "a retry adds nothing");
    };
    // Three instances: the first fills the hour's two places; the second's new page is past
    // them; the third sends card rows alone (as a refused one is tried again).
    apply(&served_pages(&org, "crd_x", &[("h/a/", 2), ("h/b/", 1)]));
    apply(&served_pages(
        &org,
        "crd_y",
        &[("h/a/", 1), ("h/c/", 3), ("h/d/", 1)],
    ));
    let alone = served_pages(&org, "crd_z", &[("h/b/", 1), ("h/q/", 1)]);
    apply(&counting::Flush {
        pages: Vec::new(),
        ..alone
    });
    let owned = |(card, page, n): (&str, &str, i64)| (card.to_string(), page.to_string(), n);
    let expected = [
        ("crd_x", "h/a/", 2),
        ("crd_x", "h/b/", 1),
        ("crd_y", "(other pages)", 4),
        ("crd_y", "h/a/", 1),
        ("crd_z", "(other pages)", 1),
        ("crd_z", "h/b/", 1),
    ];
    assert_eq!(
        card_pages(&mut harness::db(), &org),
        expected.map(owned).to_vec()
    );
}

fn requests(counts: Vec<counting::RequestCount>) -> counting::Flush {
    counting::Flush {
        requests: counts,
        ..counting::Flush::default()
    }
}

#[test]
fn a_flush_applied_twice_is_counted_once() {
    let mut db = harness::db();
    let org = harness::new_org(&mut db, "Retried").to_string();
    let flush = requests(vec![no_fills(&org, "none", 3)]);
    let instance = agentcard::ids::new_id(agentcard::ids::INSTANCE);
    let first = counting::apply_flush(&mut db, &instance, 1, &flush, BOUNDS).unwrap();
    let nothing_refused = counting::Applied::Now {
        refused: counting::Flush::default(),
    };
    assert_eq!(first, nothing_refused);
    let again = counting::apply_flush(&mut db, &instance, 1, &flush, BOUNDS).unwrap();
    assert_eq!(again, counting::Applied::Before);
    let next = counting::apply_flush(&mut db, &instance, 2, &flush, BOUNDS).unwrap();
    assert_eq!(next, nothing_refused);
    assert_eq!(total_of(&mut db, &org), 6);
}

/// The flusher's side of a lost acknowledgement: PostgreSQL commits a flush, the proxy between
/// them closes the connection before the answer arrives (as a failing network or primary may),
/// and the flusher, not knowing whether it was applied, sends it again with its number.
#[test]
fn a_flush_sent_again_after_its_commit_answer_was_lost_is_counted_once() {
    let proxy = PgProxy::start();
    let server = harness::own_server_via(|url| proxy.in_front_of(url));
    let mut w = World::on(&server.database_url, server.addr);
    let site = w.site("lost-answer.example");
    let fragment = w.fragment(site, "/home", true);
    w.card(CardSpec::default(), &[&fragment]);
    server.sync_cache();
    proxy.lose_next_flush_commit();
    for _ in 0..3 {
        assert_eq!(w.fetch(&fragment, "").status, 200);
    }
    let lost = read_until(|| proxy.flush_commits_lost(), |lost| *lost == 1);
    assert_eq!(lost, 1, "the answer to the flush's COMMIT was lost");
    // The next flush goes only once the one whose answer was lost has been sent again.
    assert_eq!(w.fetch(&fragment, "").status, 200);
    let total = || total_of(&mut server.db(), &w.org_id);
    assert_eq!(read_until(total, |total| *total >= 4), 4);
    assert!(server.app.delivery.reporter.status().failures >= 1);
}

#[test]
fn a_counter_postgres_refuses_is_handed_back_and_the_others_are_written() {
    let mut db = harness::db();
    let org = harness::new_org(&mut db, "Refused").to_string();
    // PostgreSQL refuses NUL in text; the service never sends one (see above).
    let poisoned = no_fills(&org, "bad\0agent", 5);
    let flush = requests(vec![
        no_fills(&org, "none", 1),
        poisoned.clone(),
        no_fills(&org, "GPTBot", 2),
    ]);
    let instance = agentcard::ids::new_id(agentcard::ids::INSTANCE);
    let applied = counting::apply_flush(&mut db, &instance, 1, &flush, BOUNDS).unwrap();
    let refused = requests(vec![poisoned]);
    assert_eq!(applied, counting::Applied::Now { refused });
    assert_eq!(total_of(&mut db, &org), 3);
}
