//! What the console shows of the numbers: charts of requests and served over a window's
//! buckets, drawn by the server as SVG (no script), one point per bucket, with the same numbers
//! in a table beside it; the rows of a group; the home page's glance and a card's week.
//!
//! A chart reads at a phone's width: round values on the vertical axis with their gridlines,
//! as many hours or days on the horizontal one as fit, a key, and each point's numbers in its
//! `<title>` (shown on hover) and beside it while it has the focus (CSS, no script).

use crate::ops::reports::{By, Counts};
use jiff::Timestamp;

/// The drawing's own units (`viewBox`); the page scales it to its width (a phone: ~360 px).
const WIDTH: f64 = 400.0;
const HEIGHT: f64 = 260.0;
/// Room for the axis labels: left, right, top, bottom (the x labels, then the key).
const LEFT: f64 = 44.0;
const RIGHT: f64 = 14.0;
const TOP: f64 = 14.0;
const BOTTOM: f64 = 56.0;
/// The least room, in drawing units, a label of the horizontal axis takes ("28 Nov" at the
/// chart's font size, and a gap).
const X_LABEL_ROOM: f64 = 56.0;
/// The most intervals of the vertical axis.
const Y_INTERVALS: i64 = 5;
/// The strides of the horizontal axis' labels, in buckets, smallest first: hours that divide
/// a day, days by the week.
const HOUR_STRIDES: [usize; 6] = [1, 2, 3, 6, 12, 24];
const DAY_STRIDES: [usize; 6] = [1, 2, 7, 14, 28, 56];

/// One bucket: its label, its counts and where its points are drawn.
#[derive(Debug, Clone)]
pub struct Bucket {
    pub label: String,
    pub requests: i64,
    pub served: i64,
    /// Fill rate, in percent with one decimal ("—" without requests).
    pub fill: String,
    pub x: String,
    pub y_requests: String,
    pub y_served: String,
}

/// A count and its noun, the noun singular for one (`1 request`, `0 requests`, `2 requests`):
/// every count the console writes in a sentence.
pub fn counted(n: impl std::fmt::Display, noun: &str) -> String {
    let n = n.to_string();
    let plural = if n == "1" { "" } else { "s" };
    format!("{n} {noun}{plural}")
}

impl Bucket {
    /// What its point says on hover and focus.
    pub fn value(&self) -> String {
        format!(
            "{}: {}, {} served ({} fill)",
            self.label,
            counted(self.requests, "request"),
            self.served,
            self.fill
        )
    }
}

/// A mark of an axis: where (the drawing's x or y) and its label.
#[derive(Debug, Clone, PartialEq)]
pub struct Tick {
    pub at: String,
    pub label: String,
}

/// A row of the table under the chart: a bucket, or a run of buckets without a request.
#[derive(Debug, Clone)]
pub enum Line {
    Bucket(Bucket),
    Quiet { from: String, to: String },
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
    /// The table's rows: runs of two or more empty buckets folded into one.
    pub lines: Vec<Line>,
    pub requests_line: String,
    pub served_line: String,
    pub y_ticks: Vec<Tick>,
    pub x_ticks: Vec<Tick>,
    pub bucket_word: &'static str,
    pub view_box: String,
    pub left: f64,
    pub right: f64,
    pub top: f64,
    pub bottom: f64,
}

/// A bucket's label, as the console writes times: `27 Nov 2026, 13:00 UTC` by hour,
/// `27 Nov 2026` by day (a UTC day).
pub fn bucket_label(start: Timestamp, by: By) -> String {
    let format = match by {
        By::Hour => "%-d %b %Y, %H:00 UTC",
        _ => "%-d %b %Y",
    };
    start.strftime(format).to_string()
}

/// Served over requests in percent, one decimal (the report's fill rate, rounded to 3
/// decimals, times 100); "—" without requests, where there is no rate.
pub fn percent(counts: &Counts) -> String {
    if counts.requests <= 0 {
        return "—".into();
    }
    format!("{:.1} %", counts.fill_rate() * 100.0)
}

/// The vertical axis for counts up to `most`: a round step (1, 2 or 5 times a power of ten)
/// that divides the axis into at most [`Y_INTERVALS`], and the axis' top, a multiple of it at
/// or above `most` (at least 1).
pub fn y_scale(most: i64) -> (i64, i64) {
    let most = most.max(1);
    let mut power = 1_i64;
    loop {
        for factor in [1, 2, 5] {
            let step = factor * power;
            if step.saturating_mul(Y_INTERVALS) >= most {
                let top = (most + step - 1) / step * step;
                return (step, top);
            }
        }
        power = power.saturating_mul(10);
    }
}

