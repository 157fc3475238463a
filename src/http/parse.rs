//! Parsing one request from the connection buffer, with every framing rule that keeps a
//! hostile client from crashing the server or smuggling a second request.

use super::host::is_host_value;
use super::{Body, Request};
use ipnet::IpNet;
use std::borrow::Cow;
use std::mem::MaybeUninit;
use std::net::{IpAddr, SocketAddr};

/// Header slots given to `httparse`; more headers than this is answered `431`.
const MAX_HEADERS: usize = 100;

#[derive(Debug, Clone)]
pub struct HttpLimits {
    /// Most bytes of a request head (request line and headers); more is `431`.
    pub max_head_bytes: usize,
    /// Largest body read; a larger declared `Content-Length` becomes [`Body::TooLarge`].
    pub max_body_bytes: usize,
    /// Connections one client address may hold open; the next ones are closed at accept.
    pub max_connections_per_address: usize,
    /// Peers not held to `max_connections_per_address`: a load balancer or a CDN node carries
    /// many clients on its one address.
    pub trusted_proxies: Vec<IpNet>,
}

impl HttpLimits {
    /// Connections `peer` may hold open.
    pub fn connection_cap(&self, peer: IpAddr) -> usize {
        if self.trusted_proxies.iter().any(|net| net.contains(&peer)) {
            usize::MAX
        } else {
            self.max_connections_per_address
        }
    }
}

impl Default for HttpLimits {
    fn default() -> Self {
        HttpLimits {
            max_head_bytes: 16 * 1024,
            max_body_bytes: super::BODY_LIMIT,
            max_connections_per_address: 256,
            trusted_proxies: Vec::new(),
        }
    }
}

/// A request the layer refuses before any handler sees it. The connection closes after the
/// answer, since what follows in the stream cannot be trusted to start a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    pub status: u16,
    pub code: &'static str,
    pub message: &'static str,
}

const fn reject(status: u16, code: &'static str, message: &'static str) -> Rejection {
    Rejection {
        status,
        code,
        message,
    }
}

const HEAD_TOO_LARGE: Rejection = reject(431, "header_too_large", "request header too large");
const MALFORMED: Rejection = reject(400, "bad_request", "malformed HTTP request");
const BAD_LENGTH: Rejection = reject(400, "bad_request", "invalid Content-Length");
const BAD_HOST: Rejection = reject(
    400,
    "bad_request",
    "send exactly one valid Host header (RFC 9112, section 3.2)",
);
const CHUNKED: Rejection = reject(
    411,
    "length_required",
    "send the body with Content-Length; Transfer-Encoding is not accepted",
);

const EXPECTATION_FAILED: Rejection = reject(
    417,
    "expectation_failed",
    "the only expectation understood is 100-continue",
);

/// How far the buffer holds a request.
#[derive(Debug)]
pub enum Parsing {
    Done(Parsed),
    /// More bytes are needed. `awaiting_body`: the head is whole, its body is awaited, and the
    /// client asked with `Expect: 100-continue` to be told to send it (the head without body).
    NeedMore {
        awaiting_body: Option<Box<Request>>,
    },
}

/// A parsed request plus what the connection must do afterwards.
#[derive(Debug)]
pub struct Parsed {
    pub request: Request,
    /// Bytes of the buffer this request used.
    pub consumed: usize,
    /// Close after answering (`Connection: close`, HTTP/1.0, or an unread body).
    pub close: bool,
    pub is_head: bool,
}

