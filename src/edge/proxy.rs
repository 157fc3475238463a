//! One client connection through the edge: each request forwarded to the origin, and each
//! answer passed back byte for byte, unless the request is a gated agent's (rule 1): then the
//! card is asked for at once (rules 2, 4, 5), the origin for an unencoded page, and a
//! `200 text/html` page is composed (rule 3) and served with the agent headers (rule 6).
//!
//! A proxy's discipline (RFC 9112 §11): what goes to the origin is the head as parsed, written
//! again, never bytes another reader could frame differently; an upstream connection goes back
//! to the pool only after a whole, clean exchange with nothing left unread; once a head has
//! gone to the client, a failure cuts the connection instead of adding a status line; and no
//! connection is upgraded (the `Upgrade` header is not passed on, a `101` is the origin's
//! fault).

use super::card::{self, CardRequest, CardService, PendingCard};
use super::compose::{PageEncoding, PageWriter};
use super::config::Site;
use super::message::{Conn, Framing, Head, MessageError, Patience, Piece};
use super::metrics::{self, Kind};
use super::upstream::{Stream, Upstream};
use super::{log_fail_open, FailOpen};
use crate::http::media_type;
use crate::http::normalize_host;
use crate::http::socket::Socket;
use hashbrown::HashMap;
use std::io::{self, Write};
use std::sync::Arc;
use std::time::{Duration, Instant};
/// Bytes gathered before a write to the client.
const WRITE_BUFFER: usize = 64 * 1024;
/// A client connection's read buffer: heads, and bodies on their way to the origin.
const CLIENT_BUFFER: usize = 16 * 1024;
/// Rule 6: every `200 text/html` answer to a gated agent.
const AGENT_CACHE_CONTROL: &str = "Cache-Control: public, max-age=0, must-revalidate";
/// Headers rule 6 takes off a `200 text/html` answer to a gated agent.
const AGENT_REMOVED: [&str; 3] = ["cache-control", "etag", "last-modified"];
/// A client's headers about its own connection to the edge, not passed on: the edge keeps its
/// origin connections alive itself, and upgrades none of them.
const HOP_BY_HOP: [&str; 4] = ["connection", "keep-alive", "proxy-connection", "upgrade"];
/// The framing headers of a page the edge composes, which it frames itself.
const COMPOSED_REMOVED: [&str; 3] = ["content-length", "transfer-encoding", "content-encoding"];
/// The status line of a composed page, whatever the origin's version (the edge frames it).
const COMPOSED_STATUS_LINE: &[u8] = b"HTTP/1.1 200 OK\r\n";

/// What every connection shares.
pub struct Edge {
    pub origin: Upstream,
    pub cards: Arc<CardService>,
    pub sites: HashMap<String, Site>,
    pub budget: Duration,
    pub abc_txt: Option<Vec<u8>>,
}

/// A gated agent's request as its answer needs it.
struct Agent<'a> {
    gated: Gated<'a>,
    card: Option<PendingCard>,
    /// Whether the client reads chunked bodies.
    http11: bool,
    /// A `HEAD`: the head a `GET` would get, without a body.
    head_only: bool,
}

/// A request the gate let through to the card call.
struct Gated<'a> {
    site: &'a Site,
    page_url: String,
    agent: &'a str,
}

