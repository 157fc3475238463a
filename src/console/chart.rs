//! What the console shows of the numbers: charts of requests and served over a window's
//! buckets, drawn by the server as SVG (no script), one point per bucket, with the same numbers
//! in a table beside it; the rows of a group; the home page's glance and a card's week.

use crate::ops::reports::{By, Counts};
use jiff::Timestamp;

/// The drawing's own units (`viewBox`); the page scales it to its width.
const WIDTH: f64 = 400.0;
const HEIGHT: f64 = 240.0;
/// Room for the axis labels: left, right, top, bottom.
const LEFT: f64 = 40.0;
const RIGHT: f64 = 12.0;
const TOP: f64 = 12.0;
const BOTTOM: f64 = 44.0;

/// One bucket: its label, its counts and where its points are drawn.
#[derive(Debug, Clone)]
pub struct Bucket {
    pub label: String,
    pub requests: i64,
    pub served: i64,
    /// Fill rate, in percent with one decimal.
    pub fill: String,
    pub x: String,
    pub y_requests: String,
    pub y_served: String,
}

/// A chart of requests and served, and its table.
#[derive(Debug, Clone)]
pub struct Chart {
    /// The prefix of its elements' ids (several charts may share a page).
    pub id: &'static str,
    pub title: String,
    /// What a screen reader says of it: the window, the totals and the busiest bucket.
    pub desc: String,
    pub buckets: Vec<Bucket>,
    pub requests_line: String,
    pub served_line: String,
    /// The top of the vertical axis.
    pub y_max: i64,
    pub bucket_word: &'static str,
    pub view_box: String,
    pub left: f64,
    pub right: f64,
    pub top: f64,
    pub bottom: f64,
}

/// A bucket's label: `2026-11-27 13:00` by hour, `2026-11-27` by day, UTC.
pub fn bucket_label(start: Timestamp, by: By) -> String {
    let format = match by {
        By::Hour => "%Y-%m-%d %H:00",
        _ => "%Y-%m-%d",
    };
    start.strftime(format).to_string()
}

/// Served over requests in percent, one decimal (the report's fill rate, rounded to 3
/// decimals, times 100).
pub fn percent(counts: &Counts) -> String {
    format!("{:.1} %", counts.fill_rate() * 100.0)
}

impl Chart {
    pub fn new(id: &'static str, title: String, series: &[(Timestamp, Counts)], by: By) -> Chart {
        let y_max = series
            .iter()
            .map(|(_, c)| c.requests)
            .max()
            .unwrap_or(0)
            .max(1);
        let slots = series.len().max(2) - 1;
        let x_of = |i: usize| LEFT + (WIDTH - LEFT - RIGHT) * i as f64 / slots as f64;
        let y_of = |n: i64| HEIGHT - BOTTOM - (HEIGHT - TOP - BOTTOM) * n as f64 / y_max as f64;
        let buckets: Vec<Bucket> = (series.iter().enumerate())
            .map(|(i, (start, counts))| Bucket {
                label: bucket_label(*start, by),
                requests: counts.requests,
                served: counts.served,
                fill: percent(counts),
                x: format!("{:.1}", x_of(i)),
                y_requests: format!("{:.1}", y_of(counts.requests)),
                y_served: format!("{:.1}", y_of(counts.served)),
            })
            .collect();
        let line = |y: fn(&Bucket) -> &String| {
            (buckets.iter())
                .map(|b| format!("{},{}", b.x, y(b)))
                .collect::<Vec<_>>()
                .join(" ")
        };
        let bucket_word = if by == By::Hour { "hour" } else { "day" };
        let desc = describe(&buckets, bucket_word);
        Chart {
            id,
            title,
            desc,
            requests_line: line(|b| &b.y_requests),
            served_line: line(|b| &b.y_served),
            buckets,
            y_max,
            bucket_word,
            view_box: format!("0 0 {WIDTH} {HEIGHT}"),
            left: LEFT,
            right: WIDTH - RIGHT,
            top: TOP,
            bottom: HEIGHT - BOTTOM,
        }
    }

    /// The first and last buckets' labels, for the horizontal axis.
    pub fn first_label(&self) -> &str {
        self.buckets.first().map_or("", |b| &b.label)
    }

    pub fn last_label(&self) -> &str {
        self.buckets.last().map_or("", |b| &b.label)
    }

    /// Where the vertical axis' labels are written.
    pub fn label_x(&self) -> f64 {
        self.left - 6.0
    }

    pub fn label_y(&self) -> f64 {
        self.bottom + 16.0
    }

    pub fn title_y(&self) -> f64 {
        self.bottom + 32.0
    }

    pub fn middle_x(&self) -> f64 {
        (self.left + self.right) / 2.0
    }
}

fn describe(buckets: &[Bucket], word: &str) -> String {
    let requests: i64 = buckets.iter().map(|b| b.requests).sum();
    let served: i64 = buckets.iter().map(|b| b.served).sum();
    let busiest = buckets.iter().max_by_key(|b| b.requests);
    let mut desc = format!(
        "{} {word}s from {} to {} (UTC): {requests} requests, {served} served.",
        buckets.len(),
        buckets.first().map_or("", |b| &b.label),
        buckets.last().map_or("", |b| &b.label),
    );
    if let Some(busiest) = busiest.filter(|b| b.requests > 0) {
        let most = format!(
            " The most requests in one {word}: {} on {}.",
            busiest.requests, busiest.label
        );
        desc.push_str(&most);
    }
    desc
}

/// One group's row: its name beside its id, the console page of its object.
#[derive(Debug, Clone)]
pub struct Row {
    pub name: String,
    pub id: Option<String>,
    pub link: Option<String>,
    pub requests: i64,
    pub served: i64,
    pub fill: String,
}

/// The home page's last 24 hours: the totals, a small chart, the top agents, the fragments
/// that answered without a card.
pub struct Glance {
    pub requests: i64,
    pub served: i64,
    pub fill: String,
    pub chart: Chart,
    pub top_agents: Vec<Row>,
    pub unfilled: Vec<Row>,
}

/// What a card served over the last 7 days, a day a row (UTC), and the pages that got it most.
pub struct Week {
    pub served: i64,
    pub days: Vec<(String, i64)>,
    pub pages: Vec<WeekPage>,
}

/// A page that got a card: its name, the requests the card served there, and "Why this card?"
/// asked about it, when it is on one of the organisation's sites.
pub struct WeekPage {
    pub page: String,
    pub served: i64,
    pub why: Option<String>,
}
