//! A site's routing rules, for every member: added on the site's page, each one's page to
//! change it, and its removal after a confirmation page that says where its pages go instead
//! (`ops::why::rule_deletion`). Each value is checked as `/v1` checks a `RouteWrite`, and the
//! writes are `ops::routes`'s.

use super::answers;
use super::confirm::Confirm;
use super::context::{Answer, PageContext};
use super::inputs::{self, Failed, Inputs};
use super::layout::Layout;
use super::notice::Notice;
use super::refusal::PageRefusal;
use super::site_forms::RuleForm;
use super::sites::{self, site_path};
use crate::db::fragments::FragmentRow;
use crate::db::routes::RouteRow;
use crate::domain::DomainName;
use crate::error::ApiError;
use crate::http::Response;
use crate::ids::RouteId;
use crate::ops;
use crate::ops::why::Instead;
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
    Ok(answers::redirect_with(
        &site_path(domain),
        Notice::RuleAdded,
    ))
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
    Ok(answers::html(200, &rule_page(ctx, &domain, &id)?))
}

/// `POST /sites/{domain}/rules/{route}`: the rule changed (its id kept).
pub fn edit(ctx: &mut PageContext) -> Answer {
    let domain: DomainName = ctx.captures.get()?;
    let id: RouteId = ctx.captures.get()?;
    let result = edit_rule(ctx, &domain, &id);
    inputs::written(result, |refusals| {
        let mut page = rule_page(ctx, &domain, &id)?;
        page.alert = page.fields.refused(&ctx.form, refusals);
        Ok(answers::html(422, &page))
    })
}

fn edit_rule(ctx: &mut PageContext, domain: &DomainName, id: &RouteId) -> Result<Response, Failed> {
    let route = RuleForm::validate(&ctx.form)?;
    ops::routes::update_route(ctx.db, &ctx.caller, domain, id, &route)?;
    Ok(answers::redirect_with(
        &site_path(domain),
        Notice::RuleSaved,
    ))
}

/// What a rule's confirmation says of its traffic: the report counts requests by site,
/// fragment, card and key, not by the rule that resolved them.
const NOT_COUNTED_BY_RULE: &str =
    "The report counts requests by site and fragment, not by rule: the site's and its fragments' numbers are on Reports.";

/// `GET /sites/{domain}/rules/{route}/delete`: the rule, where its pages will go instead, and
/// the button that deletes it (`ops::why::rule_deletion`).
pub fn confirm_delete(ctx: &mut PageContext) -> Answer {
    let domain: DomainName = ctx.captures.get()?;
    let id: RouteId = ctx.captures.get()?;
    let deletion = ops::why::rule_deletion(ctx.db, &ctx.caller, &domain, &id)?;
    let (rule, fragments) = (&deletion.rule, &deletion.fragments);
    let page = Confirm {
        traffic: NOT_COUNTED_BY_RULE.into(),
        layout: ctx.layout(),
        title: format!(
            "Delete the {} rule {} of {domain}",
            rule.match_mode.as_str(),
            rule.path
        ),
        goes: vec![where_pages_go(rule, &deletion.instead, fragments)],
        action: format!("/sites/{domain}/rules/{id}/delete"),
        button: "Delete the rule",
        back: format!("/sites/{domain}/rules/{id}"),
    };
    Ok(answers::html(200, &page))
}

/// The sentence of where `rule`'s pages go once it is deleted.
fn where_pages_go(rule: &RouteRow, instead: &Instead, fragments: &[FragmentRow]) -> String {
    let pages = match rule.match_mode {
        crate::domain::MatchMode::Exact => format!("The page {}", rule.path),
        crate::domain::MatchMode::Prefix => format!("The pages under {}", rule.path),
    };
    let fragment = |id: &str, active: bool| {
        let label = fragments
            .iter()
            .find(|f| f.id.as_str() == id)
            .map_or(id.to_string(), sites::fragment_label);
        let paused = if active {
            ""
        } else {
            ", which is paused: no card"
        };
        format!("the fragment {label}{paused}")
    };
    match instead {
        Instead::Rule {
            path,
            exact,
            fragment_id,
            active,
        } => {
            let mode = if *exact { "exact" } else { "prefix" };
            let to = fragment(fragment_id, *active);
            format!("{pages} will go to the {mode} rule {path} instead: {to}.")
        }
        Instead::SiteDefault {
            fragment_id,
            active,
        } => {
            let to = fragment(fragment_id, *active);
            format!("{pages} will go to the site default instead: {to}.")
        }
        Instead::Nothing => format!(
            "{pages} will go to no fragment: no other rule matches and the site has no default, \
             so /fragment serves only the fragment a request names (fragment_id)."
        ),
    }
}

/// `POST /sites/{domain}/rules/{route}/delete`.
pub fn delete(ctx: &mut PageContext) -> Answer {
    let domain: DomainName = ctx.captures.get()?;
    let id: RouteId = ctx.captures.get()?;
    ops::routes::delete_route(ctx.db, &ctx.caller, &domain, &id)?;
    Ok(answers::redirect_with(
        &site_path(&domain),
        Notice::RuleDeleted,
    ))
}
