//! Each console page reads its data in a bounded number of queries, whatever the size of the
//! organisation: with 50 sites, a page that asked for each site's fragments apart (one query
//! per site) would send more than 50.
//!
//! How the queries are counted: the test's server reaches its database through a TCP proxy of
//! the test, which reads the PostgreSQL protocol the server sends and counts, per connection,
//! the statements it runs (`Q`, a simple query; `E`, an execute of the extended protocol)
//! before passing them on. The count is exact and synchronous: a statement is counted before
//! PostgreSQL sees it, so by the time the page is answered every statement of it has been
//! counted (PostgreSQL's own statistics reach `pg_stat_*` only up to seconds later, and
//! `pg_stat_statements` is not loaded on the test machine). A console request runs on one pooled
//! connection, so the page's count is the largest growth of one connection's count during the
//! request; the server's background threads (cache refresher, report flusher) query on
//! connections of their own, a pooled connection reused meanwhile adds one or two at most.

use crate::console_fixtures::{person_in, site_with_front_page, Browser};
use crate::fixtures::card_in;
use crate::harness::own_server_via;
use agentcard::console::{page_table, Access};
use agentcard::db::orgs::Creator;
use agentcard::db::people;
use agentcard::domain::{
    CanonicalPath, CardStatus, DomainName, FragmentRef, MatchMode, OrgName, Role, TokenName,
};
use agentcard::ids::{CardId, FragmentId, KeyId, PersonId, RouteId, TokenId};
use agentcard::ops::{self, routes::RouteWrite, Actor, Scope};
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;

const SITES: usize = 50;
/// More than any page needs (the session, the organisation, its lists, a transaction's `BEGIN`
/// and `COMMIT`: 4 to 8 statements), with room for a background statement on the same pooled
/// connection; far fewer than one query per site.
const BOUND: usize = 12;

