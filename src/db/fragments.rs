//! Fragments of a site. Through the API a fragment is found by its reference only, so one
//! made in the console without a reference (`ref` null) is listed but never written there.

use super::{read_all, read_opt};
use crate::domain::{Description, FragmentName, FragmentRef, FragmentStatus, KeyValues, Lang};
use crate::ids::{FragmentId, OrgId, SiteId};
use postgres::types::ToSql;
use postgres::GenericClient;
use serde_json::Value;
use std::collections::HashMap;

/// A fragment as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct FragmentRow {
    pub id: FragmentId,
    pub fragment_ref: Option<String>,
    pub name: String,
    pub lang: Lang,
    pub description: Option<String>,
    pub key_values: Value,
    pub status: FragmentStatus,
    pub created_at: String,
    pub updated_at: String,
}

impl FragmentRow {
    pub fn is_active(&self) -> bool {
        self.status == FragmentStatus::Active
    }
}

/// Everything a fragment write stores.
#[derive(Debug, Clone, PartialEq)]
pub struct FragmentFields {
    pub name: FragmentName,
    pub lang: Lang,
    pub description: Option<Description>,
    pub key_values: KeyValues,
    pub status: FragmentStatus,
}

const COLUMNS: &str = "id, ref, name, lang, description, key_values, status,
     rfc3339(created_at), rfc3339(updated_at)";

fn fragment_row(r: &postgres::Row) -> Result<FragmentRow, postgres::Error> {
    Ok(FragmentRow {
        id: r.try_get(0)?,
        fragment_ref: r.try_get(1)?,
        name: r.try_get(2)?,
        lang: r.try_get(3)?,
        description: r.try_get(4)?,
        key_values: r.try_get(5)?,
        status: r.try_get(6)?,
        created_at: r.try_get(7)?,
        updated_at: r.try_get(8)?,
    })
}

/// The site's fragments by reference in byte order (the column is `COLLATE "C"`), those
/// without one last.
pub fn list_fragments(
    db: &mut impl GenericClient,
    site_id: SiteId,
) -> Result<Vec<FragmentRow>, postgres::Error> {
    let sql = format!(
        "SELECT {COLUMNS} FROM fragments WHERE site_id = $1
          ORDER BY ref NULLS LAST, created_at, id"
    );
    read_all(&db.query(&sql, &[&site_id])?, fragment_row)
}

/// Every fragment of the organisation's sites with its site, in one query (a page listing
/// each site's fragments reads them at once, not once per site), ordered as [`list_fragments`]
/// orders each site's.
pub fn list_org_fragments(
    db: &mut impl GenericClient,
    org_id: &OrgId,
) -> Result<Vec<(SiteId, FragmentRow)>, postgres::Error> {
    let sql = format!(
        "SELECT {COLUMNS}, site_id FROM fragments
          WHERE site_id IN (SELECT id FROM sites WHERE org_id = $1)
          ORDER BY site_id, ref NULLS LAST, created_at, id"
    );
    read_all(&db.query(&sql, &[org_id])?, |r| {
        Ok((r.try_get(9)?, fragment_row(r)?))
    })
}

/// The site's fragment with this reference. `KEY SHARE` keeps it from being deleted before
/// the transaction ends, so a default or a rule set to it next cannot lose its target.
pub fn find_by_ref(
    db: &mut impl GenericClient,
    site_id: SiteId,
    fragment_ref: &FragmentRef,
) -> Result<Option<FragmentRow>, postgres::Error> {
    let sql =
        format!("SELECT {COLUMNS} FROM fragments WHERE site_id = $1 AND ref = $2 FOR KEY SHARE");
    read_opt(db.query_opt(&sql, &[&site_id, fragment_ref])?, fragment_row)
}

/// The organisation's fragment with this id, and the domain of the site that holds it.
pub fn find_in_org(
    db: &mut impl GenericClient,
    org_id: &OrgId,
    id: &FragmentId,
) -> Result<Option<(FragmentRow, String)>, postgres::Error> {
    let sql = format!(
        "SELECT {COLUMNS}, (SELECT domain FROM sites WHERE sites.id = fragments.site_id)
           FROM fragments
          WHERE id = $2 AND site_id IN (SELECT id FROM sites WHERE org_id = $1)"
    );
    read_opt(db.query_opt(&sql, &[org_id, id])?, |r| {
        Ok((fragment_row(r)?, r.try_get(9)?))
    })
}

/// The ids of those of `refs` that name a fragment of the site, by reference (locked as in
/// [`find_by_ref`]).
pub fn ids_by_ref(
    db: &mut impl GenericClient,
    site_id: SiteId,
    refs: &[&FragmentRef],
) -> Result<HashMap<String, FragmentId>, postgres::Error> {
    let rows = db.query(
        "SELECT ref, id FROM fragments WHERE site_id = $1 AND ref = ANY($2) FOR KEY SHARE",
        &[&site_id, &refs],
    )?;
    rows.iter()
        .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
        .collect()
}

/// Inserts a fragment; `fragment_ref` is `None` only for console-made fragments.
pub fn insert_fragment(
    db: &mut impl GenericClient,
    site_id: SiteId,
    fragment_ref: Option<&FragmentRef>,
    fields: &FragmentFields,
) -> Result<FragmentRow, postgres::Error> {
    let id = FragmentId::generate();
    let sql = format!(
        "INSERT INTO fragments (id, site_id, ref, name, lang, description, key_values, status)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING {COLUMNS}"
    );
    write_fields(db, &sql, &[&id, &site_id, &fragment_ref], fields)
}

/// Replaces every field. `updated_at` moves only when something changes, so that repeating a
/// write leaves the same state.
pub fn update_fragment(
    db: &mut impl GenericClient,
    id: &FragmentId,
    fields: &FragmentFields,
) -> Result<FragmentRow, postgres::Error> {
    let sql = format!(
        "UPDATE fragments
            SET name = $2::text, lang = $3::text, description = $4::text,
                key_values = $5::jsonb, status = $6::text,
                updated_at = CASE
                    WHEN (name, lang, description, key_values, status)
                         IS DISTINCT FROM ($2::text, $3::text, $4::text, $5::jsonb, $6::text)
                    THEN now() ELSE updated_at END
          WHERE id = $1 RETURNING {COLUMNS}"
    );
    write_fields(db, &sql, &[id], fields)
}

/// Sets the status alone (a console action: pause or activate); `updated_at` moves only when
/// it changes.
pub fn set_status(
    db: &mut impl GenericClient,
    id: &FragmentId,
    status: FragmentStatus,
) -> Result<FragmentRow, postgres::Error> {
    let sql = format!(
        "UPDATE fragments SET status = $2::text,
                updated_at = CASE WHEN status IS DISTINCT FROM $2::text
                                  THEN now() ELSE updated_at END
          WHERE id = $1 RETURNING {COLUMNS}"
    );
    fragment_row(&db.query_one(&sql, &[id, &status])?)
}

/// Runs a write returning the fragment, binding `leading` then the five stored fields
/// (name, lang, description, key-values, status) as the next parameters.
fn write_fields(
    db: &mut impl GenericClient,
    sql: &str,
    leading: &[&(dyn ToSql + Sync)],
    fields: &FragmentFields,
) -> Result<FragmentRow, postgres::Error> {
    let key_values = fields.key_values.to_json();
    let mut params = leading.to_vec();
    params.extend_from_slice(&[
        &fields.name,
        &fields.lang,
        &fields.description,
        &key_values,
        &fields.status,
    ]);
    fragment_row(&db.query_one(sql, &params)?)
}
