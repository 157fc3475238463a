//! Scheduled reports by mail (`sql/022_report_subscriptions.sql`): a person's subscriptions
//! per organisation and cadence, the subscribers whose report of a period nobody claimed yet,
//! and the claim that makes a fleet mail each report once.

use super::orgs::Org;
use crate::domain::Cadence;
use crate::ids::{OrgId, PersonId};
use postgres::GenericClient;
use std::time::SystemTime;

/// One subscription of a person's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subscription {
    pub org_id: OrgId,
    pub cadence: Cadence,
}

/// A person whose report of an organisation is due.
#[derive(Debug, Clone)]
pub struct Subscriber {
    pub person_id: PersonId,
    pub email: String,
    pub org: Org,
}

/// How long the claims of past periods are kept: only the last period of a subscription is
/// ever claimed, and a claim is refused while a later one exists.
const CLAIMS_KEPT: &str = "400 days";

/// Sets the cadences a person subscribes to in an organisation, in one statement: the others
/// end, the new ones begin now, those kept keep their start.
pub fn set(
    db: &mut impl GenericClient,
    person: &PersonId,
    org: &OrgId,
    cadences: &[Cadence],
) -> Result<(), postgres::Error> {
    let names: Vec<&str> = cadences.iter().map(|cadence| cadence.as_str()).collect();
    db.execute(
        "WITH gone AS (DELETE FROM report_subscriptions
                        WHERE person_id = $1 AND org_id = $2 AND cadence <> ALL ($3::text[]))
         INSERT INTO report_subscriptions (person_id, org_id, cadence)
         SELECT $1, $2, cadence FROM unnest($3::text[]) AS cadence
         ON CONFLICT DO NOTHING",
        &[person, org, &names],
    )?;
    Ok(())
}

/// A person's subscriptions, by organisation and cadence.
pub fn of_person(
    db: &mut impl GenericClient,
    person: &PersonId,
) -> Result<Vec<Subscription>, postgres::Error> {
    let rows = db.query(
        "SELECT org_id, cadence FROM report_subscriptions WHERE person_id = $1
          ORDER BY org_id, cadence",
        &[person],
    )?;
    Ok(rows
        .iter()
        .map(|row| Subscription {
            org_id: row.get("org_id"),
            cadence: row.get("cadence"),
        })
        .collect())
}

/// Ends one subscription; whether it was on.
pub fn remove(
    db: &mut impl GenericClient,
    person: &PersonId,
    org: &OrgId,
    cadence: Cadence,
) -> Result<bool, postgres::Error> {
    let removed = db.execute(
        "DELETE FROM report_subscriptions WHERE person_id = $1 AND org_id = $2 AND cadence = $3",
        &[person, org, &cadence],
    )?;
    Ok(removed == 1)
}

/// The subscribers to `cadence` whose report of the period `[start, end)` nobody claimed
/// yet: subscribed before its end, the organisation still open to them (a member, or the
/// operator's support staff).
pub fn unclaimed(
    db: &mut impl GenericClient,
    cadence: Cadence,
    start: SystemTime,
    end: SystemTime,
) -> Result<Vec<Subscriber>, postgres::Error> {
    let rows = db.query(
        "SELECT s.person_id, p.email, o.id AS org_id, o.name AS org_name
           FROM report_subscriptions s
           JOIN persons p ON p.id = s.person_id
           JOIN orgs o ON o.id = s.org_id
          WHERE s.cadence = $1 AND s.created_at < $3
            AND (p.support OR EXISTS (SELECT 1 FROM memberships m
                                       WHERE m.org_id = s.org_id AND m.person_id = s.person_id))
            AND NOT EXISTS (SELECT 1 FROM report_mailings r
                             WHERE r.person_id = s.person_id AND r.org_id = s.org_id
                               AND r.cadence = s.cadence AND r.period_start >= $2)
          ORDER BY o.id, s.person_id",
        &[&cadence, &start, &end],
    )?;
    Ok(rows
        .iter()
        .map(|row| Subscriber {
            person_id: row.get("person_id"),
            email: row.get("email"),
            org: Org {
                id: row.get("org_id"),
                name: row.get("org_name"),
            },
        })
        .collect())
}

/// Claims the report of the period starting at `start`: `true` for the one caller, across
/// the fleet, whose claim comes first; `false` as well when a later period is claimed already
/// (an instance whose clock lags mails no older report). Claims long past are forgotten.
pub fn claim(
    db: &mut impl GenericClient,
    person: &PersonId,
    org: &OrgId,
    cadence: Cadence,
    start: SystemTime,
) -> Result<bool, postgres::Error> {
    let sql = format!(
        "WITH forgotten AS (DELETE FROM report_mailings
                             WHERE person_id = $1 AND org_id = $2 AND cadence = $3
                               AND period_start < $4::timestamptz - interval '{CLAIMS_KEPT}')
         INSERT INTO report_mailings (person_id, org_id, cadence, period_start)
         SELECT $1, $2, $3, $4
          WHERE NOT EXISTS (SELECT 1 FROM report_mailings
                             WHERE person_id = $1 AND org_id = $2 AND cadence = $3
                               AND period_start >= $4)
         ON CONFLICT DO NOTHING"
    );
    let claimed = db.execute(&sql, &[person, org, &cadence, &start])?;
    Ok(claimed == 1)
}
