//! A console form's body (`application/x-www-form-urlencoded`, within `http::BODY_LIMIT`; a
//! larger body is not even read) and a page's query, decoded by one rule: a value holding a
//! NUL byte or bytes that are not UTF-8 is kept aside as a refusal naming its field (`422`),
//! so it never reaches PostgreSQL (which refuses both). A page whose form takes its values
//! through `inputs::Checked` shows that refusal next to the input, on the same form; for any
//! other page it is refused before the handler runs (`Form::refusal`).

use super::refusal::PageRefusal;
use crate::domain::Invalid;
use crate::error::ApiError;
use crate::http::{media_type, Body, Request};

#[derive(Default)]
pub struct Form {
    pairs: Vec<(String, String)>,
    /// A refusal for each value that is not text; the value itself is kept in `pairs` as
    /// shown back (each NUL and invalid byte a U+FFFD).
    unreadable: Vec<Invalid>,
}

impl Form {
    /// The body of a `POST`.
    pub fn read(request: &Request) -> Result<Form, PageRefusal> {
        let Body::Bytes(bytes) = &request.body else {
            return Err(ApiError::BodyTooLarge.into());
        };
        let content_type = request.header("content-type").unwrap_or("");
        if !media_type::is_form(content_type) {
            return Err(PageRefusal::BadRequest(
                "send the form as application/x-www-form-urlencoded",
            ));
        }
        Ok(Form::decode(bytes))
    }

    /// The query of a request (`?name=value&…`), by the same rule as a body.
    pub fn query(request: &Request) -> Form {
        Form::decode(request.query().unwrap_or("").as_bytes())
    }

    /// Each `name=value` pair, `+` a space and `%XX` a byte, as `url::form_urlencoded` reads
    /// them, but with the bytes checked rather than replaced: a NUL or invalid UTF-8 names
    /// the field it is in.
    fn decode(bytes: &[u8]) -> Form {
        let mut form = Form::default();
        for pair in bytes.split(|&b| b == b'&').filter(|pair| !pair.is_empty()) {
            let mut halves = pair.splitn(2, |&b| b == b'=');
            let name = unescape(halves.next().unwrap_or_default());
            let value = unescape(halves.next().unwrap_or_default());
            let (name, readable_name) = text(&name);
            let (value, readable_value) = text(&value);
            if !(readable_name && readable_value) {
                form.unreadable.push(refused(&name.replace('\u{fffd}', "")));
            }
            form.pairs.push((name, value));
        }
        form
    }

    /// The refusals of the values that are not text, each naming its field.
    pub fn unreadable(&self) -> &[Invalid] {
        &self.unreadable
    }

    /// Whether the value of `name` is text.
    pub fn readable(&self, name: &str) -> Result<(), Invalid> {
        match self.unreadable.iter().find(|invalid| invalid.field == name) {
            Some(invalid) => Err(invalid.clone()),
            None => Ok(()),
        }
    }

    /// The refusal of the whole request for a value that is not text, for a page that does
    /// not show it on its form.
    pub fn refusal(&self) -> Result<(), PageRefusal> {
        match self.unreadable.first() {
            Some(invalid) => Err(invalid.clone().into()),
            None => Ok(()),
        }
    }

    /// The first value of a field; empty when absent.
    pub fn get(&self, name: &str) -> &str {
        self.pairs
            .iter()
            .find(|(n, _)| n == name)
            .map_or("", |(_, v)| v.as_str())
    }

    /// A lone checkbox: ticked (`on`) or not (absent); any other value is no form of ours.
    pub fn checkbox(&self, name: &str) -> Result<bool, PageRefusal> {
        match self.get(name) {
            "on" => Ok(true),
            "" => Ok(false),
            _ => Err(PageRefusal::BadRequest(
                "the form's checkbox sends \"on\" or nothing",
            )),
        }
    }

    /// Every value of a field (a group of checkboxes), in the order sent.
    pub fn all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.pairs
            .iter()
            .filter(move |(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

fn unescape(bytes: &[u8]) -> Vec<u8> {
    let spaced: Vec<u8> = bytes
        .iter()
        .map(|&b| if b == b'+' { b' ' } else { b })
        .collect();
    percent_encoding::percent_decode(&spaced).collect()
}

/// The text of decoded bytes (each NUL and invalid byte a U+FFFD), and whether they were
/// text: UTF-8 without a NUL byte.
fn text(bytes: &[u8]) -> (String, bool) {
    let shown = String::from_utf8_lossy(bytes).replace('\0', "\u{fffd}");
    let readable = std::str::from_utf8(bytes).is_ok_and(|text| !text.contains('\0'));
    (shown, readable)
}

/// The refusal of a field's value, named by the field as the page shows it.
fn refused(field: &str) -> Invalid {
    Invalid::new(
        field,
        format!("{field}: a value may hold neither a NUL byte nor bytes that are not UTF-8"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_decoded_as_url_encoded_forms_are() {
        let form = Form::decode(b"a=x+y%21&&b=%C3%A9&a=2&c&d=%EF%BF%BD");
        assert!(form.unreadable().is_empty());
        assert_eq!(form.get("a"), "x y!");
        assert_eq!(form.get("b"), "\u{e9}");
        assert_eq!(form.all("a").collect::<Vec<_>>(), ["x y!", "2"]);
        assert_eq!(form.get("c"), "");
        assert_eq!(
            form.get("d"),
            "\u{fffd}",
            "a replacement character sent as UTF-8 is text"
        );
        assert_eq!(form.get("missing"), "");
    }

    #[test]
    fn a_nul_or_invalid_utf8_is_refused_naming_its_field() {
        for (body, field) in [
            (&b"email=a%00b&password=x"[..], "email"),
            (b"password=x&email=%FF", "email"),
            (b"email=ok&pass%00word=x", "password"),
            (b"email=ok&actor=\xff", "actor"),
        ] {
            let form = Form::decode(body);
            let [Invalid {
                field: got,
                message,
            }] = form.unreadable()
            else {
                panic!("{body:?} was not refused once");
            };
            assert_eq!(got, field, "{body:?}");
            assert!(message.starts_with(&format!("{field}: ")), "{message}");
        }
    }
}
