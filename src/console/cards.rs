//! The card pages, open to every member (a card of another organisation, or a platform card,
//! is not found): the list by status, the form that creates, edits and
//! previews a card, its status buttons, its deletion (after a confirmation page) and its
//! eligibility. Every write goes through `ops::cards` as the signed-in person, so the rules,
//! the messages and the audit log are the ones `/v1` and the CLI have.

use super::answers;
use super::card_form::{sample_page, CardForm};
use super::confirm::{self, Confirm};
use super::context::{Answer, PageContext};
use super::inputs::{field_refused, Inputs};
use super::layout::Layout;
use super::notice::Notice;
use super::refusal::PageRefusal;
use crate::db::cards::CardRow;
use crate::domain::{CardStatus, Invalid, Lang};
use crate::error::ApiError;
use crate::ids::{CardId, FragmentId};
use crate::ops::cards as card_ops;
use crate::ops::reports::Touched;
use crate::ops::{sites, Caller, Scope};
use askama::Template;

/// One card's line in the list.
pub struct Listed {
    pub id: String,
    pub name: String,
    pub lang: &'static str,
    pub title: String,
    pub updated_at: String,
}

/// The cards of one status.
pub struct StatusGroup {
    pub heading: &'static str,
    /// The table's caption: the cards of the status (`Draft cards`).
    pub caption: &'static str,
    pub cards: Vec<Listed>,
}

#[derive(Template)]
#[template(path = "console/cards.html")]
pub struct CardList {
    pub layout: Layout,
    pub groups: Vec<StatusGroup>,
}

/// What the page of a saved card shows besides its form.
pub struct Saved {
    pub id: String,
    pub status: &'static str,
    /// The status buttons: `(status, label)` of each status the card is not in.
    pub moves: Vec<(&'static str, &'static str)>,
}

#[derive(Template)]
#[template(path = "console/card.html")]
pub struct CardEditor {
    pub layout: Layout,
    pub heading: String,
    /// `None`: a card not saved yet.
    pub saved: Option<Saved>,
    pub action: String,
    pub fields: Inputs,
    /// A refusal no field of the form names.
    pub alert: Option<String>,
    /// The sample page the preview frame shows (its `srcdoc`).
    pub preview: Option<String>,
    /// What it served over the last 7 days (on its own page).
    pub week: Option<super::chart::Week>,
}

/// A fragment the card may be shown on.
pub struct Choice {
    pub id: String,
    /// Its reference and name, or its name for a fragment without a reference.
    pub label: String,
    pub checked: bool,
}

/// A site's fragments on the eligibility page: those ticked first, then by label.
pub struct SiteChoices {
    pub domain: String,
    pub choices: Vec<Choice>,
}

#[derive(Template)]
#[template(path = "console/card_eligibility.html")]
pub struct EligibilityPage {
    pub layout: Layout,
    pub id: String,
    pub name: String,
    /// The saved list, as labels.
    pub chosen: Vec<String>,
    /// The sites with a fragment the filter keeps: those with a fragment ticked first.
    pub groups: Vec<SiteChoices>,
    /// The fragments ticked that the filter hides: sent again as they are.
    pub hidden: Vec<String>,
    /// The filter (`q`): a part of a site's domain, or of a fragment's reference or name,
    /// whatever the case.
    pub filter: String,
    /// Whether the organisation has any fragment.
    pub any: bool,
    pub alert: Option<String>,
}

/// The status buttons of a card, in the order a card moves.
const MOVES: &[(CardStatus, &str)] = &[
    (CardStatus::Active, "Activate"),
    (CardStatus::Archived, "Archive"),
    (CardStatus::Draft, "Back to draft"),
];

/// One of the organisation's own cards (a platform card is the operator's: not found).
fn own_card(ctx: &mut PageContext, caller: &Caller, id: &CardId) -> Result<CardRow, PageRefusal> {
    let card = card_ops::find_card(ctx.db, caller, id)?;
    Ok(card
        .filter(|card| !card.is_platform())
        .ok_or(ApiError::NotFound)?)
}

/// The card of the path, with the caller.
fn card_of_path(ctx: &mut PageContext) -> Result<(Caller, CardRow), PageRefusal> {
    let caller = ctx.caller.clone();
    let id = ctx.captures.get()?;
    let card = own_card(ctx, &caller, &id)?;
    Ok((caller, card))
}

