//! Cards: the list an organisation sees and its eligibility lists (`/v1`), and the console's
//! actions: create, edit, set the status of and delete cards, and set one organisation's list
//! of a platform card.
//!
//! A platform card is visible to every organisation, but it and its lists are the service
//! operator's business: each organisation reads only its own list of it, and cannot write it.

use super::audit::{self, shown, AuditEntry, Fields, Operation, NONE};
use super::{Caller, Scope};
use crate::db::cards::{self, CardContent, CardLink, CardRow, EligibilityRow, Resolved};
use crate::domain::{
    CardStatus, CardText, DomainName, FragmentRef, Invalid, KeyValues, Lang, LinkUrl,
};
use crate::error::ApiError;
use crate::ids::{CardId, FragmentId, OrgId};
use postgres::GenericClient;

/// The member of an eligibility list's body, and the start of its entries' field paths.
pub const FRAGMENTS: &str = "fragments";

/// A card's content as a form sends it (the CLI's flags, the console's fields): texts as typed,
/// blank optional members absent, key-values as `(key, value)` pairs.
#[derive(Debug, Clone, Copy)]
pub struct CardForm<'a> {
    pub name: &'a str,
    pub lang: &'a str,
    pub brand: &'a str,
    pub brand_domain: Option<&'a str>,
    pub title: &'a str,
    pub body: &'a str,
    pub link_url: Option<&'a str>,
    pub link_label: Option<&'a str>,
    pub key_values: &'a [(String, String)],
}

impl CardForm<'_> {
    /// The content, or the refusal of the first member at fault, in the form's order.
    pub fn parse(&self) -> Result<CardContent, Invalid> {
        self.parse_all()
            .map_err(|mut refused| refused.swap_remove(0))
    }

    /// The content, or the refusal of every member at fault, in the form's order (a form
    /// shows them all at once); never an empty list.
    pub fn parse_all(&self) -> Result<CardContent, Vec<Invalid>> {
        let mut refused = Vec::new();
        let mut kept = Kept(&mut refused);
        let name = kept.ok(CardText::parse(self.name, "name"));
        let lang = kept.ok(Lang::parse(self.lang, "lang"));
        let brand = kept.ok(CardText::parse(self.brand, "brand"));
        let brand_domain = kept.ok(present(self.brand_domain)
            .map(|domain| DomainName::parse(domain).map_err(|e| e.on("brand_domain")))
            .transpose());
        let title = kept.ok(CardText::parse(self.title, "title"));
        let body = kept.ok(CardText::parse_body(self.body));
        let link = self.link(&mut kept);
        let key_values = kept.ok(KeyValues::from_pairs(self.key_values.iter().cloned()));
        let content = || {
            Some(CardContent {
                name: name?,
                lang: lang?,
                brand: brand?,
                brand_domain: brand_domain?,
                title: title?,
                body: body?,
                link: link?,
                key_values: key_values?,
            })
        };
        content().ok_or(refused)
    }

    /// The link: a URL and its label go together, each checked.
    fn link(&self, kept: &mut Kept) -> Option<Option<CardLink>> {
        match (present(self.link_url), present(self.link_label)) {
            (Some(url), Some(label)) => {
                let url = kept.ok(LinkUrl::parse(url));
                let label = kept.ok(CardText::parse(label, "link_label"));
                Some(Some(CardLink {
                    url: url?,
                    label: label?,
                }))
            }
            (Some(_), None) => kept.ok(Err(goes_with("link_label", "link_url"))),
            (None, Some(_)) => kept.ok(Err(goes_with("link_url", "link_label"))),
            (None, None) => Some(None),
        }
    }
}

/// The refusals of a form's members, gathered as each member is checked.
struct Kept<'a>(&'a mut Vec<Invalid>);

impl Kept<'_> {
    fn ok<T>(&mut self, checked: Result<T, Invalid>) -> Option<T> {
        checked.map_err(|invalid| self.0.push(invalid)).ok()
    }
}

/// An optional member, absent when blank (a form's empty field).
fn present(text: Option<&str>) -> Option<&str> {
    text.filter(|text| !text.trim().is_empty())
}

