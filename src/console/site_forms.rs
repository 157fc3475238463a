//! The forms of the site map (a fragment, a rule): their inputs, and their values checked by
//! the rules `/v1` applies (`domain`'s parsers), every refusal at once.

use super::card_form::{key_value_lines, key_value_pairs};
use super::form::Form;
use super::inputs::{Checked, Input, InputKind, Inputs};
use crate::domain::{CanonicalPath, Description, FragmentName, FragmentRef, Invalid};
use crate::domain::{KeyValues, Lang, MatchMode};
use crate::ops::fragments::FragmentWrite;
use crate::ops::routes::RouteWrite;
use serde_json::Value;

/// The fragment form: with its reference on creation (then optional), without on edit (a
/// reference never changes).
pub fn fragment_inputs(with_ref: bool) -> Inputs {
    let languages = Lang::ALL
        .iter()
        .map(|lang| (lang.as_str().to_string(), lang.as_str().to_string()))
        .collect();
    let reference = Input::new("fragment", "ref", "Reference").hint(
        "Its address in the site, such as /sport or sidebar (letters, digits and / _ - . :). \
         Leave it empty for a fragment reached through its id only: never by a rule or as the \
         default.",
    );
    let fields = [
        Input::new("fragment", "name", "Name").required(),
        Input::new("fragment", "lang", "Language")
            .required()
            .kind(InputKind::Choice(languages))
            .value("fr"),
        Input::new("fragment", "description", "Description").kind(InputKind::Lines),
        Input::new("fragment", "key_values", "Key-values")
            .kind(InputKind::Lines)
            .hint("One key=value a line (legacy targeting); a key may come back with more values."),
    ];
    Inputs(
        with_ref
            .then_some(reference)
            .into_iter()
            .chain(fields)
            .collect(),
    )
}

/// A fragment's stored key-values as lines `key=value`.
pub fn key_value_list(key_values: &Value) -> Vec<String> {
    key_value_lines(key_values)
        .lines()
        .map(str::to_string)
        .collect()
}

/// The fragment the form describes, every value checked as `/v1` checks it (each refusal at
/// once); the status is kept.
pub fn fragment_write(form: &Form) -> Result<FragmentWrite, Vec<Invalid>> {
    let mut checked = Checked::new();
    let name = checked.take(FragmentName::parse(form.get("name")));
    let lang = checked.take(Lang::parse(form.get("lang"), "lang"));
    let description = checked.take(Description::parse(form.get("description")));
    let pairs = key_value_pairs(form.get("key_values"));
    let key_values = checked.take(pairs.and_then(KeyValues::from_pairs));
    match (name, lang, description, key_values) {
        (Some(name), Some(lang), Some(description), Some(key_values)) => Ok(FragmentWrite {
            name,
            lang,
            description,
            key_values,
            status: None,
        }),
        _ => Err(checked.into_refusals()),
    }
}

/// The add-a-rule form, or a rule's own form (`form` names it), with its values.
pub fn rule_inputs(form: &str, options: Vec<(String, String)>, values: [&str; 3]) -> Inputs {
    let modes = ["exact", "prefix"]
        .map(|mode| (mode.to_string(), mode.to_string()))
        .to_vec();
    Inputs(vec![
        Input::new(form, "path_prefix", "Path")
            .required()
            .hint("A path of the site, such as /news/ (letters are lowercased).")
            .value(values[0]),
        Input::new(form, "match", "Match")
            .required()
            .hint("exact: this path only; prefix: this path and every path below it.")
            .kind(InputKind::Choice(modes))
            .value(values[1]),
        Input::new(form, "ref", "Fragment")
            .required()
            .hint("A fragment with a reference: one without is reached by its id only.")
            .kind(InputKind::Choice(options))
            .value(values[2]),
    ])
}

/// The rule the form describes, each value checked as `/v1` checks it (each refusal at once).
pub fn rule_write(form: &Form) -> Result<RouteWrite, Vec<Invalid>> {
    let mut checked = Checked::new();
    let path = checked.take(CanonicalPath::parse(form.get("path_prefix"), "path_prefix"));
    let mode = checked.take(MatchMode::parse(form.get("match"), "match"));
    let fragment_ref = checked.take(FragmentRef::parse(form.get("ref")));
    match (path, mode, fragment_ref) {
        (Some(path), Some(mode), Some(fragment_ref)) => Ok(RouteWrite {
            path,
            mode,
            fragment_ref,
        }),
        _ => Err(checked.into_refusals()),
    }
}
