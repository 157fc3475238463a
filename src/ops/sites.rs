//! Sites: list, create or update (`PUT /v1/sites/{domain}`), the site default fragment, and the
//! console's deletion of a site with everything in it.

use super::audit::{self, shown, AuditEntry, Fields, Operation};
use super::cards::card_entry;
use super::{Caller, Saved, CHANGED_MEANWHILE};
use crate::db::deletions::{self, NamedCard};
use crate::db::{self, fragments::FragmentRow, icons::StoredIcon, sites::SiteRow};
use crate::domain::{CardStatus, DomainName, FragmentRef, SiteName};
use crate::error::ApiError;
use crate::ids::{FragmentId, SiteId};
use postgres::GenericClient;
use std::collections::HashMap;

/// `PUT /v1/sites/{domain}`: each member absent keeps the current value.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SiteWrite {
    pub name: Option<SiteName>,
    pub default_fragment_ref: Option<FragmentRef>,
}

/// A site the console deleted, and what that changed beyond it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteDeleted {
    pub domain: DomainName,
    pub warnings: Vec<String>,
}

/// What deleting a site or a fragment takes with it, as its confirmation page names it.
#[derive(Debug, Clone, PartialEq)]
pub struct WhatGoes {
    /// The site the deletion is in.
    pub domain: DomainName,
    /// The fragments deleted: a site's all, or the one.
    pub fragments: Vec<FragmentRow>,
    /// The rules deleted with them.
    pub rules: i64,
    /// The site left without a default fragment, if one is.
    pub default_of: Option<String>,
    /// The eligibility entries deleted with the fragments.
    pub eligibility_entries: i64,
    /// The organisation's active cards eligible only on these fragments, which an empty list
    /// would widen to everywhere: the deletion sets them to draft.
    pub widened: Vec<NamedCard>,
}

pub fn list_sites(db: &mut impl GenericClient, caller: &Caller) -> Result<Vec<SiteRow>, ApiError> {
    Ok(db::sites::list_sites(db, &caller.org.id)?)
}

/// The caller's sites, each with its fragments (as [`super::fragments::list_fragments`] lists
/// them): two queries however many sites there are.
pub fn list_sites_with_fragments(
    db: &mut impl GenericClient,
    caller: &Caller,
) -> Result<Vec<(SiteRow, Vec<FragmentRow>)>, ApiError> {
    let sites = db::sites::list_sites(db, &caller.org.id)?;
    let mut fragments: HashMap<SiteId, Vec<FragmentRow>> = HashMap::new();
    for (site_id, fragment) in db::fragments::list_org_fragments(db, &caller.org.id)? {
        fragments.entry(site_id).or_default().push(fragment);
    }
    Ok(sites
        .into_iter()
        .map(|site| {
            let own = fragments.remove(&site.id).unwrap_or_default();
            (site, own)
        })
        .collect())
}

/// Creates the site or updates it. A default fragment can only be named on an existing site,
/// since the fragment must exist already.
pub fn put_site(
    db: &mut impl GenericClient,
    caller: &Caller,
    domain: &DomainName,
    write: SiteWrite,
) -> Result<Saved<SiteRow>, ApiError> {
    let mut tx = db.transaction()?;
    let before = db::sites::lock_site(&mut tx, &caller.org.id, domain)?;
    let saved = match &before {
        Some(site) => Saved {
            record: update_site(&mut tx, site, write)?,
            created: false,
        },
        None => create_site(&mut tx, caller, domain, write)?,
    };
    let entry = site_entry(Operation::PutSite, &saved.record);
    let entry = match &before {
        Some(before) => entry.changes(before, &saved.record),
        None => entry,
    };
    audit::record(&mut tx, caller, entry)?;
    tx.commit()?;
    Ok(saved)
}