/// `GET /cards`: the organisation's own cards, by status.
pub fn list(ctx: &mut PageContext) -> Answer {
    let cards = card_ops::list_cards(ctx.db, &ctx.caller)?;
    let groups = [
        (CardStatus::Draft, "Drafts", "Draft cards"),
        (CardStatus::Active, "Active", "Active cards"),
        (CardStatus::Archived, "Archived", "Archived cards"),
    ]
    .into_iter()
    .map(|(status, heading, caption)| StatusGroup {
        heading,
        caption,
        cards: cards
            .iter()
            .filter(|card| card.status == status && !card.is_platform())
            .map(|card| Listed {
                id: card.id.to_string(),
                name: card.name.clone(),
                lang: card.lang.as_str(),
                title: card.title.clone(),
                updated_at: card.updated_at.clone(),
            })
            .collect(),
    })
    .collect();
    let page = CardList {
        layout: ctx.layout(),
        groups,
    };
    Ok(answers::html(200, &page))
}

fn editor(ctx: &PageContext, card: Option<&CardRow>, fields: Inputs) -> CardEditor {
    let saved = card.map(|card| Saved {
        id: card.id.to_string(),
        status: card.status.as_str(),
        moves: MOVES
            .iter()
            .filter(|(status, _)| *status != card.status)
            .map(|(status, label)| (status.as_str(), *label))
            .collect(),
    });
    CardEditor {
        layout: ctx.layout(),
        heading: card.map_or("New card".into(), |card| card.name.clone()),
        action: card.map_or("/cards/new".into(), |card| format!("/cards/{}", card.id)),
        saved,
        fields,
        alert: None,
        preview: None,
        week: None,
    }
}

/// `GET /cards/new`: in the language the organisation uses most (English when it has no
/// fragment or card yet).
pub fn new(ctx: &mut PageContext) -> Answer {
    let used = card_ops::most_used_lang(ctx.db, &ctx.caller)?;
    let fields = CardForm::blank(used.unwrap_or(Lang::En));
    Ok(answers::html(200, &editor(ctx, None, fields)))
}

/// `GET /cards/{card}`.
pub fn show(ctx: &mut PageContext) -> Answer {
    let (_, card) = card_of_path(ctx)?;
    let mut page = editor(ctx, Some(&card), CardForm::of_card(&card));
    page.week = Some(super::reports::week(ctx, &card)?);
    Ok(answers::html(200, &page))
}

/// `POST /cards/new`.
pub fn create(ctx: &mut PageContext) -> Answer {
    let caller = ctx.caller.clone();
    save(ctx, &caller, None)
}

/// `POST /cards/{card}`.
pub fn edit(ctx: &mut PageContext) -> Answer {
    let (caller, card) = card_of_path(ctx)?;
    save(ctx, &caller, Some(card))
}

/// "Preview" shows the card as `/fragment` would serve it and writes nothing; "Save" creates
/// (a draft) or edits it.
fn save(ctx: &mut PageContext, caller: &Caller, card: Option<CardRow>) -> Answer {
    let content = match CardForm::validate(&ctx.form) {
        Ok(content) => content,
        Err(all) => return refused(ctx, card.as_ref(), all),
    };
    if ctx.form.get("action") == "preview" {
        let mut page = editor(ctx, card.as_ref(), CardForm::sent(&ctx.form));
        page.preview = Some(sample_page(card.as_ref().map(|c| &c.id), &content));
        return Ok(answers::html(200, &page));
    }
    let scope = Scope::Org(caller);
    let written = match &card {
        Some(card) => card_ops::edit_card(ctx.db, scope, &card.id, &content),
        None => card_ops::create_card(ctx.db, scope, CardStatus::Draft, &content),
    };
    match written {
        Ok(saved) => Ok(answers::redirect_with(
            &format!("/cards/{}", saved.id),
            Notice::CardSaved,
        )),
        Err(error) => refused(ctx, card.as_ref(), vec![field_refused(error)?]),
    }
}

/// The form again, as typed, with each refusal next to its field (`422`), or above the form
/// when it names no field of it.
fn refused(ctx: &PageContext, card: Option<&CardRow>, refusals: Vec<Invalid>) -> Answer {
    let mut fields = CardForm::sent(&ctx.form);
    let alert = fields.refuse_all(refusals);
    let mut page = editor(ctx, card, fields);
    page.alert = alert;
    Ok(answers::html(422, &page))
}

/// `POST /cards/{card}/status`: activate, archive, or back to draft.
pub fn set_status(ctx: &mut PageContext) -> Answer {
    let status = CardStatus::parse(ctx.form.get("status"))?;
    let (caller, card) = card_of_path(ctx)?;
    card_ops::set_card_status(ctx.db, Scope::Org(&caller), &card.id, status)?;
    let location = format!("/cards/{}", card.id);
    Ok(answers::redirect_with(
        &location,
        Notice::card_became(status),
    ))
}

