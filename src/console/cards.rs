//! The card pages, open to every member (a card of another organisation, or a platform card,
//! is not found): the list by status, the form that creates, edits and
//! previews a card, its status buttons, its deletion (after a confirmation page) and its
//! eligibility. Every write goes through `ops::cards` as the signed-in person, so the rules,
//! the messages and the audit log are the ones `/v1` and the CLI have.

use super::confirm::Confirm;
use super::context::{Answer, PageContext};
use super::notice::Notice;
use super::pages::{self, Layout};
use super::refusal::Refusal;
use crate::db::cards::{self as stored, CardRow};
use crate::db::fragments;
use crate::delivery::render;
use crate::domain::{CardStatus, Invalid, Lang};
use crate::error::ApiError;
use crate::ids::{CardId, FragmentId};
use crate::ops::cards::{self as card_ops, CardForm};
use crate::ops::{sites, Caller, Scope};
use askama::Template;
use serde_json::Value;

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
    pub cards: Vec<Listed>,
}

#[derive(Template)]
#[template(path = "console/cards.html")]
pub struct CardList {
    pub layout: Layout,
    pub groups: Vec<StatusGroup>,
}

/// How a field of the card form is typed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Line,
    Lines,
    Language,
}

/// A field of the card form: its value as typed and the refusal shown next to it.
pub struct CardField {
    pub name: &'static str,
    pub label: &'static str,
    pub hint: &'static str,
    pub kind: Kind,
    pub required: bool,
    pub value: String,
    pub error: Option<String>,
    /// The field the refusal names, as `/v1` would (`key_values.Section` for the key-values).
    pub error_field: String,
}

/// The card form's fields, as the form shows them.
pub struct Fields(Vec<CardField>);

const FIELDS: &[(&str, &str, &str, Kind, bool)] = &[
    (
        "name",
        "Name",
        "Seen in the console only.",
        Kind::Line,
        true,
    ),
    ("lang", "Language", "", Kind::Language, true),
    ("brand", "Brand", "", Kind::Line, true),
    (
        "brand_domain",
        "Brand domain",
        "Optional. Pages on this domain or its subdomains prefer this card.",
        Kind::Line,
        false,
    ),
    ("title", "Title", "", Kind::Line, true),
    ("body", "Text", "Up to 2000 characters.", Kind::Lines, true),
    (
        "link_url",
        "Link URL",
        "Optional: an http:// or https:// address, with its label.",
        Kind::Line,
        false,
    ),
    ("link_label", "Link label", "", Kind::Line, false),
    (
        "key_values",
        "Key-values",
        "Optional: one key=value a line, for targeting; a key may come back with more values.",
        Kind::Lines,
        false,
    ),
];

impl CardField {
    /// The ids of the texts that describe the field: its hint, its refusal.
    pub fn described_by(&self) -> String {
        let hint = (!self.hint.is_empty()).then(|| format!("{}-hint", self.name));
        let error = self.error.is_some().then(|| format!("{}-error", self.name));
        [hint, error]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" ")
    }
}

impl Fields {
    fn with(value: impl Fn(&str) -> String) -> Fields {
        Fields(
            FIELDS
                .iter()
                .map(|&(name, label, hint, kind, required)| CardField {
                    name,
                    label,
                    hint,
                    kind,
                    required,
                    value: value(name),
                    error: None,
                    error_field: String::new(),
                })
                .collect(),
        )
    }

    fn blank() -> Fields {
        Fields::with(|name| if name == "lang" { "en" } else { "" }.to_string())
    }

    fn of_form(ctx: &PageContext) -> Fields {
        Fields::with(|name| ctx.form.get(name).to_string())
    }

    fn of_card(card: &CardRow) -> Fields {
        Fields::with(|name| match name {
            "name" => card.name.clone(),
            "lang" => card.lang.as_str().to_string(),
            "brand" => card.brand.clone(),
            "brand_domain" => card.brand_domain.clone().unwrap_or_default(),
            "title" => card.title.clone(),
            "body" => card.body.clone(),
            "link_url" => card.link_url.clone().unwrap_or_default(),
            "link_label" => card.link_label.clone().unwrap_or_default(),
            _ => key_value_lines(&card.key_values),
        })
    }