/// Creates the site; when a concurrent request created it meanwhile, updates it instead.
fn create_site(
    db: &mut impl GenericClient,
    caller: &Caller,
    domain: &DomainName,
    write: SiteWrite,
) -> Result<Saved<SiteRow>, ApiError> {
    if write.default_fragment_ref.is_some() {
        return Err(not_an_active_fragment("default_fragment_ref"));
    }
    let name = write.name.clone().unwrap_or_default();
    let org_id = &caller.org.id;
    if let Some(id) = db::sites::insert_site(db, org_id, domain, &name)? {
        let record = db::sites::site_by_id(db, id)?;
        return Ok(Saved {
            record,
            created: true,
        });
    }
    let site = db::sites::lock_site(db, org_id, domain)?
        .ok_or_else(|| ApiError::conflict("domain", CHANGED_MEANWHILE))?;
    let record = update_site(db, &site, write)?;
    Ok(Saved {
        record,
        created: false,
    })
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

/// Renames the caller's site (a console action); unlike [`put_site`], never makes one: another
/// organisation's site is not found.
pub fn rename_site(
    db: &mut impl GenericClient,
    caller: &Caller,
    domain: &DomainName,
    name: SiteName,
) -> Result<SiteRow, ApiError> {
    let mut tx = db.transaction()?;
    let site = locked_site(&mut tx, caller, domain)?;
    let write = SiteWrite {
        name: Some(name),
        default_fragment_ref: None,
    };
    let record = update_site(&mut tx, &site, write)?;
    let entry = site_entry(Operation::RenameSite, &record).changes(&site, &record);
    audit::record(&mut tx, caller, entry)?;
    tx.commit()?;
    Ok(record)
}

/// Makes an active fragment of the site its default.
pub fn put_default_fragment(
    db: &mut impl GenericClient,
    caller: &Caller,
    domain: &DomainName,
    fragment_ref: &FragmentRef,
) -> Result<SiteRow, ApiError> {
    let mut tx = db.transaction()?;
    let site = locked_site(&mut tx, caller, domain)?;
    let fragment = active_fragment(&mut tx, &site, fragment_ref, "ref")?;
    db::sites::update_site(&mut tx, site.id, None, Some(&fragment.id))?;
    let after = db::sites::site_by_id(&mut tx, site.id)?;
    let entry = site_entry(Operation::PutDefaultFragment, &after).changes(&site, &after);
    audit::record(&mut tx, caller, entry)?;
    tx.commit()?;
    Ok(after)
}

/// Clears the default (the fragment itself is kept); repeatable.
pub fn delete_default_fragment(
    db: &mut impl GenericClient,
    caller: &Caller,
    domain: &DomainName,
) -> Result<SiteRow, ApiError> {
    let mut tx = db.transaction()?;
    let site = locked_site(&mut tx, caller, domain)?;
    db::sites::update_site(&mut tx, site.id, None, None)?;
    let after = db::sites::site_by_id(&mut tx, site.id)?;
    let entry = site_entry(Operation::DeleteDefaultFragment, &after).changes(&site, &after);
    audit::record(&mut tx, caller, entry)?;
    tx.commit()?;
    Ok(after)
}

/// Deletes the site with its fragments, rules and eligibility entries (a console action), and
/// sets to draft the cards that were eligible only there; `warnings` names each.
pub fn delete_site(
    db: &mut impl GenericClient,
    caller: &Caller,
    domain: &DomainName,
) -> Result<SiteDeleted, ApiError> {
    let mut tx = db.transaction()?;
    // The site's writers (a fragment made meanwhile) wait until the deletion is done.
    let site = locked_site(&mut tx, caller, domain)?;
    let goes = site_deletion(&mut tx, caller, domain)?;
    let ids: Vec<FragmentId> = goes.fragments.iter().map(|f| f.id.clone()).collect();
    let drafted = draft_cards_only_on(&mut tx, caller, &ids)?;
    if !deletions::delete_site(&mut tx, &caller.org.id, domain)? {
        return Err(ApiError::NotFound);
    }
    audit::record(&mut tx, caller, site_entry(Operation::DeleteSite, &site))?;
    tx.commit()?;
    Ok(SiteDeleted {
        domain: domain.clone(),
        warnings: drafted_warnings(&drafted),
    })
}

/// What [`delete_site`] would take with the site: its fragments, their rules and eligibility
/// entries, its default.
pub fn site_deletion(
    db: &mut impl GenericClient,
    caller: &Caller,
    domain: &DomainName,
) -> Result<WhatGoes, ApiError> {
    let site = site(db, caller, domain)?;
    let fragments = db::fragments::list_fragments(db, site.id)?;
    let ids: Vec<_> = fragments.iter().map(|f| f.id.clone()).collect();
    Ok(WhatGoes {
        domain: domain.clone(),
        rules: db::routes::count_routes(db, site.id)?,
        default_of: site
            .default_fragment_id
            .is_some()
            .then(|| site.domain.clone()),
        eligibility_entries: deletions::count_eligibility_on(db, &ids)?,
        widened: deletions::active_cards_only_on(db, &caller.org.id, &ids)?,
        fragments,
    })
}

/// A deletion never widens a card: the organisation's active cards eligible only on the
/// fragments about to go are set to draft, each recorded, in the deleting transaction (before
/// the deletion empties their lists, with them and the fragments locked); answers them.
pub(super) fn draft_cards_only_on(
    tx: &mut postgres::Transaction,
    caller: &Caller,
    fragments: &[FragmentId],
) -> Result<Vec<NamedCard>, ApiError> {
    let org_id = &caller.org.id;
    deletions::lock_for_deletion(tx, org_id, fragments)?;
    let cards = deletions::active_cards_only_on(tx, org_id, fragments)?;
    for card in &cards {
        db::cards::set_card_status(tx, &card.id, CardStatus::Draft)?;
        let entry = card_entry(Operation::DraftAfterDeletion, &card.id, &card.name).change(
            "status",
            CardStatus::Active.as_str(),
            CardStatus::Draft.as_str(),
        );
        audit::record(tx, caller, entry)?;
    }
    Ok(cards)
}

/// What the deletion did to the cards it would have widened, as its warnings say.
pub(super) fn drafted_warnings(cards: &[NamedCard]) -> Vec<String> {
    cards
        .iter()
        .map(|card| {
            format!(
                "card {card} was eligible only on what was deleted: it is a draft now, \
                 serving nowhere until it is given fragments and activated again"
            )
        })
        .collect()
}

/// A site's entry: by its domain, named by its name.
fn site_entry(operation: Operation, site: &SiteRow) -> AuditEntry<'_> {
    AuditEntry::new(operation, "site", &site.domain).named(site.name.as_str())
}

