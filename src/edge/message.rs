//! HTTP/1.1 messages as a proxy sees them: heads kept as the bytes that arrived (so that a
//! pass-through answer is the origin's, byte for byte, header order and case included), and
//! bodies walked by their framing, either copied verbatim or decoded.

pub use crate::http::socket::Patience;
use std::io::{self, Read, Write};
use std::ops::Range;

/// Largest head read from a client or an upstream.
pub const HEAD_LIMIT: usize = 64 * 1024;
/// Longest chunk-size or trailer line of a chunked body.
const LINE_LIMIT: usize = 4096;
/// Headers a head may carry.
const MAX_HEADERS: usize = 128;

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
    /// Name and value ranges in `raw`, in order.
    headers: Vec<(Range<usize>, Range<usize>)>,
    /// End of the start line (with its CRLF) in `raw`.
    start_line_end: usize,
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

    /// A whole head from the buffer, when it holds one.
    fn take_head(&mut self) -> Result<Option<Vec<u8>>, MessageError> {
        let buffered = &self.buf[self.start..self.end];
        if let Some(at) = memchr::memmem::find(buffered, b"\r\n\r\n") {
            let head = buffered[..at + 4].to_vec();
            self.start += at + 4;
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

/// The size of a chunk-size line (`1a;ext=1\r\n`).
fn chunk_size(line: &[u8]) -> Result<u64, MessageError> {
    let digits = line[..line.len() - 2]
        .split(|&b| b == b';')
        .next()
        .unwrap_or_default();
    let digits = std::str::from_utf8(digits)
        .ok()
        .map(|text| text.trim_matches([' ', '\t']))
        .filter(|text| !text.is_empty() && text.len() <= 15);
    digits
        .and_then(|text| u64::from_str_radix(text, 16).ok())
        .ok_or(MessageError::Malformed("bad chunk size"))
}

impl Head {
    pub fn parse_request(raw: Vec<u8>) -> Result<Head, MessageError> {
        let raw = without_leading_empty_lines(raw);
        let mut slots = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut request = httparse::Request::new(&mut slots);
        let start_line_end = start_line_end(&raw)?;
        match request.parse(&raw) {
            Ok(httparse::Status::Complete(_)) => {}
            _ => return Err(MessageError::Malformed("request head")),
        }
        let (Some(method), Some(target), Some(minor_version)) =
            (request.method, request.path, request.version)
        else {
            return Err(MessageError::Malformed("request line"));
        };
        let headers = ranges(&raw, request.headers);
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
        let raw = without_leading_empty_lines(raw);
        let mut slots = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut response = httparse::Response::new(&mut slots);
        let start_line_end = start_line_end(&raw)?;
        match response.parse(&raw) {
            Ok(httparse::Status::Complete(_)) => {}
            _ => return Err(MessageError::Malformed("response head")),
        }
        let (Some(status), Some(minor_version)) = (response.code, response.version) else {
            return Err(MessageError::Malformed("status line"));
        };
        let headers = ranges(&raw, response.headers);
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
        self.headers.iter().map(|(name, value)| {
            let name = std::str::from_utf8(&self.raw[name.clone()]).unwrap_or_default();
            (name, &self.raw[value.clone()])
        })
    }

    /// The first value of header `name` (any case), as text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .and_then(|(_, value)| std::str::from_utf8(value).ok())
    }

    /// Whether a header `name` lists `token` (comma-separated, any case).
    pub fn has_token(&self, name: &str, token: &str) -> bool {
        self.headers()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .filter_map(|(_, value)| std::str::from_utf8(value).ok())
            .flat_map(|value| value.split(','))
            .any(|item| item.trim().eq_ignore_ascii_case(token))
    }

    /// Whether the connection that carried this message may carry another.
    pub fn keeps_alive(&self) -> bool {
        match self.minor_version {
            0 => self.has_token("connection", "keep-alive"),
            _ => !self.has_token("connection", "close"),
        }
    }

    /// A request body's framing; `None` for a smuggling-prone or unreadable combination: a
    /// transfer coding other than `chunked` alone, or one with a `Content-Length`.
    pub fn request_framing(&self) -> Option<Framing> {
        if self.header("transfer-encoding").is_some() {
            let chunked_only = self
                .header("transfer-encoding")
                .is_some_and(|value| value.trim().eq_ignore_ascii_case("chunked"))
                && self
                    .headers()
                    .filter(|(n, _)| n.eq_ignore_ascii_case("transfer-encoding"))
                    .count()
                    == 1
                && self.header("content-length").is_none();
            return chunked_only.then_some(Framing::Chunked);
        }
        match self.content_length() {
            None | Some(Ok(0)) => Some(Framing::Empty),
            Some(Ok(length)) => Some(Framing::Length(length)),
            Some(Err(())) => None,
        }
    }

    /// A response body's framing, given the request's method; `None` when unreadable.
    pub fn response_framing(&self, request_method: &str) -> Option<Framing> {
        let bodiless = request_method == "HEAD"
            || (100..200).contains(&self.status)
            || self.status == 204
            || self.status == 304;
        if bodiless {
            return Some(Framing::Empty);
        }
        if self.header("transfer-encoding").is_some() {
            return match self.has_token("transfer-encoding", "chunked") {
                true => Some(Framing::Chunked),
                false => Some(Framing::Close),
            };
        }
        match self.content_length() {
            None => Some(Framing::Close),
            Some(Ok(length)) => Some(Framing::Length(length)),
            Some(Err(())) => None,
        }
    }

    /// `Content-Length`, when present: every value must be the same number.
    fn content_length(&self) -> Option<Result<u64, ()>> {
        let mut found: Option<Result<u64, ()>> = None;
        for (name, value) in self.headers() {
            if !name.eq_ignore_ascii_case("content-length") {
                continue;
            }
            let parsed = std::str::from_utf8(value)
                .ok()
                .filter(|text| !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|text| text.parse::<u64>().ok())
                .ok_or(());
            found = match (found, parsed) {
                (None, parsed) => Some(parsed),
                (Some(Ok(a)), Ok(b)) if a == b => Some(Ok(a)),
                _ => Some(Err(())),
            };
        }
        found
    }

    /// The head again, with the headers for which `keep` is false left out and `extra` lines
    /// (`Name: value`) added at the end. Everything kept is byte for byte as it arrived.
    pub fn rewritten(&self, keep: impl Fn(&str) -> bool, extra: &[String]) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.raw.len() + 128);
        out.extend_from_slice(&self.raw[..self.start_line_end]);
        for (name, value) in &self.headers {
            let name_text = std::str::from_utf8(&self.raw[name.clone()]).unwrap_or_default();
            if keep(name_text) {
                out.extend_from_slice(&self.raw[name.start..value.end]);
                out.extend_from_slice(b"\r\n");
            }
        }
        for line in extra {
            out.extend_from_slice(line.as_bytes());
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(b"\r\n");
        out
    }
}

