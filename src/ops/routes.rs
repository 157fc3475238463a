//! Routing rules of a site: list, add one, replace all, remove one. Every write holds the site
//! lock from its checks to its commit, so the ceiling and uniqueness checks hold and concurrent
//! replacements end with one of the written lists.

use super::audit::{self, AuditEntry, Fields, Operation, NONE};
use super::sites::{locked_site, site};
use super::{conflict_on_unique, Caller, CHANGED_MEANWHILE};
use crate::db::{self, routes::NewRoute, routes::RouteRow, sites::SiteRow};
use crate::domain::{CanonicalPath, DomainName, FragmentRef, MatchMode};
use crate::error::ApiError;
use crate::ids::{FragmentId, RouteId, SiteId};
use postgres::GenericClient;
use std::collections::HashMap;

/// A site holds at most this many rules.
pub const MAX_ROUTES_PER_SITE: usize = 200;

const RULE_EXISTS: &str = "rule already exists on this site";

/// One rule as written: canonical path, match mode and the target's reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteWrite {
    pub path: CanonicalPath,
    pub mode: MatchMode,
    pub fragment_ref: FragmentRef,
}

/// The `422` of a site over its rule ceiling.
pub fn too_many_routes() -> ApiError {
    ApiError::validation(
        "routes",
        format!("a site holds at most {MAX_ROUTES_PER_SITE} rules"),
    )
}

pub fn list_routes(
    db: &mut impl GenericClient,
    caller: &Caller,
    domain: &DomainName,
) -> Result<Vec<RouteRow>, ApiError> {
    let site = site(db, caller, domain)?;
    Ok(db::routes::list_routes(db, site.id)?)
}

/// Adds one rule: its target must be a fragment of the site (paused accepted), its canonical
/// path and match mode new to the site, and the site under its ceiling.
pub fn create_route(
    db: &mut impl GenericClient,
    caller: &Caller,
    domain: &DomainName,
    route: &RouteWrite,
) -> Result<RouteRow, ApiError> {
    let mut tx = db.transaction()?;
    let (site, target) = site_and_target(&mut tx, caller, domain, route)?;
    let new_route = route.with_target(&target);
    if db::routes::route_exists(&mut tx, site.id, &route.path, route.mode)? {
        return Err(ApiError::conflict("path_prefix", RULE_EXISTS));
    }
    if db::routes::count_routes(&mut tx, site.id)? >= MAX_ROUTES_PER_SITE as i64 {
        return Err(too_many_routes());
    }
    let created = db::routes::insert_route(&mut tx, site.id, &new_route)
        .map_err(conflict_on_unique("path_prefix", RULE_EXISTS))?;
    audit::record(
        &mut tx,
        caller,
        route_entry(Operation::CreateRoute, &created, domain),
    )?;
    tx.commit()?;
    Ok(created)
}

/// Replaces every rule of the site with the list: all of it is checked first, then applied in
/// one transaction; every rule gets a new id.
pub fn replace_routes(
    db: &mut impl GenericClient,
    caller: &Caller,
    domain: &DomainName,
    routes: &[RouteWrite],
) -> Result<Vec<RouteRow>, ApiError> {
    let mut tx = db.transaction()?;
    let site = locked_site(&mut tx, caller, domain)?;
    let before = db::routes::list_routes(&mut tx, site.id)?;
    let targets = target_ids(&mut tx, site.id, routes)?;
    let new_routes = routes
        .iter()
        .enumerate()
        .map(|(index, route)| resolve(route, &targets, &format!("routes[{index}].ref")))
        .collect::<Result<Vec<_>, _>>()?;
    db::routes::delete_all_routes(&mut tx, site.id)?;
    db::routes::insert_routes(&mut tx, site.id, &new_routes)
        .map_err(conflict_on_unique("routes", CHANGED_MEANWHILE))?;
    let stored = db::routes::list_routes(&mut tx, site.id)?;
    let entry = AuditEntry::new(Operation::ReplaceRoutes, "site", domain.as_str())
        .named(site.name.as_str())
        .change("rules", rules_words(&before), rules_words(&stored));
    audit::record(&mut tx, caller, entry)?;
    tx.commit()?;
    Ok(stored)
}

