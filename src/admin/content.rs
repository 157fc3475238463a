//! `admin fragment …` and `admin site …`: the site and fragment writes the API does not offer.
//! A fragment without a reference (which the API cannot make) is made by leaving out --ref.
//! Deletes cascade: rules, eligibility entries and a site default go with the fragment, and
//! the output's `warnings` name what went (as the contract asks of a console delete).

use super::{cli_caller, named, split_all};
use crate::domain::{
    Description, DomainName, FragmentName, FragmentRef, FragmentStatus, KeyValues, Lang,
};
use crate::error::ApiError;
use crate::ids::FragmentId;
use crate::ops::{self, fragments::FragmentWrite};
use crate::wire;
use clap::Subcommand;
use postgres::Client;
use serde_json::{json, Value};

#[derive(Debug, Subcommand)]
pub enum FragmentCommand {
    /// Create a fragment, active unless --status says otherwise, with the members of a `PUT
    /// /v1/sites/{domain}/fragments/{ref}` (checked alike). The site is created in the
    /// organisation first if it does not exist yet (the output says so in `site_created`).
    Create {
        #[arg(long)]
        org: String,
        #[arg(long)]
        domain: String,
        /// The fragment's reference; leave it out for a fragment without one.
        #[arg(long = "ref", value_name = "REF")]
        fragment_ref: Option<String>,
        /// 1 to 200 characters.
        #[arg(long)]
        name: String,
        /// fr, en, de, es or it.
        #[arg(long, default_value = "fr")]
        lang: String,
        /// At most 2000 characters.
        #[arg(long)]
        description: Option<String>,
        /// A targeting value; repeat the flag for more, repeating a key adds a value to it.
        #[arg(long = "kv", value_name = "KEY=VALUE")]
        kv: Vec<String>,
        /// active or paused.
        #[arg(long, default_value = "active")]
        status: String,
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

pub fn run_fragment(db: &mut Client, command: FragmentCommand) -> Result<Value, ApiError> {
    match command {
        FragmentCommand::Create {
            org: id,
            domain,
            fragment_ref,
            name,
            lang,
            description,
            kv,
            status,
        } => {
            let domain = DomainName::parse(&domain)?;
            let fragment_ref = fragment_ref
                .as_deref()
                .map(FragmentRef::parse)
                .transpose()?;
            let write = FragmentWrite {
                name: FragmentName::parse(&name)?,
                lang: Lang::parse(&lang, "lang")?,
                description: description
                    .as_deref()
                    .map(Description::parse)
                    .transpose()?
                    .flatten(),
                key_values: KeyValues::from_pairs(split_all(&kv, '=', "key_values", "KEY=VALUE")?)?,
                status: Some(FragmentStatus::parse(&status)?),
            };
            let caller = cli_caller(db, &id)?;
            let created = ops::fragments::create_fragment(
                db,
                &caller,
                &domain,
                fragment_ref.as_ref(),
                write,
            )?;
            let mut record = wire::fragment_json(&created.fragment);
            record["domain"] = json!(created.domain.as_str());
            record["site_created"] = json!(created.site_created);
            Ok(record)
        }
        FragmentCommand::Delete { org: id, fragment } => {
            let caller = cli_caller(db, &id)?;
            let fragment = named(FragmentId::parse, &fragment)?;
            let deleted = ops::fragments::delete_fragment(db, &caller, &fragment)?;
            Ok(json!({"id": deleted.id, "deleted": true, "warnings": deleted.warnings}))
        }
    }
}

pub fn run_site(db: &mut Client, command: SiteCommand) -> Result<Value, ApiError> {
    match command {
        SiteCommand::Delete { org: id, domain } => {
            let domain = DomainName::parse(&domain)?;
            let caller = cli_caller(db, &id)?;
            let deleted = ops::sites::delete_site(db, &caller, &domain)?;
            Ok(json!({"domain": deleted.domain.as_str(), "deleted": true,
                      "warnings": deleted.warnings}))
        }
    }
}
