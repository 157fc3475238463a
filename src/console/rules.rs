//! A site's routing rules, for every member: added on the site's page, each one's page to
//! change it, and its removal. Each value is checked as `/v1` checks a `RouteWrite`, and the
//! writes are `ops::routes`'s.

use super::context::{Answer, PageContext};
use super::inputs::{self, Failed, Inputs};
use super::notice::Notice;
use super::pages::{self, Layout};
use super::refusal::PageRefusal;
use super::site_forms::RuleForm;
use super::sites::{self, site_path};
use crate::domain::DomainName;
use crate::error::ApiError;
use crate::http::Response;
use crate::ids::RouteId;
use crate::ops;
use askama::Template;

#[derive(Template)]
#[template(path = "console/rule.html")]
pub struct RulePage {
    pub layout: Layout,
    pub domain: String,
    pub id: String,
    pub fields: Inputs,
    pub alert: Option<String>,
}

/// `POST /sites/{domain}/rules`: a new rule.
pub fn add(ctx: &mut PageContext) -> Answer {
    let domain: DomainName = ctx.captures.get()?;
    let result = add_rule(ctx, &domain);
    sites::finish(ctx, &domain, result, |page| &mut page.rule)
}

fn add_rule(ctx: &mut PageContext, domain: &DomainName) -> Result<Response, Failed> {
    let route = RuleForm::validate(&ctx.form)?;
    ops::routes::create_route(ctx.db, &ctx.caller, domain, &route)?;
    Ok(pages::redirect_with(&site_path(domain), Notice::RuleAdded))
}

/// The rule's page, its form holding the rule's values.
fn rule_page(
    ctx: &mut PageContext,
    domain: &DomainName,
    id: &RouteId,
) -> Result<RulePage, PageRefusal> {
    let caller = ctx.caller.clone();
    let routes = ops::routes::list_routes(ctx.db, &caller, domain)?;
    let route = routes
        .iter()
        .find(|route| &route.id == id)
        .ok_or(ApiError::NotFound)?;
    let options = ops::fragments::list_fragments(ctx.db, &caller, domain)?
        .into_iter()
        .filter_map(|f| {
            let reference = f.fragment_ref?;
            Some((reference.clone(), format!("{reference} ({})", f.name)))
        })
        .collect();
    let current = [
        route.path.as_str(),
        route.match_mode.as_str(),
        route.fragment_ref.as_deref().unwrap_or_default(),
    ];
    let fields = RuleForm::inputs(options, current);
    Ok(RulePage {
        layout: ctx.layout(),
        domain: domain.to_string(),
        id: id.to_string(),
        fields,
        alert: None,
    })
}

/// `GET /sites/{domain}/rules/{route}`.
pub fn show(ctx: &mut PageContext) -> Answer {
    let domain: DomainName = ctx.captures.get()?;
    let id: RouteId = ctx.captures.get()?;
    Ok(pages::html(200, &rule_page(ctx, &domain, &id)?))
}

/// `POST /sites/{domain}/rules/{route}`: the rule changed (its id kept).
pub fn edit(ctx: &mut PageContext) -> Answer {
    let domain: DomainName = ctx.captures.get()?;
    let id: RouteId = ctx.captures.get()?;
    let result = edit_rule(ctx, &domain, &id);
    inputs::written(result, |refusals| {
        let mut page = rule_page(ctx, &domain, &id)?;
        page.alert = page.fields.refused(&ctx.form, refusals);
        Ok(pages::html(422, &page))
    })
}

fn edit_rule(ctx: &mut PageContext, domain: &DomainName, id: &RouteId) -> Result<Response, Failed> {
    let route = RuleForm::validate(&ctx.form)?;
    ops::routes::update_route(ctx.db, &ctx.caller, domain, id, &route)?;
    Ok(pages::redirect_with(&site_path(domain), Notice::RuleSaved))
}

/// `POST /sites/{domain}/rules/{route}/delete`.
pub fn delete(ctx: &mut PageContext) -> Answer {
    let domain: DomainName = ctx.captures.get()?;
    let id: RouteId = ctx.captures.get()?;
    ops::routes::delete_route(ctx.db, &ctx.caller, &domain, &id)?;
    Ok(pages::redirect_with(
        &site_path(&domain),
        Notice::RuleDeleted,
    ))
}
