//! Sites: `GET /v1/sites`, `PUT /v1/sites/{domain}` and the site default fragment
//! (`PUT`/`DELETE …/default-fragment`).

use super::site_scope::domain_in_path;
use super::{Ctx, Reply};
use crate::domain::DomainName;
use crate::error::ApiError;
use crate::ops;
use crate::wire;
use serde_json::Value;

pub fn list_sites(ctx: &mut Ctx) -> Result<Reply, ApiError> {
    let sites = ops::sites::list_sites(&mut *ctx.db, &ctx.caller)?;
    Ok(Reply::ok(wire::site_list_json(&sites)))
}

pub fn put_site(ctx: &mut Ctx, domain: &str, body: &Value) -> Result<Reply, ApiError> {
    let write = wire::site_write(body)?;
    let domain = DomainName::from_path_segment(domain)?;
    let saved = ops::sites::put_site(&mut *ctx.db, &ctx.caller, &domain, write)?;
    Ok(Reply::created_or_updated(
        saved.created,
        wire::site_json(&saved.record),
    ))
}

pub fn put_default_fragment(ctx: &mut Ctx, domain: &str, body: &Value) -> Result<Reply, ApiError> {
    let fragment_ref = wire::default_fragment_write(body)?;
    let domain = domain_in_path(domain)?;
    let site = ops::sites::put_default_fragment(&mut *ctx.db, &ctx.caller, &domain, &fragment_ref)?;
    Ok(Reply::ok(wire::site_json(&site)))
}

pub fn delete_default_fragment(
    ctx: &mut Ctx,
    domain: &str,
    body: &Value,
) -> Result<Reply, ApiError> {
    wire::empty_write(body)?;
    let domain = domain_in_path(domain)?;
    let site = ops::sites::delete_default_fragment(&mut *ctx.db, &ctx.caller, &domain)?;
    Ok(Reply::ok(wire::site_json(&site)))
}
