//! `admin card …`: create, edit, set the status of and delete cards (console only), and set one
//! organisation's eligibility list of a platform card, which the API refuses to write.

use super::{cli_caller, named, split_all};
use crate::domain::{CardStatus, DomainName, FragmentRef};
use crate::error::ApiError;
use crate::ids::CardId;
use crate::ops::cards::{entry_domain, entry_ref, CardForm, FRAGMENTS};
use crate::ops::{self, Actor, Scope};
use crate::wire;
use clap::{ArgGroup, Args, Subcommand};
use postgres::Client;
use serde_json::{json, Value};

#[derive(Debug, Subcommand)]
pub enum CardCommand {
    /// Create a card, a draft unless --status says otherwise.
    Create(Box<CreateCard>),
    /// Replace a card's content (name, lang, brand, title, body, brand domain, link,
    /// key-values); its owner, status and eligibility stay.
    Edit {
        id: String,
        #[command(flatten)]
        content: Box<CardFlags>,
    },
    /// Set a card's status.
    SetStatus {
        id: String,
        /// draft, active or archived.
        status: String,
    },
    /// Delete a card and its eligibility lists.
    Delete { id: String },
    /// Set an organisation's eligibility list of a platform card (other cards are set through
    /// PUT /v1/cards/{id}/eligibility). No --fragment: not eligible in that organisation.
    Eligibility {
        id: String,
        #[arg(long)]
        org: String,
        /// A fragment of the organisation; repeat for each fragment.
        #[arg(long = "fragment", value_name = "DOMAIN:REF")]
        fragments: Vec<String>,
    },
}

#[derive(Debug, Args)]
#[command(group(ArgGroup::new("owner").required(true).args(["org", "platform"])))]
pub struct CreateCard {
    /// The organisation that owns the card.
    #[arg(long)]
    org: Option<String>,
    /// A platform card, managed by the service operator, visible to every organisation.
    #[arg(long)]
    platform: bool,
    #[command(flatten)]
    content: CardFlags,
    #[arg(long, default_value = "draft", value_parser = ["draft", "active"])]
    status: String,
}

/// A card's content as flags.
#[derive(Debug, Args)]
pub struct CardFlags {
    /// 1 to 200 characters, like --brand, --title and --link-label.
    #[arg(long)]
    name: String,
    /// fr, en, de, es or it.
    #[arg(long)]
    lang: String,
    #[arg(long)]
    brand: String,
    #[arg(long)]
    title: String,
    /// 1 to 2000 characters.
    #[arg(long)]
    body: String,
    /// The brand's domain; pages on it or its subdomains prefer this card.
    #[arg(long)]
    brand_domain: Option<String>,
    /// An absolute http(s) URL; needs --link-label.
    #[arg(long, requires = "link_label")]
    link_url: Option<String>,
    #[arg(long, requires = "link_url")]
    link_label: Option<String>,
    /// A targeting value; repeat the flag for more, repeating a key adds a value to it.
    #[arg(long = "kv", value_name = "KEY=VALUE")]
    kv: Vec<String>,
}

impl CardFlags {
    /// The content, checked as the console's form is.
    fn content(&self) -> Result<crate::db::cards::CardContent, ApiError> {
        let pairs = split_all(&self.kv, '=', "key_values", "KEY=VALUE")?;
        let form = CardForm {
            name: &self.name,
            lang: &self.lang,
            brand: &self.brand,
            brand_domain: self.brand_domain.as_deref(),
            title: &self.title,
            body: &self.body,
            link_url: self.link_url.as_deref(),
            link_label: self.link_label.as_deref(),
            key_values: &pairs,
        };
        Ok(form.parse()?)
    }
}

pub fn run(db: &mut Client, command: CardCommand) -> Result<Value, ApiError> {
    let operator = Scope::Operator(&Actor::Cli);
    match command {
        CardCommand::Create(args) => create(db, &args),
        CardCommand::Edit { id, content } => {
            let content = content.content()?;
            let id = named(CardId::parse, &id)?;
            let card = ops::cards::edit_card(db, operator, &id, &content)?;
            Ok(wire::card_json(&card))
        }
        CardCommand::SetStatus { id, status } => {
            let status = CardStatus::parse(&status)?;
            let id = named(CardId::parse, &id)?;
            let card = ops::cards::set_card_status(db, operator, &id, status)?;
            Ok(wire::card_json(&card))
        }
        CardCommand::Delete { id } => {
            let id = named(CardId::parse, &id)?;
            ops::cards::delete_card(db, operator, &id)?;
            Ok(json!({"id": id, "deleted": true}))
        }
        CardCommand::Eligibility { id, org, fragments } => {
            set_platform_eligibility(db, &id, &org, &fragments)
        }
    }
}

/// Every flag checked, then the owner, then the write.
fn create(db: &mut Client, args: &CreateCard) -> Result<Value, ApiError> {
    let status = CardStatus::parse(&args.status)?;
    let content = args.content.content()?;
    let card = match &args.org {
        Some(id) => {
            let caller = cli_caller(db, id)?;
            ops::cards::create_card(db, Scope::Org(&caller), status, &content)?
        }
        None => ops::cards::create_card(db, Scope::Operator(&Actor::Cli), status, &content)?,
    };
    Ok(wire::card_json(&card))
}

/// Replaces `org`'s list of a platform card.
fn set_platform_eligibility(
    db: &mut Client,
    id: &str,
    org_text: &str,
    fragments: &[String],
) -> Result<Value, ApiError> {
    let wanted = fragment_addresses(fragments)?;
    let caller = cli_caller(db, org_text)?;
    let id = named(CardId::parse, id)?;
    let items = ops::cards::set_platform_eligibility(db, &caller, &id, &wanted)?;
    let mut out = wire::eligibility_json(&items);
    out["card_id"] = json!(id);
    out["org_id"] = json!(caller.org.id);
    Ok(out)
}

/// `DOMAIN:REF` values, the list's entries as `/v1` names them (`fragments[i].domain`,
/// `fragments[i].ref`): the domain ends at the first colon (a reference may hold colons).
fn fragment_addresses(fragments: &[String]) -> Result<Vec<(DomainName, FragmentRef)>, ApiError> {
    split_all(fragments, ':', FRAGMENTS, "DOMAIN:REF")?
        .iter()
        .enumerate()
        .map(|(index, (domain, fragment_ref))| {
            Ok((
                entry_domain(index, domain)?,
                entry_ref(index, fragment_ref)?,
            ))
        })
        .collect()
}
