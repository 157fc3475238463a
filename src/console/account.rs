//! A signed-in person's own pages: home, their sessions ("sign out the others"), their
//! password, the time zone they read times in, the reports mailed to them (`report_mail`),
//! and the organisation they look at.

use super::context::{Answer, PersonContext};
use super::inputs::{Input, InputKind};
use super::layout::Layout;
use super::notice::Notice;
use super::pages::{Home, PasswordPage, SessionsPage, TimeZonePage};
use super::session;
use super::sign_in::{check_password, signed_in};
use super::{answers, times};
use super::{report_mail, reports};
use crate::db::people::OrgAccess;
use crate::domain::{Cadence, Invalid, NewPassword};
use crate::error::ApiError;
use crate::ids::OrgId;
use crate::limits;
use crate::ops::reports::live;
use crate::ops::{self, members, sessions, subscriptions};
use crate::password::Caller;
use askama::Template;

pub fn home(ctx: &mut PersonContext) -> Answer {
    // An organisation with no site, or whose edge has sent no request, sees its first steps.
    let (first_steps, connect, glance) = match &ctx.visit.org {
        Some(_) => {
            let caller = ctx.visit.caller()?;
            let sites = ops::sites::list_sites(ctx.db, &caller)?;
            let connect = (sites.first()).map(|site| format!("/sites/{}/connect", site.domain));
            let silent = live::last_requests(ctx.db, &caller.org, 1)?.is_empty();
            let glance = reports::glance(ctx, &caller)?;
            (sites.is_empty() || silent, connect, Some(glance))
        }
        None => (false, None, None),
    };
    let page = Home {
        layout: ctx.layout(),
        org: ctx.visit.org.clone(),
        first_steps,
        connect,
        glance,
    };
    Ok(answers::html(200, &page))
}

pub fn sessions(ctx: &mut PersonContext) -> Answer {
    let listed = sessions::of_person(ctx.db, &ctx.visit.session.person)?;
    let page = SessionsPage {
        layout: ctx.layout(),
        current: ctx.visit.session.id,
        sessions: listed,
    };
    Ok(answers::html(200, &page))
}

/// `POST /sessions/end-others`: every other session of the person ends.
pub fn end_others(ctx: &mut PersonContext) -> Answer {
    let session = &ctx.visit.session;
    sessions::end_others(ctx.db, &session.person, session.id)?;
    Ok(answers::redirect_with("/sessions", Notice::OthersEnded))
}

pub fn time_zone_form(ctx: &mut PersonContext) -> Answer {
    let chosen = ctx.visit.session.time_zone.clone().unwrap_or_default();
    Ok(answers::html(200, &time_zone_page(ctx, chosen)))
}

fn time_zone_page(ctx: &PersonContext, chosen: String) -> TimeZonePage {
    TimeZonePage {
        layout: ctx.layout(),
        now: jiff::Timestamp::now().to_string(),
        zone: Input::line("time_zone", "Time zone", "text")
            .hint("Its IANA name, such as Europe/Paris or America/New_York; empty: UTC.")
            .value(chosen),
    }
}

/// A time zone as a person names it: `None` (UTC) when empty.
fn time_zone_named(sent: &str) -> Result<Option<String>, Invalid> {
    let name = sent.trim();
    if name.is_empty() {
        return Ok(None);
    }
    match times::time_zone(name) {
        Some(_) => Ok(Some(name.to_string())),
        None => Err(Invalid::new(
            "time_zone",
            "not a time zone's IANA name, such as Europe/Paris or America/New_York",
        )),
    }
}

/// `POST /time-zone`: the person's time zone for the times the console shows them; a name
/// the time zone database does not know is refused next to the field, nothing stored.
pub fn set_time_zone(ctx: &mut PersonContext) -> Answer {
    let mut page = time_zone_page(ctx, String::new());
    let Some(zone) = page.zone.parse(&ctx.form, time_zone_named) else {
        return Ok(answers::html(422, &page));
    };
    members::set_time_zone(ctx.db, &ctx.visit.session.person, zone.as_deref())?;
    Ok(answers::redirect_with("/time-zone", Notice::TimeZoneSaved))
}

/// The choices of an organisation's report mail: the value, its label, the cadences.
const REPORT_MAIL: [(&str, &str, &[Cadence]); 4] = [
    ("none", "None", &[]),
    (
        "weekly",
        "Weekly, on Mondays: the past week",
        &[Cadence::Weekly],
    ),
    (
        "monthly",
        "Monthly, on the 1st: the past month",
        &[Cadence::Monthly],
    ),
    (
        "both",
        "Weekly and monthly",
        &[Cadence::Weekly, Cadence::Monthly],
    ),
];

/// The form of one organisation's report mail: which cadences the person gets.
pub struct SubscriptionForm {
    pub org: OrgAccess,
    pub reports: Input,
}

impl SubscriptionForm {
    fn new(org: OrgAccess, cadences: &[Cadence]) -> SubscriptionForm {
        let choices = REPORT_MAIL
            .iter()
            .map(|(v, l, _)| (v.to_string(), l.to_string()));
        let same = |choice: &[Cadence]| {
            choice.len() == cadences.len() && choice.iter().all(|c| cadences.contains(c))
        };
        let chosen = REPORT_MAIL.iter().find(|(_, _, choice)| same(choice));
        let reports = Input::new(org.org_id.as_str(), "reports", "Report by mail")
            .kind(InputKind::Choice(choices.collect()))
            .value(chosen.map_or("none", |(value, _, _)| *value));
        SubscriptionForm { org, reports }
    }

