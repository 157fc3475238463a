//! Times as a person reads them: a moment in their time zone, and a time zone by its name.

use jiff::tz::TimeZone;

/// A moment as a person reads it in `zone`, `27 Nov 2026, 20:41 UTC` (`21:41 CET` in
/// Europe/Paris): every time a page shows, through `time.html` ([`Layout::when`]), which keeps
/// its exact value in `<time datetime>`. A text that is not a moment is shown as it is.
pub fn when(at: &str, zone: &TimeZone) -> String {
    match at.parse::<jiff::Timestamp>() {
        Ok(moment) => moment
            .to_zoned(zone.clone())
            .strftime("%-d %b %Y, %H:%M %Z")
            .to_string(),
        Err(_) => at.to_string(),
    }
}

/// The time zone of an IANA name (`Europe/Paris`, `UTC`), from the system's time zone database;
/// `None` for a name it does not know.
pub fn time_zone(name: &str) -> Option<TimeZone> {
    let plain = (name.bytes()).all(|b| b.is_ascii_alphanumeric() || b"/_-+".contains(&b));
    if !plain || name.is_empty() || name.len() > 64 {
        return None;
    }
    if name == "UTC" {
        return Some(TimeZone::UTC);
    }
    jiff::tz::db().get(name).ok()
}
