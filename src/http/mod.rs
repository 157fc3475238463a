//! HTTP/1.1 plumbing: the only module that knows sockets, `may` and the wire format.
//!
//! Why our own connection loop and not may_minihttp's: may_minihttp 0.1.11 drops requests with
//! more than 16 headers, panics on a malformed `Content-Length`, ignores `Transfer-Encoding`
//! (a smuggling opening), never times out a half-sent request, buffers header bytes without
//! bound and ignores `Connection: close`. None of that can be fixed from outside its
//! `each_connection_loop`, so this module keeps its shape (one coroutine per connection on
//! `may`, `httparse` for the head, responses batched per read) and adds the limits.
//!
//! Handlers see only [`Request`] and [`Response`]: plain values, no socket, no `may` type.

mod parse;
mod server;

pub use parse::HttpLimits;
pub use server::{start, Server, ServerOptions};

use std::borrow::Cow;
use std::net::SocketAddr;

/// The request as handlers see it. Header names are lowercase.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    /// The path part of the target, still percent-encoded.
    pub path: String,
    /// The raw query string, without `?`.
    pub query: Option<String>,
    pub headers: Vec<(String, String)>,
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
    /// The first value of a header (names are matched lowercase).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Every value of a header, in order.
    pub fn header_all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.headers
            .iter()
            .filter(move |(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
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
}

/// `405` for the routes outside `/v1` (whose `405` comes from `crate::error`), with `Allow`.
pub fn method_not_allowed(allow: &'static str) -> Response {
    error_response(405, "method_not_allowed", "method not allowed").header("Allow", allow)
}

/// The error answer the HTTP layer itself gives (malformed request, limits, panics).
pub fn error_response(status: u16, code: &str, message: &str) -> Response {
    Response::json(
        status,
        &serde_json::json!({"error": {"code": code, "message": message}}),
    )
    .header("Cache-Control", "no-store")
}
