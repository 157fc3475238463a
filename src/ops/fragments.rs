//! Fragments: list, the whole-object `PUT …/fragments/{ref}` (which warns when the write leaves
//! a fragment paused that pages still resolve to), and the console's creation (with or without
//! a reference, making the site if needed) and deletion.

use super::audit::{self, shown, AuditEntry, Fields, Operation};
use super::cards::key_values_words;
use super::sites::{draft_cards_only_on, drafted_warnings, locked_site, site, WhatGoes};
use super::{conflict_on_unique, Caller, Saved, CHANGED_MEANWHILE};
use crate::db::fragments::{FragmentFields, FragmentRow};
use crate::db::{self, deletions, sites::SiteRow};
use crate::domain::{Description, DomainName, FragmentName, FragmentRef, FragmentStatus};
use crate::domain::{KeyValues, Lang};
use crate::error::ApiError;
use crate::ids::{FragmentId, SiteId};
use postgres::GenericClient;

/// A fragment write: every member but `status` takes its default when left out.
#[derive(Debug, Clone, PartialEq)]
pub struct FragmentWrite {
    pub name: FragmentName,
    pub lang: Lang,
    pub description: Option<Description>,
    pub key_values: KeyValues,
    /// `None`: active on creation, unchanged on update.
    pub status: Option<FragmentStatus>,
}

impl FragmentWrite {
    /// The fields to store, with `current` as the status when the write names none.
    fn into_fields(self, current: FragmentStatus) -> FragmentFields {
        FragmentFields {
            name: self.name,
            lang: self.lang,
            description: self.description,
            key_values: self.key_values,
            status: self.status.unwrap_or(current),
        }
    }
}

/// A fragment written through `PUT`, with what still points at it if it is left paused.
#[derive(Debug, Clone, PartialEq)]
pub struct FragmentPut {
    pub fragment: Saved<FragmentRow>,
    pub warnings: Vec<String>,
}

/// A fragment the console made, and whether its site was made for it.
#[derive(Debug, Clone, PartialEq)]
pub struct FragmentCreated {
    pub fragment: FragmentRow,
    pub domain: DomainName,
    pub site_created: bool,
}

/// A fragment the console deleted, and what went with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FragmentDeleted {
    pub id: FragmentId,
    pub warnings: Vec<String>,
}

pub fn list_fragments(
    db: &mut impl GenericClient,
    caller: &Caller,
    domain: &DomainName,
) -> Result<Vec<FragmentRow>, ApiError> {
    let site = site(db, caller, domain)?;
    Ok(db::fragments::list_fragments(db, site.id)?)
}

/// The caller's fragment with this id, and its site's domain.
pub fn get_fragment(
    db: &mut impl GenericClient,
    caller: &Caller,
    id: &FragmentId,
) -> Result<(FragmentRow, DomainName), ApiError> {
    let (fragment, domain) =
        db::fragments::find_in_org(db, &caller.org.id, id)?.ok_or(ApiError::NotFound)?;
    Ok((fragment, DomainName::parse(&domain)?))
}

/// Creates or replaces the fragment: members left out take their defaults, except `status`,
/// which is kept (active on creation).
pub fn put_fragment(
    db: &mut impl GenericClient,
    caller: &Caller,
    domain: &DomainName,
    fragment_ref: &FragmentRef,
    write: FragmentWrite,
) -> Result<FragmentPut, ApiError> {
    let mut tx = db.transaction()?;
    let site = locked_site(&mut tx, caller, domain)?;
    let (before, saved) = write_fragment(&mut tx, site.id, fragment_ref, write)?;
    let warnings = pause_warnings(&mut tx, &site, &saved.record)?;
    let entry = fragment_entry(Operation::PutFragment, &saved.record, domain);
    let entry = match &before {
        Some(before) => entry.changes(before, &saved.record),
        None => entry,
    };
    audit::record(&mut tx, caller, entry)?;
    tx.commit()?;
    Ok(FragmentPut {
        fragment: saved,
        warnings,
    })
}