fn goes_with(missing: &str, given: &str) -> Invalid {
    Invalid::new(missing, format!("{missing} is required with {given}"))
}

/// The field path of member `name` of entry `index` of an eligibility list
/// (`fragments[3].domain`).
pub fn entry_field(index: usize, name: &str) -> String {
    format!("{FRAGMENTS}[{index}].{name}")
}

/// The domain of entry `index` of an eligibility list, read as `{domain}` is.
pub fn entry_domain(index: usize, text: &str) -> Result<DomainName, Invalid> {
    DomainName::parse(text).map_err(|invalid| invalid.on(entry_field(index, "domain")))
}

/// The reference of entry `index` of an eligibility list, exact.
pub fn entry_ref(index: usize, text: &str) -> Result<FragmentRef, Invalid> {
    FragmentRef::parse_with_field(text, &entry_field(index, "ref"))
}

pub fn list_cards(db: &mut impl GenericClient, caller: &Caller) -> Result<Vec<CardRow>, ApiError> {
    Ok(cards::list_visible_cards(db, &caller.org.id)?)
}

/// A card the caller sees (its own or a platform card), if any.
pub fn find_card(
    db: &mut impl GenericClient,
    caller: &Caller,
    id: &CardId,
) -> Result<Option<CardRow>, ApiError> {
    Ok(cards::find_visible_card(db, &caller.org.id, id)?)
}

/// The language most of the caller's fragments and cards are in; `None` without any.
pub fn most_used_lang(
    db: &mut impl GenericClient,
    caller: &Caller,
) -> Result<Option<Lang>, ApiError> {
    Ok(cards::most_used_lang(db, &caller.org.id)?)
}

/// The caller's list of a card it sees (its own or a platform card).
pub fn get_eligibility(
    db: &mut impl GenericClient,
    caller: &Caller,
    id: &CardId,
) -> Result<Vec<EligibilityRow>, ApiError> {
    let org_id = &caller.org.id;
    let card = cards::find_visible_card(db, org_id, id)?.ok_or(ApiError::NotFound)?;
    Ok(cards::list_eligibility(db, &card.id, org_id)?)
}

/// Replaces the caller's list of one of its cards at once (`403` for a platform card): the
/// card row is locked for the whole check-and-write, so concurrent replacements serialise and
/// nothing is written unless every entry names a fragment of the organisation.
pub fn replace_eligibility(
    db: &mut impl GenericClient,
    caller: &Caller,
    id: &CardId,
    wanted: &[(DomainName, FragmentRef)],
) -> Result<Vec<EligibilityRow>, ApiError> {
    let resolve = |tx: &mut postgres::Transaction| by_address(tx, &caller.org.id, wanted);
    write_eligibility(db, caller, id, resolve, own_card_list)
}

/// The same replacement with the fragments named by id, as the console's checkboxes name them
/// (a fragment made in the console may have no reference).
pub fn replace_eligibility_by_id(
    db: &mut impl GenericClient,
    caller: &Caller,
    id: &CardId,
    wanted: &[FragmentId],
) -> Result<Vec<EligibilityRow>, ApiError> {
    let resolve = |tx: &mut postgres::Transaction| by_id(tx, &caller.org.id, wanted);
    write_eligibility(db, caller, id, resolve, own_card_list)
}

/// An organisation sets the list of its own cards only.
fn own_card_list(card: &CardRow) -> Result<Operation, ApiError> {
    if card.is_platform() {
        return Err(ApiError::PlatformCard);
    }
    Ok(Operation::ReplaceEligibility)
}

/// Replaces the caller's list of a platform card, which only the service operator sets (a
/// console action); an organisation's own card has its list set by the organisation.
pub fn set_platform_eligibility(
    db: &mut impl GenericClient,
    caller: &Caller,
    id: &CardId,
    wanted: &[(DomainName, FragmentRef)],
) -> Result<Vec<EligibilityRow>, ApiError> {
    let resolve = |tx: &mut postgres::Transaction| by_address(tx, &caller.org.id, wanted);
    write_eligibility(db, caller, id, resolve, |card| {
        if !card.is_platform() {
            return Err(ApiError::validation(
                "id",
                "this card belongs to an organisation, which sets its list itself \
                 (PUT /v1/cards/{id}/eligibility): this list is for platform cards only",
            ));
        }
        Ok(Operation::SetPlatformEligibility)
    })
}