/// `GET /cards/{card}/delete`.
pub fn confirm_delete(ctx: &mut PageContext) -> Answer {
    let (caller, card) = card_of_path(ctx)?;
    let id = &card.id;
    let eligible_on = card_ops::get_eligibility(ctx.db, &caller, id)?.len();
    let plural = if eligible_on > 1 { "s" } else { "" };
    let goes = (eligible_on > 0)
        .then(|| format!("Its eligibility on {eligible_on} fragment{plural}."))
        .into_iter()
        .collect();
    let page = Confirm {
        traffic: confirm::traffic(ctx, Some(Touched::Card(id.as_str())))?,
        layout: ctx.layout(),
        title: format!("Delete the card {} ({})", card.name, card.status.as_str()),
        goes,
        action: format!("/cards/{id}/delete"),
        button: "Delete the card",
        back: format!("/cards/{id}"),
    };
    Ok(answers::html(200, &page))
}

/// `POST /cards/{card}/delete`: the card and its eligibility lists go.
pub fn delete(ctx: &mut PageContext) -> Answer {
    let (caller, card) = card_of_path(ctx)?;
    card_ops::delete_card(ctx.db, Scope::Org(&caller), &card.id)?;
    Ok(answers::redirect_with("/cards", Notice::CardDeleted))
}

/// `GET /cards/{card}/eligibility`.
pub fn eligibility(ctx: &mut PageContext) -> Answer {
    let (caller, card) = card_of_path(ctx)?;
    let page = eligibility_page(ctx, &caller, card, None)?;
    Ok(answers::html(200, &page))
}

fn eligibility_page(
    ctx: &mut PageContext,
    caller: &Caller,
    card: CardRow,
    wanted: Option<&[FragmentId]>,
) -> Result<EligibilityPage, PageRefusal> {
    let listed = card_ops::get_eligibility(ctx.db, caller, &card.id)?;
    let saved: Vec<&FragmentId> = listed.iter().map(|row| &row.fragment_id).collect();
    let filter = ctx.query.get("q").trim().to_string();
    let needle = filter.to_lowercase();
    let (mut chosen, mut groups, mut hidden, mut any) = (Vec::new(), Vec::new(), Vec::new(), false);
    for (site, fragments) in sites::list_sites_with_fragments(ctx.db, caller)? {
        let site_matches = site.domain.to_lowercase().contains(&needle);
        let mut choices = Vec::new();
        for fragment in fragments {
            any = true;
            let checked = match wanted {
                Some(wanted) => wanted.contains(&fragment.id),
                None => saved.contains(&&fragment.id),
            };
            let label = match &fragment.fragment_ref {
                Some(reference) => format!("{reference} ({})", fragment.name),
                None => fragment.name.clone(),
            };
            if saved.contains(&&fragment.id) {
                chosen.push(format!("{} {label}", site.domain));
            }
            let id = fragment.id.to_string();
            if site_matches || label.to_lowercase().contains(&needle) {
                choices.push(Choice { id, label, checked });
            } else if checked {
                hidden.push(id);
            }
        }
        choices.sort_by(|a, b| (!a.checked, &a.label).cmp(&(!b.checked, &b.label)));
        if !choices.is_empty() {
            groups.push(SiteChoices {
                domain: site.domain.to_string(),
                choices,
            });
        }
    }
    // Stable: the sites keep their order among those with a fragment ticked, and the others.
    groups.sort_by_key(|group| !group.choices.iter().any(|choice| choice.checked));
    Ok(EligibilityPage {
        layout: ctx.layout(),
        id: card.id.to_string(),
        name: card.name,
        chosen,
        groups,
        hidden,
        filter,
        any,
        alert: None,
    })
}

/// `POST /cards/{card}/eligibility`: the list replaced by the fragments ticked.
pub fn save_eligibility(ctx: &mut PageContext) -> Answer {
    let caller = ctx.caller.clone();
    let id: CardId = ctx.captures.get()?;
    let wanted = ctx
        .form
        .all("fragment")
        .map(|text| FragmentId::parse(text).ok_or(text))
        .collect::<Result<Vec<_>, _>>();
    let written = match &wanted {
        Ok(wanted) => card_ops::replace_eligibility_by_id(ctx.db, &caller, &id, wanted),
        Err(_) => Err(ApiError::validation(
            card_ops::FRAGMENTS,
            "a fragment ticked is not one of this page: reload it",
        )),
    };
    match written {
        Ok(_) => Ok(answers::redirect_with(
            &format!("/cards/{id}/eligibility"),
            Notice::EligibilitySaved,
        )),
        Err(error) => {
            let message = field_refused(error)?.message;
            let wanted = wanted.ok();
            let card = own_card(ctx, &caller, &id)?;
            let mut page = eligibility_page(ctx, &caller, card, wanted.as_deref())?;
            page.alert = Some(message);
            Ok(answers::html(422, &page))
        }
    }
}
