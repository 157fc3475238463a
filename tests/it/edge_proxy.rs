//! `agentcard edge` as a proxy that never hands one client another's bytes (RFC 9112 §11):
//! a real edge process between raw-socket clients and scripted stubs (an origin and a card
//! service written here, each answer a script of writes, pauses and closes), every finding of
//! a hostile campaign with its test. The bytes each side gets are compared exactly.

use crate::edge_fixtures::{dechunk, Edge, FIREFOX, GPTBOT};
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Two sites, so that a card meant for one could show up on the other's page.
const SITES: &str = "[[site]]\ndomain = \"news.example\"\npartner_id = \"org_edge\"\n\
                     fragment_id = \"frg_news\"\nlang = \"fr\"\nscheme = \"http\"\n\n\
                     [[site]]\ndomain = \"other.example\"\npartner_id = \"org_edge\"\n\
                     fragment_id = \"frg_other\"\nlang = \"fr\"\nscheme = \"http\"\n";
/// A whole answer hidden after another: whoever reads it took another exchange's bytes.
const POISON: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 25\r\n\r\n\
                        <article>POISON</article>";
/// Only a hang is caught by it.
const HANG: Duration = Duration::from_secs(15);

/// One step of a stub's answer.
#[derive(Clone)]
enum Step {
    Send(Vec<u8>),
    Pause(Duration),
    /// Close the connection (a FIN).
    Close,
    /// Close it with a reset (RST).
    Reset,
}

fn send(bytes: impl AsRef<[u8]>) -> Step {
    Step::Send(bytes.as_ref().to_vec())
}

fn later() -> Step {
    Step::Pause(Duration::from_millis(50))
}

/// A request as a stub read it.
struct StubRequest {
    method: String,
    target: String,
}

impl StubRequest {
    fn query(&self, name: &str) -> String {
        let query = self.target.split_once('?').map_or("", |(_, query)| query);
        url::form_urlencoded::parse(query.as_bytes())
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.into_owned())
            .unwrap_or_default()
    }
}

type Script = dyn Fn(&StubRequest) -> Vec<Step> + Send + Sync;

/// A scripted upstream on loopback: every request it reads (heads end at CRLF CRLF, bodies by
/// `Content-Length`) is answered by its script; what each connection brought is kept.
struct Stub {
    addr: SocketAddr,
    received: Arc<Mutex<Vec<Vec<u8>>>>,
}

impl Stub {
    fn start(script: impl Fn(&StubRequest) -> Vec<Step> + Send + Sync + 'static) -> Stub {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let received = Arc::new(Mutex::new(Vec::new()));
        let (kept, script) = (Arc::clone(&received), Arc::new(script) as Arc<Script>);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (kept, script) = (Arc::clone(&kept), Arc::clone(&script));
                let index = {
                    let mut kept = kept.lock().unwrap();
                    kept.push(Vec::new());
                    kept.len() - 1
                };
                std::thread::spawn(move || serve_stub(stream, &*script, &kept, index));
            }
        });
        Stub { addr, received }
    }

    /// What each connection brought, in the order they came.
    fn received(&self) -> Vec<Vec<u8>> {
        self.received.lock().unwrap().clone()
    }

    fn everything_received(&self) -> Vec<u8> {
        self.received().concat()
    }
}

fn serve_stub(mut stream: TcpStream, script: &Script, kept: &Mutex<Vec<Vec<u8>>>, index: usize) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(60)));
    let mut buffer = Vec::new();
    while let Some(request) = next_request(&mut stream, &mut buffer, kept, index) {
        for step in script(&request) {
            let done = match step {
                Step::Send(bytes) => stream.write_all(&bytes).is_err(),
                Step::Pause(pause) => {
                    std::thread::sleep(pause);
                    false
                }
                Step::Close => {
                    let _ = stream.shutdown(Shutdown::Write);
                    true
                }
                Step::Reset => {
                    let _ = socket2::SockRef::from(&stream).set_linger(Some(Duration::ZERO));
                    true
                }
            };
            if done {
                return;
            }
        }
    }
}