#[derive(Debug, thiserror::Error)]
enum ProxyError {
    #[error("origin: {0}")]
    Origin(String),
    /// The origin failed after the answer's head went to the client.
    #[error("origin, in the middle of the answer: {0}")]
    Aborted(String),
    #[error("client: {0}")]
    Client(#[from] io::Error),
}

impl ProxyError {
    /// Once a head has gone to the client, an origin's failure can only cut the answer short:
    /// a status line written then would read as part of the body, or as a second answer.
    fn after_head(self) -> ProxyError {
        match self {
            ProxyError::Origin(why) => ProxyError::Aborted(why),
            other => other,
        }
    }
}

/// Serves one client connection until it closes, fails or asks to close.
pub fn serve(edge: &Edge, socket: Socket) {
    let _ = socket.set_nodelay(true);
    let mut client = Conn::new(socket, CLIENT_BUFFER);
    loop {
        let raw = match client.read_client_head() {
            Ok(Some(raw)) => raw,
            Ok(None) | Err(MessageError::Io(_) | MessageError::Sink(_)) => return,
            Err(MessageError::TooLarge) => return refuse(&mut client.stream, 431),
            Err(MessageError::Malformed(_)) => return refuse(&mut client.stream, 400),
        };
        let arrived = Instant::now();
        // Back from the head's deadline, for the body and the answer.
        client.set_patience(Patience::Stall);
        let Ok(request) = Head::parse_request(raw) else {
            return refuse(&mut client.stream, 400);
        };
        match one_request(edge, &mut client, &request, arrived) {
            Ok(true) => continue,
            Ok(false) => return,
            Err(ProxyError::Client(_)) => return,
            Err(error @ ProxyError::Aborted(_)) => return log_origin_failure(&request, &error),
            Err(error @ ProxyError::Origin(_)) => {
                log_origin_failure(&request, &error);
                return refuse(&mut client.stream, 502);
            }
        }
    }
}

fn log_origin_failure(request: &Head, error: &ProxyError) {
    log::warn!(
        "{error}, for {} {}",
        request.method,
        request.target.escape_debug()
    );
}

/// Answers one request; `true` when the client connection may carry another.
fn one_request(
    edge: &Edge,
    client: &mut Conn<Socket>,
    request: &Head,
    arrived: Instant,
) -> Result<bool, ProxyError> {
    if let (Some(file), true) = (&edge.abc_txt, is_abc_txt(request)) {
        return Ok(serve_abc_txt(&mut client.stream, request, file)? && request.keeps_alive());
    }
    let (None, Some(body)) = (request.request_problem(), request.request_framing()) else {
        refuse(&mut client.stream, 400);
        return Ok(false);
    };
    let agent = gate(edge, request).map(|gated| Agent {
        card: (request.method == "GET")
            .then(|| card::start(&edge.cards, &gated.card_request(), arrived + edge.budget)),
        gated,
        http11: request.minor_version == 1,
        head_only: request.method == "HEAD",
    });
    let outgoing = outgoing_head(request, agent.is_some());
    let kind = Kind::gated(agent.is_some());
    // The body is passed on as it comes, so the client may send it now (as nginx, which reads
    // it first, also says at once).
    if body != Framing::Empty && request.has_token("expect", "100-continue") {
        client.stream.write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
    }
    let interim = request.minor_version == 1;
    let (mut origin, answer) = ask_origin(&edge.origin, client, &outgoing, body, interim)?;
    if answer.status == 101 {
        return Err(ProxyError::Origin(
            "101 to a request without Upgrade".into(),
        ));
    }
    let framing = answer
        .response_framing(&request.method)
        .ok_or_else(|| ProxyError::Origin("unreadable framing".into()))?;
    let client_keeps = respond(&mut client.stream, &mut origin, &answer, framing, agent)?;
    metrics::count_answered(kind, arrived);
    // An HTTP/1.0 request leaves the origin free to close after its answer.
    if request.minor_version == 1 {
        edge.origin.keep(origin, &answer, framing);
    }
    Ok(client_keeps && request.keeps_alive() && answer.keeps_alive())
}

/// The request as the origin gets it: the head as parsed, without the client's connection
/// headers; an agent's asks for an unencoded page (the rewriter reads what it can decode).
fn outgoing_head(request: &Head, agent: bool) -> Vec<u8> {
    let forwarded = |name: &str| !is_one_of(name, &HOP_BY_HOP);
    match agent {
        false => request.rewritten(forwarded, &[]),
        true => request.rewritten(
            |name| forwarded(name) && !name.eq_ignore_ascii_case("accept-encoding"),
            &["Accept-Encoding: identity".into()],
        ),
    }
}

/// Sends the origin's answer on to the client; `true` when the client may send another request.
fn respond(
    client: &mut Socket,
    origin: &mut Conn<Stream>,
    answer: &Head,
    framing: Framing,
    agent: Option<Agent>,
) -> Result<bool, ProxyError> {
    let mut out = io::BufWriter::with_capacity(WRITE_BUFFER, client);
    let keeps = match agent {
        None => pass_through(origin, answer, framing, &mut out),
        Some(agent) => answer_agent(origin, answer, framing, agent, &mut out),
    }
    .map_err(ProxyError::after_head)?;
    out.flush()?;
    Ok(keeps)
}

/// Rule 1: a listed site and a User-Agent carrying an agent marker.
fn gate<'a>(edge: &'a Edge, request: &'a Head) -> Option<Gated<'a>> {
    let host = normalize_host(request.header("host")?);
    let site = edge.sites.get(&host)?;
    let agent = request.header("user-agent")?;
    crate::agents::matching_marker(agent)?;
    // Origin-form targets only; the path without its query (rule 4).
    let path = request
        .target
        .split('?')
        .next()
        .filter(|p| p.starts_with('/'))?;
    Some(Gated {
        site,
        page_url: format!("{}://{host}{path}", site.scheme),
        agent,
    })
}

impl Gated<'_> {
    fn card_request(&self) -> CardRequest<'_> {
        CardRequest {
            site: self.site,
            page_url: &self.page_url,
            agent: self.agent,
        }
    }
}

