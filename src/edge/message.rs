//! HTTP/1.1 messages as a proxy sees them: heads parsed and written again line by line (a
//! pass-through answer is still the origin's, byte for byte, header order and case included),
//! and bodies walked by their framing, either copied verbatim or decoded.
//!
//! A head is accepted only when it can be read one way (RFC 9112 §11.2): lines end in CRLF,
//! the parse covers every byte up to the empty line, and the body's length is said once, by a
//! single `Content-Length` value or by `Transfer-Encoding: chunked` alone. Whatever else could
//! be framed differently by the next hop is refused, never passed on.

pub use crate::http::socket::Patience;
use std::io::{self, Read, Write};
use std::ops::Range;

/// Largest head read from a client or an upstream.
pub const HEAD_LIMIT: usize = 64 * 1024;
/// Longest chunk-size or trailer line of a chunked body.
const LINE_LIMIT: usize = 4096;

/// A connection with its read-ahead buffer.
pub struct Conn<S> {
    pub stream: S,
    buf: Vec<u8>,
    start: usize,
    end: usize,
}

/// A stream whose waits are bounded (a deadline passed is an `io::Error` of kind `TimedOut`).
pub trait Patient {
    /// How the waits from now on are bounded; each call starts a new deadline.
    fn set_patience(&mut self, patience: Patience);
}

impl Patient for crate::http::socket::Socket {
    fn set_patience(&mut self, patience: Patience) {
        crate::http::socket::Socket::set_patience(self, patience);
    }
}

/// A parsed head: the raw bytes and where its parts lie in them.
#[derive(Debug, Clone)]
pub struct Head {
    pub raw: Vec<u8>,
    /// Request: the method. Response: empty.
    pub method: String,
    /// Request: the target. Response: empty.
    pub target: String,
    /// Response: the status code. Request: 0.
    pub status: u16,
    /// `HTTP/1.x`'s x.
    pub minor_version: u8,
    /// Where each header lies in `raw`, in order.
    headers: Vec<HeaderAt>,
    /// End of the start line (with its CRLF) in `raw`.
    start_line_end: usize,
}

/// One header line of a head: its name and value, and where the line ends before its CRLF
/// (after any whitespace trailing the value, kept so that a head written back is the same).
#[derive(Debug, Clone)]
struct HeaderAt {
    name: Range<usize>,
    value: Range<usize>,
    line_end: usize,
}

/// How a head says its body is delimited, before the method or status has a say.
enum Declared {
    Nothing,
    Length(u64),
    Chunked,
}

/// How a message's body is delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// No body at all (a `HEAD` answer, `204`, `304`, `1xx`).
    Empty,
    Length(u64),
    Chunked,
    /// Until the connection closes (a response without length).
    Close,
}

