//! Alerts: what an organisation's owners watch (decisions: fill rate under X % over the last
//! hour with at least N requests; no request for H hours after the first one; refused over
//! Y % of the last hour's requests), each on or off with its thresholds, and the rule that says
//! whether one holds for what the report counted.

use super::closed_set::closed_set;
use super::Invalid;
use std::ops::RangeInclusive;
use std::time::{Duration, SystemTime};

closed_set! {
    /// What an alert watches, in the order the Alerts page shows them.
    pub enum AlertKind {
        /// The fill rate under a percent over the last hour, with at least some requests.
        FillRate = "fill_rate",
        /// No request for some hours, once a first one came.
        Silence = "silence",
        /// Refused requests over a percent of the last hour's.
        Refused = "refused",
    }
}

impl AlertKind {
    /// Its name in a mail's subject.
    pub const fn words(self) -> &'static str {
        match self {
            AlertKind::FillRate => "fill rate",
            AlertKind::Silence => "silence",
            AlertKind::Refused => "refused requests",
        }
    }

    /// What the console's banner says while an alert of this kind holds.
    pub const fn holding_words(self) -> &'static str {
        match self {
            AlertKind::FillRate => {
                "the fill rate is under the alert's threshold over the last hour."
            }
            AlertKind::Silence => "no request has come for longer than the alert allows.",
            AlertKind::Refused => "refused requests are over the alert's share of the last hour's.",
        }
    }
}

/// A percent threshold: 1 to 100.
pub const PERCENTS: RangeInclusive<u32> = 1..=100;
/// The silence's hours: 1 to a week.
pub const HOURS: RangeInclusive<u32> = 1..=168;
/// The fill rate's least requests in the hour.
pub const MIN_REQUESTS: RangeInclusive<u32> = 1..=1_000_000;

/// One alert as the owners set it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Alert {
    pub kind: AlertKind,
    pub enabled: bool,
    /// The fill rate's or the refused share's percent ([`PERCENTS`]), the silence's hours
    /// ([`HOURS`]).
    pub threshold: u32,
    /// The fill rate's least requests in the hour ([`MIN_REQUESTS`]); 0 for the others.
    pub min_requests: u32,
}

/// What the evaluation counted of an organisation at `now`: the last hour's requests (the
/// minutes starting in `[now - 1 h, now)`), and when the last request before `now` came at the
/// latest (the end of its bucket), if one ever did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Measured {
    pub now: SystemTime,
    pub requests: i64,
    pub served: i64,
    pub refused: i64,
    pub last_request: Option<SystemTime>,
}

/// The window the fill rate and the refused share are counted over.
pub const HOUR: Duration = Duration::from_secs(3600);

impl Alert {
    /// The alert of `kind` before an owner saves one: off, with usual thresholds.
    pub const fn unset(kind: AlertKind) -> Alert {
        let (threshold, min_requests) = match kind {
            AlertKind::FillRate => (50, 100),
            AlertKind::Silence => (6, 0),
            AlertKind::Refused => (10, 0),
        };
        Alert {
            kind,
            enabled: false,
            threshold,
            min_requests,
        }
    }

    /// Whether it is on and holds for `measured`.
    pub fn holds(&self, measured: &Measured) -> bool {
        let (threshold, requests) = (i64::from(self.threshold), measured.requests);
        self.enabled
            && match self.kind {
                AlertKind::FillRate => {
                    requests > 0
                        && requests >= i64::from(self.min_requests)
                        && measured.served * 100 < threshold * requests
                }
                AlertKind::Refused => requests > 0 && measured.refused * 100 > threshold * requests,
                AlertKind::Silence => measured.last_request.is_some_and(|last| {
                    last + Duration::from_secs(3600 * u64::from(self.threshold)) <= measured.now
                }),
            }
    }

    /// The rule in words: "the fill rate under 50 % over the last hour, with at least 100
    /// requests".
    pub fn rule(&self) -> String {
        match self.kind {
            AlertKind::FillRate => format!(
                "the fill rate under {} % over the last hour, with at least {} requests",
                self.threshold, self.min_requests
            ),
            AlertKind::Silence => format!(
                "no request for {} hours, once a first one came",
                self.threshold
            ),
            AlertKind::Refused => format!(
                "refused requests over {} % of the last hour's",
                self.threshold
            ),
        }
    }
}

/// A whole number of `range` sent as text in `field`.
pub fn whole_number(field: &str, text: &str, range: RangeInclusive<u32>) -> Result<u32, Invalid> {
    text.trim()
        .parse::<u32>()
        .ok()
        .filter(|n| range.contains(n))
        .ok_or_else(|| {
            Invalid::new(
                field,
                format!(
                    "{field} must be a whole number from {} to {}",
                    range.start(),
                    range.end()
                ),
            )
        })
}

/// An alert's switch as sent in `field`: `on` or `off`.
pub fn switch(field: &str, text: &str) -> Result<bool, Invalid> {
    match text {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err(Invalid::new(
            field,
            format!("{field} must be \"on\" or \"off\""),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn measured(requests: i64, served: i64, refused: i64) -> Measured {
        Measured {
            now: SystemTime::UNIX_EPOCH + Duration::from_secs(100 * 3600),
            requests,
            served,
            refused,
            last_request: None,
        }
    }

    fn on(kind: AlertKind, threshold: u32, min_requests: u32) -> Alert {
        Alert {
            kind,
            enabled: true,
            threshold,
            min_requests,
        }
    }

    #[test]
    fn the_fill_rate_holds_under_its_percent_with_enough_requests_only() {
        let alert = on(AlertKind::FillRate, 50, 10);
        assert!(alert.holds(&measured(10, 4, 0)));
        assert!(!alert.holds(&measured(10, 5, 0)), "50 % is not under 50 %");
        assert!(!alert.holds(&measured(9, 0, 0)), "fewer than 10 requests");
        assert!(!alert.holds(&measured(0, 0, 0)));
        let off = Alert {
            enabled: false,
            ..alert
        };
        assert!(!off.holds(&measured(10, 0, 0)));
    }

    #[test]
    fn refused_holds_over_its_share_and_silence_after_its_hours_once_a_request_came() {
        let refused = on(AlertKind::Refused, 10, 0);
        assert!(refused.holds(&measured(10, 0, 2)));
        assert!(!refused.holds(&measured(10, 0, 1)), "10 % is not over 10 %");
        assert!(!refused.holds(&measured(0, 0, 0)));
        let silence = on(AlertKind::Silence, 6, 0);
        let mut quiet = measured(0, 0, 0);
        assert!(!silence.holds(&quiet), "no request ever: nothing to miss");
        quiet.last_request = Some(quiet.now - Duration::from_secs(6 * 3600));
        assert!(silence.holds(&quiet));
        quiet.last_request = Some(quiet.now - Duration::from_secs(6 * 3600 - 60));
        assert!(!silence.holds(&quiet));
    }

    #[test]
    fn thresholds_are_whole_numbers_in_their_range() {
        assert_eq!(whole_number("x", " 7 ", PERCENTS), Ok(7));
        for bad in ["0", "101", "5.5", "", "-1", "ten"] {
            let refused = whole_number("x", bad, PERCENTS).unwrap_err();
            assert_eq!(refused.message, "x must be a whole number from 1 to 100");
        }
        assert_eq!(switch("s", "on"), Ok(true));
        assert!(switch("s", "yes").is_err());
    }
}
