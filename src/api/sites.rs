//! Sites: `GET /v1/sites`, `PUT /v1/sites/{domain}` and the site default fragment
//! (`PUT`/`DELETE …/default-fragment`).

use super::site_scope::{lock_site_in_path, CHANGED_MEANWHILE};
use super::{Ctx, Reply};
use crate::db::{self, fragments::FragmentRow, sites::SiteRow};
use crate::domain::{DomainName, FragmentRef, SiteName};
use crate::error::ApiError;
use crate::ids::OrgId;
use crate::wire::{self, SiteWrite};
use postgres::GenericClient;
use serde_json::Value;

pub fn list_sites(ctx: &mut Ctx) -> Result<Reply, ApiError> {
    let sites = db::sites::list_sites(&mut *ctx.db, &ctx.owner.org.id)?;
    Ok(Reply::ok(wire::site_list_json(&sites)))
}

/// Creates the site (`201`) or updates it (`200`). Absent members keep their value; a default
/// fragment can only be named on an existing site, since the fragment must exist already.
pub fn put_site(ctx: &mut Ctx, domain: &str, body: &Value) -> Result<Reply, ApiError> {
    let write = wire::site_write(body)?;
    let domain = DomainName::from_path_segment(domain)?;
    let org_id = &ctx.owner.org.id;
    let mut tx = ctx.db.transaction()?;
    let (site, created) = match db::sites::lock_site(&mut tx, org_id, &domain)? {
        Some(site) => (update_site(&mut tx, &site, write)?, false),
        None => create_site(&mut tx, org_id, &domain, write)?,
    };
    tx.commit()?;
    Ok(Reply::created_or_updated(created, wire::site_json(&site)))
}

/// Creates the site; when a concurrent request created it meanwhile, updates it instead.
/// The boolean tells whether this call created it.
fn create_site(
    db: &mut impl GenericClient,
    org_id: &OrgId,
    domain: &DomainName,
    write: SiteWrite,
) -> Result<(SiteRow, bool), ApiError> {
    if write.default_fragment_ref.is_some() {
        return Err(not_an_active_fragment("default_fragment_ref"));
    }
    let name = match &write.name {
        Some(name) => name.clone(),
        None => SiteName::parse("")?,
    };
    if let Some(id) = db::sites::insert_site(db, org_id, domain, &name)? {
        return Ok((db::sites::site_by_id(db, id)?, true));
    }
    let site = db::sites::lock_site(db, org_id, domain)?
        .ok_or_else(|| ApiError::conflict("domain", CHANGED_MEANWHILE))?;
    Ok((update_site(db, &site, write)?, false))
}

fn update_site(
    db: &mut impl GenericClient,
    site: &SiteRow,
    write: SiteWrite,
) -> Result<SiteRow, ApiError> {
    let default_id = match &write.default_fragment_ref {
        Some(fragment_ref) => {
            Some(active_fragment(db, site, fragment_ref, "default_fragment_ref")?.id)
        }
        None => site.default_fragment_id.clone(),
    };
    db::sites::update_site(db, site.id, write.name.as_ref(), default_id.as_ref())?;
    Ok(db::sites::site_by_id(db, site.id)?)
}

/// Makes an active fragment of the site its default; answers the site.
pub fn put_default_fragment(ctx: &mut Ctx, domain: &str, body: &Value) -> Result<Reply, ApiError> {
    let fragment_ref = wire::default_fragment_write(body)?;
    let mut tx = ctx.db.transaction()?;
    let site = lock_site_in_path(&mut tx, &ctx.owner.org.id, domain)?;
    let fragment = active_fragment(&mut tx, &site, &fragment_ref, "ref")?;
    db::sites::update_site(&mut tx, site.id, None, Some(&fragment.id))?;
    let site = db::sites::site_by_id(&mut tx, site.id)?;
    tx.commit()?;
    Ok(Reply::ok(wire::site_json(&site)))
}

/// Clears the default (the fragment itself is kept); repeatable.
pub fn delete_default_fragment(
    ctx: &mut Ctx,
    domain: &str,
    body: &Value,
) -> Result<Reply, ApiError> {
    wire::empty_write(body)?;
    let mut tx = ctx.db.transaction()?;
    let site = lock_site_in_path(&mut tx, &ctx.owner.org.id, domain)?;
    db::sites::update_site(&mut tx, site.id, None, None)?;
    let site = db::sites::site_by_id(&mut tx, site.id)?;
    tx.commit()?;
    Ok(Reply::ok(wire::site_json(&site)))
}

/// The site's fragment with this reference, which must be active; else `422` on `field`.
fn active_fragment(
    db: &mut impl GenericClient,
    site: &SiteRow,
    fragment_ref: &FragmentRef,
    field: &str,
) -> Result<FragmentRow, ApiError> {
    db::fragments::find_by_ref(db, site.id, fragment_ref)?
        .filter(FragmentRow::is_active)
        .ok_or_else(|| not_an_active_fragment(field))
}

fn not_an_active_fragment(field: &str) -> ApiError {
    ApiError::validation(field, "no active fragment of this site has this reference")
}
