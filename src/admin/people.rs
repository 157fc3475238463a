//! `admin user …` and `admin member …`: the console's people from a shell. Each prints one
//! JSON object with the `link` to pass on (shown once; only its hash is stored).

use crate::config::ConsoleUrl;
use crate::db::people as stored;
use crate::domain::{Email, Role};
use crate::error::ApiError;
use crate::ops::members::{self, Access};
use crate::ops::Actor;
use clap::{ArgGroup, Subcommand, ValueEnum};
use postgres::Client;
use serde_json::{json, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RoleArg {
    Owner,
    Member,
}

impl From<RoleArg> for Role {
    fn from(role: RoleArg) -> Role {
        match role {
            RoleArg::Owner => Role::Owner,
            RoleArg::Member => Role::Member,
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
    /// ends their sessions.
    Reset {
        #[arg(long)]
        email: String,
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

pub fn run_user(
    db: &mut Client,
    command: UserCommand,
    url: Option<&ConsoleUrl>,
) -> Result<Value, ApiError> {
    let url = console_url(url)?;
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
                    org_id: super::org(db, &org)?.org.id,
                    role: role.into(),
                },
                _ => Access::Support,
            };
            let (person, link) = members::create_person(db, &Actor::Cli, url, &email, &access)?;
            let mut out = json!({"id": person.id.as_str(), "email": person.email, "support": person.support, "link": link});
            if let Access::Member { org_id, role } = access {
                out["org_id"] = json!(org_id);
                out["role"] = json!(role.as_str());
            }
            Ok(out)
        }
        UserCommand::Reset { email } => {
            let person = stored::find_by_email(db, &email)?.ok_or(ApiError::NotFound)?;
            let link = members::password_link(db, &Actor::Cli, url, &person)?;
            Ok(json!({"id": person.id.as_str(), "email": person.email, "link": link}))
        }
    }
}

pub fn run_member(
    db: &mut Client,
    command: MemberCommand,
    url: Option<&ConsoleUrl>,
) -> Result<Value, ApiError> {
    let url = console_url(url)?;
    match command {
        MemberCommand::Invite { org, email, role } => {
            let org = super::org(db, &org)?;
            let email = Email::parse(&email)?;
            let role = Role::from(role);
            let link = members::invite(db, &org, url, &email, role)?;
            Ok(
                json!({"org_id": org.org.id, "email": email.as_str(), "role": role.as_str(), "link": link}),
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