/// The head without the empty lines a peer may send before it (RFC 9112 §2.2: a client's extra
/// CRLF after a body), which httparse skips: a head written back starts with its start line.
fn without_leading_empty_lines(mut raw: Vec<u8>) -> Vec<u8> {
    let empty = raw
        .iter()
        .take_while(|&&b| b == b'\r' || b == b'\n')
        .count();
    raw.drain(..empty);
    raw
}

/// The end of the start line, its line break included (httparse also takes a bare LF).
fn start_line_end(raw: &[u8]) -> Result<usize, MessageError> {
    memchr::memchr(b'\n', raw)
        .map(|at| at + 1)
        .ok_or(MessageError::Malformed("no start line"))
}

/// Where httparse's header slices lie in `raw`.
fn ranges(raw: &[u8], headers: &[httparse::Header]) -> Vec<(Range<usize>, Range<usize>)> {
    let base = raw.as_ptr() as usize;
    let offset = |bytes: &[u8]| {
        let start = bytes.as_ptr() as usize - base;
        start..start + bytes.len()
    };
    headers
        .iter()
        .filter(|header| !header.name.is_empty())
        .map(|header| (offset(header.name.as_bytes()), offset(header.value)))
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
        let listener = may::net::TcpListener::bind("127.0.0.1:0").unwrap();
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
            let (stream, peer) = listener.accept().unwrap();
            let watch = watchdog.watch(&stream, peer.ip(), 1).unwrap();
            let mut server = Conn::new(Socket::new(stream, watch), 1024);
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
        let head =
            Head::parse_request(b"\r\n\r\nGET /a HTTP/1.1\r\nHost: x\r\n\r\n".to_vec()).unwrap();
        assert_eq!(
            head.rewritten(|_| true, &[]),
            b"GET /a HTTP/1.1\r\nHost: x\r\n\r\n"
        );
    }

    #[test]
    fn request_framing_refuses_smuggling_shapes() {
        let framing = |head: &str| Head::parse_request(head.into()).unwrap().request_framing();
        assert_eq!(framing("GET / HTTP/1.1\r\n\r\n"), Some(Framing::Empty));
        assert_eq!(
            framing("POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\n"),
            Some(Framing::Length(5))
        );
        assert_eq!(
            framing("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"),
            Some(Framing::Chunked)
        );
        for refused in [
            "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n",
            "POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
            "POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
            "POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n",
        ] {
            assert_eq!(framing(refused), None, "{refused}");
        }
    }
}