/// The checks and the write of both kinds of list: `allowed` refuses the card or names the
/// operation; `resolve` finds the fragments wanted, or refuses the first that is not the
/// organisation's.
fn write_eligibility(
    db: &mut impl GenericClient,
    caller: &Caller,
    id: &CardId,
    resolve: impl FnOnce(&mut postgres::Transaction) -> Result<Vec<FragmentId>, ApiError>,
    allowed: impl FnOnce(&CardRow) -> Result<Operation, ApiError>,
) -> Result<Vec<EligibilityRow>, ApiError> {
    let org_id = &caller.org.id;
    let mut tx = db.transaction()?;
    let card = cards::lock_visible_card(&mut tx, org_id, id)?.ok_or(ApiError::NotFound)?;
    let operation = allowed(&card)?;
    let fragment_ids = resolve(&mut tx)?;
    let before = cards::list_eligibility(&mut tx, id, org_id)?;
    cards::replace_eligibility(&mut tx, id, org_id, &fragment_ids)
        .map_err(conflict_if_fragment_gone)?;
    let items = cards::list_eligibility(&mut tx, id, org_id)?;
    let entry = card_entry(operation, id, &card.name).change(
        FRAGMENTS,
        eligibility_words(&before),
        eligibility_words(&items),
    );
    audit::record(&mut tx, caller, entry)?;
    tx.commit()?;
    Ok(items)
}

/// An eligibility list as the log shows it: each fragment by its site's domain and its
/// reference (its id when it has none); an empty list means everywhere.
fn eligibility_words(list: &[EligibilityRow]) -> String {
    if list.is_empty() {
        return "everywhere".into();
    }
    let entries: Vec<String> = list
        .iter()
        .map(|e| {
            let fragment = e.fragment_ref.as_deref().unwrap_or(e.fragment_id.as_str());
            format!("{} {fragment}", e.domain)
        })
        .collect();
    entries.join(", ")
}

/// The fragments of `(domain, ref)` entries, or the `422` of the first entry that names no
/// fragment of the organisation.
fn by_address(
    tx: &mut postgres::Transaction,
    org_id: &OrgId,
    wanted: &[(DomainName, FragmentRef)],
) -> Result<Vec<FragmentId>, ApiError> {
    cards::resolve_fragments(tx, org_id, wanted)?
        .into_iter()
        .enumerate()
        .map(|(index, found)| match found {
            Resolved::Fragment(id) => Ok(id),
            Resolved::NoSite => Err(ApiError::validation(
                entry_field(index, "domain"),
                "no site of your organisation has this domain",
            )),
            Resolved::NoFragment => Err(ApiError::validation(
                entry_field(index, "ref"),
                "no fragment of this site has this reference",
            )),
        })
        .collect()
}

/// The fragments of ids, or the `422` of the first that is not a fragment of the organisation.
fn by_id(
    tx: &mut postgres::Transaction,
    org_id: &OrgId,
    wanted: &[FragmentId],
) -> Result<Vec<FragmentId>, ApiError> {
    cards::own_fragments(tx, org_id, wanted)?
        .into_iter()
        .enumerate()
        .map(|(index, found)| {
            found.ok_or_else(|| {
                ApiError::validation(
                    entry_field(index, "id"),
                    "no fragment of your organisation has this id",
                )
            })
        })
        .collect()
}

/// A fragment deleted from the console between the check and the write: the contract's rare
/// `409` of a write colliding with another (read again, then retry).
fn conflict_if_fragment_gone(error: postgres::Error) -> ApiError {
    if crate::db::is_foreign_key_violation(&error) {
        return ApiError::conflict(
            FRAGMENTS,
            "a fragment was deleted meanwhile: read, then retry",
        );
    }
    error.into()
}

