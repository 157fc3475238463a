//! A report's window: the CLI's `--since`/`--until` (an RFC 3339 time or a duration back from
//! now) and the console's windows (the last 24 hours by hour, 7 or 30 days by day, two dates).
//! A window `[since, until)` counts each bucket whose start lies in it.

use super::By;
use crate::db::reports::Window;
use crate::domain::Cadence;
use crate::error::ApiError;
use jiff::civil::Date;
use jiff::{SignedDuration, Timestamp, ToSpan};

/// `--since` or `--until` as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeArg {
    At(Timestamp),
    /// Back from now.
    Ago(SignedDuration),
}

/// An RFC 3339 time (`2026-11-24T13:00:00Z`) or a duration back from now (`30m`, `24h`, `7d`).
pub fn parse_time(text: &str) -> Result<TimeArg, String> {
    if let Some(ago) = parse_ago(text) {
        return Ok(TimeArg::Ago(ago));
    }
    text.parse().map(TimeArg::At).map_err(|_| {
        "expected an RFC 3339 time such as 2026-11-24T13:00:00Z, or a duration back from now \
         such as 30m, 24h or 7d"
            .to_string()
    })
}

/// A count of minutes, hours or days: `30m`, `24h`, `7d`.
fn parse_ago(text: &str) -> Option<SignedDuration> {
    let (count, unit) = text.split_at_checked(text.len().checked_sub(1)?)?;
    let unit_seconds: i64 = match unit {
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => return None,
    };
    if count.is_empty() || !count.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let seconds = count.parse::<i64>().ok()?.checked_mul(unit_seconds)?;
    Some(SignedDuration::from_secs(seconds))
}

impl TimeArg {
    fn resolve(self, now: Timestamp, field: &str) -> Result<Timestamp, ApiError> {
        match self {
            TimeArg::At(at) => Ok(at),
            TimeArg::Ago(ago) => now
                .checked_sub(ago)
                .map_err(|_| ApiError::validation(field, "too far back")),
        }
    }
}

/// The window as asked: `None` where unbounded (all time before, or up to `now`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    pub since: Option<Timestamp>,
    pub until: Option<Timestamp>,
    pub now: Timestamp,
}

impl Bounds {
    /// The CLI's window: `--since` and `--until` at `now` (whole seconds, so that the printed
    /// `until` is the bound used); refused on `until` when it is before `since`.
    pub fn of_args(
        since: Option<TimeArg>,
        until: Option<TimeArg>,
        now: Timestamp,
    ) -> Result<Bounds, ApiError> {
        let now = Timestamp::from_second(now.as_second()).unwrap_or(now);
        let since = since.map(|since| since.resolve(now, "since")).transpose()?;
        let until = until.map(|until| until.resolve(now, "until")).transpose()?;
        let bounds = Bounds { since, until, now };
        if bounds.until() < bounds.since() {
            return Err(ApiError::validation(
                "until",
                format!(
                    "until {} is before since {}",
                    bounds.until(),
                    bounds.since()
                ),
            ));
        }
        Ok(bounds)
    }

    pub fn since(self) -> Timestamp {
        self.since.unwrap_or(Timestamp::UNIX_EPOCH)
    }

    pub fn until(self) -> Timestamp {
        self.until.unwrap_or(self.now)
    }

    pub(super) fn window(self) -> Window {
        Window {
            since: self.since().into(),
            until: self.until().into(),
        }
    }

    /// The whole hours that start in the window, the span the hourly page rows cover: from
    /// the first hour starting at or after `since` to the end of the last one starting before
    /// `until`. Up to now (no `until`), the hour under way counts up to now, as its rows do.
    pub fn whole_hours(self) -> Bounds {
        Bounds {
            since: self.since.map(hour_at_or_after),
            until: self.until.map(hour_at_or_after),
            now: self.now,
        }
    }

    /// The window of the same length that ends where this one starts: what the console
    /// compares each total with.
    pub fn preceding(self) -> Bounds {
        let (since, until) = (self.since(), self.until());
        Bounds {
            since: Some(
                since
                    .saturating_sub(until.duration_since(since))
                    .unwrap_or(since),
            ),
            until: Some(since),
            now: self.now,
        }
    }

    /// The last whole period of `cadence` at `now`, in UTC: the Monday-to-Sunday week before
    /// the week under way, or the calendar month before this one.
    pub fn past(cadence: Cadence, now: Timestamp) -> Bounds {
        let today = now.to_zoned(jiff::tz::TimeZone::UTC).date();
        let end = match cadence {
            Cadence::Weekly => {
                let into_week = today.weekday().to_monday_zero_offset();
                today.saturating_sub(i64::from(into_week).days())
            }
            Cadence::Monthly => today.first_of_month(),
        };
        Bounds {
            since: Some(midnight(period_before(cadence, end))),
            until: Some(midnight(end)),
            now,
        }
    }

