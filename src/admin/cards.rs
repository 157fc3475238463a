//! `admin card …`: create, set the status of and delete cards (console only), and set one
//! organisation's eligibility list of a platform card, which the API refuses to write.

use super::{existing_org, named, AdminError};
use crate::db::cards::{self, CardContent, Link, Resolved};
use crate::domain::{
    CardStatus, CardText, DomainName, FragmentRef, Invalid, KeyValues, Lang, LinkUrl,
};
use crate::ids::{CardId, FragmentId};
use crate::wire;
use clap::{ArgGroup, Args, Subcommand};
use postgres::Client;
use serde_json::{json, Value};

#[derive(Debug, Subcommand)]
pub enum CardCommand {
    /// Create a card, a draft unless --status says otherwise.
    Create(Box<CreateCard>),
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
    #[arg(long, default_value = "draft", value_parser = ["draft", "active"])]
    status: String,
}

pub fn run(db: &mut Client, command: CardCommand) -> Result<Value, AdminError> {
    match command {
        CardCommand::Create(args) => create(db, *args),
        CardCommand::SetStatus { id, status } => {
            let status = CardStatus::parse(&status)?;
            let card = cards::set_card_status(db, &named(CardId::parse, &id)?, status)?
                .ok_or(AdminError::NotFound(id))?;
            Ok(wire::card_json(&card))
        }
        CardCommand::Delete { id } => {
            if !cards::delete_card(db, &named(CardId::parse, &id)?)? {
                return Err(AdminError::NotFound(id));
            }
            Ok(json!({"id": id, "deleted": true}))
        }
        CardCommand::Eligibility { id, org, fragments } => {
            set_platform_eligibility(db, &id, &org, &fragments)
        }
    }
}

fn create(db: &mut Client, args: CreateCard) -> Result<Value, AdminError> {
    let status = CardStatus::parse(&args.status)?;
    let content = card_content(&args)?;
    let org = match &args.org {
        Some(org) => Some(existing_org(db, org)?.id),
        None => None,
    };
    Ok(wire::card_json(&cards::create_card(
        db,
        org.as_ref(),
        status,
        &content,
    )?))
}

/// Every flag checked, before anything is read or written.
fn card_content(args: &CreateCard) -> Result<CardContent, AdminError> {
    let link = match (&args.link_url, &args.link_label) {
        (Some(url), Some(label)) => Some(Link {
            url: LinkUrl::parse(url)?,
            label: CardText::parse(label, "link_label")?,
        }),
        _ => None,
    };
    let brand_domain = args
        .brand_domain
        .as_deref()
        .map(|domain| DomainName::parse(domain).map_err(|e| e.on("brand_domain")))
        .transpose()?;
    Ok(CardContent {
        name: CardText::parse(&args.name, "name")?,
        lang: Lang::parse(&args.lang, "lang")?,
        brand: CardText::parse(&args.brand, "brand")?,
        brand_domain,
        title: CardText::parse(&args.title, "title")?,
        body: CardText::parse_body(&args.body)?,
        link,
        key_values: KeyValues::from_pairs(split_all(&args.kv, '=', "key_values", "KEY=VALUE")?)?,
    })
}

/// Splits each `a<sep>b` at the first separator.
fn split_all(
    values: &[String],
    separator: char,
    flag: &str,
    form: &str,
) -> Result<Vec<(String, String)>, Invalid> {
    values
        .iter()
        .map(|value| {
            value
                .split_once(separator)
                .map(|(a, b)| (a.to_owned(), b.to_owned()))
                .ok_or_else(|| Invalid::new(flag, format!("{value:?} is not of the form {form}")))
        })
        .collect()
}

/// Replaces `org`'s list of a platform card in one transaction, the card row locked.
fn set_platform_eligibility(
    db: &mut Client,
    id: &str,
    org: &str,
    fragments: &[String],
) -> Result<Value, AdminError> {
    let wanted = fragment_addresses(fragments)?;
    let card_id = named(CardId::parse, id)?;
    let mut tx = db.transaction()?;
    let card =
        cards::lock_card(&mut tx, &card_id)?.ok_or_else(|| AdminError::NotFound(id.into()))?;
    if !card.is_platform() {
        return Err(AdminError::Invalid(format!(
            "card {id} belongs to an organisation, which sets its eligibility through \
             PUT /v1/cards/{id}/eligibility; this command is for platform cards only"
        )));
    }
    let org = existing_org(&mut tx, org)?.id;
    let resolved = cards::resolve_fragments(&mut tx, &org, &wanted)?;
    let fragment_ids = fragment_ids_or_refusal(fragments, resolved)?;
    cards::replace_eligibility(&mut tx, &card_id, &org, &fragment_ids)?;
    let items = cards::list_eligibility(&mut tx, &card_id, &org)?;
    tx.commit()?;
    let mut out = wire::eligibility_json(&items);
    out["card_id"] = json!(id);
    out["org_id"] = json!(org);
    Ok(out)
}

/// `DOMAIN:REF` values: the domain ends at the first colon (a reference may hold colons).
fn fragment_addresses(fragments: &[String]) -> Result<Vec<(DomainName, FragmentRef)>, AdminError> {
    split_all(fragments, ':', "--fragment", "DOMAIN:REF")?
        .into_iter()
        .map(|(domain, fragment_ref)| {
            let domain =
                DomainName::parse(&domain).map_err(|e| Invalid::new("--fragment", e.message))?;
            let fragment_ref = FragmentRef::parse_with_field(&fragment_ref, "--fragment")?;
            Ok((domain, fragment_ref))
        })
        .collect()
}

fn fragment_ids_or_refusal(
    fragments: &[String],
    resolved: Vec<Resolved>,
) -> Result<Vec<FragmentId>, AdminError> {
    fragments
        .iter()
        .zip(resolved)
        .map(|(named, found)| match found {
            Resolved::Fragment(id) => Ok(id),
            Resolved::NoSite => Err(AdminError::Invalid(format!(
                "--fragment {named}: the organisation has no site with this domain"
            ))),
            Resolved::NoFragment => Err(AdminError::Invalid(format!(
                "--fragment {named}: the site has no fragment with this reference"
            ))),
        })
        .collect()
}
