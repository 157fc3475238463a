//! Criterion benchmarks of the `/fragment` hot path, on a generated in-memory data set (no
//! database; see `delivery/dataset.rs` for its shape):
//!
//! - `decide/<case>`: one request end to end, `Params::parse` of the query string then
//!   `select::decide` on the snapshot (parameter checks, key lookup by SHA-256, resolution,
//!   the pick). Target: under 2 µs median (docs/performance.md).
//! - `record/<case>`: the report's part of a request, `Reporter::record` into the thread's own
//!   counters (a key counted already; pages rotating).
//! - `snapshot/with_org`: reloading one organisation (100 sites, 10 000 fragments, its cards
//!   and every platform card) into the big snapshot, the cost of a management write.
//! - `snapshot/build_full`: `Snapshot::build` of the whole data set (target under 3 s); the
//!   rows are generated per iteration outside the timing.
//!
//! Before benchmarking, the snapshot the `decide` cases read is built once in a fresh process,
//! and the build time and peak resident memory (VmHWM of /proc/self/status: the rows and the
//! snapshot together, as during a real load) are printed. Target: under 1 GiB.
//!
//! Sizes: `cargo bench` passes `--bench`, and only then is the full data set generated
//! (1 000 000 fragments; the whole run takes about a minute on 2 cores). Without it (`cargo
//! test --all-targets` runs each benchmark once in test mode) or with `--test`, a small data
//! set of the same shape keeps the run to about a second.
//!
//!     cargo bench --bench delivery [-- <filter>]

#[path = "delivery/dataset.rs"]
mod dataset;

use agentcard::counting::{Bounds, ReportSettings, Reporter, RequestFacts, Retention};
use agentcard::delivery::params::Params;
use agentcard::delivery::select::{decide, Decision, Outcome};
use agentcard::delivery::snapshot::Snapshot;
use agentcard::domain::{Ending, Format, Lang};
use criterion::measurement::WallTime;
use criterion::{black_box, BatchSize, BenchmarkGroup, Criterion, SamplingMode};
use dataset::{Sizes, SERVICE_PREFIX};
use std::time::{Duration, Instant};
use url::form_urlencoded;

/// The organisation the `decide` cases serve: it has platform lists as well as own cards.
const BENCH_ORG: u64 = 0;
/// The number of distinct pages of `decide/rotating_pages`.
const ROTATING_PAGES: u64 = 1000;

fn main() {
    let sizes = if is_benchmark_run() {
        Sizes::FULL
    } else {
        Sizes::SMALL
    };
    let mut criterion = Criterion::default().configure_from_args();
    let snapshot = build_once_and_report(&sizes);
    bench_decide(&mut criterion, &snapshot, &sizes);
    bench_record(&mut criterion);
    let mut group = criterion.benchmark_group("snapshot");
    bench_with_org(&mut group, &snapshot, &sizes);
    // build_full holds its rows and a second snapshot: free the first one.
    drop(snapshot);
    bench_build_full(&mut group, &sizes);
    group.finish();
    criterion.final_summary();
}

/// Criterion's own rule: `--bench` (what `cargo bench` passes) without `--test` measures;
/// anything else runs each benchmark once. `--list` only lists.
fn is_benchmark_run() -> bool {
    let has = |flag: &str| std::env::args().any(|arg| arg == flag);
    has("--bench") && !has("--test") && !has("--list")
}

/// Builds the full snapshot once and prints its build time and the process's memory.
fn build_once_and_report(sizes: &Sizes) -> Snapshot {
    let rss_before = proc_status("VmRSS");
    let started = Instant::now();
    let rows = dataset::all_rows(sizes);
    println!(
        "data set: {} (generated in {:.2?})",
        dataset::describe(&rows),
        started.elapsed()
    );
    let started = Instant::now();
    let snapshot = Snapshot::build(rows, &dataset::versions(sizes));
    println!(
        "snapshot build, once: {:.2?}; resident memory: {rss_before} before the rows, \
         peak {} (rows and snapshot together), {} once the rows are dropped",
        started.elapsed(),
        proc_status("VmHWM"),
        proc_status("VmRSS"),
    );
    snapshot
}

/// A line of /proc/self/status such as `VmHWM`, as its value (`"812345 kB"`).
fn proc_status(name: &str) -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(':'))
        .map_or_else(|| "n/a".to_string(), |value| value.trim().to_string())
}