    /// The cadences chosen; `None` (the refusal next to the input) for a value no choice has.
    fn validate(&mut self, form: &super::form::Form) -> Option<&'static [Cadence]> {
        self.reports.parse(form, |sent| {
            let chosen = REPORT_MAIL.iter().find(|(value, _, _)| *value == sent);
            chosen.map(|(_, _, cadences)| *cadences).ok_or_else(|| {
                Invalid::new("reports", "expected one of none, weekly, monthly, both")
            })
        })
    }
}

#[derive(Template)]
#[template(path = "console/subscriptions.html")]
pub struct SubscriptionsPage {
    pub layout: Layout,
    /// One form per organisation open to the person.
    pub forms: Vec<SubscriptionForm>,
}

fn subscriptions_page(ctx: &mut PersonContext) -> Result<SubscriptionsPage, ApiError> {
    let mine = subscriptions::of_person(ctx.db, &ctx.visit.session.person)?;
    let forms = (ctx.visit.orgs.iter())
        .map(|org| {
            let cadences: Vec<Cadence> = (mine.iter())
                .filter(|s| s.org_id == org.org_id)
                .map(|s| s.cadence)
                .collect();
            SubscriptionForm::new(org.clone(), &cadences)
        })
        .collect();
    Ok(SubscriptionsPage {
        layout: ctx.layout(),
        forms,
    })
}

/// `GET /subscriptions`: the report mailed to the person, per organisation open to them.
pub fn subscriptions(ctx: &mut PersonContext) -> Answer {
    Ok(answers::html(200, &subscriptions_page(ctx)?))
}

/// `POST /subscriptions`: one organisation's report mail (viewers too: it is their own
/// preference, not audited, as the time zone); an organisation not open to the person is not
/// found, a value no choice has is refused next to its input.
pub fn subscribe(ctx: &mut PersonContext) -> Answer {
    let org = OrgId::parse(ctx.form.get("org")).ok_or(ApiError::NotFound)?;
    let mut page = subscriptions_page(ctx)?;
    let form = (page.forms.iter_mut()).find(|form| form.org.org_id == org);
    let form = form.ok_or(ApiError::NotFound)?;
    let Some(cadences) = form.validate(&ctx.form) else {
        return Ok(answers::html(422, &page));
    };
    subscriptions::set(ctx.db, &ctx.visit.session.person, &org, cadences)?;
    Ok(answers::redirect_with(
        report_mail::SUBSCRIPTIONS_PATH,
        Notice::SubscriptionSaved,
    ))
}

pub fn password_form(ctx: &mut PersonContext) -> Answer {
    Ok(answers::html(200, &password_page(ctx)))
}

fn password_page(ctx: &PersonContext) -> PasswordPage {
    PasswordPage {
        layout: ctx.layout(),
        current: Input::line("current_password", "Current password", "password")
            .autocomplete("current-password"),
        new: Input::line("new_password", "New password", "password").autocomplete("new-password"),
    }
}

/// `POST /password`: the current password checked (a failure counts as a failed sign-in), the
/// new one set through `ops` (audited); every session of the person ends, and this browser
/// gets a new one.
pub fn change_password(ctx: &mut PersonContext) -> Answer {
    let mut page = password_page(ctx);
    if !ctx.form.unreadable().is_empty() {
        // Refused next to its input before any hash is spent.
        let shown = [&mut page.current, &mut page.new].map(|input| input.unreadable(&ctx.form));
        if !shown.contains(&true) {
            ctx.form.refusal()?;
        }
        return Ok(answers::html(422, &page));
    }
    let person = members::find_person(ctx.db, &ctx.visit.session.person)?;
    let person = person.ok_or(ApiError::NotFound)?;
    let new = NewPassword::for_person(ctx.form.get("new_password"), &person.email);
    let stored = person.password_hash.as_deref();
    let current = ctx.form.get("current_password");
    let limits = limits::sign_in_limits(ctx.app.client_ip(ctx.request), &person.email, false);
    if !check_password(ctx.app, Caller::Known, &limits, stored, current)? {
        page.current.error = Some("this is not your current password".into());
        return Ok(answers::html(422, &page));
    }
    let new = match new {
        Ok(new) => new,
        Err(invalid) => {
            page.new.error = Some(invalid.message);
            return Ok(answers::html(422, &page));
        }
    };
    let hash = ctx.app.passwords.hash(&new)?;
    members::change_password(ctx.db, &person, &hash)?;
    let secret = session::start(ctx.db, &person, None, ctx.request)?;
    let location = format!("/sessions?notice={}", Notice::PasswordChanged.as_str());
    signed_in(ctx.db, ctx.app, &person, &secret, &location)
}

/// `POST /org`: an organisation not open to the person is not found (`404`), as everywhere, so
/// the answer does not tell whether it exists.
pub fn choose_org(ctx: &mut PersonContext) -> Answer {
    let chosen = OrgId::parse(ctx.form.get("org")).ok_or(ApiError::NotFound)?;
    if !ctx.visit.orgs.iter().any(|o| o.org_id == chosen) {
        return Err(ApiError::NotFound.into());
    }
    sessions::choose_org(ctx.db, ctx.visit.session.id, &chosen)?;
    Ok(answers::redirect("/"))
}