    /// The period of `cadence` before this one (which starts at midnight UTC): what a
    /// scheduled report compares its totals with (a month with the month before, whatever
    /// their lengths).
    pub fn period_before(self, cadence: Cadence) -> Bounds {
        let start = self.since().to_zoned(jiff::tz::TimeZone::UTC).date();
        Bounds {
            since: Some(midnight(period_before(cadence, start))),
            until: Some(self.since()),
            now: self.now,
        }
    }

    /// The window in words: `all time`, `before T`, `since T`, `from T to T (excluded)`.
    pub fn words(self) -> String {
        match (self.since, self.until) {
            (None, None) => "all time".into(),
            (None, Some(until)) => format!("before {until}"),
            (Some(since), None) => format!("since {since}"),
            (Some(since), Some(until)) => format!("from {since} to {until} (excluded)"),
        }
    }
}

/// The windows the console offers, in UTC: each ends with the hour or day under way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConsoleWindow {
    /// 24 hours, by hour.
    Last24Hours,
    /// 7 days, by day.
    Last7Days,
    /// 30 days, by day.
    Last30Days,
    /// From the first day to the last, both included, by day.
    Dates { first: Date, last: Date },
}

impl ConsoleWindow {
    /// Two dates, refused when the first is after the last (`from`) or `days_kept` is less
    /// than the days they span (`to`).
    pub fn dates(first: Date, last: Date, days_kept: i64) -> Result<ConsoleWindow, ApiError> {
        if first > last {
            return Err(ApiError::validation(
                "from",
                "the first day is after the last",
            ));
        }
        let days = i64::from((last - first).get_days()) + 1;
        if days > days_kept {
            let message = format!("{days} days: the report keeps {days_kept}");
            return Err(ApiError::validation("to", message));
        }
        Ok(ConsoleWindow::Dates { first, last })
    }

    /// The buckets of its chart and table.
    pub fn by(self) -> By {
        match self {
            ConsoleWindow::Last24Hours => By::Hour,
            _ => By::Day,
        }
    }

    /// The window at `now`.
    pub fn bounds(self, now: Timestamp) -> Bounds {
        let (since, until) = match self {
            ConsoleWindow::Last24Hours => {
                let until = hour_at_or_after(now + SignedDuration::from_nanos(1));
                (until - SignedDuration::from_hours(24), until)
            }
            ConsoleWindow::Last7Days => days_back(now, 7),
            ConsoleWindow::Last30Days => days_back(now, 30),
            ConsoleWindow::Dates { first, last } => {
                (midnight(first), midnight(last.saturating_add(1.day())))
            }
        };
        Bounds {
            since: Some(since),
            until: Some(until),
            now,
        }
    }

    /// The start of each bucket of the window at `now`, in order.
    pub fn buckets(self, now: Timestamp) -> Vec<Timestamp> {
        let bounds = self.bounds(now);
        let step = match self.by() {
            By::Hour => SignedDuration::from_hours(1),
            _ => SignedDuration::from_hours(24),
        };
        let mut starts = Vec::new();
        let mut at = bounds.since();
        while at < bounds.until() {
            starts.push(at);
            at += step;
        }
        starts
    }
}

/// The first start of an hour at or after `at`.
fn hour_at_or_after(at: Timestamp) -> Timestamp {
    let second = at.as_second();
    let hour = second.div_euclid(3600) * 3600;
    let up = if hour == second && at.subsec_nanosecond() == 0 {
        hour
    } else {
        hour + 3600
    };
    Timestamp::from_second(up).unwrap_or(at)
}

/// `days` UTC days ending with today.
fn days_back(now: Timestamp, days: i64) -> (Timestamp, Timestamp) {
    let today = now.to_zoned(jiff::tz::TimeZone::UTC).date();
    let until = midnight(today.saturating_add(1.day()));
    (until - SignedDuration::from_hours(24 * days), until)
}

/// The first day of the period of `cadence` that ends the day before `day`.
fn period_before(cadence: Cadence, day: Date) -> Date {
    match cadence {
        Cadence::Weekly => day.saturating_sub(7.days()),
        Cadence::Monthly => day.saturating_sub(1.month()),
    }
}

