//! The alerts' SQL (`sql/021_alerts.sql`): an organisation's settings, who gets their mail, and
//! the scheduled evaluation's reads and claims. The banner's read is a column of
//! `people::orgs_open_to`, the query every console page runs already.

use crate::domain::{Alert, AlertKind, Measured, Outcome};
use crate::ids::{OrgId, PersonId};
use postgres::{GenericClient, Row};
use std::time::SystemTime;

/// An alert as stored: its setting and its state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlertRow {
    pub alert: Alert,
    pub holding: bool,
    /// When it last started or ended.
    pub changed_at: Option<SystemTime>,
}

fn alert_of(row: &Row) -> Result<Alert, postgres::Error> {
    let number = |column: &str| -> Result<u32, postgres::Error> {
        Ok(u32::try_from(row.try_get::<_, i32>(column)?).unwrap_or(0))
    };
    Ok(Alert {
        kind: row.try_get("kind")?,
        enabled: row.try_get("enabled")?,
        threshold: number("threshold")?,
        min_requests: number("min_requests")?,
    })
}

/// An alert's setting and state, from a row holding its columns.
fn alert_row(row: &Row) -> Result<AlertRow, postgres::Error> {
    Ok(AlertRow {
        alert: alert_of(row)?,
        holding: row.try_get("holding")?,
        changed_at: row.try_get("changed_at")?,
    })
}

/// The organisation's saved alerts, by kind (a kind never saved has no row).
pub fn alerts(db: &mut impl GenericClient, org: &OrgId) -> Result<Vec<AlertRow>, postgres::Error> {
    let rows = db.query(
        "SELECT kind, enabled, threshold, min_requests, holding, changed_at
           FROM alerts WHERE org_id = $1 ORDER BY kind",
        &[org],
    )?;
    rows.iter().map(alert_row).collect()
}

/// Saves an alert's setting; its state stays (the next evaluation ends an alert turned off).
pub fn save(
    db: &mut impl GenericClient,
    org: &OrgId,
    alert: &Alert,
) -> Result<(), postgres::Error> {
    let (threshold, min_requests) = (alert.threshold as i32, alert.min_requests as i32);
    db.execute(
        "INSERT INTO alerts (org_id, kind, enabled, threshold, min_requests)
         VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (org_id, kind) DO UPDATE
            SET enabled = excluded.enabled, threshold = excluded.threshold,
                min_requests = excluded.min_requests",
        &[org, &alert.kind, &alert.enabled, &threshold, &min_requests],
    )?;
    Ok(())
}

/// Whether the person gets the organisation's alert mails.
pub fn subscribed(
    db: &mut impl GenericClient,
    org: &OrgId,
    person: &PersonId,
) -> Result<bool, postgres::Error> {
    let row = db.query_opt(
        "SELECT 1 FROM alert_subscriptions WHERE org_id = $1 AND person_id = $2",
        &[org, person],
    )?;
    Ok(row.is_some())
}

/// Subscribes a member of the organisation (anyone else: nothing), or unsubscribes them;
/// whether anything changed.
pub fn set_subscribed(
    db: &mut impl GenericClient,
    org: &OrgId,
    person: &PersonId,
    subscribed: bool,
) -> Result<bool, postgres::Error> {
    let query = match subscribed {
        true => {
            "INSERT INTO alert_subscriptions (org_id, person_id)
             SELECT org_id, person_id FROM memberships WHERE org_id = $1 AND person_id = $2
             ON CONFLICT DO NOTHING"
        }
        false => "DELETE FROM alert_subscriptions WHERE org_id = $1 AND person_id = $2",
    };
    Ok(db.execute(query, &[org, person])? > 0)
}

/// Claims the evaluation of the minute that holds `now`: `true` for the one instance whose
/// update moves the last evaluated minute forward (the others wait for its transaction, then
/// find the minute taken).
pub fn claim_minute(db: &mut impl GenericClient, now: SystemTime) -> Result<bool, postgres::Error> {
    let claimed = db.execute(
        "UPDATE alert_rounds SET minute = date_trunc('minute', $1::timestamptz)
          WHERE minute < date_trunc('minute', $1::timestamptz)",
        &[&now],
    )?;
    Ok(claimed > 0)
}

