//! Sites, for every member: the list with the form that adds one (and the first steps of an
//! organisation that has none), each site's page (its fragments with their cards, its default,
//! its rules, its icon, the "test a page" box), its name, its default, and its deletion after
//! a confirmation page that names what goes with it (`ops::sites::site_deletion`). Every write
//! goes through `ops` with `/v1`'s rules and messages; a refusal is shown next to its field.

use super::answers;
use super::confirm::{self, Confirm};
use super::context::{Answer, PageContext};
use super::inputs::{self, Failed, Inputs};
use super::layout::Layout;
use super::notice::Notice;
use super::refusal::PageRefusal;
use super::site_forms::{key_value_list, DefaultForm, FragmentForm, RuleForm};
use super::site_forms::{SiteForm, SiteNameForm, TestPageForm};
use crate::db::cards::EligibleCard;
use crate::db::fragments::FragmentRow;
use crate::db::sites::SiteRow;
use crate::delivery::diagnosis::{self, Step};
use crate::delivery::page::Page;
use crate::domain::DomainName;
use crate::http::Response;
use crate::ops;
use crate::ops::reports::Touched;
use crate::ops::site_map::{MappedFragment, SiteMap};
use crate::ops::sites::{SiteWrite, WhatGoes};
use crate::ops::Caller;
use askama::Template;

#[derive(Template)]
#[template(path = "console/sites.html")]
pub struct SitesPage {
    pub layout: Layout,
    pub sites: Vec<SiteRow>,
    pub create: Inputs,
    pub alert: Option<String>,
}

/// A card on the site's page.
pub struct CardView {
    pub id: String,
    pub name: String,
    pub status: &'static str,
    /// The operator's card: it has no page in the console.
    pub platform: bool,
}

pub struct FragmentView {
    pub id: String,
    pub reference: Option<String>,
    pub name: String,
    pub lang: &'static str,
    pub status: &'static str,
    pub active: bool,
    pub description: Option<String>,
    pub key_values: Vec<String>,
    pub warnings: Vec<String>,
    pub cards: Vec<CardView>,
}

pub struct RuleView {
    pub id: String,
    pub path: String,
    pub mode: &'static str,
    pub target: String,
}

#[derive(Template)]
#[template(path = "console/site.html")]
pub struct SitePage {
    pub layout: Layout,
    pub domain: String,
    pub name: String,
    pub icon: bool,
    /// The default fragment's reference.
    pub default: Option<String>,
    pub fragments: Vec<FragmentView>,
    /// The organisation's cards eligible on every fragment (an empty list).
    pub everywhere: Vec<CardView>,
    pub rules: Vec<RuleView>,
    pub rename: Inputs,
    pub fragment: Inputs,
    pub default_form: Inputs,
    pub rule: Inputs,
    pub test: Inputs,
    /// What the "test a page" box found, sentence by sentence.
    pub tested: Vec<String>,
    /// A refusal no field names.
    pub alert: Option<String>,
}

/// The path of a site's page.
pub fn site_path(domain: &DomainName) -> String {
    format!("/sites/{domain}")
}

fn sites_page(ctx: &mut PageContext) -> Result<SitesPage, PageRefusal> {
    Ok(SitesPage {
        layout: ctx.layout(),
        sites: ops::sites::list_sites(ctx.db, &ctx.caller)?,
        create: SiteForm::inputs(),
        alert: None,
    })
}

/// `GET /sites`.
pub fn list(ctx: &mut PageContext) -> Answer {
    Ok(answers::html(200, &sites_page(ctx)?))
}

/// `POST /sites`: a new site (an existing one is opened as it is).
pub fn create(ctx: &mut PageContext) -> Answer {
    let caller = ctx.caller.clone();
    inputs::written(create_site(ctx, &caller), |refusals| {
        let mut page = sites_page(ctx)?;
        page.alert = page.create.refused(&ctx.form, refusals);
        Ok(answers::html(422, &page))
    })
}

fn create_site(ctx: &mut PageContext, caller: &Caller) -> Result<Response, Failed> {
    let domain = SiteForm::validate(&ctx.form)?;
    let saved = ops::sites::put_site(ctx.db, caller, &domain, SiteWrite::default())?;
    let notice = match saved.created {
        true => Notice::SiteCreated,
        false => Notice::SiteExists,
    };
    Ok(answers::redirect_with(&site_path(&domain), notice))
}

fn card_view(card: &EligibleCard) -> CardView {
    CardView {
        id: card.card_id.to_string(),
        name: card.name.clone(),
        status: card.status.as_str(),
        platform: card.platform,
    }
}

/// A fragment as the pages name it: its reference, else its name.
pub fn fragment_label(fragment: &FragmentRow) -> String {
    match &fragment.fragment_ref {
        Some(reference) => reference.clone(),
        None => format!("\u{201c}{}\u{201d}", fragment.name),
    }
}