pub fn parse_request(
    buf: &[u8],
    limits: &HttpLimits,
    peer: SocketAddr,
) -> Result<Parsing, Rejection> {
    const NEED_MORE: Parsing = Parsing::NeedMore {
        awaiting_body: None,
    };
    // Uninitialised slots: filling 100 empty headers would write kilobytes to the stack for
    // every request, most of this function's time.
    let mut slots = [const { MaybeUninit::<httparse::Header>::uninit() }; MAX_HEADERS];
    let mut head = httparse::Request::new(&mut []);
    let head_len = match head.parse_with_uninit_headers(buf, &mut slots) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) if buf.len() > limits.max_head_bytes => {
            return Err(HEAD_TOO_LARGE)
        }
        Ok(httparse::Status::Partial) => return Ok(NEED_MORE),
        Err(httparse::Error::TooManyHeaders) => return Err(HEAD_TOO_LARGE),
        Err(_) => return Err(MALFORMED),
    };
    if head_len > limits.max_head_bytes {
        return Err(HEAD_TOO_LARGE);
    }
    let (method, target, minor) = match (head.method, head.path, head.version) {
        (Some(m), Some(t), Some(v)) => (m, t, v),
        _ => return Err(MALFORMED),
    };
    require_single_host(head.headers, minor)?;
    let (authority, path, query) = match absolute_form(target) {
        Some(Ok((authority, path, query))) => (Some(authority), path, query),
        Some(Err(rejection)) => return Err(rejection),
        None => {
            let (path, query) = split_target(target);
            (None, path, query)
        }
    };
    let mut request = Request::new(method, path, query, peer, head_len, head.headers.len());
    // The target's authority stands for `Host` (RFC 9112, section 3.2.2): it goes first, and
    // the header sent is left out, so that every reader of `host` sees the authority.
    if let Some(authority) = authority {
        request.push_header("host", authority);
    }
    for header in head.headers.iter() {
        let is_host = header.name.eq_ignore_ascii_case("host");
        if !(is_host && authority.is_some()) {
            request.push_header(header.name, &utf8_lossy(header.value));
        }
    }
    let continue_expected = expects_continue(&request, minor)?;
    let (body, body_len) = match body_framing(&request, limits)? {
        Framing::Length(len) if buf.len() - head_len < len => {
            let awaiting_body = continue_expected.then(|| Box::new(request));
            return Ok(Parsing::NeedMore { awaiting_body });
        }
        Framing::Length(len) => (Body::Bytes(buf[head_len..head_len + len].to_vec()), len),
        Framing::TooLarge => (Body::TooLarge, 0),
    };
    let close = minor == 0 || wants_close(&request) || body == Body::TooLarge;
    request.body = body;
    Ok(Parsing::Done(Parsed {
        request,
        consumed: head_len + body_len,
        close,
        is_head: method == "HEAD",
    }))
}

/// `Expect: 100-continue` (RFC 9110 section 10.1.1), ignored in HTTP/1.0; any other
/// expectation is `417`.
fn expects_continue(request: &Request, minor: u8) -> Result<bool, Rejection> {
    let mut expects = false;
    for value in request.header_all("expect") {
        if !value.trim().eq_ignore_ascii_case("100-continue") {
            return Err(EXPECTATION_FAILED);
        }
        expects = minor == 1;
    }
    Ok(expects)
}

/// A header value as text, invalid UTF-8 replaced by U+FFFD. Checked with `from_utf8` first:
/// valid values, nearly all of them, skip the slower lossy decoder.
fn utf8_lossy(value: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(value) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(value),
    }
}

enum Framing {
    Length(usize),
    TooLarge,
}

/// Only `Content-Length` frames a body. Several must agree; anything but plain digits is
/// refused; `Transfer-Encoding` is refused outright so a chunked body can never be read as
/// the next request.
fn body_framing(request: &Request, limits: &HttpLimits) -> Result<Framing, Rejection> {
    if request.header("transfer-encoding").is_some() {
        return Err(CHUNKED);
    }
    let mut length: Option<u64> = None;
    for value in request.header_all("content-length") {
        let value = value.trim();
        let valid =
            !value.is_empty() && value.len() <= 18 && value.bytes().all(|b| b.is_ascii_digit());
        let parsed: u64 = if valid {
            value.parse().map_err(|_| BAD_LENGTH)?
        } else {
            return Err(BAD_LENGTH);
        };
        if length.is_some_and(|seen| seen != parsed) {
            return Err(BAD_LENGTH);
        }
        length = Some(parsed);
    }
    match length {
        Some(len) if len > limits.max_body_bytes as u64 => Ok(Framing::TooLarge),
        Some(len) => Ok(Framing::Length(len as usize)),
        None => Ok(Framing::Length(0)),
    }
}

/// The `Host` header of an HTTP/1.1 request: exactly one, with a value that can be a host and
/// port (empty allowed, as for a target without authority). HTTP/1.0 may leave it out.
fn require_single_host(headers: &[httparse::Header], minor: u8) -> Result<(), Rejection> {
    let mut hosts = headers
        .iter()
        .filter(|h| h.name.eq_ignore_ascii_case("host"));
    match (hosts.next(), hosts.next()) {
        (None, _) if minor == 0 => Ok(()),
        (Some(host), None) if is_host_value(host.value) => Ok(()),
        _ => Err(BAD_HOST),
    }
}

