//! Sites and fragments, for every member: the organisation's sites with their fragments, and
//! the deletion of a site or a fragment after a confirmation page that names what goes with it
//! (`ops::sites::site_deletion`, `ops::fragments::fragment_deletion`, the same reckoning the
//! deletion makes).

use super::confirm::Confirm;
use super::pages::{self, Nav};
use super::session::Visit;
use super::Refusal;
use crate::db::fragments::FragmentRow;
use crate::db::sites::SiteRow;
use crate::domain::DomainName;
use crate::http::{Request, Response};
use crate::ids::FragmentId;
use crate::ops::sites::WhatGoes;
use crate::ops::{self, Caller};
use askama::Template;
use postgres::Client;

#[derive(Template)]
#[template(path = "console/sites.html")]
pub struct SitesPage {
    pub nav: Option<Nav>,
    pub notice: Option<&'static str>,
    pub sites: Vec<(SiteRow, Vec<FragmentRow>)>,
}

/// `GET /sites`.
pub fn sites_page(db: &mut Client, visit: &Visit, request: &Request) -> Result<Response, Refusal> {
    let caller = visit.caller()?;
    let mut sites = Vec::new();
    for site in ops::sites::list_sites(db, &caller)? {
        let domain = DomainName::parse(&site.domain)?;
        let fragments = ops::fragments::list_fragments(db, &caller, &domain)?;
        sites.push((site, fragments));
    }
    let page = SitesPage {
        nav: Some(visit.nav()),
        notice: pages::notice(request),
        sites,
    };
    Ok(pages::html(200, &page))
}

/// `GET /sites/{domain}/delete`.
pub fn confirm_site(
    db: &mut Client,
    visit: &Visit,
    domain: &DomainName,
) -> Result<Response, Refusal> {
    let goes = ops::sites::site_deletion(db, &visit.caller()?, domain)?;
    let page = Confirm {
        nav: Some(visit.nav()),
        title: format!("Delete the site {domain}"),
        goes: what_goes(&goes),
        action: format!("/sites/{domain}/delete"),
        button: "Delete the site",
        back: "/sites".into(),
    };
    Ok(pages::html(200, &page))
}

/// `POST /sites/{domain}/delete`.
pub fn delete_site(
    db: &mut Client,
    visit: &Visit,
    domain: &DomainName,
) -> Result<Response, Refusal> {
    ops::sites::delete_site(db, &visit.caller()?, domain)?;
    Ok(pages::redirect("/sites?notice=site-deleted"))
}

/// `GET /fragments/{id}/delete`.
pub fn confirm_fragment(
    db: &mut Client,
    visit: &Visit,
    id: &FragmentId,
) -> Result<Response, Refusal> {
    let caller: Caller = visit.caller()?;
    let goes = ops::fragments::fragment_deletion(db, &caller, id)?;
    let page = Confirm {
        nav: Some(visit.nav()),
        title: format!(
            "Delete the fragment {} of {}",
            fragment_label(&goes.fragments[0]),
            goes.domain
        ),
        goes: what_goes(&goes),
        action: format!("/fragments/{id}/delete"),
        button: "Delete the fragment",
        back: "/sites".into(),
    };
    Ok(pages::html(200, &page))
}

/// `POST /fragments/{id}/delete`.
pub fn delete_fragment(
    db: &mut Client,
    visit: &Visit,
    id: &FragmentId,
) -> Result<Response, Refusal> {
    ops::fragments::delete_fragment(db, &visit.caller()?, id)?;
    Ok(pages::redirect("/sites?notice=fragment-deleted"))
}

/// A fragment as the pages name it: its reference, else its name.
fn fragment_label(fragment: &FragmentRow) -> String {
    match &fragment.fragment_ref {
        Some(reference) => reference.clone(),
        None => format!("\u{201c}{}\u{201d}", fragment.name),
    }
}

/// The sentences of a confirmation page: each thing that goes, then the cards it widens.
fn what_goes(goes: &WhatGoes) -> Vec<String> {
    let fragments: Vec<String> = goes.fragments.iter().map(fragment_label).collect();
    let mut lines = vec![
        format!("Fragments: {}", list_or_none(&fragments)),
        format!("Rules: {}", goes.rules),
        format!("Eligibility entries: {}", goes.eligibility_entries),
    ];
    if let Some(domain) = &goes.default_of {
        lines.push(format!(
            "The site default: {domain} has no default fragment after"
        ));
    }
    lines.extend(goes.widened.iter().map(|card| {
        format!(
            "Card {card} is eligible only on what goes: it becomes eligible everywhere in the \
             organisation"
        )
    }));
    lines
}

fn list_or_none(items: &[String]) -> String {
    match items.is_empty() {
        true => "none".into(),
        false => items.join(", "),
    }
}