impl Fields for SiteRow {
    fn fields(&self) -> Vec<(&'static str, String)> {
        let default = self
            .default_fragment_ref
            .as_deref()
            .or(self.default_fragment_id.as_ref().map(|id| id.as_str()));
        vec![
            ("name", shown(Some(&self.name))),
            ("default", shown(default)),
        ]
    }
}

/// The stored copy of the caller's site's icon, which the console serves (never the site's own
/// URL); not found while the site has none, and for another organisation's site.
pub fn site_icon(
    db: &mut impl GenericClient,
    caller: &Caller,
    domain: &DomainName,
) -> Result<StoredIcon, ApiError> {
    db::icons::stored_icon(db, &caller.org.id, domain)?.ok_or(ApiError::NotFound)
}

/// The caller's site with this domain; another organisation's is not found.
pub(super) fn site(
    db: &mut impl GenericClient,
    caller: &Caller,
    domain: &DomainName,
) -> Result<SiteRow, ApiError> {
    db::sites::find_site(db, &caller.org.id, domain)?.ok_or(ApiError::NotFound)
}

/// Like [`site`], and locks the site for the rest of the transaction, so that the writers of
/// one site run one after the other.
pub(super) fn locked_site(
    db: &mut impl GenericClient,
    caller: &Caller,
    domain: &DomainName,
) -> Result<SiteRow, ApiError> {
    db::sites::lock_site(db, &caller.org.id, domain)?.ok_or(ApiError::NotFound)
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
