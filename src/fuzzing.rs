//! The properties the fuzz targets check, one function per target of `fuzz/` (docs/fuzzing.md).
//!
//! Each function takes the fuzzer's bytes, runs one parser of untrusted input and panics when
//! a property fails: the fuzzer reports the panic as a crash. The properties live here, next to
//! the code they check, so a fuzz target is one line, and `cargo test` replays every kept input
//! (`fuzz/corpus/<target>/`, `fuzz/regressions/<target>/`) through the same functions without a
//! fuzzer toolchain. Nothing in the crate uses this module; it is public only for `fuzz/`, and
//! compiled only for it (feature `fuzzing`) and for the unit tests.
//!
//! The parsers that read `&str` get the longest valid UTF-8 start of the bytes (what
//! `arbitrary` gives for `&str`), so no input is wasted on an early return.

use crate::abc_txt;
use crate::api::operations::OPERATIONS;
use crate::delivery::page::Page;
use crate::delivery::params::Params;
use crate::domain::path::{canonical_page_path, canonical_page_path_by_steps};
use crate::domain::{CanonicalPath, DomainName, FragmentRef};
use crate::edge::card::{Card, Failure, PendingCard};
use crate::edge::compose::{PageEncoding, PageWriter};
use crate::edge::message::{Conn, Framing, Head, Piece};
use crate::edge::FailOpen;
use crate::error::ApiError;
use crate::http::parse::{parse_request, HttpLimits, Parsed, Parsing};
use crate::http::{media_type, normalize_host, Body, ClientAddress};
use crate::wire;
use percent_encoding::{utf8_percent_encode, NON_ALPHANUMERIC};
use serde_json::Value;
use std::io::Write;
use std::net::SocketAddr;

/// A property over the fuzzer's bytes: returns when it holds, panics when it fails.
pub type Property = fn(&[u8]);

/// Every target by name: the name of its binary in `fuzz/` and of its folders of kept inputs.
pub const TARGETS: &[(&str, Property)] = &[
    ("request_head", request_head),
    ("fragment_query", fragment_query),
    ("page_url", page_url),
    ("canonical_path", canonical_path),
    ("json_body", json_body),
    ("fragment_ref", fragment_ref),
    ("domain_name", domain_name),
    ("abc_txt", abc_txt),
    ("edge_message", edge_message),
    ("edge_compose", edge_compose),
];

/// Limits small enough that inputs of a few hundred bytes reach the `431` and
/// too-large-body branches, which the default limits put out of the fuzzer's reach.
const SMALL_LIMITS: HttpLimits = HttpLimits {
    max_head_bytes: 256,
    max_body_bytes: 16,
    max_connections_per_address: 1,
    trusted_proxies: Vec::new(),
};

/// `http::parse::parse_request`, with the default limits and with small ones: no panic; a
/// refusal is one of the statuses the layer answers; a parsed request lies within the bytes
/// it consumed, its body is those bytes, and those bytes alone parse to the same request. The
/// parsed head then goes through what every handler reads of it (host, client address, media
/// type).
pub fn request_head(bytes: &[u8]) {
    let peer = SocketAddr::from(([127, 0, 0, 1], 1));
    for limits in [HttpLimits::default(), SMALL_LIMITS] {
        match parse_request(bytes, &limits, peer) {
            Ok(Parsing::Done(parsed)) => check_parsed(bytes, &limits, peer, &parsed),
            Ok(Parsing::NeedMore { .. }) => {}
            Err(rejection) => assert!(
                matches!(rejection.status, 400 | 411 | 417 | 431),
                "unexpected rejection {rejection:?}"
            ),
        }
    }
}