/// The next request on a stub's connection; `None` once it closed.
fn next_request(
    stream: &mut TcpStream,
    buffer: &mut Vec<u8>,
    kept: &Mutex<Vec<Vec<u8>>>,
    index: usize,
) -> Option<StubRequest> {
    let mut read_more = |buffer: &mut Vec<u8>| {
        let mut piece = [0u8; 16 * 1024];
        let read = stream.read(&mut piece).ok().filter(|&n| n > 0)?;
        buffer.extend_from_slice(&piece[..read]);
        kept.lock().unwrap()[index].extend_from_slice(&piece[..read]);
        Some(())
    };
    let end = loop {
        if let Some(at) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        read_more(buffer)?;
    };
    let head: Vec<u8> = buffer.drain(..end).collect();
    let text = String::from_utf8_lossy(&head).into_owned();
    let length = text
        .lines()
        .filter_map(|line| line.split_once(':'))
        .find(|(name, _)| name.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, value)| value.trim().parse::<usize>().ok())
        .unwrap_or(0);
    while buffer.len() < length {
        read_more(buffer)?;
    }
    buffer.drain(..length);
    let mut words = text.split(' ');
    Some(StubRequest {
        method: words.next().unwrap_or_default().to_string(),
        target: words.next().unwrap_or_default().to_string(),
    })
}

/// An answer with a `Content-Length`.
fn answer(extra_headers: &str, body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n{extra_headers}\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

fn page(path: &str) -> String {
    format!("<html><body><h1>{path}</h1><article><p>story {path}</p></article></body></html>")
}

/// The origin's answer to a path no script of the test names: its page, for every method.
fn page_answer(request: &StubRequest) -> Vec<u8> {
    let full = answer("", &page(&request.target));
    match request.method.as_str() {
        "HEAD" => full[..full.len() - page(&request.target).len()].to_vec(),
        _ => full,
    }
}

/// A card for the page the call names.
fn card_for(page_url: &str) -> String {
    format!("<aside class=\"agentcard\" data-brand=\"B\">card for {page_url}</aside>")
}

fn card_answer(request: &StubRequest) -> Vec<u8> {
    answer("", &card_for(&request.query("page_url")))
}

/// Sends `bytes` on a connection of its own and reads until the edge closes it.
fn exchange(addr: SocketAddr, bytes: &[u8]) -> Vec<u8> {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(HANG)).unwrap();
    stream.write_all(bytes).unwrap();
    read_until_closed(&mut stream)
}

/// Everything the peer sends until it closes (a reset ends it too).
fn read_until_closed(stream: &mut TcpStream) -> Vec<u8> {
    let mut received = Vec::new();
    let mut piece = [0u8; 16 * 1024];
    loop {
        match stream.read(&mut piece) {
            Ok(0) => return received,
            Ok(read) => received.extend_from_slice(&piece[..read]),
            Err(error) if error.kind() == std::io::ErrorKind::ConnectionReset => return received,
            Err(error) => panic!("reading from the edge: {error} after {received:?}"),
        }
    }
}

fn request(method: &str, path: &str, host: &str, user_agent: &str) -> Vec<u8> {
    format!(
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: {user_agent}\r\n\
         Connection: close\r\n\r\n"
    )
    .into_bytes()
}

fn get(path: &str) -> Vec<u8> {
    request("GET", path, "news.example", FIREFOX)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The edge's refusal, as the client gets it.
fn refusal(status: &str) -> Vec<u8> {
    let reason = status.split_once(' ').unwrap().1;
    format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{reason}\n",
        reason.len() + 1
    )
    .into_bytes()
}

/// An origin whose `routes` answer as scripted and every other path with its page, a card
/// service that always has a card, and the edge between them.
fn edge_with(
    routes: impl Fn(&StubRequest) -> Option<Vec<Step>> + Send + Sync + 'static,
) -> (Edge, Stub, Stub) {
    let origin = Stub::start(move |request| {
        routes(request).unwrap_or_else(|| vec![Step::Send(page_answer(request))])
    });
    let cards = Stub::start(|request| vec![Step::Send(card_answer(request))]);
    let edge = Edge::start(origin.addr, cards.addr, SITES, &[]);
    (edge, origin, cards)
}

/// The probe after a hostile exchange: another client, on a connection of its own, gets the
/// origin's answer to its own request, byte for byte.
#[track_caller]
fn assert_next_client_gets_its_own_answer(edge: &Edge, after: &str) {
    let probe = format!("/probe-after{after}");
    let got = exchange(edge.addr, &get(&probe));
    let expected = answer("", &page(&probe));
    assert_eq!(
        text(&got),
        text(&expected),
        "after {after}; edge log:\n{}",
        edge.log()
    );
}

