//! Scheduled reports by mail: a person's subscriptions per organisation (a preference of their
//! own, not audited, as their time zone), ended by them or by the one-click link of a mail;
//! the subscribers whose report of a period is due, and the claim through which a fleet mails
//! each once.

use super::reports::Bounds;
use crate::db::subscriptions;
use crate::domain::Cadence;
use crate::error::ApiError;
use crate::ids::{OrgId, PersonId};
use postgres::GenericClient;

pub use crate::db::subscriptions::{Subscriber, Subscription};

/// A person's subscriptions, by organisation and cadence.
pub fn of_person(
    db: &mut impl GenericClient,
    person: &PersonId,
) -> Result<Vec<Subscription>, ApiError> {
    Ok(subscriptions::of_person(db, person)?)
}

/// Sets the cadences `person` gets `org`'s report at (the caller checked that the organisation
/// is open to them).
pub fn set(
    db: &mut impl GenericClient,
    person: &PersonId,
    org: &OrgId,
    cadences: &[Cadence],
) -> Result<(), ApiError> {
    Ok(subscriptions::set(db, person, org, cadences)?)
}

/// Ends one subscription (the one-click link of its mail); whether it was on.
pub fn unsubscribe(
    db: &mut impl GenericClient,
    person: &PersonId,
    org: &OrgId,
    cadence: Cadence,
) -> Result<bool, ApiError> {
    Ok(subscriptions::remove(db, person, org, cadence)?)
}

/// The subscribers to `cadence` whose report of `period` (its last whole period) nobody
/// claimed yet.
pub fn due(
    db: &mut impl GenericClient,
    cadence: Cadence,
    period: Bounds,
) -> Result<Vec<Subscriber>, ApiError> {
    let (start, end) = (period.since().into(), period.until().into());
    Ok(subscriptions::unclaimed(db, cadence, start, end)?)
}

/// Claims `subscriber`'s report of `period`: `true` for the one instance of the fleet that
/// mails it.
pub fn claim(
    db: &mut impl GenericClient,
    subscriber: &Subscriber,
    cadence: Cadence,
    period: Bounds,
) -> Result<bool, ApiError> {
    let (person, org) = (&subscriber.person_id, &subscriber.org.id);
    Ok(subscriptions::claim(
        db,
        person,
        org,
        cadence,
        period.since().into(),
    )?)
}
