//! The live traffic a deletion or a revocation touches, for its confirmation page: the requests
//! of the last 24 hours (the console's window of that name) that the object served or resolved,
//! read from the report's counters.

use super::ConsoleWindow;
use crate::db::orgs::Org;
use crate::db::reports::{self, Dimension, GroupKey};
use crate::error::ApiError;
use jiff::Timestamp;
use postgres::GenericClient;

/// An object whose requests the report counts, by its id (a site by its domain).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Touched<'a> {
    /// The requests of pages of the site.
    Site(&'a str),
    /// The requests resolved to the fragment (else naming it).
    Fragment(&'a str),
    /// The requests the card was served on.
    Card(&'a str),
    /// The requests made with the delivery key.
    Key(&'a str),
}

impl<'a> Touched<'a> {
    /// The report's grouping that counts the object, and its group's name.
    fn group(self) -> (Dimension, &'a str) {
        match self {
            Touched::Site(domain) => (Dimension::Site, domain),
            Touched::Fragment(id) => (Dimension::Fragment, id),
            Touched::Card(id) => (Dimension::Card, id),
            Touched::Key(id) => (Dimension::Key, id),
        }
    }
}

/// The requests of `org` in the last 24 hours at `now` that `touched` served or resolved.
pub fn last_day(
    db: &mut impl GenericClient,
    org: &Org,
    touched: Touched,
    now: Timestamp,
) -> Result<i64, ApiError> {
    let (dimension, id) = touched.group();
    let window = ConsoleWindow::Last24Hours.bounds(now).window();
    let counts = reports::request_counts(db, org.id.as_str(), window, Some(dimension))?;
    Ok(counts
        .iter()
        .filter(|count| matches!(&count.key, GroupKey::Item { id: Some(of), .. } if of == id))
        .map(|count| count.requests)
        .sum())
}
