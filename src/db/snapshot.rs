//! What the fragment cache loads: the rows of everything `/fragment` reads, for every
//! organisation at once (start, platform changes) or for one (after its writes). The same
//! queries serve both; only the filter differs.

use super::cards::{card_row, CardRow, CARD_COLUMNS};
use postgres::fallible_iterator::FallibleIterator;
use postgres::GenericClient;
use std::collections::HashMap;
use std::time::Duration;

/// The notification channel the triggers of `sql/002_cache_versions.sql` send on.
const CHANNEL: &str = "agentcard_cache";

/// Which organisations to load.
#[derive(Debug, Clone, Copy)]
pub enum Scope<'a> {
    All,
    Org(&'a str),
}

impl Scope<'_> {
    /// `WHERE` clause on the column naming the organisation, with `$1` bound by `params`.
    fn filter(&self, column: &str) -> String {
        match self {
            Scope::All => String::new(),
            Scope::Org(_) => format!("WHERE {column} = $1"),
        }
    }

    fn params(&self) -> Vec<&(dyn postgres::types::ToSql + Sync)> {
        match self {
            Scope::All => Vec::new(),
            Scope::Org(org) => vec![org],
        }
    }
}

pub struct KeyRow {
    pub id: String,
    pub org_id: String,
    pub hash: Vec<u8>,
    /// A revoked key is refused, and its refusals counted under its organisation.
    pub revoked: bool,
}

pub struct SiteRow {
    pub id: i64,
    pub org_id: String,
    pub domain: String,
    pub default_fragment_id: Option<String>,
}

pub struct FragmentRow {
    pub id: String,
    pub site_id: i64,
    pub active: bool,
}

pub struct RouteRow {
    pub site_id: i64,
    pub path: String,
    pub exact: bool,
    pub fragment_id: String,
}

pub struct EligibilityRow {
    pub card_id: String,
    pub org_id: String,
    pub fragment_id: String,
}

/// Everything loaded for a scope.
pub struct Rows {
    pub org_ids: Vec<String>,
    pub keys: Vec<KeyRow>,
    pub sites: Vec<SiteRow>,
    pub fragments: Vec<FragmentRow>,
    pub routes: Vec<RouteRow>,
    /// Active cards only.
    pub cards: Vec<CardRow>,
    pub eligibility: Vec<EligibilityRow>,
}

/// Change versions: per organisation, and the platform's.
pub struct Versions {
    pub orgs: HashMap<String, i64>,
    pub platform: i64,
}

pub fn versions(db: &mut impl GenericClient) -> Result<Versions, postgres::Error> {
    let orgs = db
        .query("SELECT id, cache_version FROM orgs", &[])?
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    let platform = db
        .query_one("SELECT version FROM platform_cache_version", &[])?
        .get(0);
    Ok(Versions { orgs, platform })
}

/// The change version of one organisation; `None` once it is deleted.
pub fn org_version(
    db: &mut impl GenericClient,
    org_id: &str,
) -> Result<Option<i64>, postgres::Error> {
    let row = db.query_opt("SELECT cache_version FROM orgs WHERE id = $1", &[&org_id])?;
    Ok(row.map(|r| r.get(0)))
}

/// From now on, this connection hears of every change to what the snapshot holds.
pub fn listen_for_changes(db: &mut postgres::Client) -> Result<(), postgres::Error> {
    db.batch_execute(&format!("LISTEN {CHANNEL}"))
}

/// Waits at most `within` for a change notified on a connection that listens; `true` when one
/// came. The burst that follows is taken too: a list replacement notifies once per statement.
pub fn wait_for_changes(
    db: &mut postgres::Client,
    within: Duration,
) -> Result<bool, postgres::Error> {
    let changed = db.notifications().timeout_iter(within).next()?.is_some();
    while db.notifications().iter().next()?.is_some() {}
    Ok(changed)
}

/// Loads a scope in one repeatable-read transaction, so the rows agree with each other.
pub fn load(db: &mut postgres::Client, scope: Scope) -> Result<(Rows, Versions), postgres::Error> {
    let mut tx = db
        .build_transaction()
        .isolation_level(postgres::IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()?;
    let versions = versions(&mut tx)?;
    let rows = Rows {
        org_ids: query(&mut tx, &format!("SELECT id FROM orgs {}", scope.filter("id")), scope, |r| r.try_get(0))?,
        keys: query(
            &mut tx,
            &format!(
                "SELECT id, org_id, key_hash, revoked_at IS NOT NULL FROM delivery_keys {}",
                scope.filter("org_id")
            ),
            scope,
            |r| Ok(KeyRow { id: r.get(0), org_id: r.get(1), hash: r.get(2), revoked: r.get(3) }),
        )?,
        sites: query(
            &mut tx,
            &format!("SELECT id, org_id, domain, default_fragment_id FROM sites {}", scope.filter("org_id")),
            scope,
            |r| Ok(SiteRow { id: r.get(0), org_id: r.get(1), domain: r.get(2), default_fragment_id: r.get(3) }),
        )?,
        fragments: query(
            &mut tx,
            &format!(
                "SELECT f.id, f.site_id, f.status = 'active' FROM fragments f JOIN sites s ON s.id = f.site_id {}",
                scope.filter("s.org_id")
            ),
            scope,
            |r| Ok(FragmentRow { id: r.get(0), site_id: r.get(1), active: r.get(2) }),
        )?,
        routes: query(
            &mut tx,
            &format!(
                "SELECT r.site_id, r.path, r.match = 'exact', r.fragment_id FROM routes r JOIN sites s ON s.id = r.site_id {}",
                scope.filter("s.org_id")
            ),
            scope,
            |r| Ok(RouteRow { site_id: r.get(0), path: r.get(1), exact: r.get(2), fragment_id: r.get(3) }),
        )?,
        cards: query(
            &mut tx,
            &format!(
                "SELECT {CARD_COLUMNS} FROM cards WHERE status = 'active' AND {}",
                match scope {
                    Scope::All => "true",
                    // Platform cards only where this organisation has a list for them: no
                    // other can serve there, and a write would render them all for nothing.
                    Scope::Org(_) => {
                        "(org_id = $1 OR (org_id IS NULL AND id IN \
                          (SELECT card_id FROM card_eligibility WHERE org_id = $1)))"
                    }
                }
            ),
            scope,
            card_row,
        )?,
        eligibility: query(
            &mut tx,
            &format!(
                "SELECT e.card_id, e.org_id, e.fragment_id FROM card_eligibility e
                   JOIN cards c ON c.id = e.card_id AND c.status = 'active' {}",
                scope.filter("e.org_id")
            ),
            scope,
            |r| Ok(EligibilityRow { card_id: r.get(0), org_id: r.get(1), fragment_id: r.get(2) }),
        )?,
    };
    tx.commit()?;
    Ok((rows, versions))
}

/// Streams the rows into `T`s, so a million fragments never sit in memory twice.
fn query<T>(
    tx: &mut postgres::Transaction,
    sql: &str,
    scope: Scope,
    map: impl Fn(&postgres::Row) -> Result<T, postgres::Error>,
) -> Result<Vec<T>, postgres::Error> {
    use postgres::fallible_iterator::FallibleIterator;
    tx.query_raw(sql, scope.params())?
        .map(|row| map(&row))
        .collect()
}
