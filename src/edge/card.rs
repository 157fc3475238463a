//! The card call (edge client rules 2, 4 and 5): `GET /fragment` on the service with the key
//! in `X-API-Key`, the agent's User-Agent in `X-Agent-UA` and a benign User-Agent of our own,
//! started on a coroutine of its own as soon as the request's head has arrived, so that it
//! runs while the origin answers. The page waits for it at its first `<article>`, never past
//! the budget's deadline: the alarm's thread tells it when that has come.

use super::alarm::Alarm;
use super::config::Site;
use super::message::{Framing, Head, MessageError, Patience, Piece};
use super::metrics;
use super::upstream::Upstream;
use super::FailOpen;
use may::sync::mpsc;
use std::io::{self, Write};
use std::sync::Arc;
use std::time::Instant;

/// The card call's own User-Agent: benign, since edge protection in front of the service may
/// block bot User-Agents.
pub const USER_AGENT: &str = concat!("agentcard-edge/", env!("CARGO_PKG_VERSION"));
/// Largest card body accepted; a larger one is a `card_error`.
const CARD_LIMIT: usize = 64 * 1024;

/// Where cards come from.
pub struct CardService {
    /// Its connections give up a call the budget after it began (the socket's deadlines); the
    /// page itself waits only until its own deadline, whatever the call does after it.
    pub upstream: Upstream,
    pub key: String,
    pub alarm: Alarm,
}

/// A card as the service returned it, with its brand (`data-brand`, decoded).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Card {
    pub html: String,
    pub brand: Option<String>,
}

/// Why no card is placed, with a detail for the log line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub cause: FailOpen,
    pub detail: String,
}

fn failure(cause: FailOpen, detail: impl Into<String>) -> Failure {
    Failure {
        cause,
        detail: detail.into(),
    }
}

/// A card call under way: the first of the call's answer and the alarm's time-out.
pub struct PendingCard {
    answer: mpsc::Receiver<Result<Card, Failure>>,
}

impl PendingCard {
    /// The card, or why there is none; waits at most until the deadline.
    pub fn wait(self) -> Result<Card, Failure> {
        self.answer.recv().unwrap_or_else(|_| Err(out_of_time()))
    }

    /// A call that has already answered (for the tests and the fuzz targets of the rewriter).
    #[cfg(any(test, feature = "fuzzing"))]
    pub fn answered(answer: Result<Card, Failure>) -> PendingCard {
        let (sender, receiver) = mpsc::channel();
        sender.send(answer).expect("the receiver is here");
        PendingCard { answer: receiver }
    }
}

fn out_of_time() -> Failure {
    failure(FailOpen::Timeout, "no card within the budget")
}

/// What the card call says about the page.
pub struct CardRequest<'a> {
    pub site: &'a Site,
    pub page_url: &'a str,
    pub agent: &'a str,
}

/// Starts the call; the page hears of it by `deadline` at the latest.
pub fn start(service: &Arc<CardService>, request: &CardRequest, deadline: Instant) -> PendingCard {
    let (sender, answer) = mpsc::channel();
    let alarm = sender.clone();
    // Whichever comes second finds nobody waiting: its send fails, and that is fine.
    service.alarm.at(deadline, move || {
        let _ = alarm.send(Err(out_of_time()));
    });
    let service = Arc::clone(service);
    let head = request_head(&service, request);
    may::go!(move || {
        let _ = sender.send(metrics::time_card_call(|| fetch(&service, &head)));
    });
    PendingCard { answer }
}

fn request_head(service: &CardService, request: &CardRequest) -> Vec<u8> {
    let mut query = url::form_urlencoded::Serializer::new(String::new());
    query
        .append_pair("partner_id", &request.site.partner_id)
        .append_pair("fragment_id", &request.site.fragment_id)
        .append_pair("lang", request.site.lang.as_str())
        .append_pair("page_url", request.page_url);
    for (name, value) in request.site.ctx_params(request.page_url) {
        query.append_pair(name, &value);
    }
    let query = query.finish();
    let url = &service.upstream.url;
    format!(
        "GET {}/fragment?{query} HTTP/1.1\r\nHost: {}\r\nUser-Agent: {USER_AGENT}\r\n\
         X-Agent-UA: {}\r\nX-API-Key: {}\r\nAccept: text/html\r\n\r\n",
        url.path,
        url.authority(),
        request.agent,
        service.key,
    )
    .into_bytes()
}