    fn value(&self, name: &str) -> &str {
        self.0
            .iter()
            .find(|field| field.name == name)
            .map_or("", |field| field.value.as_str())
    }

    /// Shows `message` next to the field that `field` names or is a member of
    /// (`key_values.Section`); `false` when it names no field of the form.
    fn refuse(&mut self, field: &str, message: String) -> bool {
        let names = |f: &&mut CardField| {
            field == f.name
                || field
                    .strip_prefix(f.name)
                    .is_some_and(|m| m.starts_with('.'))
        };
        match self.0.iter_mut().find(names) {
            Some(found) => {
                found.error = Some(message);
                found.error_field = field.to_string();
                true
            }
            None => false,
        }
    }

    /// The content of the card, checked as the CLI's flags are.
    fn content(&self) -> Result<stored::CardContent, Invalid> {
        let pairs = key_value_pairs(self.value("key_values"))?;
        CardForm {
            name: self.value("name"),
            lang: self.value("lang"),
            brand: self.value("brand"),
            brand_domain: Some(self.value("brand_domain")),
            title: self.value("title"),
            body: self.value("body"),
            link_url: Some(self.value("link_url")),
            link_label: Some(self.value("link_label")),
            key_values: &pairs,
        }
        .parse()
    }
}

/// The key-values field: one `key=value` a line, blank lines skipped, spaces around the key
/// and the value dropped (the value's by `KeyValues`' own rule).
fn key_value_pairs(text: &str) -> Result<Vec<(String, String)>, Invalid> {
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            line.split_once('=')
                .map(|(key, value)| (key.trim().to_string(), value.to_string()))
                .ok_or_else(|| {
                    Invalid::new(
                        "key_values",
                        format!("{:?} is not of the form key=value", line.trim()),
                    )
                })
        })
        .collect()
}

/// A card's stored key-values as the field shows them.
fn key_value_lines(key_values: &Value) -> String {
    let Some(object) = key_values.as_object() else {
        return String::new();
    };
    object
        .iter()
        .flat_map(|(key, values)| {
            let values = values.as_array().cloned().unwrap_or_default();
            values
                .into_iter()
                .map(move |value| format!("{key}={}", value.as_str().unwrap_or_default()))
        })
        .collect::<Vec<_>>()
        .join("\n")
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
    pub fields: Vec<CardField>,
    pub languages: Vec<&'static str>,
    /// A refusal no field of the form names.
    pub alert: Option<String>,
    /// The sample page the preview frame shows (its `srcdoc`).
    pub preview: Option<String>,
}

/// A fragment the card may be shown on.
pub struct Choice {
    pub id: String,
    /// `<domain> <ref>`, or `<domain> <name>` for a fragment without a reference.
    pub label: String,
    pub checked: bool,
}

#[derive(Template)]
#[template(path = "console/card_eligibility.html")]
pub struct EligibilityPage {
    pub layout: Layout,
    pub id: String,
    pub name: String,
    /// The saved list, as labels.
    pub chosen: Vec<String>,
    pub choices: Vec<Choice>,
    pub alert: Option<String>,
}

/// The status buttons of a card, in the order a card moves.
const MOVES: &[(CardStatus, &str)] = &[
    (CardStatus::Active, "Activate"),
    (CardStatus::Archived, "Archive"),
    (CardStatus::Draft, "Back to draft"),
];

/// One of the organisation's own cards (a platform card is the operator's: not found).
fn own_card(ctx: &mut PageContext, caller: &Caller, id: &CardId) -> Result<CardRow, Refusal> {
    let card = stored::find_visible_card(ctx.db, &caller.org.id, id)?;
    Ok(card
        .filter(|card| !card.is_platform())
        .ok_or(ApiError::NotFound)?)
}