fn check_parsed(bytes: &[u8], limits: &HttpLimits, peer: SocketAddr, parsed: &Parsed) {
    let request = &parsed.request;
    assert!(parsed.consumed <= bytes.len(), "consumed past the input");
    match &request.body {
        Body::Bytes(body) => {
            assert!(body.len() <= limits.max_body_bytes, "body over the limit");
            assert_eq!(
                body[..],
                bytes[parsed.consumed - body.len()..parsed.consumed],
                "the body is not the bytes that end the request"
            );
        }
        Body::TooLarge => assert!(parsed.close, "an unread body must close the connection"),
    }
    assert!(!request.path().contains('?'), "the query left in the path");
    assert_eq!(parsed.is_head, request.method() == "HEAD");
    match parse_request(&bytes[..parsed.consumed], limits, peer) {
        Ok(Parsing::Done(again)) => {
            assert_eq!(again.consumed, parsed.consumed, "the request alone");
            assert_eq!(again.close, parsed.close, "the request alone");
            assert_eq!(
                format!("{:?}", again.request),
                format!("{request:?}"),
                "the request alone parses differently"
            );
        }
        other => panic!("the request alone parses as {other:?}"),
    }
    for host in request.header_all("host") {
        let host = normalize_host(host);
        assert_eq!(host, host.to_ascii_lowercase());
    }
    let behind_proxies = ClientAddress {
        header: Some("x-forwarded-for".to_string()),
        trusted_proxies: vec!["0.0.0.0/0".parse().unwrap(), "::/0".parse().unwrap()],
    };
    behind_proxies.of(request);
    if let Some(content_type) = request.header("content-type") {
        media_type::is_json(content_type);
        media_type::is_form(content_type);
    }
}

/// `delivery::params::Params::parse`: every parameter is the first of its name as the URL
/// standard's form-urlencoded parser (`url::form_urlencoded`) reads the query, and the `ctx.`
/// values are that parser's, trimmed, non-empty, sorted and without repeats.
pub fn fragment_query(bytes: &[u8]) {
    let query = text(bytes);
    let params = Params::parse(query);
    let standard: Vec<(String, String)> = url::form_urlencoded::parse(query.as_bytes())
        .map(|(name, value)| (name.into_owned(), value.into_owned()))
        .collect();
    let first = |wanted: &str| {
        standard
            .iter()
            .find(|(name, _)| name == wanted)
            .map(|(_, value)| value.as_str())
    };
    let ours = [
        ("partner_id", &params.partner_id),
        ("fragment_id", &params.fragment_id),
        ("placement_id", &params.placement_id),
        ("lang", &params.lang),
        ("api_key", &params.api_key),
        ("page_url", &params.page_url),
        ("format", &params.format),
        ("agent_ua", &params.agent_ua),
    ];
    for (name, value) in ours {
        assert_eq!(value.as_deref(), first(name), "{name} of {query:?}");
    }
    let mut ctx: Vec<(&str, &str)> = standard
        .iter()
        .filter_map(|(name, value)| Some((name.strip_prefix("ctx.")?, value.trim())))
        .filter(|(key, value)| !key.is_empty() && !value.is_empty())
        .collect();
    ctx.sort_unstable();
    ctx.dedup();
    let ours: Vec<(&str, &str)> = params.ctx.iter().map(|(k, v)| (&**k, &**v)).collect();
    assert_eq!(ours, ctx, "ctx of {query:?}");
}

/// `delivery::page::Page::parse`: the plain split gives what the WHATWG parser gives (the
/// property of the unit test on generated URLs, on any text); the page's path is canonical
/// (canonicalising it again changes nothing), and the URL made of the page's host and path
/// names the same page.
pub fn page_url(bytes: &[u8]) {
    let url = text(bytes);
    let page = Page::parse(url);
    assert_eq!(
        page,
        Page::parse_whatwg(url),
        "fast path and WHATWG on {url:?}"
    );
    if let Some(Page {
        host,
        path: Some(path),
    }) = &page
    {
        assert_eq!(canonical_page_path(path).as_ref(), Some(path), "{url:?}");
        let again = format!("http://{host}{path}");
        assert_eq!(Page::parse(&again).as_ref(), page.as_ref(), "{url:?}");
    }
}