/// One call, retried once on a fresh connection when a kept-alive one turns out closed.
fn fetch(service: &CardService, head: &[u8]) -> Result<Card, Failure> {
    if let Some(conn) = service.upstream.reuse() {
        match exchange(service, conn, head) {
            Err(Attempt::Stale) => {}
            Err(Attempt::Failed(failure)) => return Err(failure),
            Ok(card) => return card,
        }
    }
    let conn = service
        .upstream
        .connect()
        .map_err(|error| io_failure(&error, "connecting to the service"))?;
    match exchange(service, conn, head) {
        Ok(card) => card,
        Err(Attempt::Stale) => Err(failure(
            FailOpen::Unreachable,
            "the service closed the connection without an answer",
        )),
        Err(Attempt::Failed(failure)) => Err(failure),
    }
}

enum Attempt {
    /// The connection closed before any byte of an answer.
    Stale,
    Failed(Failure),
}

type Conn = super::message::Conn<super::upstream::Stream>;

fn exchange(
    service: &CardService,
    mut conn: Conn,
    head: &[u8],
) -> Result<Result<Card, Failure>, Attempt> {
    let io = |error: io::Error| Attempt::Failed(io_failure(&error, "calling the service"));
    conn.set_patience(Patience::Whole);
    let sent = conn
        .stream
        .write_all(head)
        .and_then(|()| conn.stream.flush());
    if let Err(error) = sent {
        return Err(match error.kind() {
            io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset => Attempt::Stale,
            _ => io(error),
        });
    }
    let answer = final_answer(&mut conn)?;
    let framing = answer
        .response_framing("GET")
        .ok_or_else(|| Attempt::Failed(failure(FailOpen::CardError, "unreadable framing")))?;
    let body = read_body(&mut conn, framing).map_err(Attempt::Failed)?;
    service.upstream.keep(conn, &answer, framing);
    Ok(card_of(&answer, body))
}

/// The answer's head, past any `1xx` interim one; a `101` is a failure (nothing was asked to
/// be upgraded), its connection dropped.
fn final_answer(conn: &mut Conn) -> Result<Head, Attempt> {
    let failed = |error| Attempt::Failed(message_failure(error));
    loop {
        let raw = match conn.read_head() {
            Ok(Some(raw)) => raw,
            Ok(None) => return Err(Attempt::Stale),
            Err(MessageError::Io(error)) if error.kind() == io::ErrorKind::ConnectionReset => {
                return Err(Attempt::Stale)
            }
            Err(error) => return Err(failed(error)),
        };
        let answer = Head::parse_response(raw).map_err(failed)?;
        match answer.status {
            101 => return Err(Attempt::Failed(failure(FailOpen::CardError, "status 101"))),
            100..=199 => continue,
            _ => return Ok(answer),
        }
    }
}

/// The answer's body, read no further than the card limit (the connection is then dropped).
fn read_body(conn: &mut Conn, framing: Framing) -> Result<Vec<u8>, Failure> {
    let mut body = Vec::new();
    let walked = conn.walk_body(framing, &mut |piece| match piece {
        Piece::Content(bytes) if body.len() + bytes.len() > CARD_LIMIT => {
            Err(io::Error::other("card larger than 64 KiB"))
        }
        Piece::Content(bytes) => {
            body.extend_from_slice(bytes);
            Ok(())
        }
        Piece::Framing(_) | Piece::Waiting => Ok(()),
    });
    match walked {
        Ok(()) => Ok(body),
        Err(MessageError::Sink(too_large)) => {
            Err(failure(FailOpen::CardError, too_large.to_string()))
        }
        Err(other) => Err(message_failure(other)),
    }
}