/// How many buckets apart the horizontal axis' labels are: the smallest stride of `strides`
/// that leaves [`X_LABEL_ROOM`] to each label when buckets are `spacing` apart (else the
/// largest).
pub fn x_stride(spacing: f64, strides: &[usize]) -> usize {
    let fits = |stride: &&usize| **stride as f64 * spacing >= X_LABEL_ROOM;
    let last = strides.last().copied().unwrap_or(1);
    strides.iter().find(fits).copied().unwrap_or(last)
}

/// An axis label: by hour, the hour (`13:00`), or the day at midnight (`28 Nov`); by day,
/// the day.
fn x_label(start: Timestamp, by: By) -> String {
    let midnight = start.as_second().rem_euclid(86_400) == 0;
    let format = if by == By::Hour && !midnight {
        "%H:00"
    } else {
        "%-d %b"
    };
    start.strftime(format).to_string()
}

/// Whether a bucket gets a label: by hour, the hours that are a multiple of the stride; by
/// day, every stride-th day from the first.
fn labelled(index: usize, start: Timestamp, by: By, stride: usize) -> bool {
    match by {
        By::Hour => ((start.as_second().rem_euclid(86_400) / 3600) as usize).is_multiple_of(stride),
        _ => index.is_multiple_of(stride),
    }
}

impl Chart {
    pub fn new(id: &'static str, title: String, series: &[(Timestamp, Counts)], by: By) -> Chart {
        let most = series.iter().map(|(_, c)| c.requests).max().unwrap_or(0);
        let (step, y_top) = y_scale(most);
        let slots = series.len().max(2) - 1;
        let spacing = (WIDTH - LEFT - RIGHT) / slots as f64;
        let x_of = |i: usize| LEFT + spacing * i as f64;
        let y_of = |n: i64| HEIGHT - BOTTOM - (HEIGHT - TOP - BOTTOM) * n as f64 / y_top as f64;
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
        let y_ticks = (0..=y_top / step)
            .map(|k| Tick {
                at: format!("{:.1}", y_of(k * step)),
                label: (k * step).to_string(),
            })
            .collect();
        let strides = if by == By::Hour {
            &HOUR_STRIDES[..]
        } else {
            &DAY_STRIDES[..]
        };
        let stride = x_stride(spacing, strides);
        let x_ticks = (series.iter().enumerate())
            .filter(|(i, (start, _))| labelled(*i, *start, by, stride))
            .map(|(i, (start, _))| Tick {
                at: format!("{:.1}", x_of(i)),
                label: x_label(*start, by),
            })
            .collect();
        let bucket_word = if by == By::Hour { "hour" } else { "day" };
        let desc = describe(&buckets, bucket_word);
        Chart {
            id,
            title,
            desc,
            requests_line: line(|b| &b.y_requests),
            served_line: line(|b| &b.y_served),
            lines: fold_quiet(&buckets),
            buckets,
            y_ticks,
            x_ticks,
            bucket_word,
            view_box: format!("0 0 {WIDTH} {HEIGHT}"),
            left: LEFT,
            right: WIDTH - RIGHT,
            top: TOP,
            bottom: HEIGHT - BOTTOM,
        }
    }

    /// Where the vertical axis' labels end.
    pub fn label_x(&self) -> f64 {
        self.left - 6.0
    }

    /// The baseline of the horizontal axis' labels, and of the key under them.
    pub fn label_y(&self) -> f64 {
        self.bottom + 18.0
    }

    pub fn key_y(&self) -> f64 {
        self.bottom + 44.0
    }
}

/// The table's rows: each bucket, but a run of two or more buckets without a request is one
/// row ("no requests from … to …"), so that the busy ones stay in sight.
fn fold_quiet(buckets: &[Bucket]) -> Vec<Line> {
    let mut lines = Vec::new();
    for run in buckets.chunk_by(|a, b| (a.requests == 0) == (b.requests == 0)) {
        match run {
            [first, .., last] if first.requests == 0 => lines.push(Line::Quiet {
                from: first.label.clone(),
                to: last.label.clone(),
            }),
            _ => lines.extend(run.iter().cloned().map(Line::Bucket)),
        }
    }
    lines
}

