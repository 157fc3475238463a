//! The Alerts page: everyone of the organisation reads its alerts (each kind's rule, on or off,
//! whether it holds and since when) and chooses whether they get their mail; owners change them
//! (the page table checks). The writes are `ops::alerts`'s; the banner of every page is the
//! layout's.

use super::answers;
use super::context::{Answer, PageContext};
use super::form::Form;
use super::inputs::{self, Checked, Failed, Input, InputKind, Inputs};
use super::layout::Layout;
use super::notice::Notice;
use super::refusal::PageRefusal;
use crate::db::alerts::AlertRow;
use crate::domain::alert::{switch, whole_number, HOURS, MIN_REQUESTS, PERCENTS};
use crate::domain::{Alert, AlertKind, Invalid};
use crate::http::Response;
use crate::ops::alerts;
use askama::Template;
use std::ops::RangeInclusive;

/// The page's path.
const PATH: &str = "/alerts";

#[derive(Template)]
#[template(path = "console/alerts.html")]
struct AlertsPage {
    layout: Layout,
    alerts: Vec<Shown>,
    form: Inputs,
    alert: Option<String>,
    /// The person is a member (not support staff only), who may get the mails.
    member: bool,
    subscribed: bool,
}

/// An alert as the page shows it.
struct Shown {
    rule: String,
    enabled: bool,
    holding: bool,
    /// When it last started or ended (RFC 3339), empty when never.
    changed_at: String,
}

impl Shown {
    fn of(row: &AlertRow) -> Shown {
        let changed_at = row
            .changed_at
            .and_then(|at| jiff::Timestamp::try_from(at).ok());
        Shown {
            rule: row.alert.rule(),
            enabled: row.alert.enabled,
            holding: row.holding && row.alert.enabled,
            changed_at: changed_at.map_or(String::new(), |at| at.to_string()),
        }
    }
}

/// The owners' form: each kind on or off, its threshold, and the fill rate's least requests.
pub struct AlertsForm;

/// The fill rate's least requests' input.
const MIN_REQUESTS_INPUT: &str = "fill_rate_min_requests";

/// A kind's threshold input: its name, label and range.
fn threshold_input(kind: AlertKind) -> (&'static str, &'static str, RangeInclusive<u32>) {
    match kind {
        AlertKind::FillRate => ("fill_rate_below", "Fill rate under (%)", PERCENTS),
        AlertKind::Silence => ("silence_hours", "No request for (hours)", HOURS),
        AlertKind::Refused => ("refused_above", "Refused over (% of requests)", PERCENTS),
    }
}

/// A kind's switch: its input's name is the kind's.
fn switch_label(kind: AlertKind) -> &'static str {
    match kind {
        AlertKind::FillRate => "Fill rate alert",
        AlertKind::Silence => "Silence alert",
        AlertKind::Refused => "Refused requests alert",
    }
}

impl AlertsForm {
    /// The inputs, holding the alerts as saved.
    pub fn inputs(saved: &[Alert]) -> Inputs {
        let on_off = || InputKind::Choice(["off", "on"].map(|v| (v.into(), v.into())).to_vec());
        let mut all = Vec::new();
        for alert in saved {
            let on = if alert.enabled { "on" } else { "off" };
            all.push(
                Input::alone(alert.kind.as_str(), switch_label(alert.kind))
                    .kind(on_off())
                    .required()
                    .value(on),
            );
            let (name, label, range) = threshold_input(alert.kind);
            let hint = match range == PERCENTS {
                true => "A whole number from 1 to 100.",
                false => "A whole number from 1 to 168 (a week).",
            };
            all.push(number(name, label, alert.threshold).hint(hint));
            if alert.kind == AlertKind::FillRate {
                let label = "With at least (requests in the hour)";
                all.push(number(MIN_REQUESTS_INPUT, label, alert.min_requests));
            }
        }
        Inputs(all)
    }

    /// Every alert as sent, or every refusal.
    pub fn validate(form: &Form) -> Result<Vec<Alert>, Vec<Invalid>> {
        let mut checked = Checked::of(form);
        let mut sent = Vec::new();
        for kind in AlertKind::ALL {
            let (name, _, range) = threshold_input(kind);
            let enabled = checked.take(switch(kind.as_str(), form.get(kind.as_str())));
            let threshold = checked.take(whole_number(name, form.get(name), range));
            let min_requests = match kind {
                AlertKind::FillRate => {
                    let sent = form.get(MIN_REQUESTS_INPUT);
                    checked.take(whole_number(MIN_REQUESTS_INPUT, sent, MIN_REQUESTS))
                }
                _ => Some(0),
            };
            if let (Some(enabled), Some(threshold), Some(min_requests)) =
                (enabled, threshold, min_requests)
            {
                sent.push(Alert {
                    kind,
                    enabled,
                    threshold,
                    min_requests,
                });
            }
        }
        checked.done(sent)
    }
}

fn number(name: &'static str, label: &'static str, value: u32) -> Input {
    Input::alone(name, label)
        .kind(InputKind::Line("number"))
        .required()
        .value(value.to_string())
}

fn page(ctx: &mut PageContext) -> Result<AlertsPage, PageRefusal> {
    let caller = ctx.caller.clone();
    let rows = alerts::alerts(ctx.db, &caller)?;
    let saved: Vec<Alert> = rows.iter().map(|row| row.alert).collect();
    let person = ctx.visit.session.person.clone();
    Ok(AlertsPage {
        layout: ctx.layout(),
        alerts: rows.iter().map(Shown::of).collect(),
        form: AlertsForm::inputs(&saved),
        alert: None,
        member: ctx.visit.current_org()?.role.is_some(),
        subscribed: alerts::subscribed(ctx.db, &caller, &person)?,
    })
}

/// `GET /alerts`.
pub fn list(ctx: &mut PageContext) -> Answer {
    Ok(answers::html(200, &page(ctx)?))
}

/// `POST /alerts`: the owners' settings, every kind at once; a refused value is shown next to
/// its input and nothing is saved.
pub fn save(ctx: &mut PageContext) -> Answer {
    inputs::written(save_alerts(ctx), |refusals| {
        let mut page = page(ctx)?;
        page.alert = page.form.refused(&ctx.form, refusals);
        Ok(answers::html(422, &page))
    })
}

fn save_alerts(ctx: &mut PageContext) -> Result<Response, Failed> {
    let sent = AlertsForm::validate(&ctx.form)?;
    alerts::save(ctx.db, &ctx.caller, &sent)?;
    Ok(answers::redirect_with(PATH, Notice::AlertsSaved))
}

/// `POST /alerts/mail`: the person's own choice of the alerts' mail (a checkbox: `on` or
/// nothing).
pub fn mail(ctx: &mut PageContext) -> Answer {
    let subscribed = ctx.form.checkbox("mail")?;
    let person = ctx.visit.session.person.clone();
    alerts::subscribe(ctx.db, &ctx.caller, &person, subscribed)?;
    Ok(answers::redirect_with(PATH, Notice::AlertMailSaved))
}