/// Every `GET` page of the console's table for a signed-in owner, its captures naming the test's
/// own objects, so that a page added later is counted too.
#[test]
fn each_console_page_reads_an_organisation_of_50_sites_in_a_bounded_number_of_queries() {
    let proxy = CountingProxy::start();
    let server = own_server_via(|url| proxy.in_front_of(url));
    let mut db = server.db();
    let org =
        agentcard::db::orgs::create_org(&mut db, &OrgName::parse("Fifty Sites").unwrap()).unwrap();
    let caller = ops::orgs::open(&mut db, &org.id, Actor::Cli).unwrap();
    let front = FragmentRef::parse("front").unwrap();
    let mut fragment = String::new();
    for n in 0..SITES {
        let domain = DomainName::parse(&format!("site{n:02}.example")).unwrap();
        fragment = site_with_front_page(&mut db, &caller, &domain, &front).to_string();
    }
    let last_site = format!("site{:02}.example", SITES - 1);
    let rule = RouteWrite {
        path: CanonicalPath::parse("/news", "path").unwrap(),
        mode: MatchMode::Prefix,
        fragment_ref: front,
    };
    let domain = DomainName::parse(&last_site).unwrap();
    let route = ops::routes::create_route(&mut db, &caller, &domain, &rule)
        .unwrap()
        .id;
    // A live key and token for their revocation pages, revoked ones for their deletion pages.
    let keys: Vec<KeyId> = (0..2)
        .map(|_| {
            ops::keys::create_key(&mut db, &caller, None, "test")
                .unwrap()
                .key
                .id
        })
        .collect();
    ops::keys::revoke_key(&mut db, &caller, &keys[1]).unwrap();
    let name = TokenName::parse("script").unwrap();
    let tokens: Vec<TokenId> = (0..2)
        .map(|_| {
            let made = ops::tokens::create_token(&mut db, &caller, &name, Creator::Owner, "test");
            made.unwrap().token.id
        })
        .collect();
    ops::tokens::revoke_token(&mut db, Scope::Org(&caller), &tokens[1]).unwrap();
    // A pending invitation for its revocation page.
    let url = server.app.config.console_url.clone().unwrap();
    let invited = agentcard::domain::Email::parse("invited@example.org").unwrap();
    ops::members::invite(&mut db, &caller, &url, &invited, Role::Member).unwrap();
    let invitation: i64 = db
        .query_one(
            "SELECT id FROM one_time_links WHERE org_id = $1 AND email = 'invited@example.org'",
            &[&org.id],
        )
        .unwrap()
        .get(0);
    let org_text = org.id.to_string();
    let card = card_in(&mut db, Some(&org_text), CardStatus::Draft).id;
    let member = person_in(&mut db, Some(&org_text), Role::Member);
    let member = people::find_by_email(&mut db, &member).unwrap().unwrap().id;
    let owner = person_in(&mut db, Some(&org_text), Role::Owner);
    let browser = Browser::signed_in_to(&server, &owner);
    let own = |segment: &str, revoked: usize| -> String {
        if segment == "1" {
            invitation.to_string()
        } else if CardId::parse(segment).is_some() {
            card.clone()
        } else if KeyId::parse(segment).is_some() {
            keys[revoked].to_string()
        } else if TokenId::parse(segment).is_some() {
            tokens[revoked].to_string()
        } else if FragmentId::parse(segment).is_some() {
            fragment.clone()
        } else if RouteId::parse(segment).is_some() {
            route.to_string()
        } else if PersonId::parse(segment).is_some() {
            member.to_string()
        } else if segment == "sample.example" {
            last_site.clone()
        } else {
            segment.to_string()
        }
    };

    let signed_in = page_table()
        .into_iter()
        .filter(|p| p.method == "GET" && p.access != Access::Public);
    for page in signed_in {
        let revoked = usize::from(page.path.ends_with("/delete"));
        let segments = page.path.split('/').map(|segment| own(segment, revoked));
        let path = segments.collect::<Vec<_>>().join("/");
        let before = proxy.counts();
        let answer = browser.get(&path);
        let queries = proxy.largest_growth_since(&before);
        // No icon was fetched (the fetch is off in tests): its page reads it and finds none.
        let found = answer.status == 200 || path.ends_with("/icon") && answer.status == 404;
        assert!(found, "{path}: {} {}", answer.status, answer.text());
        assert!(
            (1..=BOUND).contains(&queries),
            "{path} ran {queries} queries for an organisation of {SITES} sites (bound {BOUND})"
        );
        let lists_every_site = ["/sites", "/cards/{card}/eligibility"]
            .iter()
            .any(|pattern| path == pattern.replace("{card}", &card));
        if lists_every_site {
            assert!(
                answer.text().contains(&last_site),
                "{path} lists every site"
            );
        }
    }
}

/// A TCP proxy to the test's PostgreSQL that counts the statements each connection runs.
struct CountingProxy {
    addr: SocketAddr,
    /// PostgreSQL's address, set by [`CountingProxy::in_front_of`] before the first connection.
    target: Arc<Mutex<Option<String>>>,
    /// Each connection's count of statements, in the order they were opened.
    counts: Arc<Mutex<Vec<Arc<AtomicUsize>>>>,
    stop: Arc<AtomicBool>,
    accepting: Option<thread::JoinHandle<()>>,
}

