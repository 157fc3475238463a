//! Sites: one per domain per organisation, with their default fragment.
//!
//! Writers of anything inside a site (its fields, its fragments, its rules) first take the
//! site row with [`lock_site`], so that concurrent writers of the same site run one after the
//! other and a read-then-write never sees a half-applied change.

use super::{read_all, read_opt};
use crate::domain::{DomainName, SiteName};
use crate::ids::{FragmentId, OrgId, SiteId};
use postgres::GenericClient;

/// A site as stored, with the reference of its default fragment (null when that fragment has
/// none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteRow {
    pub id: SiteId,
    pub org_id: OrgId,
    pub domain: String,
    pub name: String,
    pub icon: Option<String>,
    pub default_fragment_id: Option<FragmentId>,
    pub default_fragment_ref: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

const SITE_SELECT: &str = "SELECT s.id, s.org_id, s.domain, s.name, s.icon,
        s.default_fragment_id, f.ref, rfc3339(s.created_at), rfc3339(s.updated_at)
   FROM sites s LEFT JOIN fragments f ON f.id = s.default_fragment_id";

const BY_DOMAIN: &str = "WHERE s.org_id = $1 AND s.domain = $2";

fn site_row(r: &postgres::Row) -> Result<SiteRow, postgres::Error> {
    Ok(SiteRow {
        id: r.try_get(0)?,
        org_id: r.try_get(1)?,
        domain: r.try_get(2)?,
        name: r.try_get(3)?,
        icon: r.try_get(4)?,
        default_fragment_id: r.try_get(5)?,
        default_fragment_ref: r.try_get(6)?,
        created_at: r.try_get(7)?,
        updated_at: r.try_get(8)?,
    })
}

/// The organisation's sites, by domain in byte order.
pub fn list_sites(
    db: &mut impl GenericClient,
    org_id: &OrgId,
) -> Result<Vec<SiteRow>, postgres::Error> {
    let sql = format!("{SITE_SELECT} WHERE s.org_id = $1 ORDER BY s.domain COLLATE \"C\"");
    read_all(&db.query(&sql, &[org_id])?, site_row)
}

/// The organisation's site with this domain.
pub fn find_site(
    db: &mut impl GenericClient,
    org_id: &OrgId,
    domain: &DomainName,
) -> Result<Option<SiteRow>, postgres::Error> {
    site_by_domain(db, org_id, domain, "")
}

/// Like [`find_site`], and locks the site row until the end of the transaction. `NO KEY
/// UPDATE` serialises the writers of the site without blocking inserts that only reference
/// it (a foreign key takes `KEY SHARE`).
pub fn lock_site(
    db: &mut impl GenericClient,
    org_id: &OrgId,
    domain: &DomainName,
) -> Result<Option<SiteRow>, postgres::Error> {
    site_by_domain(db, org_id, domain, "FOR NO KEY UPDATE OF s")
}

fn site_by_domain(
    db: &mut impl GenericClient,
    org_id: &OrgId,
    domain: &DomainName,
    locking: &str,
) -> Result<Option<SiteRow>, postgres::Error> {
    let sql = format!("{SITE_SELECT} {BY_DOMAIN} {locking}");
    read_opt(db.query_opt(&sql, &[org_id, domain])?, site_row)
}

/// The site by its row id.
pub fn site_by_id(db: &mut impl GenericClient, id: SiteId) -> Result<SiteRow, postgres::Error> {
    let sql = format!("{SITE_SELECT} WHERE s.id = $1");
    site_row(&db.query_one(&sql, &[&id])?)
}

/// Inserts the site unless the organisation already has this domain; `None` when it has.
pub fn insert_site(
    db: &mut impl GenericClient,
    org_id: &OrgId,
    domain: &DomainName,
    name: &SiteName,
) -> Result<Option<SiteId>, postgres::Error> {
    let row = db.query_opt(
        "INSERT INTO sites (org_id, domain, name) VALUES ($1, $2, $3)
         ON CONFLICT (org_id, domain) DO NOTHING RETURNING id",
        &[org_id, domain, name],
    )?;
    row.map(|r| r.try_get(0)).transpose()
}

/// Creates the site (with an empty name) if the organisation does not have it yet, and
/// returns it either way, `true` when it was created: a console-made fragment's site.
pub fn ensure_site(
    db: &mut impl GenericClient,
    org_id: &OrgId,
    domain: &DomainName,
) -> Result<(SiteRow, bool), postgres::Error> {
    let created = insert_site(db, org_id, domain, &SiteName::default())?.is_some();
    let sql = format!("{SITE_SELECT} {BY_DOMAIN}");
    let site = site_row(&db.query_one(&sql, &[org_id, domain])?)?;
    Ok((site, created))
}

/// Sets the name (`None` keeps it) and the default fragment (`None` clears it). `updated_at`
/// moves only when one of them changes, so that repeating a write leaves the same state.
pub fn update_site(
    db: &mut impl GenericClient,
    id: SiteId,
    name: Option<&SiteName>,
    default_fragment_id: Option<&FragmentId>,
) -> Result<(), postgres::Error> {
    db.execute(
        "UPDATE sites SET name = coalesce($2::text, name), default_fragment_id = $3::text,
                updated_at = CASE
                    WHEN (name, default_fragment_id)
                         IS DISTINCT FROM (coalesce($2::text, name), $3::text)
                    THEN now() ELSE updated_at END
          WHERE id = $1",
        &[&id, &name, &default_fragment_id],
    )?;
    Ok(())
}