/// Rewrites one rule of the caller's site (a console action; its id is kept), by the checks
/// of [`create_route`] but the ceiling: another rule of the same path and match mode is a
/// conflict.
pub fn update_route(
    db: &mut impl GenericClient,
    caller: &Caller,
    domain: &DomainName,
    id: &RouteId,
    route: &RouteWrite,
) -> Result<RouteRow, ApiError> {
    let mut tx = db.transaction()?;
    let (site, target) = site_and_target(&mut tx, caller, domain, route)?;
    let before = db::routes::list_routes(&mut tx, site.id)?
        .into_iter()
        .find(|rule| rule.id == *id)
        .ok_or(ApiError::NotFound)?;
    let new_route = route.with_target(&target);
    let updated = db::routes::update_route(&mut tx, site.id, id, &new_route)
        .map_err(conflict_on_unique("path_prefix", RULE_EXISTS))?
        .ok_or(ApiError::NotFound)?;
    let entry = route_entry(Operation::UpdateRoute, &updated, domain).changes(&before, &updated);
    audit::record(&mut tx, caller, entry)?;
    tx.commit()?;
    Ok(updated)
}

/// Removes one rule of the caller's site and answers it; another site's rule is not found.
pub fn delete_route(
    db: &mut impl GenericClient,
    caller: &Caller,
    domain: &DomainName,
    id: &RouteId,
) -> Result<RouteRow, ApiError> {
    let mut tx = db.transaction()?;
    let site = site(&mut tx, caller, domain)?;
    let removed = db::routes::delete_route(&mut tx, site.id, id)?.ok_or(ApiError::NotFound)?;
    audit::record(
        &mut tx,
        caller,
        route_entry(Operation::DeleteRoute, &removed, domain),
    )?;
    tx.commit()?;
    Ok(removed)
}

/// A rule's entry, named by its path, its match mode and its site as the write left them.
fn route_entry<'a>(
    operation: Operation,
    rule: &'a RouteRow,
    domain: &DomainName,
) -> AuditEntry<'a> {
    let name = format!("{} ({}) on {domain}", rule.path, rule.match_mode.as_str());
    AuditEntry::new(operation, "route", rule.id.as_str()).named(name)
}

impl RouteRow {
    /// The fragment the rule leads to: its reference, or its id when it has none.
    fn target(&self) -> &str {
        self.fragment_ref
            .as_deref()
            .unwrap_or(self.fragment_id.as_str())
    }
}

impl Fields for RouteRow {
    fn fields(&self) -> Vec<(&'static str, String)> {
        vec![
            ("path", self.path.clone()),
            ("match", self.match_mode.as_str().to_owned()),
            ("target", self.target().to_owned()),
        ]
    }
}

/// A site's rules as the log shows them: each path, match mode and target.
fn rules_words(rules: &[RouteRow]) -> String {
    if rules.is_empty() {
        return NONE.into();
    }
    let words: Vec<String> = rules
        .iter()
        .map(|r| format!("{} ({}) to {}", r.path, r.match_mode.as_str(), r.target()))
        .collect();
    words.join(", ")
}

/// The caller's site, locked, and the id of `route`'s target (`422` on `ref` when no fragment
/// of the site has its reference).
fn site_and_target(
    db: &mut impl GenericClient,
    caller: &Caller,
    domain: &DomainName,
    route: &RouteWrite,
) -> Result<(SiteRow, FragmentId), ApiError> {
    let site = locked_site(db, caller, domain)?;
    let targets = target_ids(db, site.id, std::slice::from_ref(route))?;
    let target = resolve(route, &targets, "ref")?.fragment_id.clone();
    Ok((site, target))
}

impl RouteWrite {
    /// The rule to store, its target resolved.
    fn with_target<'a>(&'a self, fragment_id: &'a FragmentId) -> NewRoute<'a> {
        NewRoute {
            path: &self.path,
            mode: self.mode,
            fragment_id,
        }
    }
}

/// The fragment ids of the rules' targets, by reference, in one query.
fn target_ids(
    db: &mut impl GenericClient,
    site_id: SiteId,
    routes: &[RouteWrite],
) -> Result<HashMap<String, FragmentId>, ApiError> {
    let refs: Vec<&FragmentRef> = routes.iter().map(|r| &r.fragment_ref).collect();
    Ok(db::fragments::ids_by_ref(db, site_id, &refs)?)
}

/// The rule to store, or `422` on `field` when no fragment of the site has its reference.
fn resolve<'a>(
    route: &'a RouteWrite,
    targets: &'a HashMap<String, FragmentId>,
    field: &str,
) -> Result<NewRoute<'a>, ApiError> {
    let fragment_id = targets.get(route.fragment_ref.as_str()).ok_or_else(|| {
        ApiError::validation(field, "no fragment of this site has this reference")
    })?;
    Ok(route.with_target(fragment_id))
}
