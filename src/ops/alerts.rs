//! Alerts: the owners' settings of an organisation (each kind on or off with its thresholds,
//! audited), who gets their mail (a person's own choice, as their time zone: not audited), and
//! the evaluation each minute (`crate::schedule`'s job): one instance of a fleet claims the
//! minute, flips each alert whose rule (`domain::alert`) says otherwise than its state, and,
//! once that is committed, mails each start and end to the organisation's subscribers.

use super::audit::{self, AuditEntry, Fields, Operation};
use super::Caller;
use crate::config::ConsoleUrl;
use crate::db::alerts::{self as stored, AlertRow, Watched};
use crate::domain::{Alert, AlertKind};
use crate::error::ApiError;
use crate::ids::PersonId;
use crate::mail::{Mail, Mailer};
use jiff::Timestamp;
use postgres::GenericClient;
use std::time::SystemTime;

/// The organisation's alerts, one per kind in [`AlertKind::ALL`]'s order: a kind never saved
/// as [`Alert::unset`], not holding.
pub fn alerts(db: &mut impl GenericClient, caller: &Caller) -> Result<Vec<AlertRow>, ApiError> {
    let saved = stored::alerts(db, &caller.org.id)?;
    Ok(AlertKind::ALL
        .iter()
        .map(|&kind| {
            let found = saved.iter().find(|row| row.alert.kind == kind);
            found.cloned().unwrap_or(AlertRow {
                alert: Alert::unset(kind),
                holding: false,
                changed_at: None,
            })
        })
        .collect())
}

/// Saves the owners' settings, one alert per kind; the entry names each value changed.
pub fn save(db: &mut impl GenericClient, caller: &Caller, saved: &[Alert]) -> Result<(), ApiError> {
    let mut tx = db.transaction()?;
    let before = alerts(&mut tx, caller)?;
    let mut entry = AuditEntry::new(Operation::SaveAlerts, "org", caller.org.id.as_str())
        .named(&caller.org.name);
    for alert in saved {
        stored::save(&mut tx, &caller.org.id, alert)?;
        if let Some(was) = before.iter().find(|row| row.alert.kind == alert.kind) {
            entry = entry.changes(&was.alert, alert);
        }
    }
    audit::record(&mut tx, caller, entry)?;
    tx.commit()?;
    Ok(())
}

impl Fields for Alert {
    fn fields(&self) -> Vec<(&'static str, String)> {
        let on = match self.enabled {
            true => "on",
            false => "off",
        };
        let (threshold, n) = (self.threshold.to_string(), self.min_requests.to_string());
        match self.kind {
            AlertKind::FillRate => vec![
                ("fill rate alert", on.into()),
                ("fill rate under %", threshold),
                ("fill rate least requests", n),
            ],
            AlertKind::Silence => vec![("silence alert", on.into()), ("silence hours", threshold)],
            AlertKind::Refused => vec![("refused alert", on.into()), ("refused over %", threshold)],
        }
    }
}

/// Whether `person` gets the alert mails of the caller's organisation.
pub fn subscribed(
    db: &mut impl GenericClient,
    caller: &Caller,
    person: &PersonId,
) -> Result<bool, ApiError> {
    Ok(stored::subscribed(db, &caller.org.id, person)?)
}

/// Subscribes `person`, a member of the caller's organisation, to its alert mails, or
/// unsubscribes them.
pub fn subscribe(
    db: &mut impl GenericClient,
    caller: &Caller,
    person: &PersonId,
    subscribed: bool,
) -> Result<(), ApiError> {
    stored::set_subscribed(db, &caller.org.id, person, subscribed)?;
    Ok(())
}

/// The evaluation of the minute that holds `now`, by the one instance that claims it: every
/// start and end recorded in one transaction, then mailed to the subscribers (when mail is
/// configured).
pub fn evaluate(
    db: &mut impl GenericClient,
    mailer: Option<&Mailer>,
    console: Option<&ConsoleUrl>,
    now: Timestamp,
) -> Result<(), ApiError> {
    let now = SystemTime::from(now);
    let mut tx = db.transaction()?;
    if !stored::claim_minute(&mut tx, now)? {
        return Ok(());
    }
    let mut mails = Vec::new();
    for watched in stored::watched(&mut tx, now)? {
        let holds = watched.row.alert.holds(&watched.measured);
        let kind = watched.row.alert.kind;
        if holds == watched.row.holding || !stored::flip(&mut tx, &watched.org, kind, holds, now)? {
            continue;
        }
        if mailer.is_some() {
            for to in stored::subscribers(&mut tx, &watched.org)? {
                mails.push(mail(&to, &watched, holds, console));
            }
        }
    }
    tx.commit()?;
    if let Some(mailer) = mailer {
        mails.into_iter().for_each(|mail| mailer.send(mail));
    }
    Ok(())
}

/// The mail of an alert's start (`started`) or end.
fn mail(to: &str, watched: &Watched, started: bool, console: Option<&ConsoleUrl>) -> Mail {
    let (org, alert, measured) = (&watched.org_name, &watched.row.alert, &watched.measured);
    let (what, state) = match started {
        true => ("started", "holds"),
        false => ("ended", "no longer holds"),
    };
    let at = Timestamp::try_from(measured.now).map_or(String::new(), |at| {
        at.strftime("%-d %b %Y, %H:%M UTC").to_string()
    });
    let page = console.map_or(String::new(), |url| {
        format!("\nThe Alerts page: {}/alerts\n", url.origin())
    });
    Mail {
        to: to.into(),
        subject: format!("Alert {what}: {}, {org}", alert.kind.words()),
        body: format!(
            "An alert of {org} {what} at {at}: {} {state}.\n\n\
             Over the last hour: {} requests, {} served, {} refused.\n{page}\n\
             You get this mail as you subscribed to the alerts of {org} on the console's Alerts \
             page, where you may unsubscribe.\n",
            alert.rule(),
            measured.requests,
            measured.served,
            measured.refused,
        ),
    }
}