/// `domain::path`: the fast path of `canonical_page_path` agrees with the general steps; the
/// canonical form is idempotent, for served pages and route prefixes alike; a route prefix is
/// the page rule applied to the trimmed input, refused only for its emptiness or its length.
pub fn canonical_path(bytes: &[u8]) {
    let input = text(bytes);
    let page = canonical_page_path(input);
    assert_eq!(page, canonical_page_path_by_steps(input), "{input:?}");
    if let Some(canonical) = &page {
        assert!(
            canonical.is_ascii() && canonical.starts_with('/') && canonical.ends_with('/'),
            "{input:?} gave {canonical:?}"
        );
        assert_eq!(canonical_page_path(canonical).as_ref(), Some(canonical));
    }
    let trimmed = input.trim();
    match CanonicalPath::parse(input, "path_prefix") {
        Ok(prefix) => {
            assert_eq!(
                canonical_page_path(trimmed).as_deref(),
                Some(prefix.as_str()),
                "{input:?}"
            );
            assert_eq!(
                CanonicalPath::parse(prefix.as_str(), "path_prefix").as_ref(),
                Ok(&prefix)
            );
        }
        Err(refusal) => {
            let within_limits = |canonical: &String| {
                !trimmed.is_empty()
                    && trimmed.encode_utf16().count() <= 512
                    && canonical.len() <= 200
            };
            assert!(
                !canonical_page_path(trimmed).is_some_and(|c| within_limits(&c)),
                "{input:?} refused as a prefix ({refusal:?}), accepted as a page"
            );
        }
    }
}

/// `wire::parse_body` and every body reader (those of `api::OPERATIONS`, the contact form's): the strict parser accepts only what serde_json
/// reads, as serde_json reads it, and accepts what serde_json writes; no reader panics, each
/// refuses with `400` or `422`, and an unknown member it names is in the body at that path.
pub fn json_body(bytes: &[u8]) {
    let Ok(body) = wire::parse_body(bytes) else {
        return;
    };
    let without_bom = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let lenient: Value = serde_json::from_slice(without_bom).expect("serde_json refuses it");
    assert_eq!(body, lenient, "serde_json reads it differently");
    assert!(
        wire::parse_body(body.to_string().as_bytes()).is_ok(),
        "what serde_json writes is refused"
    );
    let operations = OPERATIONS
        .iter()
        .filter_map(|operation| operation.body.as_ref());
    let contact: fn(&Value) -> Result<(), ApiError> = |body| wire::contact_message(body).map(drop);
    let readers = operations.map(|body| body.read).chain([contact]);
    for reader in readers {
        match reader(&body) {
            Ok(()) => {}
            Err(ApiError::UnknownField(path)) => {
                assert!(
                    names_a_member(&body, &path),
                    "unknown {path:?} is not there"
                )
            }
            Err(error) => assert_eq!(error.status(), 422, "{error:?}"),
        }
    }
}

/// True when `path` is a member of the object `body` (`name`), or a member of an object item
/// of one of its arrays (`name[3].member`): the two shapes of an unknown field's path.
fn names_a_member(body: &Value, path: &str) -> bool {
    let Some(object) = body.as_object() else {
        return false;
    };
    object.contains_key(path)
        || object.iter().any(|(name, value)| {
            let (Value::Array(items), Some(rest)) = (value, path.strip_prefix(name.as_str()))
            else {
                return false;
            };
            rest.strip_prefix('[')
                .and_then(|rest| rest.split_once("]."))
                .and_then(|(index, member)| Some((index.parse::<usize>().ok()?, member)))
                .and_then(|(index, member)| items.get(index)?.as_object()?.get(member))
                .is_some()
        })
}

/// `domain::FragmentRef`: a reference is kept exactly as given; the `{ref}` path segment is
/// the reference encoded once (a client's `encodeURIComponent`), decoded once, so the encoded
/// form reads as the reference does and a decoded segment is a reference as it stands.
pub fn fragment_ref(bytes: &[u8]) {
    let input = text(bytes);
    let parsed = FragmentRef::parse(input);
    if let Ok(reference) = &parsed {
        assert_eq!(reference.as_str(), input);
    }
    let encoded = utf8_percent_encode(input, NON_ALPHANUMERIC).to_string();
    assert_eq!(
        FragmentRef::from_path_segment(&encoded),
        parsed,
        "{input:?}"
    );
    if let Ok(reference) = FragmentRef::from_path_segment(input) {
        assert_eq!(
            FragmentRef::parse(reference.as_str()).as_ref(),
            Ok(&reference)
        );
    }
}

