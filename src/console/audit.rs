//! The audit log page, for every member: the organisation's writes, newest first, from the
//! console, `/v1` and the CLI alike (`ops::audit`), filtered by actor, the last 100 by
//! default. The log holds no secret, so neither does the page.

use super::context::{Answer, PageContext};
use super::pages::{self, Field, Layout};
use crate::db::audit::AuditRow;
use crate::ops;
use askama::Template;

/// How many entries a page shows unless asked, and at most.
const LIMITS: [u32; 3] = [100, 500, 2000];

#[derive(Template)]
#[template(path = "console/audit.html")]
pub struct AuditPage {
    pub layout: Layout,
    pub actor: Field,
    pub limits: [u32; 3],
    pub limit: u32,
    pub entries: Vec<AuditRow>,
}

/// `GET /audit?actor=…&limit=…`: an unknown limit counts as the default.
pub fn page(ctx: &mut PageContext) -> Answer {
    let value = |name: &str| ctx.query.get(name).trim();
    let limit = LIMITS
        .into_iter()
        .find(|l| l.to_string() == value("limit"))
        .unwrap_or(LIMITS[0]);
    let actor = Some(value("actor")).filter(|a| !a.is_empty());
    let entries = ops::audit::list_entries(ctx.db, &ctx.caller()?, actor, limit)?;
    let mut field = Field::new("actor", "Who (an email, a token prefix, or cli)", "text");
    field.value = value("actor").to_string();
    let page = AuditPage {
        layout: ctx.layout(),
        actor: field,
        limits: LIMITS,
        limit,
        entries,
    };
    Ok(pages::html(200, &page))
}
