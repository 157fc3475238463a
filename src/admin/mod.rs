//! `agentcard admin`: what service.md reserves to the console, from a shell. Each command
//! parses its flags into the typed input of an operation of `ops` (through the same `parse`s
//! as `/v1`), calls it as the CLI actor and returns one JSON object (printed by `main`), or the
//! operation's `ApiError` for stderr ([`error_line`]) and a non-zero exit; only `report
//! --format table|csv`, `demo --format text` and `abc-txt --format text` return text instead.

mod audit;
mod cards;
mod content;
mod demo;
mod keys;
mod orgs;
mod people;
mod report;

use crate::config::Config;
use crate::error::ApiError;
use crate::ids::OrgId;
use crate::ops::{self, Actor, Caller};
use clap::Subcommand;
use postgres::GenericClient;
use serde_json::Value;
use std::io::IsTerminal;

/// What a command prints on standard output.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    /// One JSON object: every command's output, and `report --format json`.
    Json(Value),
    /// Text rendered in another format (`report --format table|csv`, `demo --format text`,
    /// `abc-txt --format text`), line ends included.
    Text(String),
}

impl std::fmt::Display for Output {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Output::Json(value) => {
                let text = serde_json::to_string_pretty(value).map_err(|_| std::fmt::Error)?;
                writeln!(f, "{text}")
            }
            Output::Text(text) => f.write_str(text),
        }
    }
}

/// How a refusal is printed on standard error, after `agentcard: `: `<field>: <message>` for a
/// refused value, with the `field` and `message` `/v1` gives for the same value, else the
/// message alone (an internal error or an unavailable database with its cause).
pub fn error_line(error: &ApiError) -> String {
    match (error, error.field()) {
        (ApiError::Internal(cause), _) => format!("internal error: {cause}"),
        (ApiError::Unavailable(cause), _) => format!("database unavailable: {cause}"),
        (_, Some(field)) => format!("{field}: {}", error.message()),
        (_, None) => error.message(),
    }
}

/// The id named on the command line; one of another shape names nothing, as on `/v1`.
fn named<T>(parse: fn(&str) -> Option<T>, text: &str) -> Result<T, ApiError> {
    parse(text).ok_or(ApiError::NotFound)
}

/// The CLI as the caller, in the organisation named by `--org`.
fn cli_caller(db: &mut impl GenericClient, text: &str) -> Result<Caller, ApiError> {
    ops::orgs::open(db, &named(OrgId::parse, text)?, Actor::Cli)
}

/// Splits each `a<sep>b` at the first separator; a value without one is refused on `field`.
fn split_all(
    values: &[String],
    separator: char,
    field: &str,
    form: &str,
) -> Result<Vec<(String, String)>, ApiError> {
    values
        .iter()
        .map(|value| {
            value
                .split_once(separator)
                .map(|(a, b)| (a.to_owned(), b.to_owned()))
                .ok_or_else(|| {
                    ApiError::validation(field, format!("{value:?} is not of the form {form}"))
                })
        })
        .collect()
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
    /// Delivery API keys (make one without a management token; console only: delete a
    /// revoked key).
    Key {
        #[command(subcommand)]
        command: keys::KeyCommand,
    },
    /// An organisation's audit log: every write through the API, the console or the CLI, newest
    /// first.
    Audit(audit::AuditArgs),
    /// Create a demonstration organisation (token, sites, fragments, rules, cards, key) and
    /// print it with curl requests to paste, each after a comment saying what it answers.
    Demo {
        /// Default: text (shell lines) when standard output is a terminal, else json.
        #[arg(long, value_enum)]
        format: Option<demo::Format>,
    },
    /// The console's people: make one (with a link to set the password), or print a link to
    /// set a new password.
    User {
        #[command(subcommand)]
        command: people::UserCommand,
    },
    /// An organisation's members: print an invitation link.
    Member {
        #[command(subcommand)]
        command: people::MemberCommand,
    },
    /// Requests, fill rate, no-fill reasons and agent purposes of an organisation's /fragment
    /// requests over a window, in total or grouped.
    ///
    /// The window is [--since, --until): each minute whose start lies in it counts, and each
    /// hour once minutes are rolled up into hours. Times are UTC. Groups add up to the totals.
    ///
    /// --by page reads the page counts, which are kept per hour with requests, served and the
    /// agent purpose only: its groups and its totals both come from them (so they add up, and
    /// count whole hours only), and they carry no no_fill_reasons.
    Report(report::ReportArgs),
    /// The line a publisher adds to its abc.txt for this service (edge client rule 7):
    /// `<the service's domain, AGENTCARD_BASE_HOST>, acc_…, DIRECT`.
    AbcTxt {
        #[arg(long)]
        org: String,
        #[arg(long, value_enum, default_value = "json")]
        format: LineFormat,
    },
}