/// Sends the request (and its body) to the origin and reads the answer's head; `1xx` interim
/// answers go on to the client when `interim` (never to an HTTP/1.0 one). A kept-alive
/// connection found closed is replaced once, when no body has been sent on it.
fn ask_origin(
    origin: &Upstream,
    client: &mut Conn<Socket>,
    head: &[u8],
    body: Framing,
    interim: bool,
) -> Result<(Conn<Stream>, Head), ProxyError> {
    if body == Framing::Empty {
        if let Some(conn) = origin.reuse() {
            if let Some(answered) = send(conn, client, head, body, interim)? {
                return Ok(answered);
            }
        }
    }
    let conn = origin
        .connect()
        .map_err(|e| ProxyError::Origin(format!("connecting: {e}")))?;
    send(conn, client, head, body, interim)?
        .ok_or_else(|| ProxyError::Origin("closed the connection without an answer".into()))
}

/// One attempt; `None` when the connection turned out closed before any answer.
fn send(
    mut origin: Conn<Stream>,
    client: &mut Conn<Socket>,
    head: &[u8],
    body: Framing,
    interim: bool,
) -> Result<Option<(Conn<Stream>, Head)>, ProxyError> {
    let origin_error = |e: &dyn std::fmt::Display| ProxyError::Origin(e.to_string());
    origin.set_patience(Patience::Stall);
    if origin.stream.write_all(head).is_err() && body == Framing::Empty {
        return Ok(None);
    }
    client
        .copy_body(body, &mut origin.stream)
        .map_err(|e| match e {
            MessageError::Sink(e) => origin_error(&e),
            MessageError::Io(e) => ProxyError::Client(e),
            other => ProxyError::Client(io::Error::other(other.to_string())),
        })?;
    origin.stream.flush().map_err(|e| origin_error(&e))?;
    loop {
        let raw = match origin.read_head() {
            Ok(Some(raw)) => raw,
            Ok(None) if body == Framing::Empty => return Ok(None),
            Ok(None) => return Err(origin_error(&"closed the connection without an answer")),
            Err(e) => return Err(origin_error(&e)),
        };
        let answer = Head::parse_response(raw).map_err(|e| origin_error(&e))?;
        if !(100..200).contains(&answer.status) || answer.status == 101 {
            return Ok(Some((origin, answer)));
        }
        if interim {
            client.stream.write_all(&answer.raw)?;
        }
    }
}

/// The origin's answer as it came; `true` when the client may send another request.
fn pass_through(
    origin: &mut Conn<Stream>,
    answer: &Head,
    framing: Framing,
    out: &mut dyn Write,
) -> Result<bool, ProxyError> {
    out.write_all(&answer.rewritten(|_| true, &[]))?;
    copy(origin, framing, out)?;
    Ok(framing != Framing::Close)
}

/// Copies a body as framed, flushing to the client whenever the origin has nothing more yet.
fn copy(
    origin: &mut Conn<Stream>,
    framing: Framing,
    out: &mut dyn Write,
) -> Result<(), ProxyError> {
    origin.copy_body(framing, out).map_err(from_origin_body)
}

/// A failure while walking the origin's body: the client's when writing to it failed.
fn from_origin_body(error: MessageError) -> ProxyError {
    match error {
        MessageError::Sink(e) if e.kind() != io::ErrorKind::InvalidData => ProxyError::Client(e),
        other => ProxyError::Origin(other.to_string()),
    }
}

