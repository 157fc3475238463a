//! A signed-in person's own pages: home, their sessions ("sign out the others"), their
//! password, the time zone they read times in, and the organisation they look at.

use super::context::{Answer, PersonContext};
use super::inputs::Input;
use super::notice::Notice;
use super::pages::{self, Home, PasswordPage, SessionsPage, TimeZonePage};
use super::reports;
use super::session;
use super::sign_in::{check_password, signed_in};
use crate::domain::{Invalid, NewPassword};
use crate::error::ApiError;
use crate::ids::OrgId;
use crate::limits;
use crate::ops::{self, members, sessions};
use crate::password::Caller;

pub fn home(ctx: &mut PersonContext) -> Answer {
    // An organisation with no site sees its first steps.
    let (first_steps, glance) = match &ctx.visit.org {
        Some(_) => {
            let caller = ctx.visit.caller()?;
            let sites = ops::sites::list_sites(ctx.db, &caller)?;
            (sites.is_empty(), Some(reports::glance(ctx, &caller)?))
        }
        None => (false, None),
    };
    let page = Home {
        layout: ctx.layout(),
        org: ctx.visit.org.clone(),
        first_steps,
        glance,
    };
    Ok(pages::html(200, &page))
}

pub fn sessions(ctx: &mut PersonContext) -> Answer {
    let listed = sessions::of_person(ctx.db, &ctx.visit.session.person)?;
    let page = SessionsPage {
        layout: ctx.layout(),
        current: ctx.visit.session.id,
        sessions: listed,
    };
    Ok(pages::html(200, &page))
}

/// `POST /sessions/end-others`: every other session of the person ends.
pub fn end_others(ctx: &mut PersonContext) -> Answer {
    let session = &ctx.visit.session;
    sessions::end_others(ctx.db, &session.person, session.id)?;
    Ok(pages::redirect_with("/sessions", Notice::OthersEnded))
}

pub fn time_zone_form(ctx: &mut PersonContext) -> Answer {
    let chosen = ctx.visit.session.time_zone.clone().unwrap_or_default();
    Ok(pages::html(200, &time_zone_page(ctx, chosen)))
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
    match pages::time_zone(name) {
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
        return Ok(pages::html(422, &page));
    };
    members::set_time_zone(ctx.db, &ctx.visit.session.person, zone.as_deref())?;
    Ok(pages::redirect_with("/time-zone", Notice::TimeZoneSaved))
}

pub fn password_form(ctx: &mut PersonContext) -> Answer {
    Ok(pages::html(200, &password_page(ctx)))
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
        return Ok(pages::html(422, &page));
    }
    let person = members::find_person(ctx.db, &ctx.visit.session.person)?;
    let person = person.ok_or(ApiError::NotFound)?;
    let new = NewPassword::for_person(ctx.form.get("new_password"), &person.email);
    let stored = person.password_hash.as_deref();
    let current = ctx.form.get("current_password");
    let limits = limits::sign_in_limits(ctx.app.client_ip(ctx.request), &person.email, false);
    if !check_password(ctx.app, Caller::Known, &limits, stored, current)? {
        page.current.error = Some("this is not your current password".into());
        return Ok(pages::html(422, &page));
    }
    let new = match new {
        Ok(new) => new,
        Err(invalid) => {
            page.new.error = Some(invalid.message);
            return Ok(pages::html(422, &page));
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
    Ok(pages::redirect("/"))
}