/// A piece of a body as it is walked: framing bytes, content bytes, or the news that the
/// next read will wait for the peer (a moment to flush what was passed on).
pub enum Piece<'a> {
    Framing(&'a [u8]),
    Content(&'a [u8]),
    Waiting,
}

#[derive(Debug, thiserror::Error)]
pub enum MessageError {
    #[error("malformed head: {0}")]
    Malformed(&'static str),
    #[error("head larger than {HEAD_LIMIT} bytes")]
    TooLarge,
    #[error("{0}")]
    Io(#[from] io::Error),
    /// What the body's pieces were handed to failed.
    #[error("{0}")]
    Sink(io::Error),
}

type Visit<'v> = dyn FnMut(Piece) -> io::Result<()> + 'v;

fn give(visit: &mut Visit, piece: Piece) -> Result<(), MessageError> {
    visit(piece).map_err(MessageError::Sink)
}

impl<S: Read> Conn<S> {
    /// With a buffer of `capacity` bytes (it grows for a longer head).
    pub fn new(stream: S, capacity: usize) -> Conn<S> {
        Conn {
            stream,
            buf: vec![0; capacity],
            start: 0,
            end: 0,
        }
    }

    /// Whether bytes already read wait in the buffer (a pooled connection must have none).
    pub fn has_buffered(&self) -> bool {
        self.start < self.end
    }

    /// Reads one more piece into the buffer; 0 at end of stream.
    fn fill(&mut self) -> io::Result<usize> {
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        } else if self.end == self.buf.len() {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
            if self.end == self.buf.len() {
                self.buf.resize(self.buf.len() * 2, 0);
            }
        }
        let read = loop {
            match self.stream.read(&mut self.buf[self.end..]) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                other => break other?,
            }
        };
        self.end += read;
        Ok(read)
    }

    /// The next head, or `None` when the stream ended cleanly before its first byte.
    pub fn read_head(&mut self) -> Result<Option<Vec<u8>>, MessageError> {
        loop {
            if let Some(head) = self.take_head()? {
                return Ok(Some(head));
            }
            if self.fill()? == 0 {
                return self.ended_before_head();
            }
        }
    }

    /// A whole head from the buffer, when it holds one; the empty lines a peer may send before
    /// it (RFC 9112 §2.2: a client's extra CRLF after a body) are dropped.
    fn take_head(&mut self) -> Result<Option<Vec<u8>>, MessageError> {
        while self.buf[self.start..self.end].starts_with(b"\r\n") {
            self.start += 2;
        }
        let buffered = &self.buf[self.start..self.end];
        if let Some(end) = head_end(buffered) {
            let head = buffered[..end].to_vec();
            self.start += end;
            return Ok(Some(head));
        }
        match buffered.len() > HEAD_LIMIT {
            true => Err(MessageError::TooLarge),
            false => Ok(None),
        }
    }

    fn ended_before_head(&self) -> Result<Option<Vec<u8>>, MessageError> {
        match self.end - self.start {
            0 => Ok(None),
            _ => Err(MessageError::Malformed("connection closed inside a head")),
        }
    }

    /// Walks a body by its framing, handing each piece to `visit`.
    pub fn walk_body(&mut self, framing: Framing, visit: &mut Visit) -> Result<(), MessageError> {
        match framing {
            Framing::Empty => Ok(()),
            Framing::Length(length) => self.walk_exact(length, visit),
            Framing::Close => self.walk_to_end(visit),
            Framing::Chunked => self.walk_chunked(visit),
        }
    }

    /// Copies a body exactly as framed, flushing `out` whenever the next read will wait.
    pub fn copy_body(&mut self, framing: Framing, out: &mut dyn Write) -> Result<(), MessageError> {
        self.walk_body(framing, &mut |piece| match piece {
            Piece::Framing(bytes) | Piece::Content(bytes) => out.write_all(bytes),
            Piece::Waiting => out.flush(),
        })
    }

    /// Reads more, after telling `visit` when that will wait.
    fn fill_for(&mut self, visit: &mut Visit) -> Result<usize, MessageError> {
        if self.start == self.end {
            give(visit, Piece::Waiting)?;
        }
        Ok(self.fill()?)
    }

    fn walk_exact(&mut self, mut left: u64, visit: &mut Visit) -> Result<(), MessageError> {
        while left > 0 {
            if self.start == self.end && self.fill_for(visit)? == 0 {
                return Err(MessageError::Malformed("connection closed inside a body"));
            }
            let take = (self.end - self.start).min(usize::try_from(left).unwrap_or(usize::MAX));
            give(
                visit,
                Piece::Content(&self.buf[self.start..self.start + take]),
            )?;
            self.start += take;
            left -= take as u64;
        }
        Ok(())
    }

    fn walk_to_end(&mut self, visit: &mut Visit) -> Result<(), MessageError> {
        loop {
            if self.start == self.end && self.fill_for(visit)? == 0 {
                return Ok(());
            }
            give(visit, Piece::Content(&self.buf[self.start..self.end]))?;
            self.start = self.end;
        }
    }

    fn walk_chunked(&mut self, visit: &mut Visit) -> Result<(), MessageError> {
        loop {
            let line = self.read_line(visit)?;
            let size = chunk_size(&line)?;
            give(visit, Piece::Framing(&line))?;
            if size == 0 {
                return self.walk_trailers(visit);
            }
            self.walk_exact(size, visit)?;
            let end = self.read_line(visit)?;
            if end != b"\r\n" {
                return Err(MessageError::Malformed("chunk not followed by CRLF"));
            }
            give(visit, Piece::Framing(&end))?;
        }
    }

    fn walk_trailers(&mut self, visit: &mut Visit) -> Result<(), MessageError> {
        loop {
            let line = self.read_line(visit)?;
            if line != b"\r\n" && !is_field_line(&line) {
                return Err(MessageError::Malformed("bad trailer line"));
            }
            give(visit, Piece::Framing(&line))?;
            if line == b"\r\n" {
                return Ok(());
            }
        }
    }

    /// One line with its CRLF.
    fn read_line(&mut self, visit: &mut Visit) -> Result<Vec<u8>, MessageError> {
        loop {
            let buffered = &self.buf[self.start..self.end];
            if let Some(at) = memchr::memchr(b'\n', buffered) {
                let line = buffered[..=at].to_vec();
                self.start += at + 1;
                return match line.ends_with(b"\r\n") {
                    true => Ok(line),
                    false => Err(MessageError::Malformed("bare LF in a chunked body")),
                };
            }
            if buffered.len() > LINE_LIMIT {
                return Err(MessageError::Malformed("chunk line too long"));
            }
            if self.fill_for(visit)? == 0 {
                return Err(MessageError::Malformed(
                    "connection closed inside a chunked body",
                ));
            }
        }
    }
}

impl<S: Patient> Conn<S> {
    /// How the stream's waits from now on are bounded; each call starts a new deadline.
    pub fn set_patience(&mut self, patience: Patience) {
        self.stream.set_patience(patience);
    }
}

impl<S: Read + Patient> Conn<S> {
    /// A client's next head: its first byte within the stream's idle timeout, the whole head
    /// within its request timeout of that byte, however slowly the bytes come.
    pub fn read_client_head(&mut self) -> Result<Option<Vec<u8>>, MessageError> {
        let mut patience = None;
        loop {
            if let Some(head) = self.take_head()? {
                return Ok(Some(head));
            }
            let wanted = match self.has_buffered() {
                true => Patience::Whole,
                false => Patience::Stall,
            };
            if patience != Some(wanted) {
                self.stream.set_patience(wanted);
                patience = Some(wanted);
            }
            if self.fill()? == 0 {
                return self.ended_before_head();
            }
        }
    }
}

/// The end of a head's empty line. A bare LF ends a line here too, as it does for lenient
/// parsers: a head must end where any reader would end it, so that it can be refused whole.
fn head_end(bytes: &[u8]) -> Option<usize> {
    memchr::memchr_iter(b'\n', bytes).find_map(|at| match &bytes[at + 1..] {
        [b'\n', ..] => Some(at + 2),
        [b'\r', b'\n', ..] => Some(at + 3),
        _ => None,
    })
}

/// The size of a chunk-size line (`1a;ext=1\r\n`): hex digits only (no sign, prefix or
/// whitespace, which lenient readers skip or stop at), then extensions of RFC 9112 §7.1.1's
/// grammar without whitespace. What nginx and HAProxy refuse is refused.
fn chunk_size(line: &[u8]) -> Result<u64, MessageError> {
    let line = &line[..line.len() - 2];
    let digits = line.iter().take_while(|b| b.is_ascii_hexdigit()).count();
    let (size, extensions) = line.split_at(digits);
    std::str::from_utf8(size)
        .ok()
        .filter(|size| (1..=15).contains(&size.len()) && is_chunk_ext(extensions))
        .and_then(|size| u64::from_str_radix(size, 16).ok())
        .ok_or(MessageError::Malformed("bad chunk size"))
}

/// `*( ";" token [ "=" ( token / quoted-string ) ] )`, nothing else.
fn is_chunk_ext(mut rest: &[u8]) -> bool {
    while let [b';', after @ ..] = rest {
        let name = after.iter().take_while(|&&b| is_tchar(b)).count();
        if name == 0 {
            return false;
        }
        rest = &after[name..];
        if let [b'=', value @ ..] = rest {
            let Some(length) = token_or_quoted(value) else {
                return false;
            };
            rest = &value[length..];
        }
    }
    rest.is_empty()
}

/// The length of the token or quoted-string at the start of `bytes`.
fn token_or_quoted(bytes: &[u8]) -> Option<usize> {
    if bytes.first() != Some(&b'"') {
        let token = bytes.iter().take_while(|&&b| is_tchar(b)).count();
        return (token > 0).then_some(token);
    }
    let mut at = 1;
    loop {
        match bytes.get(at)? {
            b'"' => return Some(at + 1),
            b'\\' if bytes.get(at + 1).is_some_and(|&b| is_field_byte(b)) => at += 2,
            &b if is_field_byte(b) && b != b'\\' => at += 1,
            _ => return None,
        }
    }
}

/// A `tchar` of RFC 9110 §5.6.2.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// A byte a field value may hold: visible ASCII, space, tab, obs-text (no CR, LF, NUL or
/// other control).
fn is_field_byte(b: u8) -> bool {
    matches!(b, b'\t' | b' '..=b'~' | 0x80..=0xff)
}

/// A trailer line (with its CRLF): `name: value` as a header line would be.
fn is_field_line(line: &[u8]) -> bool {
    let line = &line[..line.len() - 2];
    let name = line.iter().take_while(|&&b| is_tchar(b)).count();
    name > 0 && line.get(name) == Some(&b':') && line[name + 1..].iter().all(|&b| is_field_byte(b))
}

impl Head {
    pub fn parse_request(raw: Vec<u8>) -> Result<Head, MessageError> {
        let start_line_end = start_line_end(&raw)?;
        let mut slots = vec![httparse::EMPTY_HEADER; line_count(&raw)];
        let mut request = httparse::Request::new(&mut slots);
        parsed_whole(request.parse(&raw), &raw, "request head")?;
        let (Some(method), Some(target), Some(minor_version)) =
            (request.method, request.path, request.version)
        else {
            return Err(MessageError::Malformed("request line"));
        };
        let headers = locate(&raw, request.headers)?;
        Ok(Head {
            method: method.to_string(),
            target: target.to_string(),
            status: 0,
            minor_version,
            headers,
            start_line_end,
            raw,
        })
    }

    pub fn parse_response(raw: Vec<u8>) -> Result<Head, MessageError> {
        let start_line_end = start_line_end(&raw)?;
        let mut slots = vec![httparse::EMPTY_HEADER; line_count(&raw)];
        let mut response = httparse::Response::new(&mut slots);
        parsed_whole(response.parse(&raw), &raw, "response head")?;
        let (Some(status), Some(minor_version)) = (response.code, response.version) else {
            return Err(MessageError::Malformed("status line"));
        };
        let headers = locate(&raw, response.headers)?;
        Ok(Head {
            method: String::new(),
            target: String::new(),
            status,
            minor_version,
            headers,
            start_line_end,
            raw,
        })
    }

    /// The headers, in order, with their names as sent.
    pub fn headers(&self) -> impl Iterator<Item = (&str, &[u8])> {
        self.headers
            .iter()
            .map(|at| (self.name(at), &self.raw[at.value.clone()]))
    }

    fn name(&self, at: &HeaderAt) -> &str {
        std::str::from_utf8(&self.raw[at.name.clone()]).unwrap_or_default()
    }

    /// The values of header `name` (any case), as they came.
    fn values<'h, 'n>(&'h self, name: &'n str) -> impl Iterator<Item = &'h [u8]> + use<'h, 'n> {
        self.headers()
            .filter(move |(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, value)| value)
    }

    /// The first value of header `name` (any case), as text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.values(name)
            .next()
            .and_then(|value| std::str::from_utf8(value).ok())
    }

    /// Whether a header `name` lists `token` (comma-separated, any case).
    pub fn has_token(&self, name: &str, token: &str) -> bool {
        self.values(name)
            .filter_map(|value| std::str::from_utf8(value).ok())
            .flat_map(|value| value.split(','))
            .any(|item| item.trim().eq_ignore_ascii_case(token))
    }

    /// Whether the connection that carried this message may carry another.
    /// `close` wins over `keep-alive` wherever each is said (nginx and HAProxy read it so).
    pub fn keeps_alive(&self) -> bool {
        !self.has_token("connection", "close")
            && (self.minor_version == 1 || self.has_token("connection", "keep-alive"))
    }

    /// Why the request cannot be forwarded as it is, when it cannot: a method of other bytes
    /// than capitals, `_` and `-`, or one a reverse proxy does not take (`CONNECT`, `TRACE`,
    /// HTTP/2's preface `PRI`); a target with a fragment (`#`) or a NUL in its path (`%00`,
    /// which a C origin may cut the path at), or neither origin-form nor
    /// `http(s)` absolute-form without user info (`*` for `OPTIONS` only);
    /// not exactly one valid `Host` in HTTP/1.1, or more than one in HTTP/1.0; an
    /// absolute-form target whose authority is not the `Host` (the edge gates by `Host`, an
    /// origin routes by the authority, RFC 9112 §3.2.2). nginx or HAProxy refuse the same: a
    /// next hop could route such a request elsewhere than the edge did.
    pub fn request_problem(&self) -> Option<&'static str> {
        let method_ok = self
            .method
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b == b'_' || b == b'-');
        if !method_ok || ["CONNECT", "TRACE", "PRI"].contains(&self.method.as_str()) {
            return Some("method");
        }
        let path = self.target.split('?').next().unwrap_or_default();
        if self.target.contains('#') || path.contains("%00") {
            return Some("request target");
        }
        let authority = match self.target.as_str() {
            "*" if self.method == "OPTIONS" => None,
            target if target.starts_with('/') => None,
            target => Some(absolute_form_authority(target).ok_or("request target")),
        };
        let authority = match authority {
            Some(Err(why)) => return Some(why),
            Some(Ok(authority)) => Some(authority),
            None => None,
        };
        let mut hosts = self.values("host");
        match (hosts.next(), hosts.next(), authority) {
            (None, _, _) if self.minor_version == 0 => None,
            (Some(host), None, None) if is_host(host) => None,
            (Some(host), None, Some(authority)) if host.eq_ignore_ascii_case(authority) => None,
            _ => Some("host"),
        }
    }

    /// A request body's framing; `None` for a smuggling-prone or unreadable combination.
    pub fn request_framing(&self) -> Option<Framing> {
        match self.declared()? {
            Declared::Nothing | Declared::Length(0) => Some(Framing::Empty),
            Declared::Length(length) => Some(Framing::Length(length)),
            Declared::Chunked => Some(Framing::Chunked),
        }
    }

    /// A response body's framing, given the request's method; `None` when unreadable, even
    /// for an answer without a body (its sender frames messages in a way of its own).
    pub fn response_framing(&self, request_method: &str) -> Option<Framing> {
        let declared = self.declared()?;
        let bodiless = request_method == "HEAD"
            || (100..200).contains(&self.status)
            || self.status == 204
            || self.status == 304;
        Some(match (bodiless, declared) {
            (true, _) => Framing::Empty,
            (false, Declared::Nothing) => Framing::Close,
            (false, Declared::Length(length)) => Framing::Length(length),
            (false, Declared::Chunked) => Framing::Chunked,
        })
    }

    /// How the head delimits its body; `None` when two readers could disagree (RFC 9112 §6.1,
    /// §6.3): a `Transfer-Encoding` other than one `chunked` (any other coding, a list, a value
    /// that is not text), one beside a `Content-Length` or in an HTTP/1.0 message, a
    /// `Content-Length` repeated or not a number, or a tab in either header. nginx refuses the
    /// same.
    fn declared(&self) -> Option<Declared> {
        if self.framing_has_tab() {
            return None;
        }
        let mut codings = self.values("transfer-encoding");
        let chunked = match (codings.next(), codings.next()) {
            (None, _) => false,
            (Some(value), None) if self.minor_version == 1 => is_chunked(value).then_some(true)?,
            _ => return None,
        };
        match (chunked, self.content_length()) {
            (false, None) => Some(Declared::Nothing),
            (false, Some(Ok(length))) => Some(Declared::Length(length)),
            (true, None) => Some(Declared::Chunked),
            (_, Some(_)) => None,
        }
    }

    /// `Content-Length`, when present: one header, its value a number. A repeated one is an
    /// error even with the same value, as nginx has it (HAProxy merges equal values).
    fn content_length(&self) -> Option<Result<u64, ()>> {
        let mut values = self.values("content-length");
        let value = values.next()?;
        let parsed = std::str::from_utf8(value)
            .ok()
            .filter(|text| !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|text| text.parse::<u64>().ok())
            .filter(|_| values.next().is_none());
        Some(parsed.ok_or(()))
    }

    /// Whether a `Content-Length` or `Transfer-Encoding` line holds a tab: nginx reads a tab
    /// around the value as part of it (`\tchunked` is no coding it knows), HAProxy and
    /// httparse as whitespace.
    fn framing_has_tab(&self) -> bool {
        self.headers.iter().any(|at| {
            let name = self.name(at);
            (name.eq_ignore_ascii_case("content-length")
                || name.eq_ignore_ascii_case("transfer-encoding"))
                && self.raw[at.name.end..at.line_end].contains(&b'\t')
        })
    }

    /// The head again, with the headers for which `keep` is false left out and `extra` lines
    /// (`Name: value`) added at the end. Everything kept is byte for byte as it arrived.
    pub fn rewritten(&self, keep: impl Fn(&str) -> bool, extra: &[String]) -> Vec<u8> {
        self.rewritten_as(&self.raw[..self.start_line_end], keep, extra)
    }

    /// [`Head::rewritten`] under another start line (with its CRLF).
    pub fn rewritten_as(
        &self,
        start_line: &[u8],
        keep: impl Fn(&str) -> bool,
        extra: &[String],
    ) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.raw.len() + 128);
        out.extend_from_slice(start_line);
        for at in self.headers.iter().filter(|at| keep(self.name(at))) {
            out.extend_from_slice(&self.raw[at.name.start..at.line_end]);
            out.extend_from_slice(b"\r\n");
        }
        for line in extra {
            out.extend_from_slice(line.as_bytes());
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(b"\r\n");
        out
    }
}

