//! `agentcard admin`: what service.md reserves to the console, from a shell. Each command
//! returns one JSON object (printed by `main`), or an error for stderr and a non-zero exit.

mod cards;
mod content;
mod demo;
mod keys;
mod orgs;
mod report;

use crate::config::Config;
use clap::Subcommand;
use serde_json::Value;

#[derive(Debug, thiserror::Error)]
pub enum AdminError {
    #[error("{0}")]
    Invalid(String),
    #[error("not found: {0}")]
    NotFound(String),
    #[error("database: {}", crate::db::describe(.0))]
    Database(#[from] postgres::Error),
}

impl From<crate::domain::Invalid> for AdminError {
    fn from(invalid: crate::domain::Invalid) -> Self {
        AdminError::Invalid(invalid.to_string())
    }
}

#[derive(Debug, Subcommand)]
pub enum AdminCommand {
    /// Organisations.
    Org {
        #[command(subcommand)]
        command: orgs::OrgCommand,
    },
    /// Management tokens (owners only in the console).
    Token {
        #[command(subcommand)]
        command: orgs::TokenCommand,
    },
    /// Cards (console only: create, activate, archive, delete; platform card eligibility).
    Card {
        #[command(subcommand)]
        command: cards::CardCommand,
    },
    /// Fragments (console only: create without a reference, delete).
    Fragment {
        #[command(subcommand)]
        command: content::FragmentCommand,
    },
    /// Sites (console only: delete).
    Site {
        #[command(subcommand)]
        command: content::SiteCommand,
    },
    /// Delivery API keys (console only: delete a revoked key).
    Key {
        #[command(subcommand)]
        command: keys::KeyCommand,
    },
    /// Create a demonstration organisation (token, sites, fragments, rules, cards, key) and
    /// print it with ready-to-paste curl requests.
    Demo,
    /// Fill rate, no-fill reasons and agent purposes per site and fragment.
    Report {
        #[arg(long)]
        org: String,
        /// An RFC 3339 time, or a duration back from now such as 24h or 7d.
        #[arg(long)]
        since: Option<String>,
    },
}

/// Runs one command against the database of `config`.
pub fn run(command: AdminCommand, config: &Config) -> Result<Value, AdminError> {
    let mut db = crate::db::connect(&config.database_url)?;
    let prefix = &config.prefix;
    match command {
        AdminCommand::Org { command } => orgs::run_org(&mut db, command),
        AdminCommand::Token { command } => orgs::run_token(&mut db, command, prefix),
        AdminCommand::Card { command } => cards::run(&mut db, command),
        AdminCommand::Fragment { command } => content::run_fragment(&mut db, command),
        AdminCommand::Site { command } => content::run_site(&mut db, command),
        AdminCommand::Key { command } => keys::run(&mut db, command),
        AdminCommand::Demo => {
            let base_url = format!("http://{}", config.listen);
            demo::run(&mut db, prefix, &base_url)
        }
        AdminCommand::Report { org, since } => report::run(&mut db, &org, since.as_deref()),
    }
}
