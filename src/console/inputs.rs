//! The console's one form model. A form is a struct with its `inputs` (what the page shows)
//! and one `validate` (its values checked by the rules `/v1` applies, every refused field at
//! once, each named as `/v1` names it, with `/v1`'s message). A refusal is shown on the same
//! form, one way: [`Inputs::refused`] puts the values back as sent and each message next to
//! its input, the page answers `422` (`409` for a conflict the operation found). One template
//! renders every input (`console/input.html`).

use super::form::Form;
use super::refusal::PageRefusal;
use crate::domain::{Invalid, Lang};
use crate::error::ApiError;
use crate::http::Response;

/// How an input is typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputKind {
    /// One line: an `<input>` of this `type` (`text`, `email`, `password`, `date`).
    Line(&'static str),
    /// A `<textarea>` of this many rows.
    Lines(u8),
    /// A `<select>` of `(value, label)` options.
    Choice(Vec<(String, String)>),
}

#[derive(Debug, Clone)]
pub struct Input {
    /// The element's id: the field's name, after the form's name and `-` where several forms
    /// share a page.
    pub id: String,
    pub name: &'static str,
    pub label: &'static str,
    pub hint: &'static str,
    pub kind: InputKind,
    pub autocomplete: &'static str,
    pub required: bool,
    pub value: String,
    pub error: Option<String>,
    /// The field the refusal names, as `/v1` would (`key_values.Section`); empty for a
    /// refusal of the input's own rule.
    pub error_field: String,
}

impl Input {
    /// An input of the form `form` on a page of several forms (its id `form-name`).
    pub fn new(form: &str, name: &'static str, label: &'static str) -> Input {
        Input {
            id: format!("{form}-{name}"),
            ..Input::alone(name, label)
        }
    }

    /// An input of a page with one form (its id its name).
    pub fn alone(name: &'static str, label: &'static str) -> Input {
        Input {
            id: name.to_string(),
            name,
            label,
            hint: "",
            kind: InputKind::Line("text"),
            autocomplete: "off",
            required: false,
            value: String::new(),
            error: None,
            error_field: String::new(),
        }
    }

    /// A required line of `type` `kind` on a page with one form (an email, a password, a
    /// code).
    pub fn line(name: &'static str, label: &'static str, kind: &'static str) -> Input {
        Input::alone(name, label)
            .kind(InputKind::Line(kind))
            .required()
    }

    pub fn hint(mut self, hint: &'static str) -> Input {
        self.hint = hint;
        self
    }

    pub fn kind(mut self, kind: InputKind) -> Input {
        self.kind = kind;
        self
    }

