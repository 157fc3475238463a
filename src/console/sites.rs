//! Sites and fragments, for every member: the organisation's sites with their fragments, and
//! the deletion of a site or a fragment after a confirmation page that names what goes with it
//! (`ops::sites::site_deletion`, `ops::fragments::fragment_deletion`, the same reckoning the
//! deletion makes).

use super::confirm::Confirm;
use super::context::{Answer, PageContext};
use super::notice::Notice;
use super::pages::{self, Layout};
use crate::db::fragments::FragmentRow;
use crate::db::sites::SiteRow;
use crate::domain::DomainName;
use crate::ids::FragmentId;
use crate::ops;
use crate::ops::sites::WhatGoes;
use askama::Template;

#[derive(Template)]
#[template(path = "console/sites.html")]
pub struct SitesPage {
    pub layout: Layout,
    pub sites: Vec<(SiteRow, Vec<FragmentRow>)>,
}

/// `GET /sites`.
pub fn list(ctx: &mut PageContext) -> Answer {
    let sites = ops::sites::list_sites_with_fragments(ctx.db, &ctx.caller()?)?;
    let page = SitesPage {
        layout: ctx.layout(),
        sites,
    };
    Ok(pages::html(200, &page))
}

/// `GET /sites/{domain}/delete`.
pub fn confirm_delete(ctx: &mut PageContext) -> Answer {
    let domain: DomainName = ctx.captures.get()?;
    let goes = ops::sites::site_deletion(ctx.db, &ctx.caller()?, &domain)?;
    let page = Confirm {
        layout: ctx.layout(),
        title: format!("Delete the site {domain}"),
        goes: what_goes(&goes),
        action: format!("/sites/{domain}/delete"),
        button: "Delete the site",
        back: "/sites".into(),
    };
    Ok(pages::html(200, &page))
}

/// `POST /sites/{domain}/delete`.
pub fn delete(ctx: &mut PageContext) -> Answer {
    let domain: DomainName = ctx.captures.get()?;
    ops::sites::delete_site(ctx.db, &ctx.caller()?, &domain)?;
    Ok(pages::redirect_with("/sites", Notice::SiteDeleted))
}

/// `GET /fragments/{fragment}/delete`.
pub fn confirm_delete_fragment(ctx: &mut PageContext) -> Answer {
    let id: FragmentId = ctx.captures.get()?;
    let goes = ops::fragments::fragment_deletion(ctx.db, &ctx.caller()?, &id)?;
    let page = Confirm {
        layout: ctx.layout(),
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

/// `POST /fragments/{fragment}/delete`.
pub fn delete_fragment(ctx: &mut PageContext) -> Answer {
    let id: FragmentId = ctx.captures.get()?;
    ops::fragments::delete_fragment(ctx.db, &ctx.caller()?, &id)?;
    Ok(pages::redirect_with("/sites", Notice::FragmentDeleted))
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
            "Card {card} is eligible only on what goes: it goes back to draft, so that it is not \
             shown everywhere in the organisation"
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