fn fragment_view(mapped: MappedFragment) -> FragmentView {
    let row = mapped.row;
    FragmentView {
        active: row.is_active(),
        id: row.id.to_string(),
        key_values: key_value_list(&row.key_values),
        reference: row.fragment_ref,
        name: row.name,
        lang: row.lang.as_str(),
        status: row.status.as_str(),
        description: row.description,
        warnings: mapped.warnings,
        cards: mapped.cards.iter().map(card_view).collect(),
    }
}

/// The options of a choice of the site's fragments that have a reference (only those can be
/// the default or a rule's target).
fn reference_options(map: &SiteMap) -> Vec<(String, String)> {
    map.fragments
        .iter()
        .filter_map(|f| {
            let reference = f.row.fragment_ref.clone()?;
            Some((reference.clone(), format!("{reference} ({})", f.row.name)))
        })
        .collect()
}

/// The site's page from its map, every form empty.
fn site_page_of(ctx: &PageContext, map: SiteMap) -> SitePage {
    let options = reference_options(&map);
    let label = |id: &crate::ids::FragmentId, reference: &Option<String>| match reference {
        Some(reference) => reference.clone(),
        None => map
            .fragments
            .iter()
            .find(|f| &f.row.id == id)
            .map_or(id.to_string(), |f| fragment_label(&f.row)),
    };
    let rules = map
        .routes
        .iter()
        .map(|route| RuleView {
            id: route.id.to_string(),
            path: route.path.clone(),
            mode: route.match_mode.as_str(),
            target: label(&route.fragment_id, &route.fragment_ref),
        })
        .collect();
    let site = &map.site;
    let current_default = site.default_fragment_ref.as_deref().unwrap_or_default();
    let default_form = DefaultForm::inputs(options.clone(), current_default);
    SitePage {
        layout: ctx.layout(),
        domain: site.domain.clone(),
        name: site.name.clone(),
        icon: site.icon.is_some(),
        default: site.default_fragment_ref.clone(),
        rename: SiteNameForm::inputs(&site.name),
        fragment: FragmentForm { with_ref: true }.inputs(),
        default_form,
        rule: RuleForm::inputs(options, ["", "exact", ""]),
        test: TestPageForm::inputs(),
        tested: Vec::new(),
        alert: None,
        rules,
        everywhere: map.everywhere.iter().map(card_view).collect(),
        fragments: map.fragments.into_iter().map(fragment_view).collect(),
    }
}

/// The site's page, every form empty.
fn site_page(ctx: &mut PageContext, domain: &DomainName) -> Result<SitePage, PageRefusal> {
    let map = ops::site_map::site_map(ctx.db, &ctx.caller, domain)?;
    Ok(site_page_of(ctx, map))
}

/// A site's page form, after its write: the redirect, or the page again with the form as
/// typed and each refusal next to its field (`422`).
pub(super) fn finish(
    ctx: &mut PageContext,
    domain: &DomainName,
    result: Result<Response, Failed>,
    form: fn(&mut SitePage) -> &mut Inputs,
) -> Answer {
    inputs::written(result, |refusals| {
        let mut page = site_page(ctx, domain)?;
        page.alert = form(&mut page).refused(&ctx.form, refusals);
        Ok(answers::html(422, &page))
    })
}

/// `GET /sites/{domain}`: the site's page; with `page_url`, what the "test a page" box found.
/// Opening it looks for the site's icon in the background (once).
pub fn site(ctx: &mut PageContext) -> Answer {
    let domain: DomainName = ctx.captures.get()?;
    let caller = ctx.caller.clone();
    let map = ops::site_map::site_map(ctx.db, &caller, &domain)?;
    ctx.app.icons.look_up(&map.site);
    let mut page = site_page_of(ctx, map);
    if ctx.query.all("page_url").next().is_none() {
        return Ok(answers::html(200, &page));
    }
    match TestPageForm::validate(&ctx.query) {
        Ok(parsed) => {
            page.test = std::mem::take(&mut page.test).sent(&ctx.query);
            page.tested = test_page(ctx, &caller.org.id, parsed, &page);
            Ok(answers::html(200, &page))
        }
        Err(refusals) => {
            page.alert = page.test.refused(&ctx.query, refusals);
            Ok(answers::html(422, &page))
        }
    }
}

