//! HTTP/1.1 plumbing: the only module that knows sockets, `may`'s io and the wire format.
//!
//! Why our own connection loop and not may_minihttp's: may_minihttp 0.1.11 drops requests with
//! more than 16 headers, panics on a malformed `Content-Length`, ignores `Transfer-Encoding`
//! (a smuggling opening), never times out a half-sent request, buffers header bytes without
//! bound and ignores `Connection: close`. None of that can be fixed from outside its
//! `each_connection_loop`, so this module keeps its shape (one coroutine per connection on
//! `may`, `httparse` for the head, responses batched per read) and adds the limits.
//!
//! Handlers see only [`Request`] and [`Response`]: plain values, no socket, no `may` type.

mod client_address;
mod error;
mod host;
pub mod media_type;
pub(crate) mod parse;
mod server;
pub(crate) mod socket;
mod watchdog;

pub use client_address::ClientAddress;
pub use error::{
    error_json, error_response, method_not_allowed, require_get_or_head, METHOD_NOT_ALLOWED,
};
pub use host::{host_without_port, is_host_value, normalize_host};
pub use may::net::TcpListener as Listener;
pub use parse::HttpLimits;
pub use server::{configure_runtime, exclusive_listener, serve, start, Server, ServerOptions};
pub(crate) use watchdog::{Timeouts, Watchdog};

/// Largest request body read, in bytes (the contract's limit of the management API); a larger
/// declared body is not read ([`Body::TooLarge`]).
pub const BODY_LIMIT: usize = 262_144;

use std::borrow::Cow;
use std::net::SocketAddr;
use std::ops::Range;

/// The request as handlers see it: the texts of its head in one string (one allocation for
/// the whole head, where a string per part cost a handful per request), header names
/// lowercase.
#[derive(Debug, Clone)]
pub struct Request {
    text: String,
    method: Range<usize>,
    path: Range<usize>,
    query: Option<Range<usize>>,
    headers: Vec<(Range<usize>, Range<usize>)>,
    pub body: Body,
    pub peer: SocketAddr,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body {
    Bytes(Vec<u8>),
    /// Declared larger than the body limit: not read; the connection closes after the answer.
    TooLarge,
}

impl Request {
    /// A request without headers yet; `capacity` is the expected bytes of the head's texts,
    /// `header_count` the headers to come.
    pub fn new(
        method: &str,
        path: &str,
        query: Option<&str>,
        peer: SocketAddr,
        capacity: usize,
        header_count: usize,
    ) -> Request {
        let mut text = String::with_capacity(capacity);
        let method = append(&mut text, method);
        let path = append(&mut text, path);
        let query = query.map(|query| append(&mut text, query));
        Request {
            text,
            method,
            path,
            query,
            headers: Vec::with_capacity(header_count),
            body: Body::Bytes(Vec::new()),
            peer,
        }
    }

    /// Adds a header; its name is stored lowercase.
    pub fn push_header(&mut self, name: &str, value: &str) {
        let name = append(&mut self.text, name);
        self.text[name.clone()].make_ascii_lowercase();
        let value = append(&mut self.text, value);
        self.headers.push((name, value));
    }

    pub fn method(&self) -> &str {
        &self.text[self.method.clone()]
    }

    /// The path part of the target, still percent-encoded.
    pub fn path(&self) -> &str {
        &self.text[self.path.clone()]
    }

    /// The raw query string, without `?`.
    pub fn query(&self) -> Option<&str> {
        self.query.clone().map(|query| &self.text[query])
    }

    /// The first value of a header (names are matched lowercase).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers().find(|(n, _)| *n == name).map(|(_, v)| v)
    }

    /// Every value of a header, in order.
    pub fn header_all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.headers()
            .filter(move |(n, _)| *n == name)
            .map(|(_, v)| v)
    }

    /// Every header as (lowercase name, value), in order.
    fn headers(&self) -> impl Iterator<Item = (&str, &str)> {
        self.headers
            .iter()
            .map(|(name, value)| (&self.text[name.clone()], &self.text[value.clone()]))
    }
}

/// Appends `part` to `text`, returning where it lies.
fn append(text: &mut String, part: &str) -> Range<usize> {
    let start = text.len();
    text.push_str(part);
    start..text.len()
}

#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    /// Values are usually constants: `Cow` keeps them unallocated.
    pub headers: Vec<(&'static str, Cow<'static, str>)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn new(status: u16) -> Response {
        Response {
            status,
            headers: Vec::with_capacity(6),
            body: Vec::new(),
        }
    }

    pub fn header(mut self, name: &'static str, value: impl Into<Cow<'static, str>>) -> Response {
        self.headers.push((name, value.into()));
        self
    }

    /// Sets a header, replacing a value set before under the same name.
    pub fn replace_header(
        mut self,
        name: &'static str,
        value: impl Into<Cow<'static, str>>,
    ) -> Response {
        self.headers
            .retain(|(existing, _)| !existing.eq_ignore_ascii_case(name));
        self.header(name, value)
    }

    pub fn body(mut self, body: Vec<u8>) -> Response {
        self.body = body;
        self
    }

    pub fn json(status: u16, value: &serde_json::Value) -> Response {
        Response::new(status)
            .header("Content-Type", "application/json")
            .body(value.to_string().into_bytes())
    }
}

/// What the server calls for every request. Runs on a coroutine: it must not block the
/// thread (database work goes through [`crate::blocking`]).
pub trait Service: Send + Sync + 'static {
    fn call(&self, request: Request) -> Response;

    /// The answer to a request whose client waits (`Expect: 100-continue`) before sending its
    /// body, when the head alone decides it (a refusal); `None`: the body is needed.
    fn answer_without_body(&self, _head: &Request) -> Option<Response> {
        None
    }
}