/// The authority of `http(s)://authority[/path][?query]`, when it is a host (no user info,
/// not empty).
fn absolute_form_authority(target: &str) -> Option<&[u8]> {
    let (scheme, rest) = target.split_once("://")?;
    let authority = &rest[..rest.find(['/', '?']).unwrap_or(rest.len())];
    let http = scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https");
    (http && is_host(authority.as_bytes())).then_some(authority.as_bytes())
}

/// `uri-host [ ":" port ]`: not empty, the host's characters, a port of digits.
fn is_host(value: &[u8]) -> bool {
    let port_at = match value.first() {
        Some(b'[') => memchr::memchr(b']', value).map(|end| end + 1),
        _ => memchr::memchr(b':', value),
    };
    let port = port_at.map_or(&[][..], |at| &value[at..]);
    let port_ok = match port {
        [] => true,
        [b':', digits @ ..] => digits.iter().all(u8::is_ascii_digit),
        _ => false,
    };
    !value.is_empty() && port_ok && crate::http::is_host_value(value)
}

/// Whether a `Transfer-Encoding` value is `chunked` and nothing else.
fn is_chunked(value: &[u8]) -> bool {
    value
        .trim_ascii_start()
        .trim_ascii_end()
        .eq_ignore_ascii_case(b"chunked")
}