fn describe(buckets: &[Bucket], word: &str) -> String {
    let requests: i64 = buckets.iter().map(|b| b.requests).sum();
    let served: i64 = buckets.iter().map(|b| b.served).sum();
    let busiest = buckets.iter().max_by_key(|b| b.requests);
    let mut desc = format!(
        "{} (UTC) from {} to {}: {}, {served} served.",
        counted(buckets.len(), word),
        buckets.first().map_or("", |b| &b.label),
        buckets.last().map_or("", |b| &b.label),
        counted(requests, "request"),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_of_one_takes_the_singular() {
        let cases = [
            (0, "0 requests"),
            (1, "1 request"),
            (2, "2 requests"),
            (11, "11 requests"),
        ];
        for (n, said) in cases {
            assert_eq!(counted(n, "request"), said);
        }
        assert_eq!(counted(1_usize, "day"), "1 day");
    }

    #[test]
    fn the_vertical_axis_steps_by_round_values_to_a_top_at_or_above_the_most() {
        let cases = [
            (0, (1, 1)),
            (1, (1, 1)),
            (4, (1, 4)),
            (7, (2, 8)),
            (10, (2, 10)),
            (11, (5, 15)),
            (146, (50, 150)),
            (1000, (200, 1000)),
            (1001, (500, 1500)),
            (123_456, (50_000, 150_000)),
        ];
        for (most, expected) in cases {
            let (step, top) = y_scale(most);
            assert_eq!((step, top), expected, "{most}");
            assert!(top / step <= Y_INTERVALS && top >= most, "{most}");
        }
    }

    #[test]
    fn the_horizontal_axis_labels_as_many_buckets_as_fit() {
        let plot = WIDTH - LEFT - RIGHT;
        // 24 hours: every 6 hours; 7 days: each; 30 days: a week apart; 90: four weeks.
        assert_eq!(x_stride(plot / 24.0, &HOUR_STRIDES), 6);
        assert_eq!(x_stride(plot / 6.0, &DAY_STRIDES), 1);
        assert_eq!(x_stride(plot / 29.0, &DAY_STRIDES), 7);
        assert_eq!(x_stride(plot / 89.0, &DAY_STRIDES), 28);
        assert_eq!(x_stride(plot / 400.0, &DAY_STRIDES), 56);
    }

    fn series(start: &str, by: By, requests: &[i64]) -> Vec<(Timestamp, Counts)> {
        let start: Timestamp = start.parse().unwrap();
        let seconds = if by == By::Hour { 3600 } else { 86_400 };
        (requests.iter().enumerate())
            .map(|(i, &n)| {
                let counts = Counts {
                    requests: n,
                    served: n / 2,
                    ..Counts::zero(true)
                };
                let at = start.checked_add(jiff::SignedDuration::from_secs(seconds * i as i64));
                (at.unwrap(), counts)
            })
            .collect()
    }

    #[test]
    fn hour_ticks_fall_on_round_hours_and_midnight_names_the_day() {
        let points = series("2026-11-27T20:00:00Z", By::Hour, &[3; 24]);
        let chart = Chart::new("t", "t".into(), &points, By::Hour);
        let labels: Vec<&str> = chart.x_ticks.iter().map(|t| t.label.as_str()).collect();
        assert_eq!(labels, ["28 Nov", "06:00", "12:00", "18:00"]);
        let ys: Vec<&str> = chart.y_ticks.iter().map(|t| t.label.as_str()).collect();
        assert_eq!(ys, ["0", "1", "2", "3"]);
        assert_eq!(chart.y_ticks[0].at, format!("{:.1}", HEIGHT - BOTTOM));
        assert_eq!(chart.y_ticks[3].at, format!("{TOP:.1}"));
    }

    #[test]
    fn empty_runs_fold_into_one_row_and_an_empty_bucket_has_no_fill_rate() {
        let points = series("2026-11-20T00:00:00Z", By::Day, &[0, 0, 0, 4, 0, 2, 0]);
        let chart = Chart::new("t", "t".into(), &points, By::Day);
        let rows: Vec<String> = (chart.lines.iter())
            .map(|line| match line {
                Line::Bucket(b) => format!("{} {}", b.label, b.fill),
                Line::Quiet { from, to } => format!("{from}..{to}"),
            })
            .collect();
        assert_eq!(
            rows,
            [
                "20 Nov 2026..22 Nov 2026",
                "23 Nov 2026 50.0 %",
                "24 Nov 2026 —",
                "25 Nov 2026 50.0 %",
                "26 Nov 2026 —",
            ]
        );
        assert_eq!(chart.buckets.len(), 7);
    }
}