#[test]
fn a_head_that_ends_in_a_bare_lf_is_refused_and_the_origin_never_sees_what_it_hid() {
    let (edge, origin, _cards) = edge_with(|_| None);
    for attack in [
        &b"GET /a HTTP/1.1\r\nHost: news.example\r\n\nGET /account HTTP/1.1\r\nHost: news.example\r\n\r\n"[..],
        b"GET /a HTTP/1.1\nHost: news.example\n\nGET /account HTTP/1.1\r\nHost: news.example\r\n\r\n",
        b"GET /a HTTP/1.1\r\nHost: news.example\nX-Hidden: 1\r\n\r\n",
    ] {
        let got = exchange(edge.addr, attack);
        assert_eq!(text(&got), text(&refusal("400 Bad Request")), "{}", text(attack));
        assert_next_client_gets_its_own_answer(&edge, "-bare-lf");
    }
    let seen = text(&origin.everything_received());
    assert!(
        !seen.contains("/account") && !seen.contains("GET /a "),
        "{seen}"
    );
}

#[test]
fn a_request_whose_body_could_be_framed_two_ways_is_refused_before_the_origin() {
    let (edge, origin, _cards) = edge_with(|_| None);
    let smuggled = "GET /smuggled HTTP/1.1\r\nHost: news.example\r\n\r\n";
    let cases: [&[u8]; 7] = [
        b"POST /a HTTP/1.1\r\nHost: news.example\r\nContent-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nG",
        &[
            &b"POST /a HTTP/1.1\r\nHost: news.example\r\nContent-Length: 53\r\nTransfer-Encoding: chunked\xff\r\n\r\n0\r\n\r\n"[..],
            smuggled.as_bytes(),
        ]
        .concat(),
        b"POST /a HTTP/1.1\r\nHost: news.example\r\nTransfer-Encoding: chunked\xff\r\n\r\n0\r\n\r\n",
        b"POST /a HTTP/1.1\r\nHost: news.example\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: x\r\n\r\n0\r\n\r\n",
        b"POST /a HTTP/1.1\r\nHost: news.example\r\nTransfer-Encoding: identity, chunked\r\n\r\n0\r\n\r\n",
        b"POST /a HTTP/1.1\r\nHost: news.example\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!",
        b"POST /a HTTP/1.0\r\nHost: news.example\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    ];
    for attack in cases {
        let got = exchange(edge.addr, attack);
        assert_eq!(
            text(&got),
            text(&refusal("400 Bad Request")),
            "{}",
            text(attack)
        );
    }
    assert_eq!(text(&origin.everything_received()), "");
    assert_next_client_gets_its_own_answer(&edge, "-framing");
}

#[test]
fn the_origin_gets_the_head_as_parsed_without_the_clients_connection_headers() {
    let (edge, origin, _cards) = edge_with(|_| None);
    let sent = b"GET /kept HTTP/1.1\r\nHost: news.example\r\nX-Odd-CASE:  v  \r\nConnection: keep-alive, Upgrade\r\n\
                 Upgrade: websocket\r\nKeep-Alive: timeout=5\r\nUser-Agent: Firefox\r\nX-Empty:\r\n\r\n";
    let mut client = TcpStream::connect(edge.addr).unwrap();
    client.set_read_timeout(Some(HANG)).unwrap();
    client.write_all(sent).unwrap();
    let expected = answer("", &page("/kept"));
    let mut got = vec![0u8; expected.len()];
    client.read_exact(&mut got).unwrap();
    assert_eq!(text(&got), text(&expected));
    assert_eq!(
        text(&origin.everything_received()),
        "GET /kept HTTP/1.1\r\nHost: news.example\r\nX-Odd-CASE:  v  \r\nUser-Agent: Firefox\r\n\
         X-Empty:\r\n\r\n"
    );
}

/// Hostile answers of the origin, each followed by bytes that are not part of it, in the same
/// write: none reaches the next client, whose request goes on another origin connection.
#[test]
fn an_origin_connection_with_bytes_after_its_answer_is_never_pooled() {
    let head_only = |answer: Vec<u8>| {
        let end = answer.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
        answer[..end].to_vec()
    };
    let cases: Vec<(&str, &str, Vec<u8>)> = vec![
        ("GET", "/extra-after-length", answer("", &page("/extra-after-length"))),
        ("HEAD", "/head-with-body", head_only(answer("", "<p>page</p>"))),
        ("GET", "/204-with-body", b"HTTP/1.1 204 No Content\r\n\r\n".to_vec()),
        ("GET", "/304-with-body", b"HTTP/1.1 304 Not Modified\r\nETag: \"x\"\r\n\r\n".to_vec()),
        ("GET", "/101-unasked", b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n".to_vec()),
    ];
    let scripted: Vec<(String, Vec<u8>)> = cases
        .iter()
        .map(|(_, path, answer)| (path.to_string(), [&answer[..], POISON].concat()))
        .collect();
    let (edge, _origin, _cards) = edge_with(move |request| {
        let (_, bytes) = scripted.iter().find(|(path, _)| *path == request.target)?;
        Some(vec![send(bytes)])
    });
    for (method, path, answer) in cases {
        for user_agent in [FIREFOX, GPTBOT] {
            let got = exchange(
                edge.addr,
                &request(method, path, "news.example", user_agent),
            );
            match path {
                "/101-unasked" => assert_eq!(text(&got), text(&refusal("502 Bad Gateway"))),
                _ if user_agent == FIREFOX => assert_eq!(text(&got), text(&answer), "{path}"),
                _ => assert!(!text(&got).contains("POISON"), "{path}: {}", text(&got)),
            }
            assert_next_client_gets_its_own_answer(&edge, path);
        }
    }
}

/// The same hostile answers with their stray bytes coming a moment after the answer: the
/// connection looks clean when it goes back to the pool, and is found dirty when reused.
#[test]
fn stray_bytes_that_come_after_a_clean_answer_never_reach_the_next_client() {
    let (edge, _origin, _cards) = edge_with(|request| {
        let answer = match request.target.as_str() {
            "/extra-later" => answer("", "<p>page</p>"),
            "/head-with-body-later" => page_answer(request),
            "/204-with-body-later" => b"HTTP/1.1 204 No Content\r\n\r\n".to_vec(),
            "/304-with-body-later" => b"HTTP/1.1 304 Not Modified\r\n\r\n".to_vec(),
            _ => return None,
        };
        Some(vec![send(answer), later(), send(POISON)])
    });
    for (method, path) in [
        ("GET", "/extra-later"),
        ("HEAD", "/head-with-body-later"),
        ("GET", "/204-with-body-later"),
        ("GET", "/304-with-body-later"),
    ] {
        let got = exchange(edge.addr, &request(method, path, "news.example", FIREFOX));
        assert!(!text(&got).contains("POISON"), "{path}: {}", text(&got));
        std::thread::sleep(Duration::from_millis(300));
        assert_next_client_gets_its_own_answer(&edge, path);
    }
}

/// An origin that fails in the middle of a body: the client has what was sent, then the
/// connection closes; a status line after it would read as part of the page, or as a second
/// answer.
#[test]
fn an_origin_failing_after_the_head_cuts_the_client_off_without_a_status_line() {
    let sent = page("/x");
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\n\r\n",
        sent.len() + 500
    );
    let partial = [head.as_bytes(), sent.as_bytes()].concat();
    let chunked_head = "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\
                        Transfer-Encoding: chunked\r\n\r\n";
    let bad_chunk = format!("{chunked_head}10\r\n<html><body><h1>\r\nzz\r\nnot a chunk\r\n");
    let routes = [
        ("/cut", vec![send(&partial), later(), Step::Close]),
        ("/reset", vec![send(&partial), later(), Step::Reset]),
        ("/bad-chunk", vec![send(&bad_chunk), later(), Step::Close]),
    ];
    let (edge, _origin, _cards) = edge_with(move |request| {
        let (_, steps) = routes.iter().find(|(path, _)| *path == request.target)?;
        Some(steps.clone())
    });
    let human = |path| text(&exchange(edge.addr, &get(path)));
    assert_eq!(human("/cut"), text(&partial));
    assert_eq!(human("/reset"), text(&partial));
    assert_eq!(
        human("/bad-chunk"),
        format!("{chunked_head}10\r\n<html><body><h1>\r\n")
    );
    for path in ["/cut", "/reset", "/bad-chunk"] {
        let got = text(&exchange(
            edge.addr,
            &request("GET", path, "news.example", GPTBOT),
        ));
        assert!(got.starts_with("HTTP/1.1 200 OK\r\n"), "{path}: {got}");
        assert_eq!(got.matches("HTTP/1.1").count(), 1, "{path}: {got}");
        assert!(!got.ends_with("0\r\n\r\n"), "{path} looks complete: {got}");
    }
    assert_next_client_gets_its_own_answer(&edge, "-failures");
}

/// A card service whose calls for news.example answer as `hostile` scripts them (by the page's
/// last path segment), and those for other.example with their card.
fn hostile_cards(hostile: fn(&str, Vec<u8>) -> Vec<Step>) -> (Edge, Stub, Stub) {
    let cards = Stub::start(move |request| {
        let card = card_answer(request);
        match request.query("fragment_id").as_str() {
            "frg_news" => {
                let page_url = request.query("page_url");
                hostile(page_url.rsplit('/').next().unwrap_or_default(), card)
            }
            _ => vec![send(card)],
        }
    });
    let origin = Stub::start(|request| vec![send(page_answer(request))]);
    let edge = Edge::start(origin.addr, cards.addr, SITES, &[]);
    (edge, origin, cards)
}

fn stale_card() -> Vec<u8> {
    answer("", "<aside data-brand=\"STALE\">STALE CARD</aside>")
}

/// Each page of `cases` (a path, and whether its own card is placed), and after it a page of
/// the other site: that one gets its own card, never bytes of the call before.
#[track_caller]
fn assert_cards_stay_with_their_pages(edge: &Edge, cases: &[(&str, bool)]) {
    for &(path, placed) in cases {
        let page = agent_page(edge, "news.example", path);
        let card = card_for(&format!("http://news.example{path}"));
        assert_eq!(page.contains(&card), placed, "{path}: {page}");
        std::thread::sleep(Duration::from_millis(300));
        let next = agent_page(edge, "other.example", &format!("/after{path}"));
        let own = card_for(&format!("http://other.example/after{path}"));
        assert!(
            next.contains(&format!("{own}<article>")),
            "after {path}: {next}"
        );
        assert!(!next.contains("STALE"), "after {path}: {next}");
    }
}

/// Stray bytes on a card connection, in the same write as the answer, or an interim answer
/// before it.
#[test]
fn a_card_connection_with_bytes_after_its_answer_is_never_pooled() {
    let (edge, _origin, _cards) = hostile_cards(|case, card| match case {
        "stale" => vec![send([card, stale_card()].concat())],
        "continue" => vec![send("HTTP/1.1 100 Continue\r\n\r\n"), later(), send(card)],
        "nofill-body" => vec![send(
            [&b"HTTP/1.1 204 No Content\r\n\r\n"[..], &stale_card()].concat(),
        )],
        _ => vec![send(card)],
    });
    assert_cards_stay_with_their_pages(
        &edge,
        &[
            ("/stale", true),
            ("/continue", true),
            ("/nofill-body", false),
        ],
    );
}

/// Stray bytes that come on a card connection a moment after a clean answer: found when the
/// connection is reused.
#[test]
fn stray_card_bytes_that_come_after_a_clean_answer_never_become_the_next_card() {
    let (edge, _origin, _cards) = hostile_cards(|case, card| match case {
        "stale-later" => vec![send(card), later(), send(stale_card())],
        "nofill-later" => vec![
            send("HTTP/1.1 204 No Content\r\n\r\n"),
            later(),
            send(stale_card()),
        ],
        _ => vec![send(card)],
    });
    assert_cards_stay_with_their_pages(&edge, &[("/stale-later", true), ("/nofill-later", false)]);
}

/// An agent's page through the edge, its chunked framing removed.
fn agent_page(edge: &Edge, host: &str, path: &str) -> String {
    let got = exchange(edge.addr, &request("GET", path, host, GPTBOT));
    let (head, body) = split_head(&got);
    assert!(head.contains("Transfer-Encoding: chunked\r\n"), "{head}");
    text(&dechunk(body))
}

fn split_head(answer: &[u8]) -> (String, &[u8]) {
    let end = answer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no head in {}", text(answer)))
        + 4;
    (text(&answer[..end]), &answer[end..])
}

#[test]
fn a_card_larger_than_the_limit_is_read_no_further_and_its_connection_dropped() {
    let cards = Stub::start(|request| {
        let big = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n<aside>",
            10 << 20
        );
        match request.query("fragment_id").as_str() {
            // 100 KiB of the 10 MiB announced, then nothing: the rest is never waited for.
            "frg_news" => vec![send(big), send(vec![b'x'; 100 << 10]), Step::Pause(HANG)],
            _ => vec![send(card_answer(request))],
        }
    });
    let origin = Stub::start(|request| vec![send(page_answer(request))]);
    let edge = Edge::start(origin.addr, cards.addr, SITES, &[]);
    let page = agent_page(&edge, "news.example", "/big");
    assert_eq!(page, self::page("/big"));
    let lines = edge.fail_open_lines("http://news.example/big");
    assert_eq!(lines.len(), 1, "{}", edge.log());
    assert!(
        lines[0].contains("fail open: card_error ") && lines[0].contains("64 KiB"),
        "{lines:?}"
    );
    let next = agent_page(&edge, "other.example", "/next");
    assert!(
        next.contains(&card_for("http://other.example/next")),
        "{next}"
    );
    assert_eq!(
        cards.received().len(),
        2,
        "the big card's connection was reused"
    );
}

