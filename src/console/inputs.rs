//! The fields of the site map's forms (a site, a fragment, the default, a rule, the "test a
//! page" box): each an input whose id is unique on its page (several forms share the site's
//! page), its value as typed, and the refusal shown next to it with the field `/v1` names.
//! One template renders them all (`console/input.html`).

use super::form::Form;
use super::refusal::PageRefusal;
use crate::domain::Invalid;
use crate::error::ApiError;

/// How an input is typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputKind {
    Line,
    Lines,
    /// A `<select>` of `(value, label)` options.
    Choice(Vec<(String, String)>),
}

#[derive(Debug, Clone)]
pub struct Input {
    /// The element's id: the form's name, `-`, the field's name.
    pub id: String,
    pub name: &'static str,
    pub label: &'static str,
    pub hint: &'static str,
    pub kind: InputKind,
    pub required: bool,
    pub value: String,
    pub error: Option<String>,
    /// The field the refusal names, as `/v1` would (`key_values.Section`).
    pub error_field: String,
}

impl Input {
    pub fn new(form: &str, name: &'static str, label: &'static str) -> Input {
        Input {
            id: format!("{form}-{name}"),
            name,
            label,
            hint: "",
            kind: InputKind::Line,
            required: false,
            value: String::new(),
            error: None,
            error_field: String::new(),
        }
    }

    pub fn hint(mut self, hint: &'static str) -> Input {
        self.hint = hint;
        self
    }

    pub fn kind(mut self, kind: InputKind) -> Input {
        self.kind = kind;
        self
    }

    pub fn required(mut self) -> Input {
        self.required = true;
        self
    }

    pub fn value(mut self, value: impl Into<String>) -> Input {
        self.value = value.into();
        self
    }

    /// The ids of the texts that describe the input: its hint, its refusal.
    pub fn described_by(&self) -> String {
        described_by(&self.id, !self.hint.is_empty(), self.error.is_some())
    }

    pub fn is_line(&self) -> bool {
        self.kind == InputKind::Line
    }

    pub fn is_lines(&self) -> bool {
        self.kind == InputKind::Lines
    }

    /// The value as a reader sees it: a choice's label, a line's text.
    pub fn shown(&self) -> &str {
        self.options()
            .iter()
            .find(|(value, _)| *value == self.value)
            .map_or(self.value.as_str(), |(_, label)| label.as_str())
    }

    /// The options of a choice (none for a line).
    pub fn options(&self) -> &[(String, String)] {
        match &self.kind {
            InputKind::Choice(options) => options,
            _ => &[],
        }
    }
}

/// The ids of the texts that describe the input `id` (`aria-describedby`): its hint's, its
/// refusal's.
pub fn described_by(id: &str, hint: bool, error: bool) -> String {
    let hint = hint.then(|| format!("{id}-hint"));
    let error = error.then(|| format!("{id}-error"));
    [hint, error]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether a refusal's `field` names the input `name` or one of its members
/// (`key_values.Section` names `key_values`).
pub fn names(field: &str, name: &str) -> bool {
    field == name || field.strip_prefix(name).is_some_and(|m| m.starts_with('.'))
}

/// The inputs of one form.
#[derive(Debug, Clone, Default)]
pub struct Inputs(pub Vec<Input>);

impl Inputs {
    /// The same inputs holding what `form` sent.
    pub fn sent(mut self, form: &Form) -> Inputs {
        for input in &mut self.0 {
            input.value = form.get(input.name).to_string();
        }
        self
    }

    /// Shows `message` next to the input `field` names or is a member of
    /// (`key_values.Section`); `false` when it names none of this form.
    pub fn refuse(&mut self, field: &str, message: String) -> bool {
        match self.0.iter_mut().find(|input| names(field, input.name)) {
            Some(found) => {
                found.error = Some(message);
                found.error_field = field.to_string();
                true
            }
            None => false,
        }
    }

    /// Shows each refusal next to its input; the message of one no input names, for above
    /// the form.
    pub fn refuse_all(&mut self, refusals: Vec<Invalid>) -> Option<String> {
        let mut alert = None;
        for invalid in refusals {
            if !self.refuse(&invalid.field, invalid.message.clone()) {
                alert.get_or_insert(invalid.message);
            }
        }
        alert
    }
}

/// Every refusal of a form's values at once: `Ok` only when each value parsed.
pub struct Checked(Vec<Invalid>);

impl Checked {
    pub fn new() -> Checked {
        Checked(Vec::new())
    }

    /// The parsed value, or `None` with its refusal kept.
    pub fn take<T>(&mut self, parsed: Result<T, Invalid>) -> Option<T> {
        parsed.map_err(|invalid| self.0.push(invalid)).ok()
    }

    /// The refusals kept.
    pub fn into_refusals(self) -> Vec<Invalid> {
        self.0
    }
}

/// Why a form's write was not done: refusals of its values, each shown next to its field,
/// or a refusal of the whole request (its own page).
pub enum Failed {
    Fields(Vec<Invalid>),
    Other(PageRefusal),
}

impl Failed {
    /// The refusals the form shows; any other refusal is the request's.
    pub fn refusals(self) -> Result<Vec<Invalid>, PageRefusal> {
        match self {
            Failed::Fields(refusals) => Ok(refusals),
            Failed::Other(refusal) => Err(refusal),
        }
    }
}

impl From<Vec<Invalid>> for Failed {
    fn from(refusals: Vec<Invalid>) -> Self {
        Failed::Fields(refusals)
    }
}

impl From<Invalid> for Failed {
    fn from(invalid: Invalid) -> Self {
        Failed::Fields(vec![invalid])
    }
}

/// An operation's `422` or `409` names a field of the form; any other refusal is the whole
/// request's.
impl From<ApiError> for Failed {
    fn from(error: ApiError) -> Self {
        match error {
            ApiError::Validation { field, message } | ApiError::Conflict { field, message } => {
                Failed::Fields(vec![Invalid::new(field, message)])
            }
            other => Failed::Other(other.into()),
        }
    }
}

impl From<PageRefusal> for Failed {
    fn from(refusal: PageRefusal) -> Self {
        Failed::Other(refusal)
    }
}