impl CountingProxy {
    fn start() -> CountingProxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the proxy");
        let addr = listener.local_addr().unwrap();
        let counts: Arc<Mutex<Vec<Arc<AtomicUsize>>>> = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let target: Arc<Mutex<Option<String>>> = Arc::default();
        let accepting = {
            let (counts, stop, target) = (counts.clone(), stop.clone(), target.clone());
            thread::spawn(move || {
                for client in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        return;
                    }
                    let Ok(client) = client else { continue };
                    let upstream = target.lock().unwrap().clone().expect("proxy target set");
                    let count = Arc::new(AtomicUsize::new(0));
                    counts.lock().unwrap().push(count.clone());
                    relay(client, &upstream, count);
                }
            })
        };
        CountingProxy {
            addr,
            target,
            counts,
            stop,
            accepting: Some(accepting),
        }
    }

    /// `url` (a test database's) with the proxy in place of its server.
    fn in_front_of(&self, url: &str) -> String {
        let scheme_end = url.find("://").expect("a postgres:// URL") + 3;
        let rest = &url[scheme_end..];
        let host_start = rest.find('@').map_or(0, |at| at + 1);
        let host_end = rest[host_start..]
            .find('/')
            .map_or(rest.len(), |i| host_start + i);
        let host = &rest[host_start..host_end];
        let server = if host.contains(':') {
            host.to_string()
        } else {
            format!("{host}:5432")
        };
        *self.target.lock().unwrap() = Some(server);
        format!(
            "{}{}{}{}",
            &url[..scheme_end],
            &rest[..host_start],
            self.addr,
            &rest[host_end..]
        )
    }

    fn counts(&self) -> Vec<usize> {
        let counts = self.counts.lock().unwrap();
        counts.iter().map(|c| c.load(Ordering::SeqCst)).collect()
    }

    /// The most statements one connection ran since `before` (a connection opened since then
    /// counts from zero).
    fn largest_growth_since(&self, before: &[usize]) -> usize {
        let now = self.counts();
        now.iter()
            .enumerate()
            .map(|(i, n)| n - before.get(i).copied().unwrap_or(0))
            .max()
            .unwrap_or(0)
    }
}

impl Drop for CountingProxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr);
        if let Some(accepting) = self.accepting.take() {
            let _ = accepting.join();
        }
    }
}

/// Copies one connection both ways, counting the statements on the way to PostgreSQL. The
/// threads end when either side closes (the server's connections close when it stops).
fn relay(client: TcpStream, upstream: &str, count: Arc<AtomicUsize>) {
    let server = TcpStream::connect(upstream).expect("connect to PostgreSQL");
    // Each message is written as it is read: without this, Nagle's algorithm holds each small
    // write for the peer's delayed acknowledgement.
    for socket in [&client, &server] {
        socket.set_nodelay(true).unwrap();
    }
    let (client_read, server_write) = (client.try_clone().unwrap(), server.try_clone().unwrap());
    let (mut server_read, mut client_write) = (server.try_clone().unwrap(), client);
    thread::spawn(move || {
        let _ = count_and_forward(client_read, server_write, &count);
        let _ = server.shutdown(Shutdown::Both);
    });
    thread::spawn(move || {
        let _ = io::copy(&mut server_read, &mut client_write);
        let _ = client_write.shutdown(Shutdown::Both);
    });
}

/// Reads the frontend's messages: untyped packets first (an SSL or GSS request, then the
/// startup message), then typed ones (a byte, a length that counts itself, the body).
fn count_and_forward(
    mut from: TcpStream,
    mut to: TcpStream,
    count: &AtomicUsize,
) -> io::Result<()> {
    const SSL_REQUEST: u32 = 80877103;
    const GSS_REQUEST: u32 = 80877104;
    loop {
        let body = packet(&mut from, None)?;
        to.write_all(&body)?;
        let code = u32::from_be_bytes(body[4..8].try_into().unwrap());
        if code != SSL_REQUEST && code != GSS_REQUEST {
            break;
        }
    }
    loop {
        let mut kind = [0u8; 1];
        from.read_exact(&mut kind)?;
        if matches!(kind[0], b'Q' | b'E') {
            count.fetch_add(1, Ordering::SeqCst);
        }
        let body = packet(&mut from, Some(kind[0]))?;
        to.write_all(&body)?;
    }
}

/// One length-prefixed packet, as read (with its type byte when `kind` has one).
fn packet(from: &mut TcpStream, kind: Option<u8>) -> io::Result<Vec<u8>> {
    let mut length = [0u8; 4];
    from.read_exact(&mut length)?;
    let size = u32::from_be_bytes(length) as usize;
    let mut bytes: Vec<u8> = kind.into_iter().collect();
    bytes.extend_from_slice(&length);
    let start = bytes.len();
    bytes.resize(start + size.saturating_sub(4), 0);
    from.read_exact(&mut bytes[start..])?;
    Ok(bytes)
}