/// Replaces the fragment with this reference, or creates it; answers it as it was before too.
fn write_fragment(
    db: &mut impl GenericClient,
    site_id: SiteId,
    fragment_ref: &FragmentRef,
    write: FragmentWrite,
) -> Result<(Option<FragmentRow>, Saved<FragmentRow>), ApiError> {
    match db::fragments::find_by_ref(db, site_id, fragment_ref)? {
        Some(current) => {
            let fields = write.into_fields(current.status);
            let record = db::fragments::update_fragment(db, &current.id, &fields)?;
            let saved = Saved {
                record,
                created: false,
            };
            Ok((Some(current), saved))
        }
        None => {
            let fields = write.into_fields(FragmentStatus::Active);
            let record = db::fragments::insert_fragment(db, site_id, Some(fragment_ref), &fields)
                .map_err(conflict_on_unique("ref", CHANGED_MEANWHILE))?;
            let saved = Saved {
                record,
                created: true,
            };
            Ok((None, saved))
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
pub(super) fn warnings(is_default: bool, rules: i64) -> Vec<String> {
    let default = is_default.then(|| "site default".to_owned());
    let targeted = (rules > 0).then(|| format!("target of {rules} rules"));
    default.into_iter().chain(targeted).collect()
}

/// Edits a fragment found by its id (a console action, the way to write a fragment without a
/// reference): the fields are replaced as `PUT` replaces them; `status` absent is kept.
pub fn edit_fragment(
    db: &mut impl GenericClient,
    caller: &Caller,
    id: &FragmentId,
    write: FragmentWrite,
) -> Result<FragmentPut, ApiError> {
    write_by_id(db, caller, id, Operation::EditFragment, |tx, current| {
        let fields = write.into_fields(current.status);
        db::fragments::update_fragment(tx, id, &fields)
    })
}

/// Pauses or activates a fragment found by its id (a console action); the `warnings` are
/// those of `PUT`.
pub fn set_fragment_status(
    db: &mut impl GenericClient,
    caller: &Caller,
    id: &FragmentId,
    status: FragmentStatus,
) -> Result<FragmentPut, ApiError> {
    write_by_id(db, caller, id, Operation::SetFragmentStatus, |tx, _| {
        db::fragments::set_status(tx, id, status)
    })
}

/// Writes the caller's fragment `id` under its site's lock, answering it with the warnings of
/// a write that leaves it paused.
fn write_by_id<C: GenericClient>(
    db: &mut C,
    caller: &Caller,
    id: &FragmentId,
    operation: Operation,
    write: impl FnOnce(
        &mut postgres::Transaction<'_>,
        &FragmentRow,
    ) -> Result<FragmentRow, postgres::Error>,
) -> Result<FragmentPut, ApiError> {
    let mut tx = db.transaction()?;
    let org_id = &caller.org.id;
    let (_, domain) = db::fragments::find_in_org(&mut tx, org_id, id)?.ok_or(ApiError::NotFound)?;
    let domain = DomainName::parse(&domain)?;
    let site = locked_site(&mut tx, caller, &domain)?;
    // Read again under the lock: it may have gone meanwhile.
    let (current, _) =
        db::fragments::find_in_org(&mut tx, org_id, id)?.ok_or(ApiError::NotFound)?;
    let record = write(&mut tx, &current)?;
    let warnings = pause_warnings(&mut tx, &site, &record)?;
    let entry = fragment_entry(operation, &record, &domain).changes(&current, &record);
    audit::record(&mut tx, caller, entry)?;
    tx.commit()?;
    Ok(FragmentPut {
        fragment: Saved {
            record,
            created: false,
        },
        warnings,
    })
}

/// Makes a fragment (a console action): with a reference, which must be new to the site, or
/// without one, which the API cannot make. The site is made first when the organisation does
/// not have it yet.
pub fn create_fragment(
    db: &mut impl GenericClient,
    caller: &Caller,
    domain: &DomainName,
    fragment_ref: Option<&FragmentRef>,
    write: FragmentWrite,
) -> Result<FragmentCreated, ApiError> {
    let mut tx = db.transaction()?;
    let (site, site_created) = db::sites::ensure_site(&mut tx, &caller.org.id, domain)?;
    let fields = write.into_fields(FragmentStatus::Active);
    let fragment =
        db::fragments::insert_fragment(&mut tx, site.id, fragment_ref, &fields).map_err(
            conflict_on_unique("ref", "the site already has a fragment with this reference"),
        )?;
    audit::record(
        &mut tx,
        caller,
        fragment_entry(Operation::CreateFragment, &fragment, domain),
    )?;
    tx.commit()?;
    Ok(FragmentCreated {
        fragment,
        domain: domain.clone(),
        site_created,
    })
}

/// Deletes a fragment (a console action), with the rules that target it and its eligibility
/// entries; a site whose default it is has none after; the cards eligible only on it are set
/// to draft. `warnings` names each.
pub fn delete_fragment(
    db: &mut impl GenericClient,
    caller: &Caller,
    id: &FragmentId,
) -> Result<FragmentDeleted, ApiError> {
    let mut tx = db.transaction()?;
    let goes = fragment_deletion(&mut tx, caller, id)?;
    let drafted = draft_cards_only_on(&mut tx, caller, std::slice::from_ref(id))?;
    if !deletions::delete_fragment(&mut tx, &caller.org.id, id)? {
        return Err(ApiError::NotFound);
    }
    let fragment = goes.fragments.first().ok_or(ApiError::NotFound)?;
    audit::record(
        &mut tx,
        caller,
        fragment_entry(Operation::DeleteFragment, fragment, &goes.domain),
    )?;
    tx.commit()?;
    let mut warnings = deleted_fragment_warnings(goes.default_of.as_deref(), goes.rules);
    warnings.extend(drafted_warnings(&drafted));
    Ok(FragmentDeleted {
        id: id.clone(),
        warnings,
    })
}

/// What [`delete_fragment`] would take with the fragment: the rules that target it, its
/// eligibility entries, the default of the site whose default it is.
pub fn fragment_deletion(
    db: &mut impl GenericClient,
    caller: &Caller,
    id: &FragmentId,
) -> Result<WhatGoes, ApiError> {
    let org_id = &caller.org.id;
    let (fragment, domain) =
        db::fragments::find_in_org(db, org_id, id)?.ok_or(ApiError::NotFound)?;
    let domain = DomainName::parse(&domain)?;
    let ids = std::slice::from_ref(id);
    Ok(WhatGoes {
        rules: db::routes::count_targeting(db, id)?,
        default_of: deletions::site_defaulting_to(db, org_id, id)?,
        eligibility_entries: deletions::count_eligibility_on(db, ids)?,
        widened: deletions::active_cards_only_on(db, org_id, ids)?,
        fragments: vec![fragment],
        domain,
    })
}

/// What went with a deleted fragment, led by the words of the pause warnings (`site default`,
/// `target of N rules`) so that scripts match both alike.
fn deleted_fragment_warnings(default_of: Option<&str>, rules: i64) -> Vec<String> {
    let default = default_of.map(|domain| {
        format!(
            "site default: {domain} has no default fragment now; its pages that no rule \
             matches get the fragment_id of the request"
        )
    });
    let targeted = (rules > 0).then(|| format!("target of {rules} rules: deleted with it"));
    default.into_iter().chain(targeted).collect()
}

/// A fragment's entry, named by its name, its site and its reference as the write left them.
fn fragment_entry<'a>(
    operation: Operation,
    fragment: &'a FragmentRow,
    domain: &DomainName,
) -> AuditEntry<'a> {
    let name = match &fragment.fragment_ref {
        Some(fragment_ref) => format!("{} on {domain} {fragment_ref}", fragment.name),
        None => format!("{} on {domain}", fragment.name),
    };
    AuditEntry::new(operation, "fragment", fragment.id.as_str()).named(name)
}

impl Fields for FragmentRow {
    fn fields(&self) -> Vec<(&'static str, String)> {
        vec![
            ("name", self.name.clone()),
            ("lang", self.lang.as_str().to_owned()),
            ("description", shown(self.description.as_deref())),
            ("key-values", key_values_words(&self.key_values)),
            ("status", self.status.as_str().to_owned()),
        ]
    }
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
