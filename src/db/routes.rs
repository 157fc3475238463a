//! Routing rules of a site: a canonical path, a match mode and a target fragment. Callers hold
//! the site lock (`sites::lock_site`) while they check and write, so the ceiling and the
//! uniqueness checks cannot race.

use super::{read_all, read_opt};
use crate::domain::{CanonicalPath, MatchMode};
use crate::ids::{FragmentId, RouteId, SiteId};
use postgres::GenericClient;

/// A rule with its target's reference (null when that fragment has none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteRow {
    pub id: RouteId,
    pub path: String,
    pub match_mode: MatchMode,
    pub fragment_id: FragmentId,
    pub fragment_ref: Option<String>,
}

/// A rule to insert, its target already resolved to a fragment id of the site.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewRoute<'a> {
    pub path: &'a CanonicalPath,
    pub mode: MatchMode,
    pub fragment_id: &'a FragmentId,
}

fn route_row(r: &postgres::Row) -> Result<RouteRow, postgres::Error> {
    Ok(RouteRow {
        id: r.try_get(0)?,
        path: r.try_get(1)?,
        match_mode: r.try_get(2)?,
        fragment_id: r.try_get(3)?,
        fragment_ref: r.try_get(4)?,
    })
}

/// The site's rules by path, then match mode (`exact` before `prefix`), in byte order.
pub fn list_routes(
    db: &mut impl GenericClient,
    site_id: SiteId,
) -> Result<Vec<RouteRow>, postgres::Error> {
    let rows = db.query(
        "SELECT r.id, r.path, r.match, r.fragment_id, f.ref
           FROM routes r JOIN fragments f ON f.id = r.fragment_id
          WHERE r.site_id = $1
          ORDER BY r.path, r.match COLLATE \"C\"",
        &[&site_id],
    )?;
    read_all(&rows, route_row)
}

pub fn count_routes(db: &mut impl GenericClient, site_id: SiteId) -> Result<i64, postgres::Error> {
    let row = db.query_one(
        "SELECT count(*) FROM routes WHERE site_id = $1",
        &[&site_id],
    )?;
    row.try_get(0)
}

/// How many rules of the site target this fragment.
pub fn count_targeting(
    db: &mut impl GenericClient,
    fragment_id: &FragmentId,
) -> Result<i64, postgres::Error> {
    let row = db.query_one(
        "SELECT count(*) FROM routes WHERE fragment_id = $1",
        &[fragment_id],
    )?;
    row.try_get(0)
}

pub fn route_exists(
    db: &mut impl GenericClient,
    site_id: SiteId,
    path: &CanonicalPath,
    mode: MatchMode,
) -> Result<bool, postgres::Error> {
    let row = db.query_opt(
        "SELECT 1 FROM routes WHERE site_id = $1 AND path = $2 AND match = $3",
        &[&site_id, path, &mode],
    )?;
    Ok(row.is_some())
}

/// Inserts the rules with new ids, in one statement.
pub fn insert_routes(
    db: &mut impl GenericClient,
    site_id: SiteId,
    routes: &[NewRoute],
) -> Result<(), postgres::Error> {
    let ids: Vec<RouteId> = routes.iter().map(|_| RouteId::generate()).collect();
    let paths: Vec<&CanonicalPath> = routes.iter().map(|r| r.path).collect();
    let modes: Vec<MatchMode> = routes.iter().map(|r| r.mode).collect();
    let targets: Vec<&FragmentId> = routes.iter().map(|r| r.fragment_id).collect();
    db.execute(
        "INSERT INTO routes (id, site_id, path, match, fragment_id)
         SELECT id, $2, path, mode, fragment_id
           FROM unnest($1::text[], $3::text[], $4::text[], $5::text[])
                AS t (id, path, mode, fragment_id)",
        &[&ids, &site_id, &paths, &modes, &targets],
    )?;
    Ok(())
}

/// Inserts one rule with a new id and returns it.
pub fn insert_route(
    db: &mut impl GenericClient,
    site_id: SiteId,
    route: &NewRoute,
) -> Result<RouteRow, postgres::Error> {
    let row = db.query_one(
        "WITH r AS (
             INSERT INTO routes (id, site_id, path, match, fragment_id)
             VALUES ($1, $2, $3, $4, $5) RETURNING id, path, match, fragment_id)
         SELECT r.id, r.path, r.match, r.fragment_id, f.ref
           FROM r JOIN fragments f ON f.id = r.fragment_id",
        &[
            &RouteId::generate(),
            &site_id,
            route.path,
            &route.mode,
            route.fragment_id,
        ],
    )?;
    route_row(&row)
}

/// Deletes one rule of the site and returns it; `None` when the site has no such rule.
pub fn delete_route(
    db: &mut impl GenericClient,
    site_id: SiteId,
    id: &RouteId,
) -> Result<Option<RouteRow>, postgres::Error> {
    let row = db.query_opt(
        "WITH r AS (
             DELETE FROM routes WHERE site_id = $1 AND id = $2
             RETURNING id, path, match, fragment_id)
         SELECT r.id, r.path, r.match, r.fragment_id, f.ref
           FROM r JOIN fragments f ON f.id = r.fragment_id",
        &[&site_id, id],
    )?;
    read_opt(row, route_row)
}

/// Rewrites one rule of the site (its id kept) and returns it; `None` when the site has no
/// such rule.
pub fn update_route(
    db: &mut impl GenericClient,
    site_id: SiteId,
    id: &RouteId,
    route: &NewRoute,
) -> Result<Option<RouteRow>, postgres::Error> {
    let row = db.query_opt(
        "WITH r AS (
             UPDATE routes SET path = $3, match = $4, fragment_id = $5
              WHERE site_id = $1 AND id = $2
             RETURNING id, path, match, fragment_id)
         SELECT r.id, r.path, r.match, r.fragment_id, f.ref
           FROM r JOIN fragments f ON f.id = r.fragment_id",
        &[&site_id, id, route.path, &route.mode, route.fragment_id],
    )?;
    read_opt(row, route_row)
}

pub fn delete_all_routes(
    db: &mut impl GenericClient,
    site_id: SiteId,
) -> Result<(), postgres::Error> {
    db.execute("DELETE FROM routes WHERE site_id = $1", &[&site_id])?;
    Ok(())
}