/// What `/fragment` resolves the page to now, by the snapshot it serves from and its own
/// resolution (`delivery::diagnosis::resolution`).
fn test_page(
    ctx: &PageContext,
    org_id: &crate::ids::OrgId,
    parsed: Page,
    page: &SitePage,
) -> Vec<String> {
    let Some(snapshot) = ctx.app.delivery.cache.current() else {
        return vec![
            "The service has not loaded its rules yet: try again in a few seconds.".into(),
        ];
    };
    let by_request = "/fragment serves the fragment the request names (fragment_id).";
    let resolved = snapshot
        .org(org_id.as_str())
        .map(|org| diagnosis::resolution(org, &parsed));
    let (Some(domain), step) = resolved.unwrap_or((None, Step::NotASite)) else {
        return vec![format!(
            "{} is not a site of this organisation: {by_request}",
            parsed.host
        )];
    };
    let path = match &parsed.path {
        Some(path) => format!("The page is {path} on {domain}."),
        None => format!("The page's path on {domain} is not a valid path: no rule matches it."),
    };
    let label = |id: &str| {
        page.fragments
            .iter()
            .find(|f| f.id == id)
            .map_or(id.to_string(), |f| match &f.reference {
                Some(reference) => format!("{reference} ({})", f.name),
                None => f.name.clone(),
            })
    };
    let (decided, fragment) = match &step {
        Step::Rule {
            path,
            exact,
            fragment,
        } => {
            let mode = if *exact { "exact" } else { "prefix" };
            (format!("The {mode} rule {path} decides."), Some(*fragment))
        }
        Step::SiteDefault(fragment) => (
            "No rule matches: the site default decides.".into(),
            Some(*fragment),
        ),
        Step::Nothing | Step::NotASite => (
            format!("No rule matches and the site has no default: {by_request}"),
            None,
        ),
    };
    let mut found = vec![path, decided];
    if let Some(fragment) = fragment {
        found.push(format!("Fragment: {}.", label(&fragment.id)));
        if !fragment.active {
            found.push("It is paused: /fragment answers 204, no card.".into());
        }
    }
    found
}

/// `GET /sites/{domain}/icon`: the stored copy of the site's icon.
pub fn icon(ctx: &mut PageContext) -> Answer {
    let domain: DomainName = ctx.captures.get()?;
    let icon = ops::sites::site_icon(ctx.db, &ctx.caller, &domain)?;
    Ok(Response::new(200)
        .header("Content-Type", icon.content_type)
        .body(icon.bytes))
}

/// `POST /sites/{domain}`: the site's name.
pub fn rename(ctx: &mut PageContext) -> Answer {
    let domain: DomainName = ctx.captures.get()?;
    let result = rename_site(ctx, &domain);
    finish(ctx, &domain, result, |page| &mut page.rename)
}

fn rename_site(ctx: &mut PageContext, domain: &DomainName) -> Result<Response, Failed> {
    let name = SiteNameForm::validate(&ctx.form)?;
    ops::sites::rename_site(ctx.db, &ctx.caller, domain, name)?;
    Ok(answers::redirect_with(
        &site_path(domain),
        Notice::SiteSaved,
    ))
}

/// `POST /sites/{domain}/default`: the default fragment, by reference.
pub fn set_default(ctx: &mut PageContext) -> Answer {
    let domain: DomainName = ctx.captures.get()?;
    let result = set_default_fragment(ctx, &domain);
    finish(ctx, &domain, result, |page| &mut page.default_form)
}

fn set_default_fragment(ctx: &mut PageContext, domain: &DomainName) -> Result<Response, Failed> {
    let fragment_ref = DefaultForm::validate(&ctx.form)?;
    ops::sites::put_default_fragment(ctx.db, &ctx.caller, domain, &fragment_ref)?;
    Ok(answers::redirect_with(
        &site_path(domain),
        Notice::DefaultSet,
    ))
}

/// `POST /sites/{domain}/default/clear`: no default fragment (the fragment is kept).
pub fn clear_default(ctx: &mut PageContext) -> Answer {
    let domain: DomainName = ctx.captures.get()?;
    ops::sites::delete_default_fragment(ctx.db, &ctx.caller, &domain)?;
    Ok(answers::redirect_with(
        &site_path(&domain),
        Notice::DefaultCleared,
    ))
}

/// `GET /sites/{domain}/delete`.
pub fn confirm_delete(ctx: &mut PageContext) -> Answer {
    let domain: DomainName = ctx.captures.get()?;
    let goes = ops::sites::site_deletion(ctx.db, &ctx.caller, &domain)?;
    let page = Confirm {
        traffic: confirm::traffic(ctx, Some(Touched::Site(domain.as_str())))?,
        layout: ctx.layout(),
        title: format!("Delete the site {domain}"),
        goes: what_goes(&goes),
        action: format!("/sites/{domain}/delete"),
        button: "Delete the site",
        back: site_path(&domain),
    };
    Ok(answers::html(200, &page))
}

/// `POST /sites/{domain}/delete`.
pub fn delete(ctx: &mut PageContext) -> Answer {
    let domain: DomainName = ctx.captures.get()?;
    ops::sites::delete_site(ctx.db, &ctx.caller, &domain)?;
    Ok(answers::redirect_with("/sites", Notice::SiteDeleted))
}

/// The sentences of a confirmation page: each thing that goes, then the cards it widens.
pub fn what_goes(goes: &WhatGoes) -> Vec<String> {
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
