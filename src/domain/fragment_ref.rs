//! Fragment references: the publisher's own identifier for a fragment
//! (`/politics`, `sport:football`). They are compared byte for byte and
//! travel in URL path segments, so the allowed alphabet is small, nothing is
//! trimmed or case-folded, and `.`/`..` segments are refused so a reference
//! can never read as a relative path.

use std::fmt;

use super::percent::{decode_strict, DecodeError};
use super::Invalid;

const FIELD: &str = "ref";
const MAX_LEN: usize = 200;

/// A valid fragment reference, kept exactly as given.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FragmentRef(String);

impl FragmentRef {
    /// Checks `input` as is (no trimming); field `"ref"` on refusal.
    pub fn parse(input: &str) -> Result<FragmentRef, Invalid> {
        Self::parse_with_field(input, FIELD)
    }

    /// Same rules as [`FragmentRef::parse`], reporting `field` (such as
    /// `routes[3].ref` or `default_fragment_ref`) on refusal.
    pub fn parse_with_field(input: &str, field: &str) -> Result<FragmentRef, Invalid> {
        check(input).map_err(|message| Invalid::new(field, message))?;
        Ok(FragmentRef(input.to_owned()))
    }

    /// Reads the `{ref}` URL path segment: the whole reference URI-component
    /// encoded once. It is decoded exactly once, so a double-encoded
    /// reference keeps a `%` and is refused.
    pub fn from_path_segment(raw: &str) -> Result<FragmentRef, Invalid> {
        let decoded =
            decode_strict(raw).map_err(|error| Invalid::new(FIELD, decode_message(error)))?;
        Self::parse(&decoded)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for FragmentRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn decode_message(error: DecodeError) -> &'static str {
    match error {
        DecodeError::BadEscape => "reference in the URL has an invalid percent escape: % must be followed by two hex digits",
        DecodeError::NotUtf8 => "reference in the URL has percent escapes that do not decode to UTF-8",
    }
}

fn check(input: &str) -> Result<(), &'static str> {
    // Every allowed character is one byte, so bytes count characters here.
    if input.is_empty() || input.len() > MAX_LEN || !input.bytes().all(is_allowed) {
        return Err("reference must be 1 to 200 characters among A-Z a-z 0-9 / _ - . :");
    }
    if input
        .split('/')
        .any(|segment| segment == "." || segment == "..")
    {
        return Err("reference must not have a path segment that is exactly . or ..");
    }
    Ok(())
}

fn is_allowed(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'/' | b'_' | b'-' | b'.' | b':')
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALPHABET: &str = "reference must be 1 to 200 characters among A-Z a-z 0-9 / _ - . :";
    const DOTS: &str = "reference must not have a path segment that is exactly . or ..";

    fn check(input: &str, expected: Result<&str, &str>) {
        let got = FragmentRef::parse(input);
        match expected {
            Ok(reference) => assert_eq!(
                got.as_ref().map(FragmentRef::as_str),
                Ok(reference),
                "{input:?}"
            ),
            Err(message) => assert_eq!(got, Err(Invalid::new("ref", message)), "{input:?}"),
        }
    }

    fn check_segment(raw: &str, expected: Result<&str, &str>) {
        let got = FragmentRef::from_path_segment(raw);
        match expected {
            Ok(reference) => assert_eq!(
                got.as_ref().map(FragmentRef::as_str),
                Ok(reference),
                "{raw:?}"
            ),
            Err(message) => assert_eq!(got, Err(Invalid::new("ref", message)), "{raw:?}"),
        }
    }

    #[test]
    fn parses_references() {
        let max = "a".repeat(200);
        let over = "a".repeat(201);
        let cases: Vec<(&str, Result<&str, &str>)> = vec![
            ("politics", Ok("politics")),
            ("Politics", Ok("Politics")),
            ("/politics", Ok("/politics")),
            ("a//b", Ok("a//b")),
            ("AZaz09/_-.:", Ok("AZaz09/_-.:")),
            ("a", Ok("a")),
            (&max, Ok(&max)),
            ("...", Ok("...")),
            (".a/b.", Ok(".a/b.")),
            ("v1.2", Ok("v1.2")),
            (&over, Err(ALPHABET)),
            ("", Err(ALPHABET)),
            (" a", Err(ALPHABET)),
            ("a ", Err(ALPHABET)),
            ("a b", Err(ALPHABET)),
            ("é", Err(ALPHABET)),
            ("a%2Fb", Err(ALPHABET)),
            ("a?b", Err(ALPHABET)),
            ("a\\b", Err(ALPHABET)),
            (".", Err(DOTS)),
            ("..", Err(DOTS)),
            ("./a", Err(DOTS)),
            ("a/.", Err(DOTS)),
            ("a/../b", Err(DOTS)),
            ("/./", Err(DOTS)),
        ];
        for (input, expected) in cases {
            check(input, expected);
        }
    }

    #[test]
    fn case_matters() {
        assert_ne!(
            FragmentRef::parse("Politics"),
            FragmentRef::parse("politics")
        );
    }

    #[test]
    fn reports_the_given_field() {
        let cases = [("routes[3].ref", " x"), ("default_fragment_ref", "..")];
        for (field, input) in cases {
            let got = FragmentRef::parse_with_field(input, field).map_err(|e| e.field);
            assert_eq!(got, Err(field.to_owned()));
        }
        let ok =
            FragmentRef::parse_with_field("x", "routes[0].ref").map(|r| r.as_str().to_string());
        assert_eq!(ok.as_deref(), Ok("x"));
    }

    #[test]
    fn reads_path_segments() {
        let cases: &[(&str, Result<&str, &str>)] = &[
            ("politics", Ok("politics")),
            ("%2Fpolitics", Ok("/politics")),
            ("%2fpolitics", Ok("/politics")),
            ("sport%3Afoot", Ok("sport:foot")),
            ("/politics", Ok("/politics")),
            ("%252Fpolitics", Err(ALPHABET)),
            ("%20a", Err(ALPHABET)),
            ("a+b", Err(ALPHABET)),
            ("%C3%A9", Err(ALPHABET)),
            ("%2E%2E", Err(DOTS)),
            ("", Err(ALPHABET)),
            ("%zz", Err("reference in the URL has an invalid percent escape: % must be followed by two hex digits")),
            ("a%2", Err("reference in the URL has an invalid percent escape: % must be followed by two hex digits")),
            ("%C3", Err("reference in the URL has percent escapes that do not decode to UTF-8")),
        ];
        for &(raw, expected) in cases {
            check_segment(raw, expected);
        }
    }

    #[test]
    fn displays_as_given() {
        let cases = ["/politics", "A:b"];
        for input in cases {
            let shown = FragmentRef::parse(input).map(|r| r.to_string());
            assert_eq!(shown.as_deref(), Ok(input));
        }
    }
}