/// The card of the path, with the caller.
fn card_of_path(ctx: &mut PageContext) -> Result<(Caller, CardRow), Refusal> {
    let caller = ctx.caller()?;
    let id = ctx.captures.get()?;
    let card = own_card(ctx, &caller, &id)?;
    Ok((caller, card))
}

/// `GET /cards`: the organisation's own cards, by status.
pub fn list(ctx: &mut PageContext) -> Answer {
    let cards = card_ops::list_cards(ctx.db, &ctx.caller()?)?;
    let groups = [
        (CardStatus::Draft, "Drafts"),
        (CardStatus::Active, "Active"),
        (CardStatus::Archived, "Archived"),
    ]
    .into_iter()
    .map(|(status, heading)| StatusGroup {
        heading,
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
    Ok(pages::html(200, &page))
}

fn editor(ctx: &PageContext, card: Option<&CardRow>, fields: Fields) -> CardEditor {
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
        fields: fields.0,
        languages: Lang::ALL.iter().map(|lang| lang.as_str()).collect(),
        alert: None,
        preview: None,
    }
}

/// `GET /cards/new`.
pub fn new(ctx: &mut PageContext) -> Answer {
    Ok(pages::html(200, &editor(ctx, None, Fields::blank())))
}

/// `GET /cards/{card}`.
pub fn show(ctx: &mut PageContext) -> Answer {
    let (_, card) = card_of_path(ctx)?;
    let page = editor(ctx, Some(&card), Fields::of_card(&card));
    Ok(pages::html(200, &page))
}

/// `POST /cards/new`.
pub fn create(ctx: &mut PageContext) -> Answer {
    let caller = ctx.caller()?;
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
    let fields = Fields::of_form(ctx);
    let content = match fields.content() {
        Ok(content) => content,
        Err(invalid) => return refused(ctx, card.as_ref(), fields, invalid.into()),
    };
    if ctx.form.get("action") == "preview" {
        let mut page = editor(ctx, card.as_ref(), fields);
        page.preview = Some(sample_page(card.as_ref().map(|c| &c.id), &content));
        return Ok(pages::html(200, &page));
    }
    let scope = Scope::Org(caller);
    let written = match &card {
        Some(card) => card_ops::edit_card(ctx.db, scope, &card.id, &content),
        None => card_ops::create_card(ctx.db, scope, CardStatus::Draft, &content),
    };
    match written {
        Ok(saved) => Ok(pages::redirect_with(
            &format!("/cards/{}", saved.id),
            Notice::CardSaved,
        )),
        Err(error) => refused(ctx, card.as_ref(), fields, error),
    }
}

/// The form again, as typed, with the refusal next to its field (`422`), or above the
/// form when it names no field of it; any other refusal is its own page.
fn refused(
    ctx: &PageContext,
    card: Option<&CardRow>,
    mut fields: Fields,
    error: ApiError,
) -> Answer {
    let (field, message) = pages::field_refusal(error)?;
    let shown = fields.refuse(&field, message.clone());
    let mut page = editor(ctx, card, fields);
    page.alert = (!shown).then_some(message);
    Ok(pages::html(422, &page))
}

/// `POST /cards/{card}/status`: activate, archive, or back to draft.
pub fn set_status(ctx: &mut PageContext) -> Answer {
    let status = CardStatus::parse(ctx.form.get("status"))?;
    let (caller, card) = card_of_path(ctx)?;
    card_ops::set_card_status(ctx.db, Scope::Org(&caller), &card.id, status)?;
    let location = format!("/cards/{}", card.id);
    Ok(pages::redirect_with(&location, Notice::card_became(status)))
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
        layout: ctx.layout(),
        title: format!("Delete the card {} ({})", card.name, card.status.as_str()),
        goes,
        action: format!("/cards/{id}/delete"),
        button: "Delete the card",
        back: format!("/cards/{id}"),
    };
    Ok(pages::html(200, &page))
}

/// `POST /cards/{card}/delete`: the card and its eligibility lists go.
pub fn delete(ctx: &mut PageContext) -> Answer {
    let (caller, card) = card_of_path(ctx)?;
    card_ops::delete_card(ctx.db, Scope::Org(&caller), &card.id)?;
    Ok(pages::redirect_with("/cards", Notice::CardDeleted))
}