/// A `200 text/html` answer is a card; `204` is no-fill; anything else is a card error.
fn card_of(answer: &Head, body: Vec<u8>) -> Result<Card, Failure> {
    let content_type = answer.header("content-type").unwrap_or_default();
    let html = crate::http::media_type::is_html(content_type);
    match answer.status {
        204 => Err(failure(FailOpen::NoFill, "204")),
        200 if html => {
            let html = String::from_utf8(body)
                .map_err(|_| failure(FailOpen::CardError, "card is not UTF-8"))?;
            let brand = brand_of(&html);
            Ok(Card { html, brand })
        }
        200 => Err(failure(FailOpen::CardError, format!("200 {content_type}"))),
        status => Err(failure(FailOpen::CardError, format!("status {status}"))),
    }
}

fn io_failure(error: &io::Error, doing: &str) -> Failure {
    match error.kind() {
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => {
            failure(FailOpen::Timeout, format!("{doing}: {error}"))
        }
        _ => failure(FailOpen::Unreachable, format!("{doing}: {error}")),
    }
}

fn message_failure(error: MessageError) -> Failure {
    match error {
        MessageError::Io(error) => io_failure(&error, "reading the card"),
        other => failure(FailOpen::CardError, other.to_string()),
    }
}

/// The `data-brand` attribute of the card's first start tag, its character references
/// decoded.
fn brand_of(card: &str) -> Option<String> {
    let tag = &card[..card.find('>')?];
    let at = tag.find(" data-brand=\"")? + " data-brand=\"".len();
    let value = &tag[at..at + tag[at..].find('"')?];
    Some(decode_references(value))
}

/// Decodes the references agentcard's escaping writes (`&amp;`, `&lt;`, `&gt;`, `&quot;`,
/// `&#39;`, `&apos;`) and numeric ones; anything else stays as written.
fn decode_references(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let decoded = rest
            .find(';')
            .and_then(|end| Some((reference(&rest[1..end])?, end)));
        match decoded {
            Some((c, end)) => {
                out.push(c);
                rest = &rest[end + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn reference(name: &str) -> Option<char> {
    match name {
        "amp" => Some('&'),
        "lt" => Some('<'),
        "gt" => Some('>'),
        "quot" => Some('"'),
        "apos" => Some('\''),
        _ => {
            let number = name.strip_prefix('#')?;
            let code = match number.strip_prefix(['x', 'X']) {
                Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                None => number.parse().ok()?,
            };
            char::from_u32(code)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brand_is_read_from_the_card_and_decoded() {
        let card = "<aside class=\"agentcard\" data-card-id=\"crd_1\" \
                    data-brand=\"Le &lt;Monde&gt; &amp; &quot;Co&quot; &#39;&#233;&#xE9;&bogus; & x\" \
                    lang=\"fr\"><p data-brand=\"no\">x</p></aside>";
        assert_eq!(
            brand_of(card).as_deref(),
            Some("Le <Monde> & \"Co\" 'éé&bogus; & x")
        );
        assert_eq!(brand_of("<aside lang=\"fr\">x</aside>"), None);
        assert_eq!(brand_of("no tag at all"), None);
    }

    #[test]
    fn answers_are_classified() {
        let head = |text: &str| Head::parse_response(text.as_bytes().to_vec()).unwrap();
        let card = card_of(
            &head("HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=UTF-8\r\n\r\n"),
            b"<aside data-brand=\"B\">x</aside>".to_vec(),
        );
        assert_eq!(card.unwrap().brand.as_deref(), Some("B"));
        let cause = |text: &str| card_of(&head(text), b"{}".to_vec()).unwrap_err().cause;
        assert_eq!(cause("HTTP/1.1 204 No Content\r\n\r\n"), FailOpen::NoFill);
        assert_eq!(
            cause("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n"),
            FailOpen::CardError
        );
        assert_eq!(
            cause("HTTP/1.1 500 Oops\r\nContent-Type: text/html\r\n\r\n"),
            FailOpen::CardError
        );
    }
}
