//! The report's write side under a synthetic load, for `scripts/bench-fleet-pg.sh` only
//! (feature `bench-fleet`; the service's build leaves it out): requests of the load
//! benchmark's mix (`scripts/bench/fragment.lua`: 1000 pages of 1000 sites, four agents, one
//! organisation and key) recorded through the real [`Reporter`], whose flusher writes them to
//! PostgreSQL as the service's does. No HTTP, no snapshot: what PostgreSQL spends per instance
//! on the report, measured for many instances at once on a small machine.

use super::{ReportSettings, Reporter, RequestFacts};
use crate::domain::{Ending, Format, Lang};
use std::time::{Duration, Instant};

/// The load benchmark's organisation, key and requested fragment, in the ids' shape.
const ORG: &str = "acc_benchfleet0000000000000";
const KEY: &str = "key_benchfleet0000000000000";
const FRAGMENT: &str = "frg_benchfleet0000000000000";
/// The pages `fragment.lua` rotates over, and its agents.
const PAGES: usize = 1000;
const AGENTS: [&str; 4] = [
    "Mozilla/5.0 (compatible; GPTBot/1.2; +https://openai.com/gptbot)",
    "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0)",
    "Mozilla/5.0 (compatible; PerplexityBot/1.0)",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/124.0 Safari/537.36",
];
/// How often the load records the requests due.
const TICK: Duration = Duration::from_millis(10);
/// How long the last flush may take.
const FINISH_WITHIN: Duration = Duration::from_secs(60);

/// A page of the mix and what serving it names: its site, the fragment its rule or its site's
/// default resolves to, the card served.
struct Page {
    host: String,
    path: String,
    resolved_fragment_id: String,
    card_id: String,
}

/// Page `i` as `fragment.lua` builds it, and as the data set resolves it: `/news/{k}/` pages
/// and odd `k` up to 20 through a rule, the others through the site's default.
fn page(i: usize) -> Page {
    let site = 1 + i % 1000;
    let k = 1 + (i * 7) % 24;
    let (path, by_rule) = if i % 4 == 3 {
        (format!("/news/{k}/"), true)
    } else {
        (format!("/news/{k}/article"), k % 2 == 1 && k <= 20)
    };
    let fragment = if by_rule { k } else { 100 };
    Page {
        host: format!("site{site}.example"),
        path,
        resolved_fragment_id: format!("frg_s{site:05}f{fragment:03}000000000000"),
        card_id: format!("crd_s{site:05}c{:03}0000000000000", fragment % 10),
    }
}

fn facts<'a>(page: &'a Page, agent: &'a str) -> RequestFacts<'a> {
    RequestFacts {
        org_id: Some(ORG),
        key_id: Some(KEY),
        requested_fragment_id: Some(FRAGMENT),
        resolved_fragment_id: Some(&page.resolved_fragment_id),
        site: Some(&page.host),
        card_id: Some(&page.card_id),
        lang: Some(Lang::Fr),
        format: Some(Format::Html),
        ending: Ending::Served,
        refused: None,
        page: Some((&page.host, &page.path)),
        agent_ua: Some(agent),
    }
}

/// Records `rate` requests a second of the mix for `duration`, flushes them all and stops;
/// returns how many were recorded. An error when the last flush did not reach PostgreSQL.
pub fn run(settings: ReportSettings, rate: u64, duration: Duration) -> Result<u64, String> {
    let reporter = Reporter::start(settings);
    let pages: Vec<Page> = (0..PAGES).map(page).collect();
    let start = Instant::now();
    let mut recorded: u64 = 0;
    while start.elapsed() < duration {
        let due = (rate as f64 * start.elapsed().as_secs_f64()) as u64;
        while recorded < due {
            let i = (recorded % PAGES as u64) as usize;
            reporter.record(&facts(&pages[i], AGENTS[i % AGENTS.len()]));
            recorded += 1;
        }
        std::thread::sleep(TICK);
    }
    if reporter.finish(FINISH_WITHIN) {
        Ok(recorded)
    } else {
        Err(format!(
            "the last flush did not reach PostgreSQL within {FINISH_WITHIN:?}"
        ))
    }
}
