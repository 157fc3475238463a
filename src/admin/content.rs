//! `admin fragment …` and `admin site …`: the site and fragment writes the API does not offer.
//! A fragment without a reference (which the API cannot make) is made by leaving out --ref.
//! Deletes cascade: rules, eligibility entries and a site default go with the fragment, and
//! the output's `warnings` name what went (as the contract asks of a console delete).

use super::{existing_org, named, AdminError};
use crate::db::fragments::FragmentFields;
use crate::db::{self, console};
use crate::domain::{DomainName, FragmentName, FragmentRef};
use crate::ids::{CardId, FragmentId};
use crate::wire;
use clap::Subcommand;
use postgres::Client;
use serde_json::{json, Value};

#[derive(Debug, Subcommand)]
pub enum FragmentCommand {
    /// Create an active `fr` fragment. The site is created in the organisation first if it
    /// does not exist yet (the output says so in `site_created`).
    Create {
        #[arg(long)]
        org: String,
        #[arg(long)]
        domain: String,
        /// The fragment's reference; leave it out for a fragment without one.
        #[arg(long = "ref", value_name = "REF")]
        fragment_ref: Option<String>,
        #[arg(long)]
        name: String,
    },
    /// Delete a fragment, with the rules that target it and its eligibility entries; a site
    /// whose default it is has none after. `warnings` names each.
    Delete {
        #[arg(long)]
        org: String,
        #[arg(long, value_name = "frg_…")]
        fragment: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum SiteCommand {
    /// Delete a site with its fragments, rules and eligibility entries.
    Delete {
        #[arg(long)]
        org: String,
        #[arg(long)]
        domain: String,
    },
}

pub fn run_fragment(db: &mut Client, command: FragmentCommand) -> Result<Value, AdminError> {
    match command {
        FragmentCommand::Create {
            org,
            domain,
            fragment_ref,
            name,
        } => {
            let domain = DomainName::parse(&domain)?;
            let fragment_ref = fragment_ref
                .as_deref()
                .map(FragmentRef::parse)
                .transpose()?;
            let name = FragmentName::parse(&name)?;
            create_fragment(db, &org, &domain, fragment_ref.as_ref(), &name)
        }
        FragmentCommand::Delete { org, fragment } => {
            let org = existing_org(db, &org)?.id;
            let fragment = named(FragmentId::parse, &fragment)?;
            let mut tx = db.transaction()?;
            let default_of = console::site_defaulting_to(&mut tx, &org, &fragment)?;
            let rules = db::routes::count_targeting(&mut tx, &fragment)?;
            let widened =
                console::cards_eligible_only_on(&mut tx, &org, std::slice::from_ref(&fragment))?;
            if !console::delete_fragment(&mut tx, &org, &fragment)? {
                return Err(AdminError::NotFound(fragment.to_string()));
            }
            tx.commit()?;
            let mut warnings = deleted_fragment_warnings(default_of.as_deref(), rules);
            warnings.extend(widened_warnings(&widened));
            Ok(json!({"id": fragment, "deleted": true, "warnings": warnings}))
        }
    }
}

pub fn run_site(db: &mut Client, command: SiteCommand) -> Result<Value, AdminError> {
    match command {
        SiteCommand::Delete { org, domain } => {
            let domain = DomainName::parse(&domain)?;
            let org = existing_org(db, &org)?.id;
            let mut tx = db.transaction()?;
            let ids = console::site_fragment_ids(&mut tx, &org, &domain)?;
            let widened = console::cards_eligible_only_on(&mut tx, &org, &ids)?;
            if !console::delete_site(&mut tx, &org, &domain)? {
                return Err(AdminError::NotFound(format!("site {domain} in {org}")));
            }
            tx.commit()?;
            Ok(json!({"domain": domain.as_str(), "deleted": true,
                      "warnings": widened_warnings(&widened)}))
        }
    }
}

fn create_fragment(
    db: &mut Client,
    org: &str,
    domain: &DomainName,
    fragment_ref: Option<&FragmentRef>,
    name: &FragmentName,
) -> Result<Value, AdminError> {
    let org = existing_org(db, org)?.id;
    let mut tx = db.transaction()?;
    let (site, site_created) = db::sites::ensure_site(&mut tx, &org, domain)?;
    let fields = FragmentFields::named(name.clone());
    let fragment = db::fragments::insert_fragment(&mut tx, site.id, fragment_ref, &fields)
        .map_err(|e| {
            if db::is_unique_violation(&e) {
                AdminError::Invalid(format!(
                    "site {domain} already has a fragment with this --ref"
                ))
            } else {
                e.into()
            }
        })?;
    tx.commit()?;
    let mut record = wire::fragment_json(&fragment);
    record["domain"] = json!(domain.as_str());
    record["site_created"] = json!(site_created);
    Ok(record)
}

/// What went with a deleted fragment, led by the words of the API's pause warnings (`site
/// default`, `target of N rules`) so that scripts match both alike.
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

/// Emptying an organisation card's list makes it eligible everywhere: say so.
fn widened_warnings(card_ids: &[CardId]) -> Vec<String> {
    card_ids
        .iter()
        .map(|id| {
            format!("card {id} was eligible only on deleted fragments: it is now eligible everywhere in the organisation")
        })
        .collect()
}
