//! What the console's Reports page reads for each view of the last 30 days, timed: the one
//! call its handler makes, `ops::reports::view` (totals and chart by day, the view's top 100
//! groups and all others, the fragments of the no-fill reasons, the unmatched User-Agents),
//! on a connection with the service's settings. `scripts/bench-report.sh` runs it; rendering
//! the HTML is not timed.
//!
//! Usage: `DATABASE_URL=… report_page ORG [ROUNDS]` (default 5 rounds, the views alternating).
//! Prints per view the groups listed, the requests counted, the median and every time in ms.

use agentcard::ids::OrgId;
use agentcard::ops::reports::{view, By, ConsoleWindow};
use jiff::Timestamp;
use std::error::Error;
use std::time::Instant;

/// The page's limits (`console::reports`): groups listed by name, unmatched User-Agents.
const SHOWN: i64 = 100;
const UNMATCHED: i64 = 20;

const VIEWS: [Option<By>; 6] = [
    None,
    Some(By::Agent),
    Some(By::Site),
    Some(By::Fragment),
    Some(By::Card),
    Some(By::Page),
];

fn main() -> Result<(), Box<dyn Error>> {
    let url = std::env::var("DATABASE_URL")?;
    let mut args = std::env::args().skip(1);
    let usage = "usage: report_page ORG [ROUNDS]";
    let org_id = OrgId::parse(&args.next().ok_or(usage)?).ok_or(usage)?;
    let rounds: usize = args.next().map(|r| r.parse()).transpose()?.unwrap_or(5);
    let mut db = agentcard::db::connect(&url)?;
    let org = agentcard::db::orgs::find_org(&mut db, &org_id)?.ok_or("no such organisation")?;
    let mut times = vec![Vec::new(); VIEWS.len()];
    let mut shown = vec![(0, 0); VIEWS.len()];
    for _ in 0..rounds {
        for (i, by) in VIEWS.iter().enumerate() {
            let start = Instant::now();
            let page = view(
                &mut db,
                &org,
                ConsoleWindow::Last30Days,
                *by,
                SHOWN,
                UNMATCHED,
                Timestamp::now(),
            )?;
            times[i].push(start.elapsed().as_secs_f64() * 1000.0);
            let grouped = page.grouped.as_ref();
            let groups = grouped
                .and_then(|r| r.groups.as_ref())
                .map_or(0, |g| g.1.len());
            let others = grouped.is_some_and(|r| r.others.is_some());
            shown[i] = (groups + usize::from(others), page.by_bucket.total.requests);
        }
    }
    println!("view       median_ms     rows    requests  all_ms");
    for (i, by) in VIEWS.iter().enumerate() {
        let mut sorted = times[i].clone();
        sorted.sort_by(f64::total_cmp);
        let all: Vec<String> = times[i].iter().map(|t| format!("{t:.1}")).collect();
        println!(
            "{:<10} {:>9.1} {:>8} {:>11}  {}",
            by.map_or("total", By::as_str),
            sorted[sorted.len() / 2],
            shown[i].0,
            shown[i].1,
            all.join(" "),
        );
    }
    Ok(())
}