/// `GET /cards/{card}/eligibility`.
pub fn eligibility(ctx: &mut PageContext) -> Answer {
    let (caller, card) = card_of_path(ctx)?;
    let page = eligibility_page(ctx, &caller, card, None)?;
    Ok(pages::html(200, &page))
}

fn eligibility_page(
    ctx: &mut PageContext,
    caller: &Caller,
    card: CardRow,
    wanted: Option<&[FragmentId]>,
) -> Result<EligibilityPage, Refusal> {
    let listed = card_ops::get_eligibility(ctx.db, caller, &card.id)?;
    let saved: Vec<&FragmentId> = listed.iter().map(|row| &row.fragment_id).collect();
    let mut choices = Vec::new();
    for site in sites::list_sites(ctx.db, caller)? {
        for fragment in fragments::list_fragments(ctx.db, site.id)? {
            let checked = match wanted {
                Some(wanted) => wanted.contains(&fragment.id),
                None => saved.contains(&&fragment.id),
            };
            let named = fragment.fragment_ref.unwrap_or(fragment.name);
            choices.push(Choice {
                id: fragment.id.to_string(),
                label: format!("{} {named}", site.domain),
                checked,
            });
        }
    }
    let chosen = choices
        .iter()
        .filter(|choice| saved.iter().any(|id| id.as_str() == choice.id))
        .map(|choice| choice.label.clone())
        .collect();
    Ok(EligibilityPage {
        layout: ctx.layout(),
        id: card.id.to_string(),
        name: card.name,
        chosen,
        choices,
        alert: None,
    })
}

/// `POST /cards/{card}/eligibility`: the list replaced by the fragments ticked.
pub fn save_eligibility(ctx: &mut PageContext) -> Answer {
    let caller = ctx.caller()?;
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
        Ok(_) => Ok(pages::redirect_with(
            &format!("/cards/{id}/eligibility"),
            Notice::EligibilitySaved,
        )),
        Err(error) => {
            let (_, message) = pages::field_refusal(error)?;
            let wanted = wanted.ok();
            let card = own_card(ctx, &caller, &id)?;
            let mut page = eligibility_page(ctx, &caller, card, wanted.as_deref())?;
            page.alert = Some(message);
            Ok(pages::html(422, &page))
        }
    }
}

/// The page an agent reads, as the preview frame shows it: the card, rendered by the code that
/// renders it for `/fragment`, placed before a sample article.
fn sample_page(id: Option<&CardId>, content: &stored::CardContent) -> String {
    let link = content.link.as_ref();
    let rendered = render::render(&render::CardContent {
        id: id.map_or("preview", |id| id.as_str()),
        lang: content.lang.as_str(),
        brand: content.brand.as_str(),
        title: content.title.as_str(),
        body: content.body.as_str(),
        link_url: link.map(|link| link.url.as_str()),
        link_label: link.map(|link| link.label.as_str()),
    });
    format!(
        "<!doctype html><html lang=\"{lang}\"><head><meta charset=\"utf-8\">\
         <title>Sample article</title></head><body>{card}\
         <article><h1>Sample article</h1><p>A page of your site, as an AI agent reads it: \
         the card comes first, then the article.</p></article></body></html>",
        lang = content.lang.as_str(),
        card = String::from_utf8_lossy(&rendered.html),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_values_are_lines_of_key_equals_value() {
        let pairs = key_value_pairs("section = sport\n\n  \r\nsection=tennis\r\n").unwrap();
        assert_eq!(
            pairs,
            [
                ("section".to_string(), " sport".to_string()),
                ("section".to_string(), "tennis".to_string())
            ]
        );
        let refused = key_value_pairs("section").unwrap_err();
        assert_eq!(refused.field, "key_values");
        assert_eq!(refused.message, "\"section\" is not of the form key=value");
        let shown = key_value_lines(&serde_json::json!({"a": ["1", "2"], "b": ["3"]}));
        assert_eq!(shown, "a=1\na=2\nb=3");
    }
}
