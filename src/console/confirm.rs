//! The confirmation page of every deletion and revocation: what is deleted, what goes with it,
//! the live traffic it touches (the last 24 hours' requests, [`traffic`]), and the one button
//! that does it (a `POST` with the session's form token); reading it changes nothing.

use super::context::PageContext;
use super::layout::Layout;
use super::refusal::PageRefusal;
use crate::ops::reports::{self, Touched};
use askama::Template;
use jiff::Timestamp;

#[derive(Template)]
#[template(path = "console/confirm.html")]
pub struct Confirm {
    pub layout: Layout,
    pub title: String,
    /// What goes with it, one sentence each.
    pub goes: Vec<String>,
    /// The live traffic it touches, one sentence ([`traffic`]).
    pub traffic: String,
    /// Where the button posts.
    pub action: String,
    pub button: &'static str,
    /// The page to go back to without deleting.
    pub back: String,
}

/// The sentence of the live traffic an object touches: the requests of the last 24 hours it
/// served or resolved, as the report counts them; `None` for what no request to `/fragment`
/// goes through (a person, an invitation, a management token).
pub fn traffic(ctx: &mut PageContext, touched: Option<Touched>) -> Result<String, PageRefusal> {
    let Some(touched) = touched else {
        return Ok("No request to /fragment goes through it: delivery is not touched.".into());
    };
    let org = ctx.caller.org.clone();
    let requests = ctx.on_replica(|db| reports::last_day(db, &org, touched, Timestamp::now()))?;
    let count = match requests {
        0 => "no request".to_string(),
        1 => "1 request".to_string(),
        n => format!("{n} requests"),
    };
    Ok(match touched {
        Touched::Site(_) => format!("Live traffic: {count} to its pages in the last 24 hours."),
        Touched::Fragment(_) => {
            format!("Live traffic: {count} resolved to it in the last 24 hours.")
        }
        Touched::Card(_) => format!("Live traffic: it was served on {count} in the last 24 hours."),
        Touched::Key(_) => format!("Live traffic: {count} sent with it in the last 24 hours."),
    })
}