/// `domain::DomainName`: the domain is the trimmed, lowercased input and is idempotent; a page
/// of it (`https://{domain}/`) is read with the domain as its host, so its site can be
/// reached; the `{domain}` path segment, encoded or not, reads as the domain does.
pub fn domain_name(bytes: &[u8]) {
    let input = text(bytes);
    let parsed = DomainName::parse(input);
    if let Ok(domain) = &parsed {
        assert_eq!(domain.as_str(), input.trim().to_ascii_lowercase());
        assert_eq!(DomainName::parse(domain.as_str()).as_ref(), Ok(domain));
        let page = Page::parse(&format!("https://{domain}/"));
        assert_eq!(page.map(|p| p.host), Some(domain.to_string()), "{domain}");
    }
    let encoded = utf8_percent_encode(input, NON_ALPHANUMERIC).to_string();
    assert_eq!(DomainName::from_path_segment(&encoded), parsed, "{input:?}");
    if let Ok(domain) = DomainName::from_path_segment(input) {
        assert_eq!(DomainName::parse(domain.as_str()).as_ref(), Ok(&domain));
    }
}

/// `abc_txt::parse`: no panic; every record written back reads as itself, and the written file
/// reads as the same records; a refused file names lines that exist.
pub fn abc_txt(bytes: &[u8]) {
    match abc_txt::parse(bytes) {
        Ok(records) => {
            let written: String = records.iter().map(|r| format!("{r}\n")).collect();
            assert_eq!(abc_txt::parse(written.as_bytes()), Ok(records));
        }
        Err(errors) => {
            let lines = bytes.split(|&b| b == b'\n').count();
            assert!(!errors.is_empty());
            assert!(
                errors.iter().all(|e| (1..=lines).contains(&e.line)),
                "{errors:?}"
            );
        }
    }
}

/// The edge's HTTP messages (`edge::message`): a head read as a request and as a response, and
/// the rest of the bytes as a chunked body: no panic; a parsed head written back with every
/// header kept parses to the same headers; a chunked body's verbatim copy is the bytes it
/// consumed, and its content is what the chunks hold.
pub fn edge_message(bytes: &[u8]) {
    let split = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    let (head, body) = (&bytes[..split], bytes.get(split + 1..).unwrap_or_default());
    for parsed in [
        Head::parse_request(head.to_vec()),
        Head::parse_response(head.to_vec()),
    ] {
        let Ok(parsed) = parsed else { continue };
        let again = parsed.rewritten(|_| true, &[]);
        // A response may say status 000: only a request has a method.
        let reparsed = match parsed.method.is_empty() {
            false => Head::parse_request(again),
            true => Head::parse_response(again),
        }
        .expect("a head written back parses");
        assert!(parsed.headers().eq(reparsed.headers()));
        let _ = (parsed.request_framing(), parsed.response_framing("GET"));
    }
    let mut copy = Vec::new();
    let mut content = Vec::new();
    let mut conn = Conn::new(body, 7);
    let walked = conn.walk_body(Framing::Chunked, &mut |piece| {
        match piece {
            Piece::Framing(b) => copy.extend_from_slice(b),
            Piece::Content(b) => {
                copy.extend_from_slice(b);
                content.extend_from_slice(b);
            }
            Piece::Waiting => {}
        }
        Ok(())
    });
    assert!(body.starts_with(&copy));
    if walked.is_ok() {
        assert!(content.len() <= copy.len());
    }
}

