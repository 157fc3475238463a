//! A sign-in from a browser unknown to the person (no device cookie of theirs, which is what a
//! flood sends): the password hashes such sign-ins cause are budgeted per email and per client
//! address block (`limits::unknown_browser_budgets`, beyond: `429`) and globally
//! (`password::Caller::Unknown`). Beyond the global rate the sign-in is not refused: its page
//! asks the browser for a proof of work (`proof_of_work`), which `console.js` solves in a Web
//! Worker, and a solved, unspent proof lets that sign-in's hash through the global rate.

use super::context::PublicContext;
use super::pages::ProofAsked;
use super::refusal::PageRefusal;
use super::session;
use crate::app::App;
use crate::error::ApiError;
use crate::limits::{self, Limit};
use crate::ops::{devices, sessions};
use crate::password::Caller;
use crate::proof_of_work::{self, Key};
use postgres::Client;

/// Said on the page when the proof sent was not accepted.
const PROOF_REFUSED: &str = "the proof of work this browser sent was not accepted (used \
                             already, too old, or not solved): it is making a new one";

/// What a sign-in from an unknown browser may do.
pub enum Admission {
    /// Check its password as this caller; its budgets have taken the hash.
    Hash(Caller),
    /// Show the sign-in page again, asking for a proof of work; nothing was checked.
    Ask(ProofAsked),
}

/// Whether the sign-in of `email` from an unknown browser, held to `limits`, may have its
/// password checked: within its limits and budgets, then within the global rate or with a
/// proof of work, which is spent here. A refused proof, or none beyond the rate, is asked for.
pub fn admit(
    ctx: &mut PublicContext,
    email: &str,
    limits: &[Limit],
) -> Result<Admission, PageRefusal> {
    let app = ctx.app;
    let budgets = limits::unknown_browser_budgets(app.client_ip(ctx.request), email);
    if !app.limiter.has_room(limits) {
        return Err(ApiError::RateLimited.into());
    }
    if !app.limiter.has_room(&budgets) {
        return Err(PageRefusal::UnknownBrowsers);
    }
    let sent = (ctx.form.get("challenge"), ctx.form.get("proof"));
    let caller = match sent {
        ("", _) if app.passwords.has_room(Caller::Unknown) => Caller::Unknown,
        ("", _) => return Ok(Admission::Ask(ask(ctx.db, app, None)?)),
        (challenge, nonce) => match spend(ctx.db, app, challenge, nonce)? {
            true => Caller::Proven,
            false => return Ok(Admission::Ask(ask(ctx.db, app, Some(PROOF_REFUSED))?)),
        },
    };
    if !app.limiter.try_charge(&budgets) {
        return Err(PageRefusal::UnknownBrowsers);
    }
    Ok(Admission::Hash(caller))
}

/// The proof of work a sign-in needs now, asked with the work the flood sets (the sign-in
/// counts toward that flood); `refused` says why the one sent was not accepted.
pub fn ask(
    db: &mut Client,
    app: &App,
    refused: Option<&'static str>,
) -> Result<ProofAsked, PageRefusal> {
    app.proofs.demand.asked();
    challenge(db, app, refused)
}

/// The proof the sign-in page asks for from the start, while the rate for unknown browsers
/// is spent, so that the browser works while its person types: none for a browser with a
/// device cookie (probably its person's) or while the rate has room.
pub fn offered(ctx: &mut PublicContext) -> Result<Option<ProofAsked>, PageRefusal> {
    let app = ctx.app;
    let device = session::cookie_of(ctx.request, devices::COOKIE);
    if device.is_some() || app.passwords.has_room(Caller::Unknown) {
        return Ok(None);
    }
    challenge(ctx.db, app, None).map(Some)
}

/// A new challenge, asking the work the flood sets now.
fn challenge(
    db: &mut Client,
    app: &App,
    refused: Option<&'static str>,
) -> Result<ProofAsked, PageRefusal> {
    let bits = app
        .proofs
        .demand
        .bits(app.config.password_rates.unknown_per_minute);
    Ok(ProofAsked {
        challenge: proof_of_work::challenge(fleet_key(db, app)?, proof_of_work::now(), bits),
        refused,
    })
}

/// Whether `nonce` solves `challenge`, a valid challenge of the fleet not spent yet; it is
/// spent now, for every instance.
fn spend(db: &mut Client, app: &App, challenge: &str, nonce: &str) -> Result<bool, PageRefusal> {
    let checked = proof_of_work::check(fleet_key(db, app)?, proof_of_work::now(), challenge, nonce);
    match checked {
        Ok(checked) => Ok(sessions::spend_proof(
            db,
            &checked.spent,
            checked.expires_at,
        )?),
        Err(_) => Ok(false),
    }
}

/// The fleet's key for proofs of work, sealed ceremonies and signed unsubscribe links, read (or made) once per process.
pub(super) fn fleet_key<'a>(db: &mut Client, app: &'a App) -> Result<&'a Key, ApiError> {
    let key = app
        .proofs
        .key(|| sessions::proof_of_work_key(db, &Key::random_secret()).map(Key::new))?;
    Ok(key)
}
