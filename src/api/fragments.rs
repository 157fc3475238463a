//! Fragments of a site: `GET …/fragments` and the whole-object `PUT …/fragments/{ref}`.

use super::site_scope::domain_in_path;
use super::{Ctx, Reply};
use crate::domain::FragmentRef;
use crate::error::ApiError;
use crate::ops;
use crate::wire;
use serde_json::Value;

pub fn list_fragments(ctx: &mut Ctx, domain: &str) -> Result<Reply, ApiError> {
    let domain = domain_in_path(domain)?;
    let fragments = ops::fragments::list_fragments(&mut *ctx.db, &ctx.caller, &domain)?;
    Ok(Reply::ok(wire::fragment_list_json(&fragments)))
}

pub fn put_fragment(
    ctx: &mut Ctx,
    domain: &str,
    raw_ref: &str,
    body: &Value,
) -> Result<Reply, ApiError> {
    let write = wire::fragment_write(body)?;
    let fragment_ref = FragmentRef::from_path_segment(raw_ref)?;
    let domain = domain_in_path(domain)?;
    let put =
        ops::fragments::put_fragment(&mut *ctx.db, &ctx.caller, &domain, &fragment_ref, write)?;
    let body = wire::fragment_write_json(&put.fragment.record, &put.warnings);
    Ok(Reply::created_or_updated(put.fragment.created, body))
}