/// The edge's rewriter (`edge::compose`), the page in pieces whose sizes come from the first
/// byte: without a card the page comes out byte for byte as it went in, whatever the markup
/// (lol_html's bail-out included); with one, taking the card and the brand line back out of
/// the output gives the page.
pub fn edge_compose(bytes: &[u8]) {
    let Some((&piece, page)) = bytes.split_first() else {
        return;
    };
    let piece = usize::from(piece.max(1));
    let run = |answer: Result<Card, Failure>| {
        let mut out = Vec::new();
        let encoding = PageEncoding::of(Some("utf-8")).expect("utf-8");
        let mut writer = PageWriter::new(encoding, PendingCard::answered(answer), &mut out);
        for chunk in page.chunks(piece) {
            writer.write_all(chunk).expect("a Vec takes every write");
        }
        let outcome = writer.finish().expect("a Vec takes every write");
        (out, outcome)
    };
    let no_card = Failure {
        cause: FailOpen::NoFill,
        detail: String::new(),
    };
    let (out, outcome) = run(Err(no_card));
    assert_eq!(out, page);
    assert!(outcome.is_err());
    const CARD: &str = "<aside data-brand=\"B\">card</aside>";
    const LINE: &str = "<p class=\"agentcard-brand-line\">B</p>";
    let card = Card {
        html: CARD.into(),
        brand: Some("B".into()),
    };
    let (out, outcome) = run(Ok(card));
    if outcome.is_ok() {
        let mut out = out;
        let card_at = memchr::memmem::find(&out, CARD.as_bytes()).expect("the card is placed");
        out.drain(card_at..card_at + CARD.len());
        let line_at = card_at
            + memchr::memmem::find(&out[card_at..], LINE.as_bytes()).expect("so is its line");
        out.drain(line_at..line_at + LINE.len());
        assert_eq!(out, page);
    }
}

/// The longest valid UTF-8 start of `bytes`.
fn text(bytes: &[u8]) -> &str {
    match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(error) => std::str::from_utf8(&bytes[..error.valid_up_to()]).unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::path::{Path, PathBuf};

    fn fuzz_dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz")
    }

    fn target(name: &str) -> Option<Property> {
        TARGETS
            .iter()
            .find(|(target, _)| *target == name)
            .map(|&(_, check)| check)
    }

    /// Every seed and every crash kept in `fuzz/` goes through its target's property again: a
    /// fixed bug stays fixed, and no fuzzer is needed to know it.
    #[test]
    fn kept_fuzz_inputs_replay_without_failing() {
        let mut replayed = 0;
        for kind in ["corpus", "regressions"] {
            let Ok(folders) = fs::read_dir(fuzz_dir().join(kind)) else {
                continue;
            };
            for folder in folders {
                let folder = folder.unwrap().path();
                let name = folder.file_name().unwrap().to_string_lossy().into_owned();
                if name == "README.md" {
                    continue;
                }
                let check = target(&name)
                    .unwrap_or_else(|| panic!("fuzz/{kind}/{name}: no target of that name"));
                for input in fs::read_dir(&folder).unwrap() {
                    let input = input.unwrap().path();
                    let bytes = fs::read(&input).unwrap();
                    let outcome = std::panic::catch_unwind(|| check(&bytes));
                    assert!(outcome.is_ok(), "{} fails its property", input.display());
                    replayed += 1;
                }
            }
        }
        assert!(replayed >= TARGETS.len(), "only {replayed} inputs replayed");
    }

    /// Each target has its fuzz binary and a seed corpus; `scripts/fuzz.sh` runs them all.
    #[test]
    fn every_target_has_a_binary_and_seeds() {
        for (name, _) in TARGETS {
            let binary = fuzz_dir().join("fuzz_targets").join(format!("{name}.rs"));
            let source = fs::read_to_string(&binary)
                .unwrap_or_else(|_| panic!("{} is missing", binary.display()));
            assert!(
                source.contains(&format!("agentcard::fuzzing::{name}(")),
                "{} does not call its property",
                binary.display()
            );
            let seeds = fuzz_dir().join("corpus").join(name);
            assert!(
                fs::read_dir(&seeds).is_ok_and(|mut files| files.next().is_some()),
                "{} holds no seed",
                seeds.display()
            );
        }
    }

    #[test]
    fn text_is_the_valid_utf8_start() {
        assert_eq!(text(b"abc"), "abc");
        assert_eq!(text(b"ab\xFFc"), "ab");
        assert_eq!(text("é".as_bytes()), "é");
        assert_eq!(text(&"é".as_bytes()[..1]), "");
    }
}
