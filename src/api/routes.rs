//! Routing rules of a site: list, add one (`POST`), replace all (`PUT`), remove one
//! (`DELETE`). Every write holds the site lock from its checks to its commit, so the ceiling
//! and uniqueness checks hold and concurrent replacements end with one of the written lists.

use super::site_scope::{conflict_on_unique, lock_site_in_path, site_in_path, CHANGED_MEANWHILE};
use super::{Ctx, Reply};
use crate::db::{self, routes::NewRoute};
use crate::domain::FragmentRef;
use crate::error::ApiError;
use crate::ids::{FragmentId, RouteId, SiteId};
use crate::wire::{self, RouteWrite, MAX_ROUTES_PER_SITE};
use serde_json::Value;
use std::collections::HashMap;

const RULE_EXISTS: &str = "rule already exists on this site";

pub fn list_routes(ctx: &mut Ctx, domain: &str) -> Result<Reply, ApiError> {
    let site = site_in_path(&mut *ctx.db, &ctx.owner.org.id, domain)?;
    let routes = db::routes::list_routes(&mut *ctx.db, site.id)?;
    Ok(Reply::ok(wire::route_list_json(&routes)))
}

/// Adds one rule (`201`): its target must be a fragment of the site (paused accepted), its
/// canonical path and match mode new to the site, and the site under its ceiling.
pub fn create_route(ctx: &mut Ctx, domain: &str, body: &Value) -> Result<Reply, ApiError> {
    let route = wire::route_write(body)?;
    let mut tx = ctx.db.transaction()?;
    let site = lock_site_in_path(&mut tx, &ctx.owner.org.id, domain)?;
    let targets = target_ids(&mut tx, site.id, std::slice::from_ref(&route))?;
    let new_route = resolve(&route, &targets, "ref")?;
    if db::routes::route_exists(&mut tx, site.id, &route.path, route.mode)? {
        return Err(ApiError::conflict("path_prefix", RULE_EXISTS));
    }
    if db::routes::count_routes(&mut tx, site.id)? >= MAX_ROUTES_PER_SITE as i64 {
        return Err(wire::too_many_routes());
    }
    let created = db::routes::insert_route(&mut tx, site.id, &new_route)
        .map_err(conflict_on_unique("path_prefix", RULE_EXISTS))?;
    tx.commit()?;
    Ok(Reply::created(wire::route_json(&created)))
}

/// Replaces every rule of the site with the list (`200` with the new list): all of it is
/// checked first, then applied in one transaction; every rule gets a new id.
pub fn replace_routes(ctx: &mut Ctx, domain: &str, body: &Value) -> Result<Reply, ApiError> {
    let routes = wire::route_list(body)?;
    let mut tx = ctx.db.transaction()?;
    let site = lock_site_in_path(&mut tx, &ctx.owner.org.id, domain)?;
    let targets = target_ids(&mut tx, site.id, &routes)?;
    let new_routes = routes
        .iter()
        .enumerate()
        .map(|(index, route)| resolve(route, &targets, &format!("routes[{index}].ref")))
        .collect::<Result<Vec<_>, _>>()?;
    db::routes::delete_all_routes(&mut tx, site.id)?;
    db::routes::insert_routes(&mut tx, site.id, &new_routes)
        .map_err(conflict_on_unique("routes", CHANGED_MEANWHILE))?;
    let stored = db::routes::list_routes(&mut tx, site.id)?;
    tx.commit()?;
    Ok(Reply::ok(wire::route_list_json(&stored)))
}

/// Removes one rule of the caller's site and answers it; another site's rule is `404`.
pub fn delete_route(
    ctx: &mut Ctx,
    domain: &str,
    id: &str,
    body: &Value,
) -> Result<Reply, ApiError> {
    wire::empty_write(body)?;
    let site = site_in_path(&mut *ctx.db, &ctx.owner.org.id, domain)?;
    let id = RouteId::parse(id).ok_or(ApiError::NotFound)?;
    let removed =
        db::routes::delete_route(&mut *ctx.db, site.id, &id)?.ok_or(ApiError::NotFound)?;
    Ok(Reply::ok(wire::route_json(&removed)))
}

/// The fragment ids of the rules' targets, by reference, in one query.
fn target_ids(
    db: &mut impl postgres::GenericClient,
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
    Ok(NewRoute {
        path: &route.path,
        mode: route.mode,
        fragment_id,
    })
}
