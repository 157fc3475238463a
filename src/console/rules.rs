//! A site's routing rules, for every member: added on the site's page, each one's page to
//! change it, and its removal. Each value is checked as `/v1` checks a `RouteWrite`, and the
//! writes are `ops::routes`'s.

use super::context::{Answer, PageContext};
use super::form::Form;
use super::inputs::{Failed, Inputs};
use super::notice::Notice;
use super::pages::{self, Layout};
use super::refusal::PageRefusal;
use super::site_forms::{rule_inputs, rule_write};
use super::sites::{self, site_path};
use crate::domain::DomainName;
use crate::error::ApiError;
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
    let caller = ctx.caller()?;
    let result = (|| {
        let route = rule_write(&ctx.form)?;
        ops::routes::create_route(ctx.db, &caller, &domain, &route)?;
        Ok(pages::redirect_with(&site_path(&domain), Notice::RuleAdded))
    })();
    sites::finish(ctx, &domain, result, |page| &mut page.rule)
}

/// The rule's page, its form holding `values` (the rule's, or what was sent).
fn rule_page(
    ctx: &mut PageContext,
    domain: &DomainName,
    id: &RouteId,
    values: Option<&Form>,
) -> Result<RulePage, PageRefusal> {
    let caller = ctx.caller()?;
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
    let fields = rule_inputs("rule", options, current);
    Ok(RulePage {
        layout: ctx.layout(),
        domain: domain.to_string(),
        id: id.to_string(),
        fields: match values {
            Some(form) => fields.sent(form),
            None => fields,
        },
        alert: None,
    })
}

/// `GET /sites/{domain}/rules/{route}`.
pub fn show(ctx: &mut PageContext) -> Answer {
    let domain: DomainName = ctx.captures.get()?;
    let id: RouteId = ctx.captures.get()?;
    Ok(pages::html(200, &rule_page(ctx, &domain, &id, None)?))
}

/// `POST /sites/{domain}/rules/{route}`: the rule changed (its id kept).
pub fn edit(ctx: &mut PageContext) -> Answer {
    let domain: DomainName = ctx.captures.get()?;
    let id: RouteId = ctx.captures.get()?;
    let caller = ctx.caller()?;
    let result: Result<_, Failed> = (|| {
        let route = rule_write(&ctx.form)?;
        ops::routes::update_route(ctx.db, &caller, &domain, &id, &route)?;
        Ok(pages::redirect_with(&site_path(&domain), Notice::RuleSaved))
    })();
    let refusals = match result {
        Ok(response) => return Ok(response),
        Err(failed) => failed.refusals()?,
    };
    let form = std::mem::take(&mut ctx.form);
    let mut page = rule_page(ctx, &domain, &id, Some(&form))?;
    page.alert = page.fields.refuse_all(refusals);
    Ok(pages::html(422, &page))
}

/// `POST /sites/{domain}/rules/{route}/delete`.
pub fn delete(ctx: &mut PageContext) -> Answer {
    let domain: DomainName = ctx.captures.get()?;
    let id: RouteId = ctx.captures.get()?;
    ops::routes::delete_route(ctx.db, &ctx.caller()?, &domain, &id)?;
    Ok(pages::redirect_with(
        &site_path(&domain),
        Notice::RuleDeleted,
    ))
}
