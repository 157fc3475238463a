//! Scheduled reports by mail: the job that mails each subscriber their organisation's past
//! week or month once (claimed in PostgreSQL through `ops::subscriptions`: a fleet mails each
//! once, an instance that was down catches up with the last period only), the mail in plain
//! text and HTML (`templates/mail/`, the numbers of `ops::reports::digest` worded as the
//! Reports page words them), and RFC 8058's one-click unsubscribe: `/unsubscribe/{token}`,
//! the token signed under the fleet's key for this purpose alone, naming the person, the
//! organisation and the cadence.
//!
//! Its `POST` is the one write of the console taken from any origin without a session or a
//! form token: a mail client sends it, from no page of ours, with no cookie. The signed token
//! in its path is the authority (no ambient credential a forged cross-site request could
//! borrow), and all it can do is end the subscription it names.

use super::answers;
use super::captures::UnsubscribeToken;
use super::chart::{percent, Row};
use super::context::{Answer, PublicContext};
use super::layout::Layout;
use super::reports::{advice, row, Change, Period};
use super::unknown_browser::fleet_key;
use crate::app::App;
use crate::config::ConsoleUrl;
use crate::domain::Cadence;
use crate::error::ApiError;
use crate::ids::{OrgId, PersonId};
use crate::mail::{ListMail, Mail};
use crate::ops::reports::{self, Bounds, Digest};
use crate::ops::subscriptions::{self, Subscriber};
use crate::ops::{members, orgs};
use crate::proof_of_work::{self, Key};
use askama::Template;
use jiff::{Timestamp, ToSpan};

/// How many agents, pages and no-fill reasons a report lists.
const TOP: usize = 5;
/// What the unsubscribe tokens are signed for, and nothing else is.
const PURPOSE: &str = "unsubscribe";
/// Where a person sets their subscriptions.
pub const SUBSCRIPTIONS_PATH: &str = "/subscriptions";

/// The scheduled job (`schedule::JOBS`): mails every report due at `now` that no instance
/// claimed yet. Without mail or a console URL it claims nothing, so that an instance of the
/// fleet that has them mails it.
pub fn mail_reports(app: &App, now: Timestamp) -> Result<(), ApiError> {
    let (Some(mailer), Some(console)) = (&app.mailer, &app.config.console_url) else {
        return Ok(());
    };
    let mut db = app.pool.get()?;
    let key = fleet_key(&mut db, app)?.clone();
    for cadence in Cadence::ALL {
        let period = Bounds::past(cadence, now);
        let mut read: Option<(OrgId, Digest)> = None;
        for subscriber in subscriptions::due(&mut *db, cadence, period)? {
            // Subscribers come by organisation: its numbers are read once.
            let digest = match read.take() {
                Some((org, digest)) if org == subscriber.org.id => digest,
                _ => reports::digest(&mut db, &subscriber.org, cadence, now, TOP)?,
            };
            if subscriptions::claim(&mut *db, &subscriber, cadence, period)? {
                let mail = mail(console, &key, &subscriber, cadence, &digest)?;
                mailer.send_list(mail);
            }
            read = Some((subscriber.org.id.clone(), digest));
        }
    }
    Ok(())
}

/// What a report's two parts show.
struct Report {
    org: String,
    cadence: Cadence,
    /// The period in words ("23 Nov to 29 Nov 2026", "November 2026"), and the one before.
    period: String,
    before: String,
    requests: i64,
    served: i64,
    fill: String,
    refused: i64,
    change: Change,
    agents: Vec<Row>,
    pages: Vec<Row>,
    /// Each no-fill reason counted, most first: its name, its requests, what to do.
    reasons: Vec<(String, i64, &'static str)>,
    /// The console's Reports page on the period, by agent and by page.
    link: String,
    by_agent: String,
    by_page: String,
    subscriptions: String,
    unsubscribe: String,
}

impl Report {
    /// The top agents and pages, each with its title and its view in the console.
    fn tables(&self) -> [(&'static str, &[Row], &str); 2] {
        [
            ("Top agents", &self.agents, &self.by_agent),
            ("Top pages", &self.pages, &self.by_page),
        ]
    }
}

#[derive(Template)]
#[template(path = "mail/report.txt")]
struct ReportText<'a> {
    report: &'a Report,
}

#[derive(Template)]
#[template(path = "mail/report.html")]
struct ReportHtml<'a> {
    report: &'a Report,
}

/// `subscriber`'s mail of `digest`.
fn mail(
    console: &ConsoleUrl,
    key: &Key,
    subscriber: &Subscriber,
    cadence: Cadence,
    digest: &Digest,
) -> Result<ListMail, ApiError> {
    let report = report(console, key, subscriber, cadence, digest);
    let render = |made: Result<String, askama::Error>| {
        made.map_err(|error| ApiError::internal(format!("report mail not rendered: {error}")))
    };
    let subject = match cadence {
        Cadence::Weekly => format!("{}: your weekly report, {}", report.org, report.period),
        Cadence::Monthly => format!("{}: your monthly report, {}", report.org, report.period),
    };
    Ok(ListMail {
        mail: Mail {
            to: subscriber.email.clone(),
            subject,
            body: render(ReportText { report: &report }.render())?,
        },
        html: render(ReportHtml { report: &report }.render())?,
        unsubscribe: report.unsubscribe.clone(),
    })
}

