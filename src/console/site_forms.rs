//! The forms of the site map (a site, its name, its default, a fragment, a rule, the "test a
//! page" box): each a struct
//! with its inputs and one `validate` by the rules `/v1` applies (`domain`'s parsers), every
//! refusal at once.

use super::card_form::{key_value_lines, key_value_pairs};
use super::form::Form;
use super::inputs::{language_choice, Checked, Input, InputKind, Inputs};
use crate::delivery::diagnosis;
use crate::delivery::page::Page;
use crate::domain::{CanonicalPath, Description, DomainName, FragmentName, FragmentRef, Invalid};
use crate::domain::{KeyValues, Lang, MatchMode, SiteName};
use crate::ops::fragments::FragmentWrite;
use crate::ops::routes::RouteWrite;
use serde_json::Value;

/// The form that adds a site: its domain.
pub struct SiteForm;

impl SiteForm {
    pub fn inputs() -> Inputs {
        Inputs(vec![Input::new("site", "domain", "Domain")
            .required()
            .hint(
                "The bare domain of your pages, such as news.example: no scheme, path or port. \
             www.news.example is another site.",
            )])
    }

    pub fn validate(form: &Form) -> Result<DomainName, Vec<Invalid>> {
        one(form, DomainName::parse(form.get("domain")))
    }
}

/// The form of a site's name.
pub struct SiteNameForm;

impl SiteNameForm {
    pub fn inputs(name: &str) -> Inputs {
        Inputs(vec![Input::new("site", "name", "Name")
            .hint("Seen in the console only; empty for none.")
            .value(name)])
    }

    pub fn validate(form: &Form) -> Result<SiteName, Vec<Invalid>> {
        one(form, SiteName::parse(form.get("name")))
    }
}

/// The form of a site's default fragment: a choice of its fragments with a reference.
pub struct DefaultForm;

impl DefaultForm {
    pub fn inputs(options: Vec<(String, String)>, current: &str) -> Inputs {
        Inputs(vec![Input::new("default", "ref", "Default fragment")
            .required()
            .hint("An active fragment with a reference: it serves the pages no rule matches.")
            .kind(InputKind::Choice(options))
            .value(current)])
    }

    pub fn validate(form: &Form) -> Result<FragmentRef, Vec<Invalid>> {
        one(form, FragmentRef::parse(form.get("ref")))
    }
}

/// The fragment form: with its reference on creation (then optional), without on edit (a
/// reference never changes).
pub struct FragmentForm {
    pub with_ref: bool,
}

impl FragmentForm {
    pub fn inputs(&self) -> Inputs {
        let reference = Input::new("fragment", "ref", "Reference").hint(
            "Its address in the site, such as /sport or sidebar (letters, digits and / _ - . :). \
             Leave it empty for a fragment reached through its id only: never by a rule or as \
             the default.",
        );
        let fields = [
            Input::new("fragment", "name", "Name").required(),
            Input::new("fragment", "lang", "Language")
                .required()
                .kind(language_choice())
                .value("fr"),
            Input::new("fragment", "description", "Description").kind(InputKind::Lines(3)),
            Input::new("fragment", "key_values", "Key-values")
                .kind(InputKind::Lines(3))
                .hint(
                    "One key=value a line (legacy targeting); a key may come back with more \
                     values.",
                ),
        ];
        Inputs(
            self.with_ref
                .then_some(reference)
                .into_iter()
                .chain(fields)
                .collect(),
        )
    }

    /// The reference (on creation, when one is given) and the fragment the form describes,
    /// every value checked as `/v1` checks it; the status is kept.
    pub fn validate(
        &self,
        form: &Form,
    ) -> Result<(Option<FragmentRef>, FragmentWrite), Vec<Invalid>> {
        let mut checked = Checked::of(form);
        let sent = form.get("ref");
        let wanted = self.with_ref && !sent.is_empty();
        let reference = checked.take(wanted.then(|| FragmentRef::parse(sent)).transpose());
        let name = checked.take(FragmentName::parse(form.get("name")));
        let lang = checked.take(Lang::parse(form.get("lang"), "lang"));
        let description = checked.take(Description::parse(form.get("description")));
        let pairs = key_value_pairs(form.get("key_values"));
        let key_values = checked.take(pairs.and_then(KeyValues::from_pairs));
        let (Some(reference), Some(name), Some(lang), Some(description), Some(key_values)) =
            (reference, name, lang, description, key_values)
        else {
            return Err(checked.refusals());
        };
        let write = FragmentWrite {
            name,
            lang,
            description,
            key_values,
            status: None,
        };
        checked.done((reference, write))
    }
}

/// A fragment's stored key-values as lines `key=value`.
pub fn key_value_list(key_values: &Value) -> Vec<String> {
    key_value_lines(key_values)
        .lines()
        .map(str::to_string)
        .collect()
}

/// The add-a-rule form, or a rule's own form: a path, a match, a fragment among `options`.
pub struct RuleForm;

impl RuleForm {
    /// The form holding `values` (path, match, fragment).
    pub fn inputs(options: Vec<(String, String)>, values: [&str; 3]) -> Inputs {
        let modes = ["exact", "prefix"]
            .map(|mode| (mode.to_string(), mode.to_string()))
            .to_vec();
        Inputs(vec![
            Input::new("rule", "path_prefix", "Path")
                .required()
                .hint("A path of the site, such as /news/ (letters are lowercased).")
                .value(values[0]),
            Input::new("rule", "match", "Match")
                .required()
                .hint("exact: this path only; prefix: this path and every path below it.")
                .kind(InputKind::Choice(modes))
                .value(values[1]),
            Input::new("rule", "ref", "Fragment")
                .required()
                .hint("A fragment with a reference: one without is reached by its id only.")
                .kind(InputKind::Choice(options))
                .value(values[2]),
        ])
    }

    /// The rule the form describes, each value checked as `/v1` checks it.
    pub fn validate(form: &Form) -> Result<RouteWrite, Vec<Invalid>> {
        let mut checked = Checked::of(form);
        let path = checked.take(CanonicalPath::parse(form.get("path_prefix"), "path_prefix"));
        let mode = checked.take(MatchMode::parse(form.get("match"), "match"));
        let fragment_ref = checked.take(FragmentRef::parse(form.get("ref")));
        let (Some(path), Some(mode), Some(fragment_ref)) = (path, mode, fragment_ref) else {
            return Err(checked.refusals());
        };
        checked.done(RouteWrite {
            path,
            mode,
            fragment_ref,
        })
    }
}

/// The "test a page" box: a page's address, read as `/fragment` reads it.
pub struct TestPageForm;

impl TestPageForm {
    pub fn inputs() -> Inputs {
        Inputs(vec![Input::new("test", "page_url", "Page URL")
            .required()
            .hint(
                "An address of a page, such as https://news.example/sport/today.",
            )])
    }

    pub fn validate(form: &Form) -> Result<Page, Vec<Invalid>> {
        let page = diagnosis::page(Some(form.get("page_url")));
        one(
            form,
            page.map_err(|refused| Invalid::new(refused.field, refused.message)),
        )
    }
}

/// A form of one value: the value parsed, or its refusal (with the form's unreadable values).
fn one<T>(form: &Form, parsed: Result<T, Invalid>) -> Result<T, Vec<Invalid>> {
    let mut checked = Checked::of(form);
    match checked.take(parsed) {
        Some(valid) => checked.done(valid),
        None => Err(checked.refusals()),
    }
}
