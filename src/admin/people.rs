//! `admin user …` and `admin member …`: the console's people from a shell. Each prints one
//! JSON object with the `link` to pass on (shown once; only its hash is stored).

use crate::config::{Config, ConsoleUrl};
use crate::db::people as stored;
use crate::domain::{Email, Role};
use crate::error::ApiError;
use crate::mail::Mailer;
use crate::ops::members::{self, Access};
use crate::ops::second_factors;
use crate::ops::Actor;
use clap::{ArgGroup, Subcommand, ValueEnum};
use postgres::Client;
use serde_json::{json, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RoleArg {
    Owner,
    Member,
    Viewer,
}

impl From<RoleArg> for Role {
    fn from(role: RoleArg) -> Role {
        match role {
            RoleArg::Owner => Role::Owner,
            RoleArg::Member => Role::Member,
            RoleArg::Viewer => Role::Viewer,
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum UserCommand {
    /// Make a person, member of an organisation or support staff, and print a link with which
    /// they set their password (valid 7 days, once).
    #[command(group(ArgGroup::new("access").required(true).args(["org", "support"])))]
    Create {
        #[arg(long)]
        email: String,
        #[arg(long, requires = "role")]
        org: Option<String>,
        #[arg(long, value_enum, requires = "org")]
        role: Option<RoleArg>,
        /// The service operator's staff: opens every organisation, as an owner.
        #[arg(long)]
        support: bool,
    },
    /// Print a link with which a person sets a new password (valid 7 days, once); using it
    /// ends their sessions. With `--second-factors`: remove the person's second factors and
    /// recovery codes instead (for a person who lost them), and print no link.
    Reset {
        #[arg(long)]
        email: String,
        #[arg(long)]
        second_factors: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum MemberCommand {
    /// Print an invitation link to an organisation (valid 7 days, once).
    Invite {
        #[arg(long)]
        org: String,
        #[arg(long)]
        email: String,
        #[arg(long, value_enum, default_value = "member")]
        role: RoleArg,
    },
}

/// Each command prints the link it made, and `mailed`: whether it was also queued to the
/// person's email (`AGENTCARD_SMTP_URL` set; the mailer sends what is queued before the
/// command exits).
pub fn run_user(db: &mut Client, command: UserCommand, config: &Config) -> Result<Value, ApiError> {
    let url = console_url(config.console_url.as_ref())?;
    let mailer = Mailer::configured(config);
    match command {
        UserCommand::Create {
            email,
            org,
            role,
            support,
        } => {
            let email = Email::parse(&email)?;
            let access = match (org, role) {
                (Some(org), Some(role)) if !support => Access::Member {
                    org_id: super::cli_caller(db, &org)?.org.id,
                    role: role.into(),
                },
                _ => Access::Support,
            };
            let (person, link) = members::create_person(db, &Actor::Cli, url, &email, &access)?;
            let mailed = members::mail_password_link(mailer.as_ref(), &person, &link);
            let mut out = json!({"id": person.id.as_str(), "email": person.email, "support": person.support, "link": link, "mailed": mailed});
            if let Access::Member { org_id, role } = access {
                out["org_id"] = json!(org_id);
                out["role"] = json!(role.as_str());
            }
            Ok(out)
        }
        UserCommand::Reset {
            email,
            second_factors: true,
        } => {
            let person = stored::find_by_email(db, &email)?.ok_or(ApiError::NotFound)?;
            let removed = second_factors::remove_all(db, &Actor::Cli, &person)?;
            Ok(
                json!({"id": person.id.as_str(), "email": person.email, "second_factors_removed": removed}),
            )
        }
        UserCommand::Reset { email, .. } => {
            let person = stored::find_by_email(db, &email)?.ok_or(ApiError::NotFound)?;
            let link = members::password_link(db, &Actor::Cli, url, &person)?;
            let mailed = members::mail_password_link(mailer.as_ref(), &person, &link);
            Ok(
                json!({"id": person.id.as_str(), "email": person.email, "link": link, "mailed": mailed}),
            )
        }
    }
}

pub fn run_member(
    db: &mut Client,
    command: MemberCommand,
    config: &Config,
) -> Result<Value, ApiError> {
    let url = console_url(config.console_url.as_ref())?;
    let mailer = Mailer::configured(config);
    match command {
        MemberCommand::Invite { org, email, role } => {
            let org = super::cli_caller(db, &org)?;
            let email = Email::parse(&email)?;
            let role = Role::from(role);
            let link = members::invite(db, &org, url, &email, role)?;
            let mailed = members::mail_invitation(mailer.as_ref(), &org, &email, role, &link);
            Ok(
                json!({"org_id": org.org.id, "email": email.as_str(), "role": role.as_str(), "link": link, "mailed": mailed}),
            )
        }
    }
}

/// The console's origin, which the printed link points to: a setting, refused by its name
/// when missing (as `abc-txt` refuses a missing `AGENTCARD_BASE_HOST`).
fn console_url(url: Option<&ConsoleUrl>) -> Result<&ConsoleUrl, ApiError> {
    url.ok_or_else(|| {
        ApiError::validation(
            "AGENTCARD_CONSOLE_HOST",
            "not set: the link this prints points to the console; set AGENTCARD_CONSOLE_HOST \
             to the console's host name (and AGENTCARD_CONSOLE_URL too unless the console is \
             at https://HOST)",
        )
    })
}