/// How `abc-txt` prints the line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LineFormat {
    /// One object, as every admin command prints: the line and its fields.
    Json,
    /// The line alone, as abc.txt holds it.
    Text,
}

/// The database a command runs on: `admin report` reads the replica when one is set
/// (`AGENTCARD_REPLICA_URL`), every other command the primary.
pub fn database_url<'c>(command: &AdminCommand, config: &'c Config) -> &'c str {
    match (command, &config.replica_url) {
        (AdminCommand::Report(_), Some(replica)) => replica,
        _ => &config.database_url,
    }
}

/// Runs one command against `db`, the database of `config` (`database_url`).
pub fn run(
    command: AdminCommand,
    config: &Config,
    db: &mut postgres::Client,
) -> Result<Output, ApiError> {
    let prefix = &config.prefix;
    let json = match command {
        AdminCommand::Org { command } => orgs::run_org(db, command),
        AdminCommand::Token { command } => orgs::run_token(db, command, prefix),
        AdminCommand::Card { command } => cards::run(db, command),
        AdminCommand::Fragment { command } => content::run_fragment(db, command),
        AdminCommand::Site { command } => content::run_site(db, command),
        AdminCommand::Key { command } => keys::run(db, command, prefix),
        AdminCommand::User { command } => people::run_user(db, command, config),
        AdminCommand::Member { command } => people::run_member(db, command, config),
        AdminCommand::Audit(args) => audit::run(db, args),
        AdminCommand::Demo { format } => {
            let base_url = format!("http://{}", config.listen);
            let format = format.unwrap_or(if std::io::stdout().is_terminal() {
                demo::Format::Text
            } else {
                demo::Format::Json
            });
            let console = config.console_url.as_ref();
            return demo::run(db, prefix, &base_url, console, format);
        }
        AdminCommand::Report(args) => return report::run(db, args),
        AdminCommand::AbcTxt { org, format } => return abc_txt_line(db, config, &org, format),
    };
    json.map(Output::Json)
}

/// The organisation's abc.txt line: the service's domain, the organisation, `DIRECT`.
fn abc_txt_line(
    db: &mut postgres::Client,
    config: &Config,
    org_text: &str,
    format: LineFormat,
) -> Result<Output, ApiError> {
    let domain = config.base_host.as_deref().ok_or_else(|| {
        ApiError::validation(
            "AGENTCARD_BASE_HOST",
            "set AGENTCARD_BASE_HOST to the service's domain (its abc.txt line names it)",
        )
    })?;
    let caller = cli_caller(db, org_text)?;
    let record = crate::abc_txt::Record {
        domain: domain.to_string(),
        account_id: caller.org.id.to_string(),
        relationship: crate::abc_txt::Relationship::Direct,
    };
    Ok(match format {
        LineFormat::Text => Output::Text(format!("{record}\n")),
        LineFormat::Json => Output::Json(serde_json::json!({
            "line": record.to_string(),
            "domain": record.domain,
            "account_id": record.account_id,
            "relationship": "DIRECT",
        })),
    })
}