    pub fn autocomplete(mut self, autocomplete: &'static str) -> Input {
        self.autocomplete = autocomplete;
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

    /// The form's value of this input, parsed; `None` when refused (or not readable), the
    /// input then showing the refusal next to the value as sent.
    pub fn parse<T>(
        &mut self,
        form: &Form,
        parse: impl FnOnce(&str) -> Result<T, Invalid>,
    ) -> Option<T> {
        let sent = form.get(self.name);
        match form.readable(self.name).and_then(|()| parse(sent)) {
            Ok(parsed) => Some(parsed),
            Err(invalid) => {
                self.value = sent.to_string();
                self.error = Some(invalid.message);
                None
            }
        }
    }

    /// Shows the refusal of the form's value of this input when it is not text (without
    /// showing the value back: for a password); whether it did.
    pub fn unreadable(&mut self, form: &Form) -> bool {
        self.error = form
            .readable(self.name)
            .err()
            .map(|invalid| invalid.message);
        self.error.is_some()
    }

    /// The ids of the texts that describe the input (`aria-describedby`): its hint's, its
    /// refusal's.
    pub fn described_by(&self) -> String {
        let hint = (!self.hint.is_empty()).then(|| format!("{}-hint", self.id));
        let error = self.error.is_some().then(|| format!("{}-error", self.id));
        [hint, error]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The `type` of a line (none for other kinds).
    pub fn line_type(&self) -> Option<&'static str> {
        match self.kind {
            InputKind::Line(kind) => Some(kind),
            _ => None,
        }
    }

    /// The rows of a text area (none for other kinds).
    pub fn rows(&self) -> Option<u8> {
        match self.kind {
            InputKind::Lines(rows) => Some(rows),
            _ => None,
        }
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

/// A choice of the languages a card or a fragment may have.
pub fn language_choice() -> InputKind {
    let languages = Lang::ALL.iter().map(|lang| lang.as_str().to_string());
    InputKind::Choice(languages.map(|lang| (lang.clone(), lang)).collect())
}

/// Whether a refusal's `field` names the input `name` or one of its members
/// (`key_values.Section` names `key_values`).
fn names(field: &str, name: &str) -> bool {
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

    /// Shows each refusal next to its input; the messages of those no input names, for above
    /// the form.
    pub fn refuse_all(&mut self, refusals: Vec<Invalid>) -> Option<String> {
        let unplaced: Vec<String> = refusals
            .into_iter()
            .filter(|invalid| !self.refuse(&invalid.field, invalid.message.clone()))
            .map(|invalid| invalid.message)
            .collect();
        (!unplaced.is_empty()).then(|| unplaced.join(" "))
    }

    /// The form again as `form` sent it, each refusal next to its input; the alert for above
    /// the form.
    pub fn refused(&mut self, form: &Form, refusals: Vec<Invalid>) -> Option<String> {
        *self = std::mem::take(self).sent(form);
        self.refuse_all(refusals)
    }
}

/// Every refusal of a form's values at once: `Ok` only when each value parsed. It starts
/// with the form's values that are not text (a NUL byte, bytes not UTF-8), so that no
/// `validate` can pass one by.
pub struct Checked(Vec<Invalid>);

impl Checked {
    pub fn of(form: &Form) -> Checked {
        Checked(form.unreadable().to_vec())
    }

    /// The parsed value, or `None` with its refusal kept.
    pub fn take<T>(&mut self, parsed: Result<T, Invalid>) -> Option<T> {
        parsed.map_err(|invalid| self.keep(vec![invalid])).ok()
    }

    /// Keeps each refusal of a field not refused yet (a value that is not text is refused
    /// as such, not by what its replacement characters break).
    pub fn keep(&mut self, refusals: Vec<Invalid>) {
        for invalid in refusals {
            if !self.0.iter().any(|kept| kept.field == invalid.field) {
                self.0.push(invalid);
            }
        }
    }

    /// Every refusal kept: for a form whose value was refused.
    pub fn refusals(self) -> Vec<Invalid> {
        self.0
    }

    /// `valid` when nothing was refused (an unreadable value included), else every refusal.
    pub fn done<T>(self, valid: T) -> Result<T, Vec<Invalid>> {
        match self.0.is_empty() {
            true => Ok(valid),
            false => Err(self.0),
        }
    }
}

/// How long a value sent back inside a message may be, in characters.
const SHOWN_CHARS: usize = 60;

/// A value as a message quotes it: cut after 60 characters (with `…`), so that a refusal of
/// a long value does not repeat it whole.
pub fn cut(value: &str) -> String {
    match value.char_indices().nth(SHOWN_CHARS) {
        Some((end, _)) => format!("{}…", &value[..end]),
        None => value.to_string(),
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

/// A form's write: the answer after it, or the form shown again by `show` with the refusals
/// of its fields (any other refusal is the whole request's page).
pub fn written(
    write: Result<Response, Failed>,
    show: impl FnOnce(Vec<Invalid>) -> Result<Response, PageRefusal>,
) -> Result<Response, PageRefusal> {
    match write {
        Ok(response) => Ok(response),
        Err(failed) => show(failed.refusals()?),
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

/// The refusal of a form's field in an operation's `422` or `409`; any other refusal is the
/// whole request's.
pub fn field_refused(error: ApiError) -> Result<Invalid, PageRefusal> {
    match error {
        ApiError::Validation { field, message } | ApiError::Conflict { field, message } => {
            Ok(Invalid::new(field, message))
        }
        other => Err(other.into()),
    }
}

impl From<ApiError> for Failed {
    fn from(error: ApiError) -> Self {
        match field_refused(error) {
            Ok(invalid) => Failed::Fields(vec![invalid]),
            Err(other) => Failed::Other(other),
        }
    }
}

impl From<PageRefusal> for Failed {
    fn from(refusal: PageRefusal) -> Self {
        Failed::Other(refusal)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_value_is_cut_in_a_message() {
        assert_eq!(cut("short"), "short");
        let long = "é".repeat(2000);
        let shown = cut(&long);
        assert_eq!(shown.chars().count(), SHOWN_CHARS + 1);
        assert!(shown.ends_with('…'));
        assert_eq!(cut(&"a".repeat(SHOWN_CHARS)), "a".repeat(SHOWN_CHARS));
    }

    #[test]
    fn a_refusal_goes_next_to_the_input_it_names_or_above_the_form() {
        let mut inputs = Inputs(vec![
            Input::alone("name", "Name"),
            Input::alone("key_values", "Kv"),
        ]);
        let alert = inputs.refuse_all(vec![
            Invalid::new("key_values.Section", "bad key"),
            Invalid::new("other", "first"),
            Invalid::new("else", "second"),
        ]);
        assert_eq!(alert.as_deref(), Some("first second"));
        assert_eq!(inputs.0[1].error.as_deref(), Some("bad key"));
        assert_eq!(inputs.0[1].error_field, "key_values.Section");
        assert!(inputs.0[0].error.is_none());
        assert_eq!(inputs.0[1].described_by(), "key_values-error");
    }
}