/// A gated agent's answer: composed when page and card allow, else as the origin sent it,
/// with rule 6's headers on a `200 text/html` page either way.
fn answer_agent(
    origin: &mut Conn<Stream>,
    answer: &Head,
    framing: Framing,
    agent: Agent,
    out: &mut dyn Write,
) -> Result<bool, ProxyError> {
    let page_url = &agent.gated.page_url;
    let content_type = answer.header("content-type").unwrap_or_default();
    if answer.status != 200 || !media_type::is_html(content_type) {
        if agent.card.is_some() {
            let detail = format!("the page is {} {content_type}", answer.status);
            log_fail_open(FailOpen::NotHtml, page_url, &detail);
        }
        return pass_through(origin, answer, framing, out);
    }
    let coding = ContentCoding::of(answer.header("content-encoding"));
    let encoding = PageEncoding::of(media_type::charset(content_type));
    match (agent.card, coding, encoding) {
        (Some(card), Some(coding), Some(encoding)) => {
            let page = Page {
                answer,
                framing,
                coding,
                encoding,
                page_url,
                chunked: agent.http11,
            };
            compose(origin, page, card, out)?;
            Ok(agent.http11)
        }
        (None, Some(_), Some(_)) if agent.head_only => {
            out.write_all(&composed_head(answer, agent.http11))?;
            Ok(true)
        }
        (card, coding, _) => {
            if card.is_some() {
                let why = match coding {
                    None => "its content coding is not gzip or deflate",
                    Some(_) => "its charset is not an ASCII-compatible one",
                };
                log_fail_open(FailOpen::NotHtml, page_url, why);
            }
            let head = answer.rewritten(
                |name| !is_agent_removed(name),
                &[AGENT_CACHE_CONTROL.into()],
            );
            out.write_all(&head)?;
            copy(origin, framing, out)?;
            Ok(framing != Framing::Close)
        }
    }
}

fn is_agent_removed(name: &str) -> bool {
    is_one_of(name, &AGENT_REMOVED)
}

fn is_one_of(name: &str, names: &[&str]) -> bool {
    names.iter().any(|listed| name.eq_ignore_ascii_case(listed))
}

/// A page the edge composes.
struct Page<'a> {
    answer: &'a Head,
    framing: Framing,
    coding: ContentCoding,
    encoding: PageEncoding,
    page_url: &'a str,
    /// Re-framed as chunked; else until the connection closes (an HTTP/1.0 client).
    chunked: bool,
}

/// Streams the page through the rewriter to the client.
fn compose(
    origin: &mut Conn<Stream>,
    page: Page,
    card: PendingCard,
    out: &mut dyn Write,
) -> Result<(), ProxyError> {
    out.write_all(&composed_head(page.answer, page.chunked))?;
    let mut body = BodyWriter::new(out, page.chunked);
    let mut rewriter = PageWriter::new(page.encoding, card, &mut body);
    let mut decoder = page.coding.decoder(&mut rewriter);
    origin
        .walk_body(page.framing, &mut |piece| match piece {
            Piece::Content(bytes) => decoder.write_all(bytes),
            Piece::Waiting => decoder.flush(),
            Piece::Framing(_) => Ok(()),
        })
        .map_err(from_origin_body)?;
    decoder
        .finish()
        .map_err(|e| ProxyError::Origin(e.to_string()))?;
    if let Err(failure) = metrics::count_if_placed(rewriter.finish()?) {
        log_fail_open(failure.cause, page.page_url, &failure.detail);
    }
    body.finish()?;
    Ok(())
}

/// The head of a composed page (and of a gated `HEAD`'s answer, the same as its `GET`'s): the
/// edge's own status line and framing, rule 6's headers.
fn composed_head(answer: &Head, chunked: bool) -> Vec<u8> {
    let dropped = |name: &str| is_agent_removed(name) || is_one_of(name, &COMPOSED_REMOVED);
    let mut extra = vec![AGENT_CACHE_CONTROL.to_string()];
    if chunked {
        extra.push("Transfer-Encoding: chunked".into());
    }
    answer.rewritten_as(COMPOSED_STATUS_LINE, |name| !dropped(name), &extra)
}

