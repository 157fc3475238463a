//! Fragments, for every member: made on their site's page (with a reference, or without one:
//! reached through its id only), each one's page to edit it, pause and activate (the site's
//! page then shows the `warnings` `/v1` answers), and the deletion after a confirmation page
//! that names what goes with it (`ops::fragments::fragment_deletion`).

use super::answers;
use super::card_form::key_value_lines;
use super::confirm::{self, Confirm};
use super::context::{Answer, PageContext};
use super::inputs::{self, Failed, Inputs};
use super::layout::Layout;
use super::notice::Notice;
use super::site_forms::FragmentForm;
use super::sites::{self, fragment_label, site_path, what_goes};
use crate::db::fragments::FragmentRow;
use crate::domain::{DomainName, FragmentStatus};
use crate::http::Response;
use crate::ids::FragmentId;
use crate::ops;
use crate::ops::reports::Touched;
use crate::ops::Caller;
use askama::Template;

#[derive(Template)]
#[template(path = "console/fragment.html")]
pub struct FragmentPage {
    pub layout: Layout,
    pub id: String,
    pub domain: String,
    pub label: String,
    pub reference: Option<String>,
    pub status: &'static str,
    pub active: bool,
    pub fields: Inputs,
    pub alert: Option<String>,
}

/// `POST /sites/{domain}/fragments`: a new fragment of the site.
pub fn create(ctx: &mut PageContext) -> Answer {
    let domain: DomainName = ctx.captures.get()?;
    let result = create_fragment(ctx, &domain);
    sites::finish(ctx, &domain, result, |page| &mut page.fragment)
}

fn create_fragment(ctx: &mut PageContext, domain: &DomainName) -> Result<Response, Failed> {
    let (reference, write) = FragmentForm { with_ref: true }.validate(&ctx.form)?;
    let caller = ctx.caller.clone();
    // The site must be this page's: creating a fragment never makes a site here.
    ops::fragments::list_fragments(ctx.db, &caller, domain)?;
    ops::fragments::create_fragment(ctx.db, &caller, domain, reference.as_ref(), write)?;
    Ok(answers::redirect_with(
        &site_path(domain),
        Notice::FragmentCreated,
    ))
}

fn fragment_page(
    fragment: &FragmentRow,
    domain: &DomainName,
    fields: Inputs,
    layout: Layout,
) -> FragmentPage {
    FragmentPage {
        layout,
        id: fragment.id.to_string(),
        domain: domain.to_string(),
        label: fragment_label(fragment),
        reference: fragment.fragment_ref.clone(),
        status: fragment.status.as_str(),
        active: fragment.status == FragmentStatus::Active,
        fields,
        alert: None,
    }
}

/// `GET /fragments/{fragment}`: its form.
pub fn show(ctx: &mut PageContext) -> Answer {
    let id: FragmentId = ctx.captures.get()?;
    let (fragment, domain) = ops::fragments::get_fragment(ctx.db, &ctx.caller, &id)?;
    let mut fields = FragmentForm { with_ref: false }.inputs();
    for input in &mut fields.0 {
        input.value = match input.name {
            "name" => fragment.name.clone(),
            "lang" => fragment.lang.as_str().to_string(),
            "description" => fragment.description.clone().unwrap_or_default(),
            _ => key_value_lines(&fragment.key_values),
        };
    }
    let page = fragment_page(&fragment, &domain, fields, ctx.layout());
    Ok(answers::html(200, &page))
}

/// `POST /fragments/{fragment}`: its name, language, description and key-values.
pub fn edit(ctx: &mut PageContext) -> Answer {
    let id: FragmentId = ctx.captures.get()?;
    let caller = ctx.caller.clone();
    let (fragment, domain) = ops::fragments::get_fragment(ctx.db, &caller, &id)?;
    let result = edit_fragment(ctx, &caller, &fragment, &domain);
    inputs::written(result, |refusals| {
        let mut fields = FragmentForm { with_ref: false }.inputs();
        let alert = fields.refused(&ctx.form, refusals);
        let mut page = fragment_page(&fragment, &domain, fields, ctx.layout());
        page.alert = alert;
        Ok(answers::html(422, &page))
    })
}

fn edit_fragment(
    ctx: &mut PageContext,
    caller: &Caller,
    fragment: &FragmentRow,
    domain: &DomainName,
) -> Result<Response, Failed> {
    let (_, write) = FragmentForm { with_ref: false }.validate(&ctx.form)?;
    ops::fragments::edit_fragment(ctx.db, caller, &fragment.id, write)?;
    Ok(answers::redirect_with(
        &site_path(domain),
        Notice::FragmentSaved,
    ))
}

/// `POST /fragments/{fragment}/status`: pause or activate, from the site's page (which shows
/// what still points at a paused fragment) or from the fragment's own, which it goes back to
/// (`back=fragment`: a name, never an address, so no form can redirect elsewhere).
pub fn set_status(ctx: &mut PageContext) -> Answer {
    let id: FragmentId = ctx.captures.get()?;
    let status = FragmentStatus::parse(ctx.form.get("status"))?;
    let caller = ctx.caller.clone();
    let (_, domain) = ops::fragments::get_fragment(ctx.db, &caller, &id)?;
    ops::fragments::set_fragment_status(ctx.db, &caller, &id, status)?;
    let notice = match status {
        FragmentStatus::Active => Notice::FragmentActive,
        FragmentStatus::Paused => Notice::FragmentPaused,
    };
    let back = match ctx.form.get("back") {
        "fragment" => format!("/fragments/{id}"),
        _ => site_path(&domain),
    };
    Ok(answers::redirect_with(&back, notice))
}

/// `GET /fragments/{fragment}/delete`.
pub fn confirm_delete(ctx: &mut PageContext) -> Answer {
    let id: FragmentId = ctx.captures.get()?;
    let goes = ops::fragments::fragment_deletion(ctx.db, &ctx.caller, &id)?;
    let page = Confirm {
        traffic: confirm::traffic(ctx, Some(Touched::Fragment(id.as_str())))?,
        layout: ctx.layout(),
        title: format!(
            "Delete the fragment {} of {}",
            fragment_label(&goes.fragments[0]),
            goes.domain
        ),
        goes: what_goes(&goes),
        action: format!("/fragments/{id}/delete"),
        button: "Delete the fragment",
        back: format!("/fragments/{id}"),
    };
    Ok(answers::html(200, &page))
}

/// `POST /fragments/{fragment}/delete`.
pub fn delete(ctx: &mut PageContext) -> Answer {
    let id: FragmentId = ctx.captures.get()?;
    let caller = ctx.caller.clone();
    let (_, domain) = ops::fragments::get_fragment(ctx.db, &caller, &id)?;
    ops::fragments::delete_fragment(ctx.db, &caller, &id)?;
    Ok(answers::redirect_with(
        &site_path(&domain),
        Notice::FragmentDeleted,
    ))
}
