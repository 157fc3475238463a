//! A TCP proxy between a test's server and its PostgreSQL, reading the protocol the server
//! sends: it counts, per connection, the statements run (`Q`, a simple query; `E`, an execute
//! of the extended protocol) before passing them on, and can lose the answer to a report
//! flush's `COMMIT` (the commit done, its acknowledgement never delivered), as a network or a
//! failing primary may.

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;

/// What the report's flush writes first in its transaction: the connection that sends it is
/// the flusher's.
const FLUSH_MARK: &[u8] = b"INSERT INTO report_flushes";
/// The backend's `CommandComplete` of a `COMMIT`: a type byte, a length counting itself, the
/// tag.
const COMMIT_DONE: &[u8] = b"C\0\0\0\x0bCOMMIT\0";

pub struct PgProxy {
    addr: SocketAddr,
    /// PostgreSQL's address, set by [`PgProxy::in_front_of`] before the first connection.
    target: Arc<Mutex<Option<String>>>,
    /// Each connection's count of statements, in the order they were opened.
    counts: Arc<Mutex<Vec<Arc<AtomicUsize>>>>,
    cut: Arc<CommitCut>,
    stop: Arc<AtomicBool>,
    accepting: Option<thread::JoinHandle<()>>,
}

/// Whether the next answer to a flush's `COMMIT` is to be lost, and how many were.
#[derive(Default)]
struct CommitCut {
    armed: AtomicBool,
    done: AtomicUsize,
}

impl PgProxy {
    pub fn start() -> PgProxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the proxy");
        let addr = listener.local_addr().unwrap();
        let counts: Arc<Mutex<Vec<Arc<AtomicUsize>>>> = Arc::default();
        let cut: Arc<CommitCut> = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let target: Arc<Mutex<Option<String>>> = Arc::default();
        let accepting = {
            let (counts, cut, stop, target) =
                (counts.clone(), cut.clone(), stop.clone(), target.clone());
            thread::spawn(move || {
                for client in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        return;
                    }
                    let Ok(client) = client else { continue };
                    let upstream = target.lock().unwrap().clone().expect("proxy target set");
                    let count = Arc::new(AtomicUsize::new(0));
                    counts.lock().unwrap().push(count.clone());
                    relay(client, &upstream, count, cut.clone());
                }
            })
        };
        PgProxy {
            addr,
            target,
            counts,
            cut,
            stop,
            accepting: Some(accepting),
        }
    }

    /// `url` (a test database's) with the proxy in place of its server.
    pub fn in_front_of(&self, url: &str) -> String {
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

    pub fn counts(&self) -> Vec<usize> {
        let counts = self.counts.lock().unwrap();
        counts.iter().map(|c| c.load(Ordering::SeqCst)).collect()
    }

    /// The most statements one connection ran since `before` (a connection opened since then
    /// counts from zero).
    pub fn largest_growth_since(&self, before: &[usize]) -> usize {
        let now = self.counts();
        now.iter()
            .enumerate()
            .map(|(i, n)| n - before.get(i).copied().unwrap_or(0))
            .max()
            .unwrap_or(0)
    }

    /// Loses the answer to the next `COMMIT` of a report flush: PostgreSQL commits, then the
    /// proxy closes the flusher's connection instead of passing the answer on.
    pub fn lose_next_flush_commit(&self) {
        self.cut.armed.store(true, Ordering::SeqCst);
    }

    /// How many answers to a flush's `COMMIT` were lost.
    pub fn flush_commits_lost(&self) -> usize {
        self.cut.done.load(Ordering::SeqCst)
    }
}

impl Drop for PgProxy {
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
fn relay(client: TcpStream, upstream: &str, count: Arc<AtomicUsize>, cut: Arc<CommitCut>) {
    let server = TcpStream::connect(upstream).expect("connect to PostgreSQL");
    // Each message is written as it is read: without this, Nagle's algorithm holds each small
    // write for the peer's delayed acknowledgement.
    for socket in [&client, &server] {
        socket.set_nodelay(true).unwrap();
    }
    let flusher = Arc::new(AtomicBool::new(false));
    let (client_read, server_write) = (client.try_clone().unwrap(), server.try_clone().unwrap());
    let (server_read, client_write) = (server.try_clone().unwrap(), client);
    let is_flusher = flusher.clone();
    thread::spawn(move || {
        let _ = count_and_forward(client_read, server_write, &count, &is_flusher);
        let _ = server.shutdown(Shutdown::Both);
    });
    thread::spawn(move || {
        let _ = answer(server_read, &client_write, &flusher, &cut);
        let _ = client_write.shutdown(Shutdown::Both);
    });
}

/// Reads the frontend's messages: untyped packets first (an SSL or GSS request, then the
/// startup message), then typed ones (a byte, a length that counts itself, the body).
fn count_and_forward(
    mut from: TcpStream,
    mut to: TcpStream,
    count: &AtomicUsize,
    flusher: &AtomicBool,
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
        if contains(&body, FLUSH_MARK) {
            flusher.store(true, Ordering::SeqCst);
        }
        to.write_all(&body)?;
    }
}

/// Passes the backend's bytes on, unless they hold the answer to a flush's `COMMIT` while a
/// cut is armed: then the connection ends there, that answer and what follows it unsent.
fn answer(
    mut from: TcpStream,
    mut to: &TcpStream,
    flusher: &AtomicBool,
    cut: &CommitCut,
) -> io::Result<()> {
    let mut buffer = [0u8; 8192];
    // The end of the previous read: the answer may straddle two reads.
    let mut tail: Vec<u8> = Vec::new();
    loop {
        let read = from.read(&mut buffer)?;
        if read == 0 {
            return Ok(());
        }
        let mut seen = std::mem::take(&mut tail);
        seen.extend_from_slice(&buffer[..read]);
        if flusher.load(Ordering::SeqCst)
            && contains(&seen, COMMIT_DONE)
            && cut.armed.swap(false, Ordering::SeqCst)
        {
            cut.done.fetch_add(1, Ordering::SeqCst);
            return Ok(());
        }
        to.write_all(&buffer[..read])?;
        tail = seen[seen.len().saturating_sub(COMMIT_DONE.len() - 1)..].to_vec();
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
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