/// The page's content coding, when the edge can read it.
#[derive(Debug, Clone, Copy)]
enum ContentCoding {
    Identity,
    Gzip,
    Deflate,
}

impl ContentCoding {
    fn of(header: Option<&str>) -> Option<ContentCoding> {
        match header
            .map(|value| value.trim().to_ascii_lowercase())
            .as_deref()
        {
            None | Some("" | "identity") => Some(ContentCoding::Identity),
            Some("gzip" | "x-gzip") => Some(ContentCoding::Gzip),
            Some("deflate") => Some(ContentCoding::Deflate),
            Some(_) => None,
        }
    }

    fn decoder<'w>(self, page: &'w mut dyn Write) -> Decoder<'w> {
        match self {
            ContentCoding::Identity => Decoder::Identity(page),
            ContentCoding::Gzip => Decoder::Gzip(flate2::write::MultiGzDecoder::new(page)),
            ContentCoding::Deflate => Decoder::Deflate(flate2::write::ZlibDecoder::new(page)),
        }
    }
}

enum Decoder<'w> {
    Identity(&'w mut dyn Write),
    Gzip(flate2::write::MultiGzDecoder<&'w mut dyn Write>),
    Deflate(flate2::write::ZlibDecoder<&'w mut dyn Write>),
}

impl Decoder<'_> {
    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        match self {
            Decoder::Identity(page) => page.write_all(bytes),
            Decoder::Gzip(decoder) => decoder.write_all(bytes),
            Decoder::Deflate(decoder) => decoder.write_all(bytes),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Decoder::Identity(page) => page.flush(),
            Decoder::Gzip(decoder) => decoder.flush(),
            Decoder::Deflate(decoder) => decoder.flush(),
        }
    }

    fn finish(self) -> io::Result<()> {
        match self {
            Decoder::Identity(_) => Ok(()),
            Decoder::Gzip(decoder) => decoder.finish().map(drop),
            Decoder::Deflate(decoder) => decoder.finish().map(drop),
        }
    }
}

/// A composed body on its way to the client: gathered, and sent as one chunk per flush or
/// per full buffer (lol_html hands over a piece per token).
struct BodyWriter<'o> {
    out: &'o mut dyn Write,
    chunked: bool,
    gathered: Vec<u8>,
}

impl<'o> BodyWriter<'o> {
    fn new(out: &'o mut dyn Write, chunked: bool) -> Self {
        BodyWriter {
            out,
            chunked,
            gathered: Vec::with_capacity(WRITE_BUFFER),
        }
    }

    fn send_gathered(&mut self) -> io::Result<()> {
        if self.gathered.is_empty() {
            return Ok(());
        }
        if self.chunked {
            write!(self.out, "{:x}\r\n", self.gathered.len())?;
            self.gathered.extend_from_slice(b"\r\n");
        }
        self.out.write_all(&self.gathered)?;
        self.gathered.clear();
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        self.send_gathered()?;
        if self.chunked {
            self.out.write_all(b"0\r\n\r\n")?;
        }
        self.out.flush()
    }
}

impl Write for BodyWriter<'_> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.gathered.extend_from_slice(bytes);
        if self.gathered.len() >= WRITE_BUFFER {
            self.send_gathered()?;
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.send_gathered()?;
        self.out.flush()
    }
}

fn is_abc_txt(request: &Head) -> bool {
    let path = request.target.split('?').next().unwrap_or_default();
    path == "/abc.txt" && matches!(request.method.as_str(), "GET" | "HEAD")
}

/// Rule 7: the file as it is, to every User-Agent.
fn serve_abc_txt(client: &mut Socket, request: &Head, file: &[u8]) -> io::Result<bool> {
    metrics::count_request(Kind::AbcTxt);
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\n",
        file.len()
    );
    client.write_all(head.as_bytes())?;
    if request.method == "GET" {
        client.write_all(file)?;
    }
    Ok(true)
}

/// The edge's own answer to a request it cannot forward; the connection closes after it.
fn refuse(client: &mut Socket, status: u16) {
    metrics::count_request(Kind::Refused);
    let reason = match status {
        400 => "Bad Request",
        431 => "Request Header Fields Too Large",
        _ => "Bad Gateway",
    };
    let answer = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{reason}\n",
        reason.len() + 1
    );
    let _ = client.write_all(answer.as_bytes());
}
