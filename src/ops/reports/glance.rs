//! The console's short views: the home page's last 24 hours at a glance, and a card's last
//! 7 days (what it served each day, the pages that got it most). The same counts as every
//! report (`super`), in the console's windows.

use super::{report, By, ConsoleWindow, Counts, Group, Key, Report};
use crate::db::orgs::Org;
use crate::db::reports;
use crate::delivery::UNREADABLE_PATH;
use crate::error::ApiError;
use crate::ids::CardId;
use jiff::Timestamp;
use postgres::GenericClient;

/// How many agents the glance names.
const TOP_AGENTS: usize = 5;
/// How many pages a card's week names.
const TOP_PAGES: i64 = 10;

/// The last 24 hours of an organisation.
#[derive(Debug, Clone)]
pub struct Glance {
    /// The window's totals (its bounds in `by_hour.bounds`).
    pub by_hour: Report,
    /// Each hour of the window, zeros included, in order.
    pub hours: Vec<(Timestamp, Counts)>,
    /// The agents with the most requests, most first (markers, `none` included).
    pub top_agents: Vec<Group>,
    /// Fragments that answered requests (not refused) and served none.
    pub unfilled_fragments: Vec<Group>,
}

pub fn glance(db: &mut impl GenericClient, org: &Org, now: Timestamp) -> Result<Glance, ApiError> {
    let window = ConsoleWindow::Last24Hours;
    let bounds = window.bounds(now);
    let by_hour = report(db, org, bounds, Some(By::Hour))?;
    let hours = series(&by_hour, &window.buckets(now));
    let mut top_agents = groups(report(db, org, bounds, Some(By::Agent))?);
    top_agents.sort_by_key(|group| std::cmp::Reverse(group.counts.requests));
    top_agents.truncate(TOP_AGENTS);
    let unfilled_fragments = groups(report(db, org, bounds, Some(By::Fragment))?)
        .into_iter()
        .filter(|group| {
            let counts = &group.counts;
            counts.served == 0 && counts.requests > counts.refused.unwrap_or(0)
        })
        .collect();
    Ok(Glance {
        by_hour,
        hours,
        top_agents,
        unfilled_fragments,
    })
}

fn groups(report: Report) -> Vec<Group> {
    report.groups.map(|(_, groups)| groups).unwrap_or_default()
}

/// The counts of each bucket starting at `starts` (a report by hour or by day), zeros where
/// the report has no group: the points of a chart.
pub fn series(report: &Report, starts: &[Timestamp]) -> Vec<(Timestamp, Counts)> {
    let groups = report.groups.as_ref().map(|(_, groups)| &groups[..]);
    let counts_at = |start: Timestamp| {
        groups
            .into_iter()
            .flatten()
            .find(|group| matches!(group.key, Key::Hour(at) | Key::Day(at) if at == start))
            .map(|group| group.counts.clone())
            .unwrap_or_else(|| Counts::zero(true))
    };
    starts
        .iter()
        .map(|&start| (start, counts_at(start)))
        .collect()
}

/// What a card served over the last 7 days.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardWeek {
    pub served: i64,
    /// Each day of the 7, zeros included, in order.
    pub days: Vec<(Timestamp, i64)>,
    /// The pages that got it most over the hours of the same 7 days, most served first (ties
    /// by page in byte order).
    pub pages: Vec<CardPage>,
}

/// A page that got a card, and how many requests the card served there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardPage {
    /// Host and canonical path; `(other pages)` for the pages past an hour's bound, `(no
    /// page)` for requests without a `page_url`.
    pub page: String,
    pub served: i64,
    /// The organisation's site the page is on, when "Why this card?" can be asked about the
    /// page (not for a path the canonical steps refused).
    pub site: Option<String>,
}

pub fn card_week(
    db: &mut impl GenericClient,
    org: &Org,
    card: &CardId,
    now: Timestamp,
) -> Result<CardWeek, ApiError> {
    let window = ConsoleWindow::Last7Days;
    let (org_id, card_id) = (org.id.as_str(), card.as_str());
    let week = window.bounds(now).window();
    let counted = reports::served_by_card_per_day(db, org_id, card_id, week)?;
    let pages = reports::card_top_pages(db, org_id, card_id, week, TOP_PAGES)?;
    let served_on = |day: Timestamp| {
        let on_day = (counted.iter()).filter(|(at, _)| Timestamp::try_from(*at).ok() == Some(day));
        on_day.map(|(_, n)| n).sum::<i64>()
    };
    let days: Vec<(Timestamp, i64)> = (window.buckets(now).into_iter())
        .map(|day| (day, served_on(day)))
        .collect();
    Ok(CardWeek {
        served: days.iter().map(|(_, n)| n).sum(),
        days,
        pages: pages.into_iter().map(card_page).collect(),
    })
}

fn card_page(row: reports::CardPage) -> CardPage {
    let readable = !row.page.ends_with(UNREADABLE_PATH);
    CardPage {
        site: row.site.filter(|_| readable),
        page: row.page,
        served: row.served,
    }
}