#[test]
fn a_page_from_an_http_1_0_origin_is_framed_for_the_agents_own_version() {
    let origin = Stub::start(|request| {
        let head = "HTTP/1.0 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n";
        vec![
            send(format!("{head}{}", page(&request.target))),
            Step::Close,
        ]
    });
    let cards = Stub::start(|request| vec![send(card_answer(request))]);
    let edge = Edge::start(origin.addr, cards.addr, SITES, &[]);
    let composed = format!(
        "<html><body><h1>/old</h1>{}<article><p class=\"agentcard-brand-line\">B</p>\
         <p>story /old</p></article></body></html>",
        card_for("http://news.example/old")
    );
    let got = exchange(edge.addr, &request("GET", "/old", "news.example", GPTBOT));
    let (head, body) = split_head(&got);
    assert_eq!(
        head,
        "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\
         Cache-Control: public, max-age=0, must-revalidate\r\nTransfer-Encoding: chunked\r\n\r\n"
    );
    assert_eq!(text(&dechunk(body)), composed);
    let old_client =
        format!("GET /old HTTP/1.0\r\nHost: news.example\r\nUser-Agent: {GPTBOT}\r\n\r\n");
    let got = exchange(edge.addr, old_client.as_bytes());
    let (head, body) = split_head(&got);
    assert_eq!(
        head,
        "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\
         Cache-Control: public, max-age=0, must-revalidate\r\n\r\n"
    );
    assert_eq!(text(body), composed);
}

