//! Routing rules of a site: list, add one (`POST`), replace all (`PUT`), remove one
//! (`DELETE`).

use super::site_scope::domain_in_path;
use super::{Ctx, Reply};
use crate::error::ApiError;
use crate::ids::RouteId;
use crate::ops;
use crate::wire;
use serde_json::Value;

pub fn list_routes(ctx: &mut Ctx, domain: &str) -> Result<Reply, ApiError> {
    let domain = domain_in_path(domain)?;
    let routes = ops::routes::list_routes(&mut *ctx.db, &ctx.caller, &domain)?;
    Ok(Reply::ok(wire::route_list_json(&routes)))
}

pub fn create_route(ctx: &mut Ctx, domain: &str, body: &Value) -> Result<Reply, ApiError> {
    let route = wire::route_write(body)?;
    let domain = domain_in_path(domain)?;
    let created = ops::routes::create_route(&mut *ctx.db, &ctx.caller, &domain, &route)?;
    Ok(Reply::created(wire::route_json(&created)))
}

pub fn replace_routes(ctx: &mut Ctx, domain: &str, body: &Value) -> Result<Reply, ApiError> {
    let routes = wire::route_list(body)?;
    let domain = domain_in_path(domain)?;
    let stored = ops::routes::replace_routes(&mut *ctx.db, &ctx.caller, &domain, &routes)?;
    Ok(Reply::ok(wire::route_list_json(&stored)))
}

pub fn delete_route(
    ctx: &mut Ctx,
    domain: &str,
    id: &str,
    body: &Value,
) -> Result<Reply, ApiError> {
    wire::empty_write(body)?;
    let domain = domain_in_path(domain)?;
    let id = RouteId::parse(id).ok_or(ApiError::NotFound)?;
    let removed = ops::routes::delete_route(&mut *ctx.db, &ctx.caller, &domain, &id)?;
    Ok(Reply::ok(wire::route_json(&removed)))
}