fn midnight(day: Date) -> Timestamp {
    day.to_zoned(jiff::tz::TimeZone::UTC)
        .map_or(Timestamp::UNIX_EPOCH, |zoned| zoned.timestamp())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_back_from_now() {
        let cases: &[(&str, Option<i64>)] = &[
            ("30m", Some(1800)),
            ("24h", Some(86_400)),
            ("7d", Some(604_800)),
            ("0h", Some(0)),
            ("h", None),
            ("5", None),
            ("-3h", None),
            ("+3h", None),
            ("3w", None),
            ("1.5h", None),
            ("99999999999999999999d", None),
            ("", None),
            ("é", None),
        ];
        for &(text, seconds) in cases {
            let parsed = parse_ago(text).map(|d| d.as_secs());
            assert_eq!(parsed, seconds, "{text:?}");
        }
    }

    #[test]
    fn times_are_rfc_3339_with_an_offset() {
        let cases: &[(&str, Option<&str>)] = &[
            ("2026-11-24T13:00:00Z", Some("2026-11-24T13:00:00Z")),
            ("2026-11-24T14:30:00+01:00", Some("2026-11-24T13:30:00Z")),
            ("2026-11-24T13:00:00.5Z", Some("2026-11-24T13:00:00.5Z")),
            ("2026-11-24T13:00:00", None),
            ("2026-11-24", None),
            ("yesterday-ish", None),
        ];
        for &(text, expected) in cases {
            let parsed = match parse_time(text) {
                Ok(TimeArg::At(at)) => Some(at.to_string()),
                _ => None,
            };
            assert_eq!(parsed.as_deref(), expected, "{text:?}");
        }
    }

    #[test]
    fn console_windows_end_with_the_hour_or_day_under_way() {
        let now: Timestamp = "2026-11-24T13:20:05Z".parse().unwrap();
        let words = |window: ConsoleWindow| {
            let bounds = window.bounds(now);
            (bounds.since().to_string(), bounds.until().to_string())
        };
        let expect = |a: &str, b: &str| (a.to_string(), b.to_string());
        assert_eq!(
            words(ConsoleWindow::Last24Hours),
            expect("2026-11-23T14:00:00Z", "2026-11-24T14:00:00Z")
        );
        assert_eq!(
            words(ConsoleWindow::Last7Days),
            expect("2026-11-18T00:00:00Z", "2026-11-25T00:00:00Z")
        );
        assert_eq!(ConsoleWindow::Last24Hours.buckets(now).len(), 24);
        assert_eq!(ConsoleWindow::Last30Days.buckets(now).len(), 30);
        let (first, last) = (
            jiff::civil::date(2026, 11, 2),
            jiff::civil::date(2026, 11, 3),
        );
        let dates = ConsoleWindow::dates(first, last, 30).unwrap();
        assert_eq!(
            words(dates),
            expect("2026-11-02T00:00:00Z", "2026-11-04T00:00:00Z")
        );
        assert_eq!(dates.buckets(now).len(), 2);
        assert!(ConsoleWindow::dates(last, first, 30).is_err());
        assert!(ConsoleWindow::dates(first, last, 1).is_err());
    }

    #[test]
    fn a_cadence_reports_its_last_whole_period_and_compares_it_with_the_one_before() {
        let words = |bounds: Bounds| format!("{} {}", bounds.since(), bounds.until());
        let past = |cadence, now: &str| Bounds::past(cadence, now.parse().unwrap());
        // A Monday, just after midnight: the week that just ended.
        let week = past(Cadence::Weekly, "2026-11-30T00:05:00Z");
        assert_eq!(words(week), "2026-11-23T00:00:00Z 2026-11-30T00:00:00Z");
        assert_eq!(
            words(week.period_before(Cadence::Weekly)),
            "2026-11-16T00:00:00Z 2026-11-23T00:00:00Z"
        );
        // A Sunday night: still the week before.
        let sunday = past(Cadence::Weekly, "2026-11-29T23:59:59Z");
        assert_eq!(words(sunday), "2026-11-16T00:00:00Z 2026-11-23T00:00:00Z");
        let month = past(Cadence::Monthly, "2026-03-01T00:05:00Z");
        assert_eq!(words(month), "2026-02-01T00:00:00Z 2026-03-01T00:00:00Z");
        assert_eq!(
            words(month.period_before(Cadence::Monthly)),
            "2026-01-01T00:00:00Z 2026-02-01T00:00:00Z"
        );
        let january = past(Cadence::Monthly, "2026-01-17T12:00:00Z");
        assert_eq!(words(january), "2025-12-01T00:00:00Z 2026-01-01T00:00:00Z");
    }

    #[test]
    fn a_view_by_page_covers_whole_hours() {
        let at = |text: &str| -> Timestamp { text.parse().unwrap() };
        let bounds = Bounds {
            since: Some(at("2026-11-24T13:00:00Z")),
            until: None,
            now: at("2026-11-24T15:20:00Z"),
        };
        let hours = bounds.whole_hours();
        assert_eq!(hours.since(), at("2026-11-24T13:00:00Z"));
        assert_eq!(hours.until, None, "up to now");
        let bounds = Bounds {
            since: Some(at("2026-11-24T13:00:01Z")),
            until: Some(at("2026-11-24T15:00:00Z")),
            ..bounds
        };
        let hours = bounds.whole_hours();
        assert_eq!(hours.since(), at("2026-11-24T14:00:00Z"));
        assert_eq!(hours.until(), at("2026-11-24T15:00:00Z"));
    }
}
