//! Route paths: the `path_prefix` of a route rule and the URL path of a page
//! being served are brought to one canonical spelling (lowercase, each
//! segment percent-encoded the same way, ending in `/`), so a rule matches a
//! page by plain string comparison. One private function, `canonicalize`, holds
//! the rule for both; only the length limits differ, and the serving side
//! runs it on every request, so it builds a single output `String`.

use std::fmt;

use super::percent::{is_escape_at, DecodeError, DecodedChars};
use super::Invalid;

/// How a route rule's path is compared with a page path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MatchMode {
    Exact,
    Prefix,
}

impl MatchMode {
    pub const ALL: [MatchMode; 2] = [MatchMode::Exact, MatchMode::Prefix];

    /// Accepts `exact` or `prefix` (case-sensitive) around optional whitespace.
    pub fn parse(input: &str, field: &str) -> Result<Self, Invalid> {
        let input = input.trim();
        MatchMode::ALL
            .into_iter()
            .find(|mode| mode.as_str() == input)
            .ok_or_else(|| Invalid::new(field, "match mode must be \"exact\" or \"prefix\""))
    }

    pub fn as_str(self) -> &'static str {
        match self {
            MatchMode::Exact => "exact",
            MatchMode::Prefix => "prefix",
        }
    }
}

impl fmt::Display for MatchMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A route path in canonical form: starts and ends with `/`, at most 200
/// characters.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CanonicalPath(String);

