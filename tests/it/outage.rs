//! A database outage: with PostgreSQL stopped, `/fragment` keeps serving the last snapshot
//! (answers come while the management API waits on the database), `/ready` stays `200` and says
//! (as `/metrics` does) that the database is down, the management API answers
//! `503 unavailable` with `Retry-After`, and everything recovers by itself when PostgreSQL
//! returns. How fast is the benchmarks'
//! business: a bound here only catches a hang.
//! The report counts every request exactly once across two processes, a graceful restart and
//! the outage. The tests stop and start PostgreSQL clusters of their own, never the shared
//! server.

use crate::fixtures::{free_local_addr, scrape, served_card, CardSpec, ServeProcess, World};
use crate::harness::{self, Client, Resp};
use serde_json::json;
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A state that has not come after this long (the database seen down or up again, a change
/// applied, the first request of the outage answered) is a hang, even on a loaded machine.
const HANG: Duration = Duration::from_secs(60);
/// A periodic refresh far beyond the test's length: changes arrive by notification only.
const REFRESH_MS: &str = "600000";

/// Clusters made by this process: each gets a folder of its own.
static CLUSTERS: AtomicUsize = AtomicUsize::new(0);

/// A PostgreSQL cluster of this test alone: a temporary folder, a free loopback port, trust
/// authentication. Dropping it stops the server and removes the folder, even on a panic.
struct PrivateCluster {
    bindir: PathBuf,
    dir: PathBuf,
    port: u16,
    /// PostgreSQL refuses to run as root: then its binaries run as the `postgres` user.
    as_postgres: bool,
}

impl PrivateCluster {
    /// Creates and starts the cluster; fails saying what to install when this machine has no
    /// PostgreSQL server programs.
    fn start_new() -> PrivateCluster {
        let bindir = server_binaries().unwrap_or_else(|| {
            panic!(
                "no PostgreSQL server programs (initdb, pg_ctl, postgres) under \
                 /usr/lib/postgresql/*/bin or on PATH: install Debian's package postgresql \
                 (scripts/test.sh does)"
            )
        });
        let cluster = PrivateCluster {
            bindir,
            dir: std::env::temp_dir().join(format!(
                "agentcard-outage-{}-{}",
                std::process::id(),
                CLUSTERS.fetch_add(1, Ordering::Relaxed)
            )),
            port: free_port(),
            as_postgres: is_root(),
        };
        let data = cluster.data_dir();
        cluster.run(Path::new("mkdir"), &["-p", &cluster.socket_dir()]);
        cluster.run(
            &cluster.bindir.join("initdb"),
            &[
                "-U",
                "postgres",
                "--auth=trust",
                "--encoding=UTF8",
                "--locale=C",
                "--no-sync",
                "-D",
                &data,
            ],
        );
        cluster.start();
        cluster
    }

    /// Starts the server on the cluster's data, port and socket folder; waits until it answers.
    fn start(&self) {
        let log = self.dir.join("log").display().to_string();
        let options = format!(
            "-p {} -k '{}' -c listen_addresses=127.0.0.1 -c fsync=off",
            self.port,
            self.socket_dir()
        );
        let data = self.data_dir();
        self.pg_ctl(&[
            "-D", &data, "-l", &log, "-w", "-t", "60", "-o", &options, "start",
        ]);
    }

    /// Stops the server the way an operator would (`-m fast`: sessions are cut).
    fn stop(&self) {
        self.pg_ctl(&["-D", &self.data_dir(), "-m", "fast", "-w", "stop"]);
    }

    /// Creates database `name` and returns its URL.
    fn create_database(&self, name: &str) -> String {
        let mut admin = agentcard::db::connect(&self.url("postgres")).expect("connect");
        admin
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .expect("create the database");
        self.url(name)
    }

    fn url(&self, database: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{database}", self.port)
    }

    fn data_dir(&self) -> String {
        self.dir.join("data").display().to_string()
    }

    fn socket_dir(&self) -> String {
        self.dir.join("run").display().to_string()
    }

    fn pg_ctl(&self, args: &[&str]) {
        self.run(&self.bindir.join("pg_ctl"), args);
    }

    /// Runs a program as the cluster's owner; panics with its output if it fails.
    fn run(&self, program: &Path, args: &[&str]) {
        let output = self
            .command(program, args)
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", program.display()));
        assert!(
            output.status.success(),
            "{} {args:?} failed: {}{}",
            program.display(),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }

    fn command(&self, program: &Path, args: &[&str]) -> Command {
        let mut command = if self.as_postgres {
            let mut runuser = Command::new("runuser");
            runuser.args(["-u", "postgres", "--"]).arg(program);
            runuser
        } else {
            Command::new(program)
        };
        // A folder the `postgres` user may enter (not the checkout, which may be under /root).
        command
            .args(args)
            .current_dir(std::env::temp_dir())
            .stdin(Stdio::null());
        command
    }
}

impl Drop for PrivateCluster {
    fn drop(&mut self) {
        let data = self.data_dir();
        let stop = ["-D", &data, "-m", "immediate", "-w", "stop"];
        let _ = self
            .command(&self.bindir.join("pg_ctl"), &stop)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The newest `/usr/lib/postgresql/<version>/bin` with a server, else one on `PATH`.
fn server_binaries() -> Option<PathBuf> {
    let has_server = |dir: &PathBuf| {
        ["initdb", "pg_ctl", "postgres"]
            .iter()
            .all(|binary| dir.join(binary).is_file())
    };
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let version = entry.file_name().to_str()?.parse().ok()?;
            Some((version, entry.path().join("bin")))
        })
        .filter(|(_, bin)| has_server(bin))
        .collect();
    versions.sort();
    versions
        .pop()
        .map(|(_, bin)| bin)
        .or_else(|| std::env::split_paths(&std::env::var_os("PATH")?).find(|dir| has_server(dir)))
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|output| output.stdout.trim_ascii() == b"0")
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free loopback port")
        .port()
}

/// Polls `done` every 50 ms; panics naming `what` if it is still false after `HANG`.
fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < HANG, "{what}: not within {HANG:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[track_caller]
fn assert_unavailable(resp: &Resp) {
    assert_eq!(
        (resp.status, resp.code()),
        (503, "unavailable".to_string()),
        "{}",
        resp.text()
    );
    assert_eq!(resp.header("retry-after"), Some("5"));
}

/// A request answered on another thread.
struct Pending {
    path: &'static str,
    answer: JoinHandle<Resp>,
}

impl Pending {
    fn send(client: &Client, path: &'static str) -> Pending {
        let client = client.clone();
        let answer = std::thread::spawn(move || client.get(path));
        Pending { path, answer }
    }

    fn is_finished(&self) -> bool {
        self.answer.is_finished()
    }

    /// The response; panics if none came (the client waits a minute for one).
    fn wait(self) -> Resp {
        let path = self.path;
        self.answer
            .join()
            .unwrap_or_else(|_| panic!("{path}: no answer while the database was down"))
    }
}

/// An organisation with a served fragment (one card) and a paused one, on the private cluster.
struct Scene {
    w: World,
    served: String,
    paused: String,
    card: String,
    anonymous: Client,
    management: Client,
    metrics: SocketAddr,
}

impl Scene {
    fn new(database_url: &str, addr: SocketAddr, metrics: SocketAddr) -> Scene {
        let mut w = World::on(database_url, addr);
        let site = w.site("outage.example");
        let served = w.fragment(site, "/served", true);
        let paused = w.fragment(site, "/paused", false);
        let card = w.card(CardSpec::default(), &[&served]);
        let token = w.management_token();
        Scene {
            w,
            served,
            paused,
            card,
            anonymous: Client::new(addr),
            management: Client::new(addr).token(&token),
            metrics,
        }
    }

    /// The body of `/ready`, whatever its status.
    fn ready(&self) -> serde_json::Value {
        self.anonymous.get("/ready").json()
    }

    fn database_up_gauge(&self) -> Option<f64> {
        scrape(self.metrics).value("agentcard_database_up", &[])
    }

    fn served_status(&self) -> u16 {
        self.w.fetch(&self.served, "").status
    }

    /// The account of `GET /v1/me`, asserting a `200`.
    fn me(&self) -> String {
        let resp = self.management.get("/v1/me");
        assert_eq!(resp.status, 200, "{}", resp.text());
        resp.json()["account"]["id"].as_str().unwrap().to_string()
    }

    /// `/fragment` answers from the snapshot, the same statuses and bytes as before the
    /// outage, at least 100 times and until `others` (sent meanwhile, waiting on the database)
    /// have answered.
    fn fragments_keep_serving(&self, before: &Resp, others: &[&Pending]) {
        let started = Instant::now();
        let mut rounds = 0;
        while rounds < 100 || !others.iter().all(|other| other.is_finished()) {
            assert!(started.elapsed() < HANG, "the others never answered");
            for (fragment, status) in [(&self.served, 200), (&self.paused, 204)] {
                let resp = self.w.fetch(fragment, "");
                assert_eq!(resp.status, status, "{fragment} in round {rounds}");
                if status == 200 {
                    assert_eq!(resp.body, before.body, "the same card, byte for byte");
                }
            }
            rounds += 1;
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

#[test]
#[cfg_attr(
    not(feature = "external-tools"),
    ignore = "needs prometheus_client: cargo test --features external-tools"
)]
fn fragment_serves_through_a_database_outage_and_everything_recovers() {
    let cluster = PrivateCluster::start_new();
    let database_url = cluster.create_database("agentcard_outage");
    let metrics = free_local_addr();
    let own = harness::start_server(
        &database_url,
        &[
            ("AGENTCARD_REFRESH_MS", REFRESH_MS),
            ("AGENTCARD_METRICS_LISTEN", &metrics.to_string()),
        ],
    );
    let addr = own.addr;
    let mut s = Scene::new(&database_url, addr, metrics);

    // Before: the card is served (its rows came by notification or the first load) and the
    // service is ready.
    wait_until("the first card served", || s.served_status() == 200);
    let before = s.w.fetch(&s.served, "");
    assert_eq!(served_card(&before), s.card);
    assert_eq!(s.w.fetch(&s.paused, "").status, 204);
    assert_eq!(s.anonymous.get("/ready").status, 200);
    assert_eq!(s.me(), s.w.org_id);

    // During: PostgreSQL is stopped; the management API fails while /fragment keeps answering
    // from memory.
    cluster.stop();
    let me = Pending::send(&s.management, "/v1/me");
    s.fragments_keep_serving(&before, &[&me]);
    assert_unavailable(&me.wait());
    // The outage known, /ready still says the instance serves, and says the database is down.
    wait_until("/ready says the database is down", || {
        s.ready()["database"] == "down"
    });
    let ready = s.anonymous.get("/ready");
    assert_eq!(ready.status, 200, "{}", ready.text());
    let body = ready.json();
    assert_eq!(
        (&body["status"], &body["database"], &body["fragment_cache"]),
        (&json!("ready"), &json!("down"), &json!("loaded"))
    );
    assert!(body["report_pending_counters"].is_u64(), "{body}");
    assert_eq!(s.database_up_gauge(), Some(0.0));
    assert_unavailable(&s.management.get("/v1/me"));

    // After: PostgreSQL is back; nobody restarts the service.
    cluster.start();
    wait_until("/ready says the database is up", || {
        s.ready()["database"] == "up"
    });
    assert_eq!(s.database_up_gauge(), Some(1.0));
    assert_eq!(s.me(), s.w.org_id);
    s.w.reconnect();
    let served = s.served.clone();
    s.w.sql(
        "UPDATE fragments SET status = 'paused' WHERE id = $1",
        &served,
    );
    wait_until("the refresher reconnected", || s.served_status() == 204);
    // Seen the pause, the refresher is listening again: with the periodic refresh out of the
    // way, only a notification brings this change.
    s.w.sql(
        "UPDATE fragments SET status = 'active' WHERE id = $1",
        &served,
    );
    wait_until("the notification after the outage", || {
        s.served_status() == 200
    });
    assert_eq!(served_card(&s.w.fetch(&s.served, "")), s.card);
}

/// One request of the mix, and what the report must say of it.
struct Sent {
    org: bool,
    site: &'static str,
    fragment: String,
    reason: &'static str,
    agent: &'static str,
    purpose: &'static str,
}

/// The mix of the exactness test: each outcome and reason, four agents and a browser.
struct Mix {
    w: World,
    served: String,
    paused: String,
    empty: String,
    sent: Vec<Sent>,
}

const BROWSER: &str = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0";

impl Mix {
    /// The organisation and its fragments, written before any process starts, so that each
    /// process's first snapshot holds them.
    fn new(database_url: &str) -> Mix {
        let nowhere: SocketAddr = "127.0.0.1:9".parse().unwrap();
        let mut w = World::on(database_url, nowhere);
        let site = w.site("exact.example");
        let served = w.fragment(site, "/served", true);
        let paused = w.fragment(site, "/paused", false);
        let empty = w.fragment(site, "/empty", true);
        w.card(CardSpec::default(), &[&served]);
        Mix {
            w,
            served,
            paused,
            empty,
            sent: Vec::new(),
        }
    }

    /// Sends the mix once to the process at `addr`.
    fn send_to(&mut self, addr: SocketAddr) {
        let page = "&page_url=https%3A%2F%2Fexact.example%2Fstory";
        let agents = [
            ("GPTBot/1.2", "GPTBot", "training"),
            ("ChatGPT-User/1.0", "ChatGPT-User", "query"),
            ("PerplexityBot/1.0", "PerplexityBot", "search"),
            ("Amazonbot/0.1", "Amazonbot", "unknown"),
            (BROWSER, "none", "none"),
        ];
        let served = self.served.clone();
        for (ua, agent, purpose) in agents {
            self.send(addr, &served, page, ua, 200);
            self.note(true, "exact.example", &served, "served", agent, purpose);
        }
        let (paused, empty) = (self.paused.clone(), self.empty.clone());
        self.send(addr, &paused, "", BROWSER, 204);
        self.note(true, "", &paused, "fragment_paused", "none", "none");
        self.send(addr, &empty, "", BROWSER, 204);
        self.note(true, "", &empty, "no_eligible_card", "none", "none");
        self.send(addr, "frg_not_ours", "", BROWSER, 403);
        self.note(true, "", "", "fragment_not_the_keys", "none", "none");
        // With a live key, a `400` counts under its organisation.
        self.send(addr, &served, "&format=xml", BROWSER, 400);
        self.note(true, "", "", "format_invalid", "none", "none");
        let bad_key = format!(
            "/fragment?partner_id={}&fragment_id={served}&lang=fr&api_key=svc_live_{}",
            self.w.org_id,
            "0".repeat(40)
        );
        assert_eq!(Client::new(addr).get(&bad_key).status, 401);
        self.note(false, "", "", "invalid_key", "none", "none");
    }

    fn send(&self, addr: SocketAddr, fragment: &str, extra: &str, ua: &str, status: u16) {
        let resp = self
            .w
            .fetch_from(addr, fragment, extra, &[("User-Agent", ua)]);
        assert_eq!(resp.status, status, "{fragment}{extra}: {}", resp.text());
    }

    fn note(
        &mut self,
        org: bool,
        site: &'static str,
        fragment: &str,
        reason: &'static str,
        agent: &'static str,
        purpose: &'static str,
    ) {
        self.sent.push(Sent {
            org,
            site,
            fragment: fragment.to_string(),
            reason,
            agent,
            purpose,
        });
    }

    /// What was sent, counted by `key`, sorted.
    fn expected(&self, key: impl Fn(&Sent) -> String) -> Vec<(String, i64)> {
        let mut counts: Vec<(String, i64)> = Vec::new();
        for sent in &self.sent {
            let key = key(sent);
            match counts.iter_mut().find(|(k, _)| *k == key) {
                Some((_, n)) => *n += 1,
                None => counts.push((key, 1)),
            }
        }
        counts.sort();
        counts
    }
}

/// A dimension of what was sent, as the report's column holds it.
type Grouping<'a> = Box<dyn Fn(&Sent) -> String + 'a>;

/// The report's counts by `column` of report_minutes, sorted.
fn counted_by(db: &mut postgres::Client, column: &str) -> Vec<(String, i64)> {
    let query =
        format!("SELECT {column}, sum(requests)::bigint FROM report_minutes GROUP BY 1 ORDER BY 1");
    db.query(&query, &[])
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect()
}

#[test]
fn every_request_is_counted_once_across_two_processes_a_restart_and_an_outage() {
    let cluster = PrivateCluster::start_new();
    let database_url = cluster.create_database("agentcard_exact");
    let mut db = agentcard::db::connect(&database_url).unwrap();
    agentcard::db::migrate::run(&mut db).unwrap();
    let mut mix = Mix::new(&database_url);
    let start = || {
        ServeProcess::start_with(&[
            ("DATABASE_URL", &database_url),
            ("RUST_LOG", "warn"),
            ("AGENTCARD_REPORT_FLUSH_MS", "100"),
            ("AGENTCARD_DRAIN_MS", "300"),
        ])
    };
    let (mut a, b) = (start(), start());
    for _ in 0..2 {
        mix.send_to(a.addr);
        mix.send_to(b.addr);
    }
    a.terminate();
    let exit = a.wait_exit(HANG);
    assert_eq!(exit.code(), Some(0), "{}", a.log());
    let a = start();
    mix.send_to(a.addr);
    mix.send_to(b.addr);

    cluster.stop();
    mix.send_to(a.addr);
    mix.send_to(b.addr);
    // Both hold counts they could not flush.
    wait_until("both flushes failed", || {
        [&a, &b]
            .iter()
            .all(|p| p.log().contains("the report's flush failed"))
    });
    cluster.start();
    mix.send_to(a.addr);
    mix.send_to(b.addr);

    let sent = mix.sent.len() as i64;
    let mut db = agentcard::db::connect(&database_url).unwrap();
    wait_until("every request counted", || {
        counted_by(&mut db, "''").first().map_or(0, |(_, n)| *n) >= sent
    });
    std::thread::sleep(Duration::from_millis(500));
    let org = mix.w.org_id.clone();
    let groupings: [(&str, Grouping); 6] = [
        (
            "org_id",
            Box::new(|s| if s.org { org.clone() } else { String::new() }),
        ),
        ("site", Box::new(|s| s.site.to_string())),
        ("resolved_fragment_id", Box::new(|s| s.fragment.clone())),
        ("reason", Box::new(|s| s.reason.to_string())),
        ("agent", Box::new(|s| s.agent.to_string())),
        ("purpose", Box::new(|s| s.purpose.to_string())),
    ];
    for (column, key) in groupings {
        assert_eq!(
            counted_by(&mut db, column),
            mix.expected(key),
            "by {column}"
        );
    }
    let with_org = mix.sent.iter().filter(|s| s.org).count() as i64;
    let pages = |db: &mut postgres::Client| -> i64 {
        db.query_one(
            "SELECT coalesce(sum(requests), 0)::bigint FROM report_pages",
            &[],
        )
        .unwrap()
        .get(0)
    };
    // Pages are flushed every few flush periods.
    wait_until("every page counted", || pages(&mut db) >= with_org);
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(pages(&mut db), with_org);
    // The outage is said when it begins and once when it ends; in between only as a repeat
    // (were it to outlast the log's repeat period on a slow machine).
    let flush_lines: Vec<String> = b
        .log()
        .lines()
        .filter(|line| line.contains("the report's flush"))
        .map(str::to_string)
        .collect();
    let said = |at: usize, words: &str| flush_lines.get(at).is_some_and(|l| l.contains(words));
    let last = flush_lines.len().saturating_sub(1);
    assert!(
        said(0, "the report's flush failed")
            && said(last, "works again")
            && (1..last).all(|at| said(at, "still failing")),
        "{flush_lines:#?}"
    );
}