/// One request: its query string, its `X-API-Key`, and the fragment it must resolve to
/// (`None`: it must be refused).
struct Request {
    query: String,
    key: String,
    resolves_to: Option<String>,
}

impl Request {
    fn decide<'s>(&self, snapshot: &'s Snapshot) -> Decision<'s> {
        let params = Params::parse(black_box(&self.query));
        decide(
            Some(snapshot),
            &params,
            Some(black_box(&self.key)),
            SERVICE_PREFIX,
        )
    }

    /// Checks once, outside the timing, that the request does what its case says: served
    /// from the expected fragment, or refused.
    fn check(&self, name: &str, snapshot: &Snapshot) {
        let decision = self.decide(snapshot);
        let outcome = match &decision.outcome {
            Outcome::Served(card) => format!("served {}", card.id),
            other => format!("{other:?}"),
        };
        match (&self.resolves_to, &decision.outcome) {
            (None, Outcome::Refused(_)) => {}
            (Some(expected), served) => {
                assert_eq!(
                    decision.trace.resolved_fragment,
                    Some(expected.as_str()),
                    "{name}: {outcome}"
                );
                assert!(matches!(served, Outcome::Served(_)), "{name}: {outcome}");
            }
            (None, _) => panic!("{name}: expected a refusal, got {outcome}"),
        }
    }
}

/// The query string of a request of organisation `org`.
fn query(
    org: u64,
    fragment: &str,
    lang: &str,
    page_url: Option<&str>,
    ctx: &[(&str, &str)],
) -> String {
    let mut query = form_urlencoded::Serializer::new(String::new());
    query
        .append_pair("partner_id", &dataset::org_id(org))
        .append_pair("fragment_id", fragment)
        .append_pair("lang", lang);
    if let Some(url) = page_url {
        query.append_pair("page_url", url);
    }
    for (key, value) in ctx {
        query.append_pair(&format!("ctx.{key}"), value);
    }
    query.finish()
}

/// A request of the bench organisation on site `site`, resolving to fragment `resolved`.
fn page_request(site: u64, path: &str, resolved: u64, ctx: &[(&str, &str)]) -> Request {
    let url = format!("https://{}{path}", dataset::domain(site));
    let requested = dataset::fragment_id(site, 1);
    Request {
        query: query(BENCH_ORG, &requested, "fr", Some(&url), ctx),
        key: dataset::key(BENCH_ORG, 0),
        resolves_to: Some(dataset::fragment_id(site, resolved)),
    }
}

fn cases(sizes: &Sizes) -> Vec<(&'static str, Request)> {
    let site = sizes.sites_of(BENCH_ORG).next().unwrap_or(1);
    let fragment_7 = dataset::fragment_id(site, 7);
    let by_fragment_id = Request {
        query: query(BENCH_ORG, &fragment_7, "fr", None, &[]),
        key: dataset::key(BENCH_ORG, 1),
        resolves_to: Some(fragment_7.clone()),
    };
    let unknown_key = Request {
        key: format!("{SERVICE_PREFIX}_live_{}", "0".repeat(40)),
        resolves_to: None,
        ..page_request(site, "/news/4/", 4, &[])
    };
    vec![
        ("exact_rule", page_request(site, "/news/4/", 4, &[])),
        (
            "longest_prefix_deep",
            page_request(
                site,
                "/news/3/2024/05/17/les-prix-de-l-energie-repartent-a-la-hausse/",
                3,
                &[],
            ),
        ),
        (
            "site_default",
            page_request(
                site,
                "/culture/livres/critique-du-jour/",
                dataset::DEFAULT_FRAGMENT,
                &[],
            ),
        ),
        ("no_page_url", by_fragment_id),
        (
            "ctx_values",
            page_request(
                site,
                "/news/4/",
                4,
                &[("section", "news"), ("topic", "energie")],
            ),
        ),
        ("unknown_key_401", unknown_key),
    ]
}