impl CanonicalPath {
    /// Trims `input` and brings it to canonical form, refusing it with
    /// `field` (such as `path_prefix` or `routes[3].path_prefix`).
    pub fn parse(input: &str, field: &str) -> Result<CanonicalPath, Invalid> {
        let trimmed = input.trim();
        if trimmed.is_empty() {
            return Err(Invalid::new(field, "path prefix must not be empty"));
        }
        canonicalize(trimmed, PREFIX_LIMITS)
            .map(CanonicalPath)
            .map_err(|why| Invalid::new(field, why.message()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for CanonicalPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Canonical form of a served page's URL path (already percent-encoded by
/// the URL parser), by the same rule as [`CanonicalPath::parse`] but without
/// trimming or length limits. `None` where the rule refuses the path, so the
/// caller falls back to the site default.
pub fn canonical_page_path(path: &str) -> Option<String> {
    canonicalize(path, PAGE_LIMITS).ok()
}

/// [`canonical_page_path`] by the general steps alone, without the fast path for a path
/// canonical already: `crate::fuzzing` checks that the two agree.
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn canonical_page_path_by_steps(path: &str) -> Option<String> {
    canonical_steps(path, PAGE_LIMITS).ok()
}

/// Every prefix of `canonical` that ends at a `/`, longest first:
/// `/a/b/c/` yields `/a/b/c/`, `/a/b/`, `/a/`, `/`. Lets the caller find the
/// longest matching prefix rule with one hash lookup per level.
pub fn prefixes_longest_first<'a>(canonical: &'a str) -> impl Iterator<Item = &'a str> + 'a {
    canonical
        .rmatch_indices('/')
        .filter_map(move |(at, _)| canonical.get(..=at))
}

/// Length limits of [`canonicalize`]; `None` means unlimited.
#[derive(Debug, Clone, Copy)]
struct Limits {
    /// On the input, in UTF-16 code units (what browsers and JS clients count).
    max_input_utf16: Option<usize>,
    /// On the canonical result, in characters (it is ASCII).
    max_output: Option<usize>,
}

const PREFIX_LIMITS: Limits = Limits {
    max_input_utf16: Some(512),
    max_output: Some(200),
};

const PAGE_LIMITS: Limits = Limits {
    max_input_utf16: None,
    max_output: None,
};

/// Why a path has no canonical form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NotCanonical {
    InputTooLong,
    QueryOrFragment,
    Backslash,
    SpaceOrControl,
    BadEscape,
    NotUtf8,
    EmptySegment,
    DotSegment,
    OutputTooLong,
}

impl NotCanonical {
    fn message(self) -> &'static str {
        match self {
            NotCanonical::InputTooLong => "path prefix must be at most 512 characters",
            NotCanonical::QueryOrFragment => "path prefix must not contain a query (?) or a fragment (#)",
            NotCanonical::Backslash => "path prefix must not contain a backslash (\\)",
            NotCanonical::SpaceOrControl => {
                "path prefix must not contain spaces or control characters (write a space as %20)"
            }
            NotCanonical::BadEscape => {
                "path prefix has an invalid percent escape: % must be followed by two hex digits"
            }
            NotCanonical::NotUtf8 => "path prefix has percent escapes that do not decode to UTF-8",
            NotCanonical::EmptySegment => "path prefix must not contain empty segments (//)",
            NotCanonical::DotSegment => "path prefix must not contain . or .. segments",
            NotCanonical::OutputTooLong => {
                "path prefix must be at most 200 characters once normalised (lowercased, percent-encoded, ending in /)"
            }
        }
    }
}

impl From<DecodeError> for NotCanonical {
    fn from(error: DecodeError) -> Self {
        match error {
            DecodeError::BadEscape => NotCanonical::BadEscape,
            DecodeError::NotUtf8 => NotCanonical::NotUtf8,
        }
    }
}

/// The canonical-path rule, shared by route prefixes and served pages.
fn canonicalize(path: &str, limits: Limits) -> Result<String, NotCanonical> {
    if let Some(max) = limits.max_input_utf16 {
        // UTF-16 never takes more units than UTF-8 takes bytes: skip counting when short.
        if path.len() > max && path.encode_utf16().count() > max {
            return Err(NotCanonical::InputTooLong);
        }
    }
    match already_canonical(path) {
        Some(canonical) if limits.max_output.is_some_and(|max| canonical.len() > max) => {
            Err(NotCanonical::OutputTooLong)
        }
        Some(canonical) => Ok(canonical),
        None => canonical_steps(path, limits),
    }
}

/// Steps 2 and on: characters, then segment by segment.
fn canonical_steps(path: &str, limits: Limits) -> Result<String, NotCanonical> {
    check_characters(path)?;
    let body = path.strip_prefix('/').unwrap_or(path);
    let mut out = String::with_capacity(body.len() + 2);
    out.push('/');
    let mut segments = body.split('/').peekable();
    while let Some(segment) = segments.next() {
        if segment.is_empty() {
            // Only the part after a trailing slash may be empty.
            return match segments.peek() {
                None => Ok(out),
                Some(_) => Err(NotCanonical::EmptySegment),
            };
        }
        push_segment(&mut out, segment)?;
        out.push('/');
        // The output only grows: stop as soon as it is over the limit.
        if limits.max_output.is_some_and(|max| out.len() > max) {
            return Err(NotCanonical::OutputTooLong);
        }
    }
    Ok(out)
}

/// The usual page path, canonical already but maybe for its final `/`: a `/` and then
/// segments of lowercase literal characters (no `%`, nothing to fold or escape), none empty
/// but the last, none `.` or `..`. The general steps give the same result, more slowly (a
/// test compares the two).
fn already_canonical(path: &str) -> Option<String> {
    let body = path.strip_prefix('/')?.as_bytes();
    let mut segment_start = 0;
    for (at, &b) in body.iter().enumerate() {
        if b == b'/' {
            if matches!(&body[segment_start..at], b"" | b"." | b"..") {
                return None;
            }
            segment_start = at + 1;
        } else if !LOWERCASE_LITERAL[usize::from(b)] {
            return None;
        }
    }
    // The last segment may be empty: the path ends with `/`.
    if matches!(&body[segment_start..], b"." | b"..") {
        return None;
    }
    let mut canonical = String::with_capacity(path.len() + 1);
    canonical.push_str(path);
    if !canonical.ends_with('/') {
        canonical.push('/');
    }
    Some(canonical)
}

/// Step 2 on the raw text: characters that cannot be part of a path, and
/// `%` not starting a well-formed escape. Works on bytes so the ASCII most
/// paths are made of needs no char decoding.
fn check_characters(path: &str) -> Result<(), NotCanonical> {
    for (at, b) in path.bytes().enumerate() {
        match b {
            b'?' | b'#' => return Err(NotCanonical::QueryOrFragment),
            b'\\' => return Err(NotCanonical::Backslash),
            b'%' if !is_escape_at(path, at) => return Err(NotCanonical::BadEscape),
            // ASCII whitespace is the space plus control characters.
            0..=0x20 | 0x7F => return Err(NotCanonical::SpaceOrControl),
            // In a &str a byte from 0xC0 up starts a char: check that char.
            0xC0.. if starts_space_or_control(path, at) => {
                return Err(NotCanonical::SpaceOrControl)
            }
            _ => {}
        }
    }
    Ok(())
}

/// True when the char starting at byte `at` is Unicode whitespace or control.
fn starts_space_or_control(path: &str, at: usize) -> bool {
    path.get(at..)
        .and_then(|rest| rest.chars().next())
        .is_some_and(|c| c.is_whitespace() || c.is_control())
}

/// Decodes, lowercases and re-encodes one non-empty segment onto `out`.
fn push_segment(out: &mut String, segment: &str) -> Result<(), NotCanonical> {
    if is_dot_segment(segment) {
        return Err(NotCanonical::DotSegment);
    }
    if segment.bytes().all(|b| b.is_ascii() && b != b'%') {
        push_plain_ascii(out, segment);
        return Ok(());
    }
    let start = out.len();
    for decoded in DecodedChars::new(segment) {
        let c = decoded?;
        if c == 'Σ' {
            // str::to_lowercase makes a word-final Σ into ς, which char by
            // char lowercasing cannot know; this rare case redoes the segment.
            out.truncate(start);
            return push_segment_contextual(out, segment);
        }
        if c.is_ascii() {
            // Same result as to_lowercase, without its Unicode table lookup.
            push_encoded(out, c.to_ascii_lowercase());
        } else {
            c.to_lowercase().for_each(|lower| push_encoded(out, lower));
        }
    }
    Ok(())
}

/// Fast path of [`push_segment`] for the common segment: ASCII with nothing
/// to decode. Copies runs of literal characters whole and folds their case in
/// place, escaping only the characters between runs.
fn push_plain_ascii(out: &mut String, segment: &str) {
    for piece in segment.split_inclusive(|c| !is_literal(c)) {
        // Every piece but maybe the last ends with the one char to escape.
        let escaped = piece.chars().next_back().filter(|&c| !is_literal(c));
        let run = escaped.and_then(|c| piece.strip_suffix(c)).unwrap_or(piece);
        let start = out.len();
        out.push_str(run);
        if let Some(appended) = out.get_mut(start..) {
            appended.make_ascii_lowercase();
        }
        if let Some(c) = escaped {
            push_encoded(out, c);
        }
    }
}

/// Slow path of [`push_segment`]: lowercases the whole decoded segment at once.
fn push_segment_contextual(out: &mut String, segment: &str) -> Result<(), NotCanonical> {
    let decoded: String = DecodedChars::new(segment).collect::<Result<_, _>>()?;
    decoded
        .to_lowercase()
        .chars()
        .for_each(|c| push_encoded(out, c));
    Ok(())
}

/// True when the segment decodes to `.` or `..` (also written `%2e`, `.%2E`...).
fn is_dot_segment(segment: &str) -> bool {
    let mut dots = 0;
    for c in DecodedChars::new(segment) {
        if c != Ok('.') || dots == 2 {
            return false;
        }
        dots += 1;
    }
    dots > 0
}

const HEX_UPPER: &[u8; 16] = b"0123456789ABCDEF";

/// Writes `c` literally when it needs no escape, else as `%XX` per UTF-8 byte.
#[inline]
fn push_encoded(out: &mut String, c: char) {
    if is_literal(c) {
        out.push(c);
        return;
    }
    let mut buf = [0; 4];
    for &byte in c.encode_utf8(&mut buf).as_bytes() {
        out.push('%');
        // Both indexes are below 16, so they cannot miss.
        out.push(char::from(HEX_UPPER[usize::from(byte >> 4)]));
        out.push(char::from(HEX_UPPER[usize::from(byte & 0x0F)]));
    }
}

/// The bytes `is_literal` accepts but for uppercase letters, as a table: the fast path looks
/// each byte of the page path up once. (`is_literal` refuses `%`, so nothing accepted is an
/// escape to normalise.) A `static`, not a `const`, so it is never copied to the stack.
static LOWERCASE_LITERAL: [bool; 256] = literal_bytes(false, b"");

/// A byte table of what `is_literal` accepts (uppercase letters only when `uppercase`), plus
/// the bytes of `extra`: the byte-at-a-time checks of page paths look each byte up once.
pub(crate) const fn literal_bytes(uppercase: bool, extra: &[u8]) -> [bool; 256] {
    let mut table = [false; 256];
    let mut byte: u8 = 0;
    while byte < 128 {
        table[byte as usize] =
            (uppercase || !byte.is_ascii_uppercase()) && is_literal(byte as char);
        byte += 1;
    }
    let mut at = 0;
    while at < extra.len() {
        table[extra[at] as usize] = true;
        at += 1;
    }
    table
}

/// What RFC 3986 lets a path segment hold literally: unreserved characters,
/// sub-delimiters, `:` and `@`.
#[inline]
const fn is_literal(c: char) -> bool {
    c.is_ascii_alphanumeric()
        || matches!(
            c,
            '-' | '.'
                | '_'
                | '~'
                | '!'
                | '$'
                | '&'
                | '\''
                | '('
                | ')'
                | '*'
                | '+'
                | ','
                | ';'
                | '='
                | ':'
                | '@'
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(input: &str, expected: Result<&str, NotCanonical>) {
        let got = CanonicalPath::parse(input, "path_prefix");
        match expected {
            Ok(path) => assert_eq!(
                got.as_ref().map(CanonicalPath::as_str),
                Ok(path),
                "{input:?}"
            ),
            Err(why) => assert_eq!(
                got,
                Err(Invalid::new("path_prefix", why.message())),
                "{input:?}"
            ),
        }
    }

    #[test]
    fn canonicalizes_prefixes() {
        use NotCanonical::*;
        let cases: &[(&str, Result<&str, NotCanonical>)] = &[
            ("Actualite/", Ok("/actualite/")),
            ("/Été", Ok("/%C3%A9t%C3%A9/")),
            ("/%C3%89t%C3%A9", Ok("/%C3%A9t%C3%A9/")),
            ("/a%2fb", Ok("/a%2Fb/")),
            ("/A%2FB", Ok("/a%2Fb/")),
            ("/", Ok("/")),
            ("  /News/World  ", Ok("/news/world/")),
            ("\u{a0}/news\u{3000}", Ok("/news/")),
            ("/a/b/", Ok("/a/b/")),
            ("a", Ok("/a/")),
            ("/a%20b", Ok("/a%20b/")),
            ("/%7euser", Ok("/~user/")),
            ("/%41%42", Ok("/ab/")),
            ("/a%00b", Ok("/a%00b/")),
            ("/...", Ok("/.../")),
            ("/.a/b./", Ok("/.a/b./")),
            ("/!$&'()*+,;=:@-._~", Ok("/!$&'()*+,;=:@-._~/")),
            ("/%21%40", Ok("/!@/")),
            ("/a\"b<c>", Ok("/a%22b%3Cc%3E/")),
            ("/a[b]{c}|^`", Ok("/a%5Bb%5D%7Bc%7D%7C%5E%60/")),
            ("/ΟΔΟΣ", Ok("/%CE%BF%CE%B4%CE%BF%CF%82/")),
            ("/ΣΑ", Ok("/%CF%83%CE%B1/")),
            ("/\u{212A}", Ok("/k/")),
            ("/😀", Ok("/%F0%9F%98%80/")),
            ("/a b", Err(SpaceOrControl)),
            ("/a\tb", Err(SpaceOrControl)),
            ("/a\u{a0}b", Err(SpaceOrControl)),
            ("/a\u{7f}", Err(SpaceOrControl)),
            ("/a\u{85}b", Err(SpaceOrControl)),
            ("/a\u{1}b", Err(SpaceOrControl)),
            ("/a\u{9f}b", Err(SpaceOrControl)),
            ("/a//b", Err(EmptySegment)),
            ("//", Err(EmptySegment)),
            ("//a", Err(EmptySegment)),
            ("/a//", Err(EmptySegment)),
            ("/a/../b", Err(DotSegment)),
            ("/a/./b", Err(DotSegment)),
            ("..", Err(DotSegment)),
            ("/a/%2E%2e/", Err(DotSegment)),
            ("/a/.%2e", Err(DotSegment)),
            ("/%2e", Err(DotSegment)),
            ("/a?x=1", Err(QueryOrFragment)),
            ("/a#x", Err(QueryOrFragment)),
            ("/a\\b", Err(Backslash)),
            ("/%zz", Err(BadEscape)),
            ("/a%2", Err(BadEscape)),
            ("/a%", Err(BadEscape)),
            ("/%C3", Err(NotUtf8)),
            ("/%C3/%A9", Err(NotUtf8)),
            ("/%FF", Err(NotUtf8)),
        ];
        for &(input, expected) in cases {
            check(input, expected);
        }
    }

    #[test]
    fn refuses_empty_prefixes() {
        let cases = ["", "   ", "\t\n"];
        for input in cases {
            let got = CanonicalPath::parse(input, "routes[3].path_prefix");
            assert_eq!(
                got,
                Err(Invalid::new(
                    "routes[3].path_prefix",
                    "path prefix must not be empty"
                )),
                "{input:?}"
            );
        }
    }

    #[test]
    fn applies_length_limits() {
        let escaped_a = "%61".repeat(170);
        let short = || Ok(format!("/{}/", "a".repeat(170)));
        let cases: Vec<(String, Result<String, NotCanonical>)> = vec![
            // 512 UTF-16 units of input whose canonical form is short: accepted.
            (format!("/{escaped_a}/"), short()),
            // 513 units, canonical form still short: refused for the input length.
            (format!("/{escaped_a}a/"), Err(NotCanonical::InputTooLong)),
            // Surrounding whitespace does not count.
            (format!("   /{escaped_a}/   "), short()),
            // 258 chars but 514 UTF-16 units: the input limit counts UTF-16.
            (
                format!("/{}/", "😀".repeat(256)),
                Err(NotCanonical::InputTooLong),
            ),
            // 302 UTF-16 units but 602 bytes: within the input limit, too long once encoded.
            (
                format!("/{}/", "é".repeat(300)),
                Err(NotCanonical::OutputTooLong),
            ),
            // Canonical result of exactly 200 characters, then 201.
            (
                format!("/{}/", "a".repeat(198)),
                Ok(format!("/{}/", "a".repeat(198))),
            ),
            (
                format!("/{}", "a".repeat(199)),
                Err(NotCanonical::OutputTooLong),
            ),
            (
                format!("/{}", "é".repeat(33)),
                Ok(format!("/{}/", "%C3%A9".repeat(33))),
            ),
            (
                format!("/{}", "é".repeat(34)),
                Err(NotCanonical::OutputTooLong),
            ),
        ];
        for (input, expected) in cases {
            check(&input, expected.as_deref().map_err(|why| *why));
        }
    }

    fn check_page(input: &str, expected: Option<&str>) {
        assert_eq!(canonical_page_path(input).as_deref(), expected, "{input:?}");
    }

    #[test]
    fn canonicalizes_page_paths() {
        let long = format!("/{}", "a".repeat(600));
        let long_canonical = format!("{long}/");
        let cases: Vec<(&str, Option<&str>)> = vec![
            ("/Actualite/Article-1", Some("/actualite/article-1/")),
            ("", Some("/")),
            ("/", Some("/")),
            ("/actualit%C3%A9/", Some("/actualit%C3%A9/")),
            ("/a%2fb", Some("/a%2Fb/")),
            (&long, Some(&long_canonical)),
            (" /a", None),
            ("/a b", None),
            ("//", None),
            ("/a//b", None),
            ("/a/../b", None),
            ("/%2e%2E/", None),
            ("/a?x", None),
            ("/%zz", None),
            ("/%C3", None),
        ];
        for (input, expected) in cases {
            check_page(input, expected);
        }
    }

    #[test]
    fn the_fast_path_agrees_with_the_steps() {
        // Every path of up to 6 characters over an alphabet that reaches each branch.
        let alphabet = ['/', 'a', 'Z', '.', '-', '%', '2', 'é', ' ', '~'];
        let mut paths = vec![String::new()];
        let mut fast = 0;
        for _ in 0..6 {
            paths = paths
                .iter()
                .flat_map(|p| alphabet.iter().map(move |c| format!("{p}{c}")))
                .collect();
            for path in &paths {
                if let Some(canonical) = already_canonical(path) {
                    fast += 1;
                    assert_eq!(
                        canonical_steps(path, PAGE_LIMITS),
                        Ok(canonical.clone()),
                        "{path:?}"
                    );
                    assert_eq!(canonicalize(path, PREFIX_LIMITS), Ok(canonical));
                }
            }
        }
        assert!(fast > 1000, "the fast path took only {fast} paths");
        let long = format!("/{}", "a".repeat(200));
        assert_eq!(
            canonicalize(&long, PREFIX_LIMITS),
            Err(NotCanonical::OutputTooLong)
        );
        assert_eq!(
            canonical_steps(&long, PREFIX_LIMITS),
            Err(NotCanonical::OutputTooLong)
        );
    }

    #[test]
    fn page_and_prefix_share_the_rule() {
        let cases = [
            "/Actualite/",
            "/Été",
            "a/b",
            "/a%2fb",
            "/a//b",
            "/%C3",
            "/x?y",
            "/ΟΔΟΣ/",
        ];
        for input in cases {
            let prefix = CanonicalPath::parse(input, "path_prefix")
                .ok()
                .map(|p| p.as_str().to_string());
            assert_eq!(canonical_page_path(input), prefix, "{input:?}");
        }
    }

    #[test]
    fn lists_prefixes_longest_first() {
        let cases: &[(&str, &[&str])] = &[
            ("/a/b/c/", &["/a/b/c/", "/a/b/", "/a/", "/"]),
            ("/a/", &["/a/", "/"]),
            ("/", &["/"]),
            ("/a%2Fb/", &["/a%2Fb/", "/"]),
            ("/a/b", &["/a/", "/"]),
            ("", &[]),
        ];
        for &(input, expected) in cases {
            let got: Vec<&str> = prefixes_longest_first(input).collect();
            assert_eq!(got, expected, "{input:?}");
        }
    }

    #[test]
    fn parses_match_modes() {
        let cases: &[(&str, Option<MatchMode>)] = &[
            ("exact", Some(MatchMode::Exact)),
            ("prefix", Some(MatchMode::Prefix)),
            ("  prefix\n", Some(MatchMode::Prefix)),
            ("Exact", None),
            ("PREFIX", None),
            ("prefixes", None),
            ("", None),
        ];
        for &(input, expected) in cases {
            let got = MatchMode::parse(input, "routes[1].match");
            match expected {
                Some(mode) => assert_eq!(got, Ok(mode), "{input:?}"),
                None => assert_eq!(
                    got,
                    Err(Invalid::new(
                        "routes[1].match",
                        "match mode must be \"exact\" or \"prefix\""
                    )),
                    "{input:?}"
                ),
            }
        }
    }

    #[test]
    fn match_modes_round_trip_and_order() {
        for mode in [MatchMode::Exact, MatchMode::Prefix] {
            assert_eq!(MatchMode::parse(mode.as_str(), "match"), Ok(mode));
            assert_eq!(mode.to_string(), mode.as_str());
        }
        assert!(MatchMode::Exact < MatchMode::Prefix);
    }
}
