//! The card form, apart from the pages that show it: its fields, filled from a card or from
//! what was sent, checked as the CLI's flags are (`ops::cards::CardForm`), a refusal shown
//! next to the field it names; and the preview of the card as `/fragment` serves it.

use super::form::Form;
use super::inputs;
use crate::db::cards::{self as stored, CardRow};
use crate::delivery::render;
use crate::domain::{Invalid, Lang};
use crate::ids::CardId;
use crate::ops::cards::CardForm;
use serde_json::Value;

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
pub struct Fields(pub Vec<CardField>);

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
        inputs::described_by(self.name, !self.hint.is_empty(), self.error.is_some())
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

    /// An empty form, its language `lang`.
    pub fn blank(lang: Lang) -> Fields {
        Fields::with(|name| if name == "lang" { lang.as_str() } else { "" }.to_string())
    }

    pub fn of_form(form: &Form) -> Fields {
        Fields::with(|name| form.get(name).to_string())
    }

    pub fn of_card(card: &CardRow) -> Fields {
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
    pub fn refuse(&mut self, field: &str, message: String) -> bool {
        match self.0.iter_mut().find(|f| inputs::names(field, f.name)) {
            Some(found) => {
                found.error = Some(message);
                found.error_field = field.to_string();
                true
            }
            None => false,
        }
    }

    /// The content of the card, checked as the CLI's flags are, or every refusal at once.
    pub fn content(&self) -> Result<stored::CardContent, Vec<Invalid>> {
        let (pairs, unreadable) = match key_value_pairs(self.value("key_values")) {
            Ok(pairs) => (pairs, None),
            Err(invalid) => (Vec::new(), Some(invalid)),
        };
        let content = CardForm {
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
        .parse_all();
        match (content, unreadable) {
            (Ok(content), None) => Ok(content),
            (Ok(_), Some(invalid)) => Err(vec![invalid]),
            (Err(mut refused), unreadable) => {
                refused.extend(unreadable);
                Err(refused)
            }
        }
    }
}

/// The key-values field: one `key=value` a line, blank lines skipped, spaces around the key
/// and the value dropped (the value's by `KeyValues`' own rule).
pub(super) fn key_value_pairs(text: &str) -> Result<Vec<(String, String)>, Invalid> {
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
pub(super) fn key_value_lines(key_values: &Value) -> String {
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

/// The page an agent reads, as the preview frame shows it: the card, rendered by the code that
/// renders it for `/fragment`, placed before a sample article.
pub fn sample_page(id: Option<&CardId>, content: &stored::CardContent) -> String {
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