/// An alert to evaluate (on, or holding while turned off) with its organisation and what the
/// report counted of it.
#[derive(Debug, Clone)]
pub struct Watched {
    pub org: OrgId,
    pub org_name: String,
    pub row: AlertRow,
    pub measured: Measured,
}

/// Every alert on or holding, with the last hour's requests of its organisation before `now`
/// (from the minutes, kept at least an hour) and the end of the bucket of its last request.
pub fn watched(
    db: &mut impl GenericClient,
    now: SystemTime,
) -> Result<Vec<Watched>, postgres::Error> {
    let since = now - crate::domain::alert::HOUR;
    let rows = db.query(
        "WITH orgs_watched AS (SELECT DISTINCT org_id FROM alerts WHERE enabled OR holding),
         measured AS (
             SELECT w.org_id, c.requests, c.served, c.refused,
                    greatest((SELECT max(bucket) + interval '1 minute' FROM report_minutes r
                               WHERE r.org_id = w.org_id AND r.bucket < $1),
                             (SELECT max(bucket) + interval '1 hour' FROM report_hours r
                               WHERE r.org_id = w.org_id AND r.bucket < $1)) AS last_request
               FROM orgs_watched w,
               LATERAL (SELECT coalesce(sum(requests), 0)::int8 AS requests,
                               coalesce(sum(requests) FILTER (WHERE outcome = $3), 0)::int8 AS served,
                               coalesce(sum(requests) FILTER (WHERE outcome = $4), 0)::int8 AS refused
                          FROM report_minutes r
                         WHERE r.org_id = w.org_id AND r.bucket >= $2 AND r.bucket < $1) c)
         SELECT a.org_id, o.name, a.kind, a.enabled, a.threshold, a.min_requests, a.holding,
                a.changed_at, m.requests, m.served, m.refused, m.last_request
           FROM alerts a JOIN orgs o ON o.id = a.org_id JOIN measured m ON m.org_id = a.org_id
          WHERE a.enabled OR a.holding
          ORDER BY a.org_id, a.kind",
        &[
            &now,
            &since,
            &Outcome::Served.as_str(),
            &Outcome::Refused.as_str(),
        ],
    )?;
    rows.iter()
        .map(|row| {
            Ok(Watched {
                org: row.try_get("org_id")?,
                org_name: row.try_get("name")?,
                row: alert_row(row)?,
                measured: Measured {
                    now,
                    requests: row.try_get("requests")?,
                    served: row.try_get("served")?,
                    refused: row.try_get("refused")?,
                    last_request: row.try_get("last_request")?,
                },
            })
        })
        .collect()
}

/// Records that the alert started (`holding`) or ended at `now`: `true` for the one update
/// that flips it, `false` when it was so already.
pub fn flip(
    db: &mut impl GenericClient,
    org: &OrgId,
    kind: AlertKind,
    holding: bool,
    now: SystemTime,
) -> Result<bool, postgres::Error> {
    let flipped = db.execute(
        "UPDATE alerts SET holding = $3, changed_at = $4
          WHERE org_id = $1 AND kind = $2 AND holding = NOT $3",
        &[org, &kind, &holding, &now],
    )?;
    Ok(flipped > 0)
}

/// The emails of the organisation's people who get its alert mails.
pub fn subscribers(
    db: &mut impl GenericClient,
    org: &OrgId,
) -> Result<Vec<String>, postgres::Error> {
    let rows = db.query(
        "SELECT p.email FROM alert_subscriptions s JOIN persons p ON p.id = s.person_id
          WHERE s.org_id = $1 ORDER BY p.email",
        &[org],
    )?;
    rows.iter().map(|row| row.try_get(0)).collect()
}