fn report(
    console: &ConsoleUrl,
    key: &Key,
    subscriber: &Subscriber,
    cadence: Cadence,
    digest: &Digest,
) -> Report {
    let total = &digest.total;
    let origin = console.origin();
    let last_day = digest.bounds.until() - 1.second();
    let dates = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("window", "dates")
        .append_pair(
            "from",
            &digest.bounds.since().strftime("%Y-%m-%d").to_string(),
        )
        .append_pair("to", &last_day.strftime("%Y-%m-%d").to_string())
        .finish();
    let link = format!("{origin}/reports?{dates}");
    let mut reasons: Vec<(String, i64, &'static str)> = (total.no_fill_reasons.iter())
        .flatten()
        .filter(|(_, n)| **n > 0)
        .map(|(reason, n)| (reason.as_str().to_string(), *n, advice(*reason).0))
        .collect();
    reasons.sort_by_key(|(_, n, _)| std::cmp::Reverse(*n));
    reasons.truncate(TOP);
    let rows = |groups: &[reports::Group]| groups.iter().map(|g| row(&g.key, &g.counts)).collect();
    let token = token(key, &subscriber.person_id, &subscriber.org.id, cadence);
    Report {
        org: subscriber.org.name.clone(),
        cadence,
        period: in_words(cadence, digest.bounds),
        before: in_words(cadence, digest.before),
        requests: total.requests,
        served: total.served,
        fill: percent(total),
        refused: total.refused.unwrap_or(0),
        change: Change::of(total, &digest.previous, Period::of(digest.before)),
        agents: rows(&digest.agents),
        pages: rows(&digest.pages),
        reasons,
        by_agent: format!("{link}&by=agent"),
        by_page: format!("{link}&by=page"),
        link,
        subscriptions: format!("{origin}{SUBSCRIPTIONS_PATH}"),
        unsubscribe: format!("{origin}/unsubscribe/{token}"),
    }
}

/// A period in words: `23 Nov to 29 Nov 2026` (its days, UTC), `November 2026`; ASCII, so
/// that a subject carrying it needs no encoding.
fn in_words(cadence: Cadence, bounds: Bounds) -> String {
    let last_day = bounds.until() - 1.second();
    match cadence {
        Cadence::Weekly => format!(
            "{} to {}",
            bounds.since().strftime("%-d %b"),
            last_day.strftime("%-d %b %Y")
        ),
        Cadence::Monthly => bounds.since().strftime("%B %Y").to_string(),
    }
}

/// The token of one subscription's one-click unsubscribe.
fn token(key: &Key, person: &PersonId, org: &OrgId, cadence: Cadence) -> String {
    let named = format!("{person} {org} {cadence}");
    proof_of_work::sign(key, PURPOSE, named.as_bytes())
}

/// The subscription a token names, if the fleet's key signed it for this purpose; `404`
/// otherwise, as a link that names nothing.
fn named_by(ctx: &mut PublicContext) -> Result<(PersonId, OrgId, Cadence), ApiError> {
    let UnsubscribeToken(token) = ctx.captures.get().map_err(|_| ApiError::NotFound)?;
    let key = fleet_key(ctx.db, ctx.app)?;
    let value = proof_of_work::verify(key, PURPOSE, &token).map_err(|_| ApiError::NotFound)?;
    let value = String::from_utf8(value).map_err(|_| ApiError::NotFound)?;
    let mut parts = value.split(' ');
    let named = (parts.next(), parts.next(), parts.next(), parts.next());
    let (Some(person), Some(org), Some(cadence), None) = named else {
        return Err(ApiError::NotFound);
    };
    let person = PersonId::parse(person).ok_or(ApiError::NotFound)?;
    let org = OrgId::parse(org).ok_or(ApiError::NotFound)?;
    let cadence = Cadence::named(cadence).ok_or(ApiError::NotFound)?;
    Ok((person, org, cadence))
}

#[derive(Template)]
#[template(path = "console/unsubscribe.html")]
pub struct UnsubscribePage {
    pub layout: Layout,
    pub org: String,
    pub cadence: Cadence,
    pub email: String,
    /// The subscription is on: the page offers to end it.
    pub subscribed: bool,
    /// It was ended by this request.
    pub ended: bool,
    pub action: String,
}

/// `GET /unsubscribe/{token}`: what the link ends, and a button; reading it changes nothing
/// (a mail scanner that opens links ends no subscription).
pub fn page(ctx: &mut PublicContext) -> Answer {
    let (person, org, cadence) = named_by(ctx)?;
    let mine = subscriptions::of_person(ctx.db, &person)?;
    let subscribed = mine.iter().any(|s| s.org_id == org && s.cadence == cadence);
    Ok(answers::html(
        200,
        &unsubscribe_page(ctx, &person, &org, cadence, subscribed, false)?,
    ))
}

/// `POST /unsubscribe/{token}`: the one-click unsubscribe (RFC 8058, its body
/// `List-Unsubscribe=One-Click` not needed), or the page's button; the same answer when the
/// subscription had ended already.
pub fn unsubscribe(ctx: &mut PublicContext) -> Answer {
    let (person, org, cadence) = named_by(ctx)?;
    subscriptions::unsubscribe(ctx.db, &person, &org, cadence)?;
    Ok(answers::html(
        200,
        &unsubscribe_page(ctx, &person, &org, cadence, false, true)?,
    ))
}

fn unsubscribe_page(
    ctx: &mut PublicContext,
    person: &PersonId,
    org: &OrgId,
    cadence: Cadence,
    subscribed: bool,
    ended: bool,
) -> Result<UnsubscribePage, ApiError> {
    let email = members::find_person(ctx.db, person)?.map(|p| p.email);
    let name = orgs::find_org(ctx.db, org).map(|org| org.name);
    Ok(UnsubscribePage {
        layout: ctx.layout(),
        org: name.unwrap_or_else(|_| "an organisation that no longer exists".into()),
        cadence,
        email: email.unwrap_or_default(),
        subscribed,
        ended,
        action: ctx.request.path().to_string(),
    })
}
