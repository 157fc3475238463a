//! A console form's body (`application/x-www-form-urlencoded`, within `http::BODY_LIMIT`; a
//! larger body is not even read) and a page's query, decoded by one rule: a value holding a
//! NUL byte or bytes that are not UTF-8 is refused (`422`, naming its field) before anything
//! reads it, so it never reaches PostgreSQL (which refuses both).

use super::refusal::PageRefusal;
use crate::error::ApiError;
use crate::http::{media_type, Body, Request};

#[derive(Default)]
pub struct Form(Vec<(String, String)>);

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
        Form::decode(bytes)
    }

    /// The query of a request (`?name=value&…`), by the same rule as a body.
    pub fn query(request: &Request) -> Result<Form, PageRefusal> {
        Form::decode(request.query().unwrap_or("").as_bytes())
    }

    /// Each `name=value` pair, `+` a space and `%XX` a byte, as `url::form_urlencoded` reads
    /// them, but with the bytes checked rather than replaced: a NUL or invalid UTF-8 names
    /// the field it is in.
    fn decode(bytes: &[u8]) -> Result<Form, PageRefusal> {
        let pairs = bytes.split(|&b| b == b'&').filter(|pair| !pair.is_empty());
        let decoded = pairs.map(|pair| {
            let mut halves = pair.splitn(2, |&b| b == b'=');
            let name = unescape(halves.next().unwrap_or_default());
            let value = unescape(halves.next().unwrap_or_default());
            let field = String::from_utf8_lossy(&name).replace('\0', "");
            match (text(name), text(value)) {
                (Some(name), Some(value)) => Ok((name, value)),
                _ => Err(refused(&field)),
            }
        });
        decoded.collect::<Result<_, PageRefusal>>().map(Form)
    }

    /// The first value of a field; empty when absent.
    pub fn get(&self, name: &str) -> &str {
        self.0
            .iter()
            .find(|(n, _)| n == name)
            .map_or("", |(_, v)| v.as_str())
    }

    /// Every value of a field (a group of checkboxes), in the order sent.
    pub fn all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.0
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

/// The text of decoded bytes: UTF-8 without a NUL byte.
fn text(bytes: Vec<u8>) -> Option<String> {
    String::from_utf8(bytes)
        .ok()
        .filter(|text| !text.contains('\0'))
}

/// The refusal of a field's value, named by the field as the page shows it.
fn refused(field: &str) -> PageRefusal {
    ApiError::validation(
        field,
        format!("{field}: a value may hold neither a NUL byte nor bytes that are not UTF-8"),
    )
    .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_decoded_as_url_encoded_forms_are() {
        let form = Form::decode(b"a=x+y%21&&b=%C3%A9&a=2&c&d=%EF%BF%BD").unwrap();
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
            let Err(PageRefusal::Api(ApiError::Validation {
                field: got,
                message,
            })) = Form::decode(body)
            else {
                panic!("{body:?} was not refused");
            };
            assert_eq!(got, field, "{body:?}");
            assert!(message.starts_with(&format!("{field}: ")), "{message}");
        }
    }
}
