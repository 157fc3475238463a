//! Fragments of a site: `GET …/fragments` and the whole-object `PUT …/fragments/{ref}`, which
//! creates or replaces a fragment and warns when the write leaves a fragment paused that pages
//! still resolve to (as the site default or a rule's target).

use super::site_scope::{conflict_on_unique, lock_site_in_path, site_in_path, CHANGED_MEANWHILE};
use super::{Ctx, Reply};
use crate::db::{self, fragments::FragmentRow, sites::SiteRow};
use crate::domain::{FragmentRef, FragmentStatus};
use crate::error::ApiError;
use crate::ids::SiteId;
use crate::wire::{self, FragmentWrite};
use postgres::GenericClient;
use serde_json::Value;

pub fn list_fragments(ctx: &mut Ctx, domain: &str) -> Result<Reply, ApiError> {
    let site = site_in_path(&mut *ctx.db, &ctx.owner.org.id, domain)?;
    let fragments = db::fragments::list_fragments(&mut *ctx.db, site.id)?;
    Ok(Reply::ok(wire::fragment_list_json(&fragments)))
}

/// Creates (`201`) or replaces (`200`) the fragment: members left out take their defaults,
/// except `status`, which is kept (active on creation).
pub fn put_fragment(
    ctx: &mut Ctx,
    domain: &str,
    raw_ref: &str,
    body: &Value,
) -> Result<Reply, ApiError> {
    let write = wire::fragment_write(body)?;
    let fragment_ref = FragmentRef::from_path_segment(raw_ref)?;
    let mut tx = ctx.db.transaction()?;
    let site = lock_site_in_path(&mut tx, &ctx.owner.org.id, domain)?;
    let (fragment, created) = write_fragment(&mut tx, site.id, &fragment_ref, write)?;
    let warnings = pause_warnings(&mut tx, &site, &fragment)?;
    tx.commit()?;
    let body = wire::fragment_write_json(&fragment, &warnings);
    Ok(Reply::created_or_updated(created, body))
}

/// Replaces the fragment with this reference, or creates it; the boolean tells which.
fn write_fragment(
    db: &mut impl GenericClient,
    site_id: SiteId,
    fragment_ref: &FragmentRef,
    write: FragmentWrite,
) -> Result<(FragmentRow, bool), ApiError> {
    match db::fragments::find_by_ref(db, site_id, fragment_ref)? {
        Some(current) => {
            let fields = write.into_fields(current.status);
            Ok((
                db::fragments::update_fragment(db, &current.id, &fields)?,
                false,
            ))
        }
        None => {
            let fields = write.into_fields(FragmentStatus::Active);
            let inserted = db::fragments::insert_fragment(db, site_id, Some(fragment_ref), &fields)
                .map_err(conflict_on_unique("ref", CHANGED_MEANWHILE))?;
            Ok((inserted, true))
        }
    }
}

/// What still points at a fragment the write leaves paused.
fn pause_warnings(
    db: &mut impl GenericClient,
    site: &SiteRow,
    fragment: &FragmentRow,
) -> Result<Vec<String>, ApiError> {
    if fragment.is_active() {
        return Ok(Vec::new());
    }
    let is_default = site.default_fragment_id.as_ref() == Some(&fragment.id);
    let rules = db::routes::count_targeting(db, &fragment.id)?;
    Ok(warnings(is_default, rules))
}

/// The warning words are fixed so that scripts can match them: `site default` first, then
/// `target of N rules` (the same words for every N).
fn warnings(is_default: bool, rules: i64) -> Vec<String> {
    let default = is_default.then(|| "site default".to_owned());
    let targeted = (rules > 0).then(|| format!("target of {rules} rules"));
    default.into_iter().chain(targeted).collect()
}

#[cfg(test)]
mod tests {
    use super::warnings;

    #[test]
    fn warnings_name_default_then_rules() {
        let cases: [(bool, i64, &[&str]); 5] = [
            (false, 0, &[]),
            (true, 0, &["site default"]),
            (false, 1, &["target of 1 rules"]),
            (false, 2, &["target of 2 rules"]),
            (true, 200, &["site default", "target of 200 rules"]),
        ];
        for (is_default, rules, expected) in cases {
            assert_eq!(
                warnings(is_default, rules),
                expected,
                "{is_default} {rules}"
            );
        }
    }
}