#[test]
fn a_gated_head_gets_the_head_its_get_gets() {
    let (edge, _origin, _cards) = edge_with(|_| None);
    let heads: Vec<String> = ["GET", "HEAD"]
        .into_iter()
        .map(|method| {
            let got = exchange(edge.addr, &request(method, "/same", "news.example", GPTBOT));
            split_head(&got).0
        })
        .collect();
    assert_eq!(heads[0], heads[1]);
    assert!(!heads[1].contains("Content-Length"), "{}", heads[1]);
    let head_answer = exchange(edge.addr, &request("HEAD", "/same", "news.example", GPTBOT));
    assert_eq!(text(&head_answer), heads[1], "a HEAD answer has no body");
}

#[test]
fn an_answer_with_thousands_of_headers_passes_through_byte_for_byte() {
    let many: String = (0..2000)
        .map(|i| format!("Set-Cookie: c{i}=1\r\n"))
        .collect();
    let expected = answer(&many, "ok");
    let scripted = expected.clone();
    let (edge, _origin, _cards) =
        edge_with(move |request| (request.target == "/many").then(|| vec![send(&scripted)]));
    assert_eq!(text(&exchange(edge.addr, &get("/many"))), text(&expected));
}

#[test]
fn an_upgrade_is_not_passed_on_and_an_unasked_101_is_a_502_that_closes_both_sides() {
    let (edge, origin, _cards) = edge_with(|request| {
        (request.target == "/ws").then(|| {
            vec![send(
                "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n",
            )]
        })
    });
    let upgrade = b"GET /ws HTTP/1.1\r\nHost: news.example\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
                    Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";
    let mut client = TcpStream::connect(edge.addr).unwrap();
    client.set_read_timeout(Some(HANG)).unwrap();
    client.write_all(upgrade).unwrap();
    assert_eq!(
        text(&read_until_closed(&mut client)),
        text(&refusal("502 Bad Gateway"))
    );
    let _ = client.write_all(b"\x81\x85abcd\x09\x07\x0f\x08\x0e");
    assert_next_client_gets_its_own_answer(&edge, "-101");
    let received = origin.received();
    assert_eq!(
        text(&received[0]),
        "GET /ws HTTP/1.1\r\nHost: news.example\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
         Sec-WebSocket-Version: 13\r\n\r\n",
        "the upgraded connection carried more"
    );
}
