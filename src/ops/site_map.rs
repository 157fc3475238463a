//! Everything one site holds, as its console page shows it: the site, its fragments (each
//! with the `warnings` a write leaving it paused answers, and the cards eligible on it), its
//! rules. A bounded number of queries whatever the site holds: one per list.

use super::fragments::warnings;
use super::sites::site;
use super::Caller;
use crate::db::{self, cards::EligibleCard, fragments::FragmentRow};
use crate::db::{routes::RouteRow, sites::SiteRow};
use crate::domain::DomainName;
use crate::error::ApiError;

pub struct SiteMap {
    pub site: SiteRow,
    pub fragments: Vec<MappedFragment>,
    /// By path, then match mode.
    pub routes: Vec<RouteRow>,
    /// The organisation's cards with an empty list: eligible on every fragment.
    pub everywhere: Vec<EligibleCard>,
}

pub struct MappedFragment {
    pub row: FragmentRow,
    /// What still points at it while paused (`site default`, `target of N rules`), as a
    /// write that pauses it answers; empty when active.
    pub warnings: Vec<String>,
    /// The cards whose list names it (the organisation's and the platform's), by name.
    pub cards: Vec<EligibleCard>,
}

pub fn site_map(
    db: &mut impl postgres::GenericClient,
    caller: &Caller,
    domain: &DomainName,
) -> Result<SiteMap, ApiError> {
    let site = site(db, caller, domain)?;
    let fragments = db::fragments::list_fragments(db, site.id)?;
    let routes = db::routes::list_routes(db, site.id)?;
    let (listed, everywhere): (Vec<_>, Vec<_>) =
        db::cards::eligible_on_site(db, &caller.org.id, site.id)?
            .into_iter()
            .partition(|card| card.fragment_id.is_some());
    let fragments = fragments
        .into_iter()
        .map(|row| {
            let rules = routes.iter().filter(|r| r.fragment_id == row.id).count();
            let is_default = site.default_fragment_id.as_ref() == Some(&row.id);
            MappedFragment {
                warnings: match row.is_active() {
                    true => Vec::new(),
                    false => warnings(is_default, rules as i64),
                },
                cards: listed
                    .iter()
                    .filter(|card| card.fragment_id.as_ref() == Some(&row.id))
                    .cloned()
                    .collect(),
                row,
            }
        })
        .collect();
    Ok(SiteMap {
        site,
        fragments,
        routes,
        everywhere,
    })
}