/// The end of the start line, its CRLF included. A head starts with it: the empty lines a
/// peer may send first are left out when the head is read, and are not part of it.
fn start_line_end(raw: &[u8]) -> Result<usize, MessageError> {
    memchr::memchr(b'\n', raw)
        .map(|at| at + 1)
        .filter(|&end| end > 2)
        .ok_or(MessageError::Malformed("no start line"))
}

/// Lines in a head: room enough for its headers, however many (nginx has no count either,
/// only the size of the head).
fn line_count(raw: &[u8]) -> usize {
    memchr::memchr_iter(b'\n', raw).count()
}

/// Accepts a parse that took every byte of `raw`, each line ending in CRLF. httparse also
/// takes a bare LF as a line end, and stops at the first empty line: what a lenient next hop
/// could read as a second message is refused here.
fn parsed_whole(
    parsed: httparse::Result<usize>,
    raw: &[u8],
    what: &'static str,
) -> Result<(), MessageError> {
    if memchr::memchr_iter(b'\n', raw).any(|at| at == 0 || raw[at - 1] != b'\r') {
        return Err(MessageError::Malformed("bare LF in a head"));
    }
    match parsed {
        Ok(httparse::Status::Complete(length)) if length == raw.len() => Ok(()),
        _ => Err(MessageError::Malformed(what)),
    }
}