/// An absolute-form target (`http://host:port/path?query`, RFC 9112 section 3.2.2): its
/// authority, path (`/` when empty) and query. `None`: not an `http(s)` absolute URI; an
/// authority that is no host (empty, user info) is refused.
type AbsoluteForm<'t> = (&'t str, &'t str, Option<&'t str>);

fn absolute_form(target: &str) -> Option<Result<AbsoluteForm<'_>, Rejection>> {
    let (scheme, after) = target.split_once("://")?;
    if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
        return None;
    }
    let end = after.find(['/', '?']).unwrap_or(after.len());
    let (authority, rest) = after.split_at(end);
    if authority.is_empty() || !is_host_value(authority.as_bytes()) {
        return Some(Err(BAD_HOST));
    }
    let (path, query) = split_target(rest);
    Some(Ok((
        authority,
        if path.is_empty() { "/" } else { path },
        query,
    )))
}

/// Path and query. A byte search: the setup of `split_once`'s char searcher outweighs the
/// short path it searches.
fn split_target(target: &str) -> (&str, Option<&str>) {
    match memchr::memchr(b'?', target.as_bytes()) {
        // `?` is ASCII: both sides of it are char boundaries.
        Some(at) => (&target[..at], Some(&target[at + 1..])),
        None => (target, None),
    }
}