/// Creates a card: the organisation's in an organisation's scope, a platform card in the
/// operator's.
pub fn create_card(
    db: &mut impl GenericClient,
    scope: Scope,
    status: CardStatus,
    content: &CardContent,
) -> Result<CardRow, ApiError> {
    let org = match scope {
        Scope::Org(caller) => Some(&caller.org.id),
        Scope::Operator(_) => None,
    };
    let mut tx = db.transaction()?;
    let card = cards::create_card(&mut tx, org, status, content)?;
    audit::record_by(
        &mut tx,
        org,
        scope.actor(),
        card_entry(Operation::CreateCard, &card.id, &card.name),
    )?;
    tx.commit()?;
    Ok(card)
}

/// Replaces a card's content; its owner, status and lists stay.
pub fn edit_card(
    db: &mut impl GenericClient,
    scope: Scope,
    id: &CardId,
    content: &CardContent,
) -> Result<CardRow, ApiError> {
    change_card(db, scope, id, Operation::EditCard, |tx| {
        Ok(cards::update_card(tx, id, content)?)
    })
}

pub fn set_card_status(
    db: &mut impl GenericClient,
    scope: Scope,
    id: &CardId,
    status: CardStatus,
) -> Result<CardRow, ApiError> {
    change_card(db, scope, id, Operation::SetCardStatus, |tx| {
        Ok(cards::set_card_status(tx, id, status)?)
    })
}

/// Deletes a card and every eligibility list of it; answers what it was.
pub fn delete_card(
    db: &mut impl GenericClient,
    scope: Scope,
    id: &CardId,
) -> Result<CardRow, ApiError> {
    change_card(db, scope, id, Operation::DeleteCard, |tx| {
        cards::delete_card(tx, id)?;
        Ok(None)
    })
}

/// Locks a card within reach of `scope`, applies `change` and records it as `operation`, with
/// the fields it changed; answers the changed card (`change` answering `None`: the card as it
/// was). An organisation's scope reaches its
/// own cards; a platform card there is the operator's (`403`).
fn change_card(
    db: &mut impl GenericClient,
    scope: Scope,
    id: &CardId,
    operation: Operation,
    change: impl FnOnce(&mut postgres::Transaction) -> Result<Option<CardRow>, ApiError>,
) -> Result<CardRow, ApiError> {
    let mut tx = db.transaction()?;
    let card = cards::lock_card(&mut tx, id)?.ok_or(ApiError::NotFound)?;
    if !scope.reaches(card.org_id.as_ref()) {
        return Err(if card.is_platform() {
            ApiError::PlatformCard
        } else {
            ApiError::NotFound
        });
    }
    let changed = change(&mut tx)?.unwrap_or_else(|| card.clone());
    let entry = card_entry(operation, id, &changed.name).changes(&card, &changed);
    audit::record_by(&mut tx, changed.org_id.as_ref(), scope.actor(), entry)?;
    tx.commit()?;
    Ok(changed)
}

/// A card's entry, named by its name as the write left it.
pub(super) fn card_entry<'a>(operation: Operation, id: &'a CardId, name: &str) -> AuditEntry<'a> {
    AuditEntry::new(operation, "card", id.as_str()).named(name)
}

impl Fields for CardRow {
    fn fields(&self) -> Vec<(&'static str, String)> {
        vec![
            ("name", self.name.clone()),
            ("lang", self.lang.as_str().to_owned()),
            ("brand", self.brand.clone()),
            ("brand domain", shown(self.brand_domain.as_deref())),
            ("title", self.title.clone()),
            ("body", self.body.clone()),
            ("link", shown(self.link_url.as_deref())),
            ("link label", shown(self.link_label.as_deref())),
            ("key-values", key_values_words(&self.key_values)),
            ("status", self.status.as_str().to_owned()),
        ]
    }
}

/// Key-values as the log shows them: their JSON, none when empty.
pub(super) fn key_values_words(key_values: &serde_json::Value) -> String {
    match key_values.as_object() {
        Some(map) if !map.is_empty() => key_values.to_string(),
        _ => NONE.to_owned(),
    }
}