/// Pages over every organisation and many sites: exact rules, deep prefixes and defaults in
/// turn, all five langs, so the lookups do not stay in one warm corner of the maps.
fn rotating_requests(sizes: &Sizes) -> Vec<Request> {
    (0..ROTATING_PAGES)
        .map(|i| {
            let org = i % sizes.orgs;
            let site = org * sizes.sites_per_org + 1 + (i * 7) % sizes.sites_per_org;
            // Rules 1 … 20: even ones exact, odd ones prefix.
            let even = 2 * (1 + i % (dataset::RULES_PER_SITE / 2));
            let (path, resolved) = match i % 3 {
                0 => (format!("/news/{even}/"), even),
                1 => (format!("/news/{}/2024/article-{i}/", even - 1), even - 1),
                _ => (format!("/archives/{i}/"), dataset::DEFAULT_FRAGMENT),
            };
            let url = format!("https://{}{path}", dataset::domain(site));
            let lang = dataset::LANGS[(i % 5) as usize];
            Request {
                query: query(org, &dataset::fragment_id(site, 1), lang, Some(&url), &[]),
                key: dataset::key(org, i % 3),
                resolves_to: Some(dataset::fragment_id(site, resolved)),
            }
        })
        .collect()
}

fn bench_decide(criterion: &mut Criterion, snapshot: &Snapshot, sizes: &Sizes) {
    let mut group = criterion.benchmark_group("decide");
    group
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    for (name, request) in cases(sizes) {
        request.check(name, snapshot);
        group.bench_function(name, |b| b.iter(|| request.decide(snapshot)));
    }
    let requests = rotating_requests(sizes);
    for request in &requests {
        request.check("rotating_pages", snapshot);
    }
    let mut next = 0;
    group.bench_function("rotating_pages", |b| {
        b.iter(|| {
            next = (next + 1) % requests.len();
            requests[next].decide(snapshot)
        })
    });
    group.finish();
}

/// The report's part of a request: `Reporter::record` into the thread's own counters, for a
/// key counted already (one page) and across `ROTATING_PAGES` pages. The flusher never runs:
/// its period is longer than the benchmark.
fn bench_record(criterion: &mut Criterion) {
    let reporter = Reporter::start(ReportSettings {
        database_url: "postgres://nobody@127.0.0.1:1/none".into(),
        flush_every: Duration::from_secs(24 * 3600),
        bounds: Bounds {
            pages_per_hour: 10_000,
            unmatched_agents_per_day: 100,
        },
        retention: Retention {
            minutes: Duration::from_secs(48 * 3600),
            hours: Duration::from_secs(400 * 24 * 3600),
        },
    });
    let paths: Vec<String> = (0..ROTATING_PAGES).map(|i| format!("/news/{i}/")).collect();
    let facts = |path: &'static str| RequestFacts {
        org_id: Some("acc_0bench0000000000000000000"),
        key_id: Some("key_0bench0000000000000000000"),
        requested_fragment_id: Some("frg_0bench0000000000000000000"),
        resolved_fragment_id: Some("frg_1bench0000000000000000000"),
        site: Some("site-0.example"),
        card_id: Some("crd_0bench0000000000000000000"),
        lang: Some(Lang::Fr),
        format: Some(Format::Html),
        ending: Ending::Served,
        refused: None,
        page: Some(("site-0.example", path)),
        agent_ua: Some("Mozilla/5.0 (compatible; GPTBot/1.2; +https://openai.com/gptbot)"),
    };
    let paths: &'static [String] = Box::leak(paths.into_boxed_slice());
    let mut group = criterion.benchmark_group("record");
    group.bench_function("known_key", |b| {
        b.iter(|| reporter.record(black_box(&facts("/news/1/"))))
    });
    let mut next = 0;
    group.bench_function("rotating_pages", |b| {
        b.iter(|| {
            next = (next + 1) % paths.len();
            reporter.record(black_box(&facts(&paths[next])))
        })
    });
    group.finish();
}

fn bench_with_org(group: &mut BenchmarkGroup<WallTime>, snapshot: &Snapshot, sizes: &Sizes) {
    let org = dataset::org_id(BENCH_ORG);
    let versions = dataset::versions(sizes);
    group
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    group.bench_function("with_org", |b| {
        b.iter_batched(
            || dataset::org_rows(sizes, BENCH_ORG),
            |rows| snapshot.with_org(&org, rows, &versions),
            BatchSize::LargeInput,
        )
    });
}

/// 10 samples of the same number of builds (flat sampling): 2 or 3 builds each at 0.5 s a build
/// (this machine), one each, plus one warm-up, for a build of 1 to 3 s.
fn bench_build_full(group: &mut BenchmarkGroup<WallTime>, sizes: &Sizes) {
    let versions = dataset::versions(sizes);
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(10));
    group.bench_function("build_full", |b| {
        b.iter_batched(
            || dataset::all_rows(sizes),
            |rows| Snapshot::build(rows, &versions),
            BatchSize::LargeInput,
        )
    });
}
