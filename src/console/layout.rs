//! What every console page carries around its content: the header and navigation of the
//! person's pages, the notice of the last write, the time zone its times are shown in, and a
//! form's one-time value with the secret it made.

use super::notice::Notice;
use super::session::Visit;
use super::times::{time_zone, when};
use crate::db::people::OrgAccess;
use crate::domain::AlertKind;
use crate::ops::once::{Made, SHOWN_ALREADY};
use jiff::tz::TimeZone;

/// A form that makes a secret (a token, a key, an invitation): the one-time value it carries,
/// and on the answer to its `POST` the secret made, shown this once, or the word that the form
/// was sent already and made nothing.
#[derive(Debug, Clone, Default)]
pub struct Creating {
    pub once: String,
    pub secret: Option<String>,
    pub shown_already: Option<&'static str>,
}

impl Creating {
    pub fn new(once: String) -> Creating {
        Creating {
            once,
            ..Creating::default()
        }
    }

    /// Shows what the post made; the answer's status (`409` for a form sent again).
    pub fn made(&mut self, made: Made<String>) -> u16 {
        match made {
            Made::New(secret) => {
                self.secret = Some(secret);
                200
            }
            Made::ShownAlready => {
                self.shown_already = Some(SHOWN_ALREADY);
                409
            }
        }
    }
}

/// What the base template renders around every page: the header of a signed-in person (with
/// the form token every form of theirs carries), and the notice of the write that led here.
/// A handler gets it whole from its context (`ctx.layout()`), into its page's `layout` field.
#[derive(Debug, Clone, Default)]
pub struct Layout {
    pub nav: Option<Nav>,
    pub notice: Option<Notice>,
    /// What the write was about, by name, where the page found it (`redirect_about`).
    pub about: Option<String>,
    /// The time zone the page shows times in, the person's; `None`: UTC.
    pub zone: Option<TimeZone>,
}

impl Layout {
    pub fn of(visit: Option<&Visit>, notice: Option<Notice>) -> Layout {
        let zone = visit.and_then(|visit| visit.session.time_zone.as_deref());
        Layout {
            nav: visit.map(Nav::of),
            notice,
            about: None,
            zone: zone.and_then(time_zone),
        }
    }

    /// The same page, its times in UTC whatever the person chose: the reports', whose windows
    /// and days are UTC's.
    pub fn in_utc(self) -> Layout {
        Layout { zone: None, ..self }
    }

    /// A moment in the page's time zone ([`when`]).
    pub fn when(&self, at: &str) -> String {
        match &self.zone {
            Some(zone) => when(at, zone),
            None => when(at, &TimeZone::UTC),
        }
    }

    /// Whether the page shows the forms that change the organisation (`Nav::writes`).
    pub fn writes(&self) -> bool {
        self.nav.as_ref().is_some_and(|nav| nav.writes)
    }

    /// Whether the page shows the owners' forms and links.
    pub fn owner(&self) -> bool {
        self.nav.as_ref().is_some_and(|nav| nav.owner)
    }

    /// The notice's sentence, naming what it is about when the page knows it.
    pub fn notice_sentence(&self) -> Option<String> {
        let about = self.about.as_deref();
        self.notice.map(|notice| notice.sentence_about(about))
    }
}

/// What every page of a signed-in person shows in its header.
#[derive(Debug, Clone)]
pub struct Nav {
    pub email: String,
    pub support: bool,
    pub org_id: String,
    pub org_name: String,
    pub orgs: Vec<OrgAccess>,
    pub owner: bool,
    /// A member or an owner: the page shows its forms that change the organisation (a
    /// viewer's would be refused).
    pub writes: bool,
    /// The form token of the session, for every form of the page.
    pub csrf: String,
    /// The organisation's alerts that hold: a banner each.
    pub alerts: Vec<AlertKind>,
}

impl Nav {
    fn of(visit: &Visit) -> Nav {
        let org = visit.org.as_ref();
        Nav {
            email: visit.session.email.clone(),
            support: visit.session.support,
            org_id: org.map_or(String::new(), |o| o.org_id.to_string()),
            org_name: org.map_or(String::new(), |o| o.name.clone()),
            orgs: visit.orgs.clone(),
            owner: visit.is_owner(),
            writes: visit.writes(),
            csrf: visit.form_token.clone(),
            alerts: org.map_or(Vec::new(), |o| o.alerts.clone()),
        }
    }
}
