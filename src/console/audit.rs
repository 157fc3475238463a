//! The audit log page, for every member: the organisation's writes, newest first, from the
//! console, `/v1` and the CLI alike (`ops::audit`), filtered by actor, the last 100 by
//! default. The log holds no secret, so neither does the page.

use super::pages::{self, Field, Nav};
use super::session::Visit;
use super::Refusal;
use crate::db::audit::AuditRow;
use crate::http::{Request, Response};
use crate::ops;
use askama::Template;
use postgres::Client;

/// How many entries a page shows unless asked, and at most.
const LIMITS: [u32; 3] = [100, 500, 2000];

#[derive(Template)]
#[template(path = "console/audit.html")]
pub struct AuditPage {
    pub nav: Option<Nav>,
    pub actor: Field,
    pub limits: [u32; 3],
    pub limit: u32,
    pub entries: Vec<AuditRow>,
}

/// `GET /audit?actor=…&limit=…`: an unknown limit counts as the default.
pub fn audit_page(db: &mut Client, visit: &Visit, request: &Request) -> Result<Response, Refusal> {
    let query: Vec<(String, String)> =
        url::form_urlencoded::parse(request.query().unwrap_or("").as_bytes())
            .into_owned()
            .collect();
    let value = |name: &str| {
        query
            .iter()
            .find(|(n, _)| n == name)
            .map_or("", |(_, v)| v.trim())
    };
    let limit = LIMITS
        .into_iter()
        .find(|l| l.to_string() == value("limit"))
        .unwrap_or(LIMITS[0]);
    let actor = Some(value("actor")).filter(|a| !a.is_empty());
    let entries = ops::audit::list_entries(db, &visit.caller()?, actor, limit)?;
    let mut field = Field::new("actor", "Who (an email, a token prefix, or cli)", "text");
    field.value = value("actor").to_string();
    let page = AuditPage {
        nav: Some(visit.nav()),
        actor: field,
        limits: LIMITS,
        limit,
        entries,
    };
    Ok(pages::html(200, &page))
}
