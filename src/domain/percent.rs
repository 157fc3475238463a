//! Strict percent-decoding shared by fragment references and route paths.
//! The `percent-encoding` crate decodes leniently (a stray `%zz` passes
//! through as text); the API must refuse such input instead, and the serving
//! hot path must decode without allocating, so the strict checks and an
//! allocation-free char decoder live here, in one place.

use percent_encoding::{percent_decode_str, PercentDecode};

/// Why a percent-encoded text could not be decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum DecodeError {
    /// A `%` not followed by two hex digits.
    BadEscape,
    /// The decoded bytes are not UTF-8.
    NotUtf8,
}

/// True when `%` is followed by two hex digits at byte offset `at`.
pub(super) fn is_escape_at(s: &str, at: usize) -> bool {
    match s.as_bytes().get(at..at + 3) {
        Some([b'%', hi, lo]) => hi.is_ascii_hexdigit() && lo.is_ascii_hexdigit(),
        _ => false,
    }
}

/// True when every `%` in `s` starts a well-formed escape.
pub(super) fn escapes_are_valid(s: &str) -> bool {
    s.match_indices('%').all(|(at, _)| is_escape_at(s, at))
}

/// Decodes `s` once, refusing malformed escapes and non-UTF-8 results.
/// Allocates only when `s` holds escapes.
pub(super) fn decode_strict(s: &str) -> Result<String, DecodeError> {
    if !escapes_are_valid(s) {
        return Err(DecodeError::BadEscape);
    }
    percent_decode_str(s)
        .decode_utf8()
        .map(|text| text.into_owned())
        .map_err(|_| DecodeError::NotUtf8)
}

/// The chars of a percent-encoded text whose escapes are already known to be
/// valid, decoded on the fly so the hot path needs no buffer. Yields
/// `Err(NotUtf8)` where the decoded bytes stop being UTF-8.
pub(super) struct DecodedChars<'a> {
    bytes: PercentDecode<'a>,
}

impl<'a> DecodedChars<'a> {
    pub(super) fn new(s: &'a str) -> Self {
        DecodedChars {
            bytes: percent_decode_str(s),
        }
    }
}

/// Byte length of a UTF-8 sequence from its lead byte; 0 when no sequence
/// may start with it (continuation bytes, the overlong 0xC0/0xC1, 0xF5+).
fn utf8_width(lead: u8) -> usize {
    match lead {
        0x00..=0x7F => 1,
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF4 => 4,
        _ => 0,
    }
}

impl Iterator for DecodedChars<'_> {
    type Item = Result<char, DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        let lead = self.bytes.next()?;
        if lead.is_ascii() {
            // Most path bytes: no sequence to assemble or validate.
            return Some(Ok(char::from(lead)));
        }
        let width = utf8_width(lead);
        let mut buf = [lead, 0, 0, 0];
        for slot in buf.iter_mut().take(width).skip(1) {
            match self.bytes.next() {
                Some(byte) => *slot = byte,
                None => return Some(Err(DecodeError::NotUtf8)),
            }
        }
        // from_utf8 does the fine checks (overlong forms, surrogates) the
        // width table leaves out.
        let decoded = buf
            .get(..width)
            .and_then(|bytes| std::str::from_utf8(bytes).ok())
            .and_then(|text| text.chars().next());
        Some(decoded.ok_or(DecodeError::NotUtf8))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(input: &str, expected: Result<&str, DecodeError>) {
        assert_eq!(
            decode_strict(input).as_deref().map_err(|e| *e),
            expected,
            "decode_strict({input:?})"
        );
        // Where escapes are valid, the streaming decoder must agree.
        if escapes_are_valid(input) {
            let streamed: Result<String, DecodeError> = DecodedChars::new(input).collect();
            assert_eq!(
                streamed.as_deref().map_err(|e| *e),
                expected,
                "DecodedChars({input:?})"
            );
        }
    }

    #[test]
    fn decodes_strictly() {
        let cases: &[(&str, Result<&str, DecodeError>)] = &[
            ("", Ok("")),
            ("plain", Ok("plain")),
            ("%2Fpolitics", Ok("/politics")),
            ("%2fpolitics", Ok("/politics")),
            ("%252F", Ok("%2F")),
            ("%C3%A9t%C3%A9", Ok("été")),
            ("été", Ok("été")),
            ("%F0%9F%98%80", Ok("😀")),
            ("%zz", Err(DecodeError::BadEscape)),
            ("%", Err(DecodeError::BadEscape)),
            ("%2", Err(DecodeError::BadEscape)),
            ("a%2", Err(DecodeError::BadEscape)),
            ("%é9", Err(DecodeError::BadEscape)),
            ("%C3", Err(DecodeError::NotUtf8)),
            ("%C3a", Err(DecodeError::NotUtf8)),
            ("%A9", Err(DecodeError::NotUtf8)),
            ("%C0%AF", Err(DecodeError::NotUtf8)),
            ("%ED%A0%80", Err(DecodeError::NotUtf8)),
            ("%F5%80%80%80", Err(DecodeError::NotUtf8)),
            ("%FF", Err(DecodeError::NotUtf8)),
        ];
        for &(input, expected) in cases {
            check(input, expected);
        }
    }
}
