//! The card form, apart from the pages that show it: its inputs, filled from a card or from
//! what was sent, checked as the CLI's flags are (`ops::cards::CardForm`); and the preview of
//! the card as `/fragment` serves it.

use super::form::Form;
use super::inputs::{cut, language_choice, Checked, Input, InputKind, Inputs};
use crate::db::cards::{CardContent, CardRow};
use crate::delivery::render;
use crate::domain::{Invalid, Lang};
use crate::ids::CardId;
use crate::ops::cards::CardForm as CardFlags;
use serde_json::Value;

/// The card form: its inputs, and its values checked as the CLI's flags are
/// (`ops::cards::CardForm`).
pub struct CardForm;

impl CardForm {
    /// The inputs, each holding `value(name)`.
    fn inputs(value: impl Fn(&str) -> String) -> Inputs {
        let inputs = [
            Input::alone("name", "Name")
                .required()
                .hint("Seen in the console only."),
            Input::alone("lang", "Language")
                .required()
                .kind(language_choice()),
            Input::alone("brand", "Brand").required(),
            Input::alone("brand_domain", "Brand domain")
                .hint("Optional. Pages on this domain or its subdomains prefer this card."),
            Input::alone("title", "Title").required(),
            Input::alone("body", "Text")
                .required()
                .kind(InputKind::Lines(5))
                .hint("Up to 2000 characters."),
            Input::alone("link_url", "Link URL")
                .hint("Optional: an http:// or https:// address, with its label."),
            Input::alone("link_label", "Link label"),
            Input::alone("key_values", "Key-values")
                .kind(InputKind::Lines(5))
                .hint(
                    "Optional: one key=value a line, for targeting; a key may come back with \
                     more values.",
                ),
        ];
        Inputs(
            inputs
                .into_iter()
                .map(|input| {
                    let value = value(input.name);
                    input.value(value)
                })
                .collect(),
        )
    }

    /// An empty form, its language `lang`.
    pub fn blank(lang: Lang) -> Inputs {
        CardForm::inputs(|name| if name == "lang" { lang.as_str() } else { "" }.to_string())
    }

    /// The form holding what was sent.
    pub fn sent(form: &Form) -> Inputs {
        CardForm::inputs(|name| form.get(name).to_string())
    }

    /// The form holding a saved card.
    pub fn of_card(card: &CardRow) -> Inputs {
        CardForm::inputs(|name| match name {
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

    /// The content of the card, checked as the CLI's flags are, or every refusal at once.
    pub fn validate(form: &Form) -> Result<CardContent, Vec<Invalid>> {
        let mut checked = Checked::of(form);
        let pairs = checked
            .take(key_value_pairs(form.get("key_values")))
            .unwrap_or_default();
        let content = CardFlags {
            name: form.get("name"),
            lang: form.get("lang"),
            brand: form.get("brand"),
            brand_domain: Some(form.get("brand_domain")),
            title: form.get("title"),
            body: form.get("body"),
            link_url: Some(form.get("link_url")),
            link_label: Some(form.get("link_label")),
            key_values: &pairs,
        }
        .parse_all();
        match content {
            Ok(content) => checked.done(content),
            Err(refused) => {
                checked.keep(refused);
                Err(checked.refusals())
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
                        format!("{:?} is not of the form key=value", cut(line.trim())),
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
pub fn sample_page(id: Option<&CardId>, content: &CardContent) -> String {
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