/// Where httparse's header slices lie in `raw`.
fn locate(raw: &[u8], headers: &[httparse::Header]) -> Result<Vec<HeaderAt>, MessageError> {
    let base = raw.as_ptr() as usize;
    let offset = |bytes: &[u8]| {
        let start = (bytes.as_ptr() as usize).checked_sub(base)?;
        Some(start..start + bytes.len()).filter(|range| range.end <= raw.len())
    };
    let at = |header: &httparse::Header| {
        let value = offset(header.value)?;
        let line_end = value.end + memchr::memchr(b'\r', &raw[value.end..])?;
        Some(HeaderAt {
            name: offset(header.name.as_bytes())?,
            value,
            line_end,
        })
    };
    headers
        .iter()
        .map(|header| at(header).ok_or(MessageError::Malformed("header")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conn(bytes: &[u8]) -> Conn<&[u8]> {
        Conn::new(bytes, 16)
    }

    #[test]
    fn chunked_body_is_copied_verbatim_and_decoded() {
        let wire = b"3;x=y\r\nabc\r\n2\r\nde\r\n0\r\nTrailer: 1\r\n\r\nNEXT";
        let mut copy = Vec::new();
        conn(wire).copy_body(Framing::Chunked, &mut copy).unwrap();
        assert_eq!(copy, &wire[..wire.len() - 4]);
        let mut content = Vec::new();
        conn(wire)
            .walk_body(Framing::Chunked, &mut |piece| {
                if let Piece::Content(bytes) = piece {
                    content.extend_from_slice(bytes);
                }
                Ok(())
            })
            .unwrap();
        assert_eq!(content, b"abcde");
    }

    #[test]
    fn a_client_head_dripping_in_is_cut_off_at_its_deadline() {
        use crate::http::socket::Socket;
        use crate::http::{Timeouts, Watchdog};
        use std::time::Duration;
        let listener = crate::http::exclusive_listener("127.0.0.1:0".parse().unwrap()).unwrap();
        let addr = listener.local_addr().unwrap();
        let drip = std::thread::spawn(move || {
            let mut client = std::net::TcpStream::connect(addr).unwrap();
            for byte in b"GET / HTTP/1.1\r\nHost: x\r\n".iter().cycle().take(200) {
                if client.write_all(&[*byte]).is_err() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        });
        let timeouts = Timeouts {
            idle: Duration::from_secs(5),
            request: Duration::from_millis(300),
        };
        let watchdog = Watchdog::start(timeouts);
        let read = may::go!(move || {
            let socket = Socket::accept(&listener, &watchdog, timeouts).unwrap();
            let mut server = Conn::new(socket, 1024);
            server.read_client_head().map_err(|e| e.to_string())
        })
        .join()
        .unwrap();
        assert_eq!(read, Err("timed out".to_string()));
        drip.join().unwrap();
    }

    #[test]
    fn bad_chunk_sizes_are_refused() {
        for wire in [
            &b"zz\r\n"[..],
            b"\r\n",
            b"ffffffffffffffffff\r\n",
            b"3\nabc",
            // What lenient readers skip or stop at, and nginx and HAProxy refuse.
            b"+3\r\nabc\r\n0\r\n\r\n",
            b"0x3\r\nabc\r\n0\r\n\r\n",
            b"3 \r\nabc\r\n0\r\n\r\n",
            b" 3\r\nabc\r\n0\r\n\r\n",
            b"3 ;x\r\nabc\r\n0\r\n\r\n",
            b"3;\r\nabc\r\n0\r\n\r\n",
            b"3;x=\x00\r\nabc\r\n0\r\n\r\n",
            b"3;x\r\r\nabc\r\n0\r\n\r\n",
            b"3;x=\"a\r\nabc\r\n0\r\n\r\n",
            b"0000000000000003\r\nabc\r\n0\r\n\r\n",
            // Trailers are header lines.
            b"3\r\nabc\r\n0\r\nbad trailer: x\r\n\r\n",
            b"3\r\nabc\r\n0\r\nX-T: a\rb\r\n\r\n",
            b"3\r\nabc\r\n0\r\n: x\r\n\r\n",
        ] {
            let result = conn(wire).copy_body(Framing::Chunked, &mut Vec::new());
            assert!(
                matches!(result, Err(MessageError::Malformed(_))),
                "{wire:?}"
            );
        }
    }

    #[test]
    fn heads_keep_their_bytes_and_rewrite_only_what_is_asked() {
        let raw = b"HTTP/1.1 200 OK\r\nX-One: 1\r\nETag: \"a\"\r\nset-cookie: b\r\n\r\n".to_vec();
        let head = Head::parse_response(raw).unwrap();
        assert_eq!(head.header("etag"), Some("\"a\""));
        let rewritten = head.rewritten(|name| !name.eq_ignore_ascii_case("etag"), &["A: b".into()]);
        assert_eq!(
            rewritten,
            b"HTTP/1.1 200 OK\r\nX-One: 1\r\nset-cookie: b\r\nA: b\r\n\r\n"
        );
    }

    #[test]
    fn empty_lines_before_a_head_are_not_part_of_it() {
        let mut wire = conn(b"\r\n\r\nGET /a HTTP/1.1\r\nHost: x\r\n\r\n");
        let head = Head::parse_request(wire.read_head().unwrap().unwrap()).unwrap();
        assert_eq!(
            head.rewritten(|_| true, &[]),
            b"GET /a HTTP/1.1\r\nHost: x\r\n\r\n"
        );
    }

    #[test]
    fn a_head_written_back_whole_is_the_head_that_came() {
        let raw = b"HTTP/1.1 200 OK\r\nX-Trailing:  a b \t\r\nX-Empty:\r\nx-case: 1\r\n\r\n";
        let head = Head::parse_response(raw.to_vec()).unwrap();
        assert_eq!(head.rewritten(|_| true, &[]), raw);
        assert_eq!(head.header("x-trailing"), Some("a b"));
        assert_eq!(
            head.rewritten_as(b"HTTP/1.1 200 OK\r\n", |name| name == "x-case", &[]),
            b"HTTP/1.1 200 OK\r\nx-case: 1\r\n\r\n"
        );
    }

    #[test]
    fn a_head_ends_at_its_first_empty_line_even_one_with_a_bare_lf() {
        for (wire, head) in [
            (
                &b"GET /a HTTP/1.1\r\nHost: x\r\n\nGET /b HTTP/1.1\r\n\r\n"[..],
                &b"GET /a HTTP/1.1\r\nHost: x\r\n\n"[..],
            ),
            (
                b"GET /a HTTP/1.1\nHost: x\n\nGET /b",
                b"GET /a HTTP/1.1\nHost: x\n\n",
            ),
            (b"GET /a HTTP/1.1\r\n\r\nrest", b"GET /a HTTP/1.1\r\n\r\n"),
        ] {
            assert_eq!(conn(wire).read_head().unwrap().unwrap(), head, "{wire:?}");
        }
    }

    #[test]
    fn heads_that_could_be_read_two_ways_are_refused() {
        for raw in [
            &b"GET /a HTTP/1.1\r\nHost: x\r\n\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n"[..],
            b"GET /a HTTP/1.1\r\nHost: x\r\n\n",
            b"GET /a HTTP/1.1\nHost: x\r\n\r\n",
            b"GET /a HTTP/1.1\r\nHost: x\n\r\n",
            b"\nGET /a HTTP/1.1\r\nHost: x\r\n\r\n",
            b"\r\nGET /a HTTP/1.1\r\nHost: x\r\n\r\n",
            b"GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\n\r\n",
            b"GET /a HTTP/1.1\r\nX-A: a\rX-B: b\r\n\r\n",
            b"GET /a HTTP/1.1\r\nX-A: a\r\n b\r\n\r\n",
            b"GET /a HTTP/1.1\r\nTransfer-Encoding : chunked\r\n\r\n",
        ] {
            assert!(
                Head::parse_request(raw.to_vec()).is_err(),
                "{}",
                raw.escape_ascii()
            );
        }
        for raw in [
            &b"HTTP/1.1 200 OK\nContent-Length: 1\n\n"[..],
            b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\n",
            b"HTTP/1.1 200 OK\r\n\r\nHTTP/1.1 200 OK\r\n\r\n",
        ] {
            assert!(
                Head::parse_response(raw.to_vec()).is_err(),
                "{}",
                raw.escape_ascii()
            );
        }
    }

    #[test]
    fn a_head_may_carry_as_many_headers_as_its_size_allows() {
        let mut raw = b"HTTP/1.1 200 OK\r\n".to_vec();
        for i in 0..5000 {
            raw.extend_from_slice(format!("Set-Cookie: c{i}=1\r\n").as_bytes());
        }
        raw.extend_from_slice(b"Content-Length: 2\r\n\r\n");
        let head = Head::parse_response(raw.clone()).unwrap();
        assert_eq!(head.headers().count(), 5001);
        assert_eq!(head.response_framing("GET"), Some(Framing::Length(2)));
        assert_eq!(head.rewritten(|_| true, &[]), raw);
    }

    #[test]
    fn chunk_extensions_and_trailers_of_the_grammar_pass_verbatim() {
        for wire in [
            &b"3;a=b\r\nabc\r\n0\r\n\r\n"[..],
            b"03;a;b=\"x;\\\"y\"\r\nabc\r\n0;z\r\nX-Trailer: 1\r\n\r\n",
        ] {
            let mut copied = Vec::new();
            conn(wire).copy_body(Framing::Chunked, &mut copied).unwrap();
            assert_eq!(copied, wire, "{}", wire.escape_ascii());
        }
    }

    #[test]
    fn requests_a_next_hop_could_route_otherwise_are_refused() {
        let problem = |head: &[u8]| Head::parse_request(head.into()).unwrap().request_problem();
        for forwarded in [
            &b"GET /a?b=%00 HTTP/1.1\r\nHost: news.example\r\n\r\n"[..],
            b"GET /a HTTP/1.1\r\nHost: news.example:8080\r\n\r\n",
            b"GET /a HTTP/1.1\r\nHost: [::1]:80\r\n\r\n",
            b"GET /a HTTP/1.0\r\n\r\n",
            b"OPTIONS * HTTP/1.1\r\nHost: news.example\r\n\r\n",
            b"GET HTTP://News.example/a HTTP/1.1\r\nHost: news.example\r\n\r\n",
        ] {
            assert_eq!(problem(forwarded), None, "{}", forwarded.escape_ascii());
        }
        for (refused, why) in [
            (
                &b"CONNECT news.example:443 HTTP/1.1\r\nHost: news.example\r\n\r\n"[..],
                "method",
            ),
            (b"TRACE / HTTP/1.1\r\nHost: news.example\r\n\r\n", "method"),
            (b"PRI * HTTP/1.1\r\nHost: news.example\r\n\r\n", "method"),
            (b"get / HTTP/1.1\r\nHost: news.example\r\n\r\n", "method"),
            (
                b"GET /a#b HTTP/1.1\r\nHost: news.example\r\n\r\n",
                "request target",
            ),
            (
                b"GET /a%00b HTTP/1.1\r\nHost: news.example\r\n\r\n",
                "request target",
            ),
            (
                b"GET * HTTP/1.1\r\nHost: news.example\r\n\r\n",
                "request target",
            ),
            (
                b"GET news.example:80 HTTP/1.1\r\nHost: news.example\r\n\r\n",
                "request target",
            ),
            (
                b"GET ?x HTTP/1.1\r\nHost: news.example\r\n\r\n",
                "request target",
            ),
            (
                b"GET \\a HTTP/1.1\r\nHost: news.example\r\n\r\n",
                "request target",
            ),
            (
                b"GET ftp://news.example/a HTTP/1.1\r\nHost: news.example\r\n\r\n",
                "request target",
            ),
            (
                b"GET http://u@news.example/a HTTP/1.1\r\nHost: news.example\r\n\r\n",
                "request target",
            ),
            (
                b"GET http://other.example/a HTTP/1.1\r\nHost: news.example\r\n\r\n",
                "host",
            ),
            (b"GET /a HTTP/1.1\r\n\r\n", "host"),
            (
                b"GET /a HTTP/1.1\r\nHost: news.example\r\nHost: news.example\r\n\r\n",
                "host",
            ),
            (
                b"GET /a HTTP/1.0\r\nHost: a.example\r\nHost: b.example\r\n\r\n",
                "host",
            ),
            (b"GET /a HTTP/1.1\r\nHost: \r\n\r\n", "host"),
            (b"GET /a HTTP/1.1\r\nHost: news.example x\r\n\r\n", "host"),
            (b"GET /a HTTP/1.1\r\nHost: news.example:abc\r\n\r\n", "host"),
        ] {
            assert_eq!(problem(refused), Some(why), "{}", refused.escape_ascii());
        }
    }

    #[test]
    fn close_wins_over_keep_alive() {
        let keeps = |head: &[u8]| Head::parse_request(head.into()).unwrap().keeps_alive();
        assert!(keeps(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n"));
        assert!(keeps(b"GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n"));
        assert!(!keeps(b"GET / HTTP/1.0\r\n\r\n"));
        assert!(!keeps(b"GET / HTTP/1.1\r\nConnection: x, close\r\n\r\n"));
        assert!(!keeps(
            b"GET / HTTP/1.0\r\nConnection: keep-alive\r\nConnection: close\r\n\r\n"
        ));
    }

    #[test]
    fn request_framing_refuses_smuggling_shapes() {
        let framing = |head: &[u8]| Head::parse_request(head.into()).unwrap().request_framing();
        assert_eq!(framing(b"GET / HTTP/1.1\r\n\r\n"), Some(Framing::Empty));
        assert_eq!(
            framing(b"POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\n"),
            Some(Framing::Length(5))
        );
        for chunked in [
            &b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"[..],
            b"POST / HTTP/1.1\r\nTransfer-Encoding:  Chunked \r\n\r\n",
        ] {
            assert_eq!(framing(chunked), Some(Framing::Chunked));
        }
        for refused in [
            &b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n"[..],
            b"POST / HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\xff\r\n\r\n",
            b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\xff\r\n\r\n",
            b"POST / HTTP/1.1\r\nTransfer-Encoding: \xffchunked\r\n\r\n",
            b"POST / HTTP/1.1\r\nTransfer-Encoding: \xff\r\nTransfer-Encoding: chunked\r\n\r\n",
            b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
            b"POST / HTTP/1.1\r\nTransfer-Encoding: identity, chunked\r\n\r\n",
            b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked, gzip\r\n\r\n",
            b"POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n",
            b"POST / HTTP/1.1\r\nTransfer-Encoding: xchunked\r\n\r\n",
            b"POST / HTTP/1.1\r\nTransfer-Encoding:\r\n\r\n",
            b"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n",
            b"POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
            b"POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n",
            b"POST / HTTP/1.1\r\nContent-Length:\t5\r\n\r\n",
            b"POST / HTTP/1.1\r\nTransfer-Encoding:\tchunked\r\n\r\n",
            b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\t\r\n\r\n",
            b"POST / HTTP/1.1\r\nContent-Length: 5\t\r\n\r\n",
            b"POST / HTTP/1.1\r\nContent-Length: 5, 5\r\n\r\n",
            b"POST / HTTP/1.1\r\nContent-Length: +5\r\n\r\n",
            b"POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
            b"POST / HTTP/1.1\r\nContent-Length: 5\xff\r\n\r\n",
        ] {
            assert_eq!(framing(refused), None, "{}", refused.escape_ascii());
        }
    }

    #[test]
    fn response_framing_refuses_what_the_next_answer_could_hide_in() {
        let framing = |head: &[u8], method| {
            Head::parse_response(head.into())
                .unwrap()
                .response_framing(method)
        };
        for (head, method, expected) in [
            (&b"HTTP/1.1 200 OK\r\n\r\n"[..], "GET", Framing::Close),
            (
                b"HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\n",
                "GET",
                Framing::Length(3),
            ),
            (
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
                "GET",
                Framing::Chunked,
            ),
            (
                b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n",
                "HEAD",
                Framing::Empty,
            ),
            (
                b"HTTP/1.1 204 No Content\r\nContent-Length: 3\r\n\r\n",
                "GET",
                Framing::Empty,
            ),
            (b"HTTP/1.1 304 Not Modified\r\n\r\n", "GET", Framing::Empty),
        ] {
            assert_eq!(
                framing(head, method),
                Some(expected),
                "{}",
                head.escape_ascii()
            );
        }
        for refused in [
            &b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"[..],
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\xff\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
            b"HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n",
            b"HTTP/1.1 204 No Content\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
        ] {
            assert_eq!(framing(refused, "GET"), None, "{}", refused.escape_ascii());
        }
    }
}