fn wants_close(request: &Request) -> bool {
    request
        .header_all("connection")
        .flat_map(|value| value.split(','))
        .any(|token| token.trim().eq_ignore_ascii_case("close"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(raw: &str) -> Result<Option<Parsed>, Rejection> {
        parse_request(
            raw.as_bytes(),
            &HttpLimits::default(),
            "127.0.0.1:1".parse().unwrap(),
        )
        .map(|parsing| match parsing {
            Parsing::Done(parsed) => Some(parsed),
            Parsing::NeedMore { .. } => None,
        })
    }

    #[test]
    fn a_body_awaited_with_expect_100_continue_asks_for_the_interim_answer() {
        let send_continue = |raw: &str| match parse_request(
            raw.as_bytes(),
            &HttpLimits::default(),
            "127.0.0.1:1".parse().unwrap(),
        ) {
            Ok(Parsing::NeedMore { awaiting_body }) => Ok(awaiting_body.is_some()),
            Ok(Parsing::Done(_)) => Ok(false),
            Err(rejection) => Err(rejection.status),
        };
        let head = |version: &str, expect: &str, length: &str| {
            format!(
                "PUT /v1/x HTTP/{version}\r\nHost: a\r\n{expect}Content-Length: {length}\r\n\r\n"
            )
        };
        let cases = [
            (head("1.1", "Expect: 100-continue\r\n", "5"), Ok(true)),
            (head("1.1", "Expect: 100-Continue\r\n", "5"), Ok(true)),
            (head("1.1", "", "5"), Ok(false)),
            (head("1.0", "Expect: 100-continue\r\n", "5"), Ok(false)),
            (head("1.1", "Expect: 100-continue\r\n", "0"), Ok(false)),
            (head("1.1", "Expect: 100-continue\r\n", "262145"), Ok(false)),
            (head("1.1", "Expect: something-else\r\n", "5"), Err(417)),
        ];
        for (raw, expected) in cases {
            assert_eq!(send_continue(&raw), expected, "{raw:?}");
        }
    }

    #[test]
    fn content_length_must_be_plain_digits() {
        let cases = [
            ("abc", Err(400)),
            ("-1", Err(400)),
            ("1.5", Err(400)),
            ("99999999999999999999999", Err(400)),
            ("", Err(400)),
            ("2", Ok(2)),
        ];
        for (value, expected) in cases {
            let raw = format!("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: {value}\r\n\r\nab");
            let got = parse(&raw).map(|p| p.unwrap().consumed - (raw.len() - 2));
            assert_eq!(got.map_err(|r| r.status), expected, "{value}");
        }
    }

    #[test]
    fn conflicting_lengths_and_transfer_encoding_are_refused() {
        let two = "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab";
        assert_eq!(parse(two).unwrap_err().status, 400);
        let chunked = "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n";
        assert_eq!(parse(chunked).unwrap_err().status, 411);
    }

    #[test]
    fn partial_requests_wait_and_oversized_heads_are_refused() {
        assert!(parse("GET / HTTP/1.1\r\nHost: x\r\nHost: x\r\n")
            .unwrap()
            .is_none());
        assert!(
            parse("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nab")
                .unwrap()
                .is_none()
        );
        let huge = format!("GET / HTTP/1.1\r\nHost: x\r\nX: {}\r\n", "a".repeat(17_000));
        assert_eq!(parse(&huge).unwrap_err().status, 431);
    }

    #[test]
    fn many_headers_are_accepted_up_to_the_slot_count() {
        let forty: String = (0..40).map(|i| format!("X-H{i}: v\r\n")).collect();
        assert!(parse(&format!("GET / HTTP/1.1\r\nHost: x\r\n{forty}\r\n"))
            .unwrap()
            .is_some());
        let too_many: String = (0..101).map(|i| format!("X-H{i}: v\r\n")).collect();
        let refused = parse(&format!("GET / HTTP/1.1\r\nHost: x\r\n{too_many}\r\n")).unwrap_err();
        assert_eq!(refused.status, 431);
    }

    #[test]
    fn close_follows_connection_header_http10_and_unread_bodies() {
        let cases = [
            ("GET / HTTP/1.1\r\nHost: x\r\n\r\n", false),
            (
                "GET / HTTP/1.1\r\nHost: x\r\nConnection: keep-alive, Close\r\n\r\n",
                true,
            ),
            ("GET / HTTP/1.0\r\n\r\n", true),
            (
                "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 262145\r\n\r\n",
                true,
            ),
        ];
        for (raw, close) in cases {
            assert_eq!(parse(raw).unwrap().unwrap().close, close, "{raw}");
        }
    }

    #[test]
    fn an_http11_request_has_exactly_one_valid_host() {
        let cases = [
            ("GET / HTTP/1.1\r\nHost: a.example\r\n\r\n", true),
            ("GET / HTTP/1.1\r\nHost: a.example:8080\r\n\r\n", true),
            ("GET / HTTP/1.1\r\nHost: [::1]:80\r\n\r\n", true),
            ("GET / HTTP/1.1\r\nHost:\r\n\r\n", true),
            ("GET / HTTP/1.0\r\n\r\n", true),
            ("GET / HTTP/1.1\r\n\r\n", false),
            ("GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n", false),
            ("GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n", false),
            ("GET / HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n", false),
            ("GET / HTTP/1.1\r\nHost: a b\r\n\r\n", false),
            ("GET / HTTP/1.1\r\nHost: user@a\r\n\r\n", false),
            ("GET / HTTP/1.1\r\nHost: a/b\r\n\r\n", false),
        ];
        for (raw, accepted) in cases {
            let got = parse(raw).map(|p| p.is_some()).map_err(|r| r.status);
            assert_eq!(got, if accepted { Ok(true) } else { Err(400) }, "{raw:?}");
        }
    }

    #[test]
    fn an_absolute_form_target_stands_for_host() {
        let cases = [
            (
                "http://a.example:8080/health",
                "a.example:8080",
                "/health",
                None,
            ),
            ("HTTPS://a.example/f?x=1", "a.example", "/f", Some("x=1")),
            ("http://a.example", "a.example", "/", None),
            ("http://a.example?x", "a.example", "/", Some("x")),
        ];
        for (target, host, path, query) in cases {
            let raw = format!("GET {target} HTTP/1.1\r\nHost: other.example\r\n\r\n");
            let request = parse(&raw).unwrap().unwrap().request;
            let hosts: Vec<&str> = request.header_all("host").collect();
            assert_eq!(hosts, [host], "{target}");
            assert_eq!((request.path(), request.query()), (path, query), "{target}");
        }
        for target in ["http:///x", "http://user@a/x", "http://a b/"] {
            let raw = format!("GET {target} HTTP/1.1\r\nHost: a\r\n\r\n");
            assert_eq!(parse(&raw).unwrap_err().status, 400, "{target}");
        }
        let other = parse("GET ftp://a/x HTTP/1.1\r\nHost: a\r\n\r\n")
            .unwrap()
            .unwrap();
        assert_eq!(
            other.request.path(),
            "ftp://a/x",
            "not an http URI: no route has it"
        );
    }

    #[test]
    fn target_splits_into_path_and_query() {
        let parsed = parse("GET /fragment?a=1&b=2 HTTP/1.1\r\nHost: x\r\n\r\n")
            .unwrap()
            .unwrap();
        assert_eq!(parsed.request.path(), "/fragment");
        assert_eq!(parsed.request.query(), Some("a=1&b=2"));
        let cases = [
            ("/f", "/f", None),
            ("/f?", "/f", Some("")),
            ("/f?a?b", "/f", Some("a?b")),
        ];
        for (target, path, query) in cases {
            assert_eq!(split_target(target), (path, query), "{target}");
        }
    }
}
