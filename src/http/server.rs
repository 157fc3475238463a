//! The listener and the per-connection loop: one `may` coroutine per connection, requests
//! parsed from one growing buffer, answers batched until the next read would block and
//! written after the worker's other ready connections have computed theirs, waits without
//! timers (deadlines are the watchdog's).

use super::parse::{parse_request, HttpLimits, Parsing, Rejection};
use super::watchdog::{Timeouts, Waiting, Wake, Watch, Watchdog};
use super::{error_response, Request, Response, Service};
use crate::failure_log::FailureLog;
use may::net::{TcpListener, TcpStream};
use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::ops::ControlFlow;
use std::os::fd::{FromRawFd, IntoRawFd};
use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Bytes asked of the socket per read.
const READ_CHUNK: usize = 8192;

#[derive(Debug, Clone)]
pub struct ServerOptions {
    pub limits: HttpLimits,
    /// Deadline for a whole request once its first byte arrived (slow-loris guard).
    pub request_timeout: Duration,
    /// How long a keep-alive connection may wait for its next request.
    pub idle_timeout: Duration,
    /// Headers of the answers the layer gives itself (refusals, the panic net's `500`), set
    /// over theirs: these answers may be to any path, `/v1` among them, whose responses must
    /// all carry the management API's headers.
    pub own_answer_headers: &'static [(&'static str, &'static str)],
}

/// A running listener, until [`Server::shut_down`].
pub struct Server {
    addr: SocketAddr,
    watchdog: Arc<Watchdog>,
}

/// How often a shutdown looks whether the last connection has closed.
const DRAIN_POLL: Duration = Duration::from_millis(20);

impl Server {
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Connections open now (for the operator metrics).
    pub fn open_connections(&self) -> usize {
        self.watchdog.open_connections()
    }

    /// Starts a shutdown's drain (decisions.md, "Fleet"): the listener still accepts and every
    /// connection is served, but each answer closes its connection.
    pub fn close_after_answers(&self) {
        self.watchdog.close_after_answers();
    }

    /// Stops accepting (the listener closes: new connections are refused), closes idle
    /// connections, and waits until those inside a request have had their answer, at most
    /// until `deadline`. `false` when some were still open then.
    pub fn shut_down(&self, deadline: Instant) -> bool {
        self.watchdog.drain();
        // The accept loop looks at the flag after each accept: one more connection wakes it.
        let mut wake = self.addr;
        if wake.ip().is_unspecified() {
            wake.set_ip(std::net::Ipv4Addr::LOCALHOST.into());
        }
        let _ = std::net::TcpStream::connect_timeout(&wake, DRAIN_POLL);
        while self.watchdog.open_connections() > 0 {
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(DRAIN_POLL);
        }
        true
    }
}

/// Binds `listen` (port 0 picks a free port) and serves every connection on a coroutine.
pub fn start(
    listen: SocketAddr,
    options: ServerOptions,
    service: Arc<dyn Service>,
) -> io::Result<Server> {
    serve(exclusive_listener(listen)?, options, service)
}

/// Serves every connection of `listener` (bound earlier, by [`exclusive_listener`]) on a
/// coroutine.
pub fn serve(
    listener: TcpListener,
    options: ServerOptions,
    service: Arc<dyn Service>,
) -> io::Result<Server> {
    let addr = listener.local_addr()?;
    let watchdog = Watchdog::start(Timeouts {
        idle: options.idle_timeout,
        request: options.request_timeout,
    });
    let options = Arc::new(options);
    let accepting = Arc::clone(&watchdog);
    let shed_at = shed_threshold();
    may::go!(move || accept_loop(listener, options, service, accepting, shed_at));
    Ok(Server { addr, watchdog })
}

/// The listening socket, ours alone: `may`'s own `bind` sets `SO_REUSEPORT`, with which a second
/// process binds the same address without error and the kernel splits the connections
/// between the two. `SO_REUSEADDR` still lets a restart bind while old connections linger.
pub fn exclusive_listener(listen: SocketAddr) -> io::Result<TcpListener> {
    use socket2::{Domain, Socket, Type};
    let socket = Socket::new(Domain::for_address(listen), Type::STREAM, None)?;
    socket.set_reuse_address(true)?;
    socket.bind(&listen.into())?;
    socket.listen(LISTEN_BACKLOG)?;
    // SAFETY: the descriptor is a listening socket that nothing else owns: `into_raw_fd` gave
    // it up, and `may`'s listener takes it whole.
    Ok(unsafe { TcpListener::from_raw_fd(socket.into_raw_fd()) })
}

/// Connections the kernel queues before they are accepted, as `may`'s own bind asks.
const LISTEN_BACKLOG: i32 = 1024;

/// Descriptors kept for everything but client connections: the database pools, the
/// listeners, the log, the files a request may open.
const RESERVED_DESCRIPTORS: u64 = 128;
/// Idle connections closed at once when the open ones near the limit.
const SHED_BATCH: usize = 64;
/// After an accept error (out of descriptors, a reset), how long the loop pauses.
pub(super) const ACCEPT_BACKOFF: Duration = Duration::from_millis(10);

/// The coroutine runtime (`workers` worker threads, coroutine stacks of `stack_size` bytes),
/// and as many open files as the system allows: each connection holds one, and a closed one a
/// second more (see `watchdog`).
pub fn configure_runtime(workers: usize, stack_size: usize) {
    may::config()
        .set_workers(workers)
        .set_stack_size(stack_size);
    match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(limit) => log::info!("open files limit: {limit}"),
        Err(error) => log::warn!("open files limit not raised: {error}"),
    }
}

/// Open connections past which the longest idle ones are closed for newcomers: nine tenths of
/// the descriptors the process may open, less the reserved ones.
fn shed_threshold() -> usize {
    let limit = rlimit::getrlimit(rlimit::Resource::NOFILE).map_or(1024, |(soft, _)| soft);
    (limit.saturating_sub(RESERVED_DESCRIPTORS) * 9 / 10) as usize
}

fn accept_loop(
    listener: TcpListener,
    options: Arc<ServerOptions>,
    service: Arc<dyn Service>,
    watchdog: Arc<Watchdog>,
    shed_at: usize,
) {
    let refusals = FailureLog::new("accepting connections");
    let serve = |stream: TcpStream, peer: SocketAddr| {
        // Room is made before the newcomer is watched: it is not among those shed for it.
        if watchdog.open_connections() >= shed_at {
            watchdog.shed_idle(SHED_BATCH);
        }
        // Past its address's share, a connection is closed at once (dropped here).
        let cap = options.limits.connection_cap(peer.ip());
        let Some(watch) = watchdog.watch_accepted(&stream, peer.ip(), cap) else {
            return;
        };
        let options = Arc::clone(&options);
        let service = Arc::clone(&service);
        may::go!(move || {
            // Boxed before its first wait, and the watchdog's to drop (see `watchdog`).
            let mut stream = Box::new(stream);
            if let Err(error) = serve_connection(&mut stream, peer, &*service, &options, &watch) {
                log::debug!("connection {peer}: {error}");
            }
            let _ = stream.shutdown(std::net::Shutdown::Both);
            watch.retire(stream);
        });
    };
    loop {
        let accepted = listener.accept();
        let draining = watchdog.is_draining();
        match accepted {
            Ok((stream, peer)) => {
                refusals.succeeded();
                serve(stream, peer);
            }
            Err(error) if !draining => {
                // Out of descriptors (the idle ones make room) or a reset before accept: back
                // off instead of spinning.
                watchdog.shed_idle(SHED_BATCH);
                refusals.failed(&error.to_string());
                may::coroutine::sleep(ACCEPT_BACKOFF);
            }
            Err(_) => {}
        }
        if draining {
            // The connections the kernel took before the listener closes are in flight too:
            // served (each closes after its answer), not reset with the listener's queue.
            while let Ok((stream, peer)) = listener.inner().accept() {
                // SAFETY: `accept` gave this descriptor to us alone; may's stream takes it whole.
                serve(
                    unsafe { TcpStream::from_raw_fd(stream.into_raw_fd()) },
                    peer,
                );
            }
            // Returning drops the listener: the socket closes.
            return;
        }
    }
}

/// Answers every whole request in the buffer, writes the answers, reads what has arrived,
/// and waits (without a timer: see `watchdog`) only when nothing has.
fn serve_connection(
    stream: &mut TcpStream,
    peer: SocketAddr,
    service: &dyn Service,
    options: &ServerOptions,
    watch: &Watch,
) -> io::Result<()> {
    // Both buffers are allocated at the first read and answer, and given back when the
    // connection has been idle a while (`Wake::Shrink`): an idle connection holds none.
    let mut buf = InputBuffer::default();
    // Shed or drained before this coroutine ran, the connection ends as in its first wait.
    if watch.begin() == Wake::Expired && !answers_after_expiry(&mut buf, stream, watch) {
        return Ok(());
    }
    stream.set_nodelay(true)?;
    let mut out: Vec<u8> = Vec::new();
    let mut requests: u64 = 0;
    // Whether this request's client was told `100 Continue` already.
    let mut continued = false;
    loop {
        let send_continue = match next_request(&buf, options, peer) {
            Ok(Parsing::Done(parsed)) => {
                buf.consume(parsed.consumed);
                requests += 1;
                continued = false;
                let response = call_guarded(service, parsed.request, options);
                // Shutting down: this answer is the connection's last.
                let close = parsed.close || !watch.keeps_alive();
                encode(&response, parsed.is_head, close, &mut out);
                if close {
                    return send(stream, watch, requests, &out);
                }
                continue;
            }
            Ok(Parsing::NeedMore { awaiting_body }) => awaiting_body.filter(|_| !continued),
            Err(rejection) => {
                let connection = (&*stream, watch, requests);
                return reject(connection, &mut out, &rejection, options);
            }
        };
        let connection = (&*stream, watch, requests);
        send_harvest(connection, &mut out)?;
        if let Some(head) = send_continue {
            if let ControlFlow::Break(end) =
                answer_expectation(connection, service, &head, &mut out)
            {
                return end;
            }
            continued = true;
        }
        if let ControlFlow::Break(end) = read_or_wait(connection, &mut buf, &mut out, options) {
            return end;
        }
    }
}

/// The head is whole and asks whether to send the body (`Expect: 100-continue`): the answer at
/// once when the head decides it (the body is then never read: `Break`, the connection
/// closes), else `100 Continue`.
fn answer_expectation(
    (stream, watch, requests): (&TcpStream, &Watch, u64),
    service: &dyn Service,
    head: &Request,
    out: &mut Vec<u8>,
) -> ControlFlow<io::Result<()>> {
    if let Some(answer) = service.answer_without_body(head) {
        encode(&answer, false, true, out);
        return ControlFlow::Break(send(stream, watch, requests, out));
    }
    match send(stream, watch, requests, b"HTTP/1.1 100 Continue\r\n\r\n") {
        Ok(()) => ControlFlow::Continue(()),
        Err(error) => ControlFlow::Break(Err(error)),
    }
}

/// The request the buffer holds, whole or begun.
fn next_request(
    buf: &InputBuffer,
    options: &ServerOptions,
    peer: SocketAddr,
) -> Result<Parsing, Rejection> {
    // An empty buffer (the usual state after answering) holds no request to look for.
    if buf.is_empty() {
        return Ok(Parsing::NeedMore {
            awaiting_body: None,
        });
    }
    parse_request(buf.data(), &options.limits, peer)
}

/// Writes the answers of one readiness harvest, if any, back to back: the connection steps
/// behind the worker's other ready connections before it writes. A client asleep is then woken
/// once for several answers, not once for each: every wake-up across cores costs the writing
/// thread time in the kernel.
fn send_harvest(
    (stream, watch, requests): (&TcpStream, &Watch, u64),
    out: &mut Vec<u8>,
) -> io::Result<()> {
    if out.is_empty() {
        return Ok(());
    }
    may::coroutine::yield_now();
    send(stream, watch, requests, out)?;
    out.clear();
    Ok(())
}

/// Reads what has arrived; when nothing has, waits until the socket is readable, its buffers
/// are to be given back, or its deadline passes. `Break` ends the connection, with the
/// loop's result.
fn read_or_wait(
    (stream, watch, requests): (&TcpStream, &Watch, u64),
    buf: &mut InputBuffer,
    out: &mut Vec<u8>,
    options: &ServerOptions,
) -> ControlFlow<io::Result<()>> {
    // The socket itself, not `may`'s wrapper: its read would wait with a timer.
    match buf.read_from(&mut stream.inner()) {
        Ok(0) => return ControlFlow::Break(Ok(())),
        Ok(_) => return ControlFlow::Continue(()),
        Err(e) if e.kind() == io::ErrorKind::Interrupted => return ControlFlow::Continue(()),
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
        Err(e) => return ControlFlow::Break(Err(e)),
    }
    let waiting = if buf.is_empty() {
        Waiting::NextRequest
    } else {
        Waiting::RestOfRequest
    };
    match watch.wait(stream, waiting, requests) {
        Wake::Ready => {}
        Wake::Shrink => {
            buf.release();
            *out = Vec::new();
        }
        Wake::Expired if answers_after_expiry(buf, stream, watch) => {}
        Wake::Expired => {
            return ControlFlow::Break(match waiting {
                Waiting::RestOfRequest => {
                    reject((stream, watch, requests), out, &TIMED_OUT, options)
                }
                Waiting::NextRequest => Ok(()),
            });
        }
    }
    ControlFlow::Continue(())
}

/// Whether a connection expired while it waited for its next request still has one to
/// answer: closed for a shutdown, a request may have arrived meanwhile, and is in flight (it
/// is answered, and the answer closes the connection). Bytes waiting are read into `buf`.
fn answers_after_expiry(buf: &mut InputBuffer, stream: &TcpStream, watch: &Watch) -> bool {
    watch.is_draining() && matches!(buf.read_from(&mut stream.inner()), Ok(n) if n > 0)
}

const TIMED_OUT: Rejection = Rejection {
    status: 408,
    code: "request_timeout",
    message: "request not received in time",
};

fn reject(
    (stream, watch, requests): (&TcpStream, &Watch, u64),
    out: &mut Vec<u8>,
    rejection: &Rejection,
    options: &ServerOptions,
) -> io::Result<()> {
    let response = own_answer(
        error_response(rejection.status, rejection.code, rejection.message),
        options,
    );
    encode(&response, false, true, out);
    send(stream, watch, requests, out)?;
    stream.shutdown(std::net::Shutdown::Write)
}

/// Writes all of `bytes` to the raw socket (not through `may`'s write, which would wait with a
/// timer), waiting while the client's window is full: a client that does not read has the
/// request's deadline to take its answer.
fn send(stream: &TcpStream, watch: &Watch, requests: u64, mut bytes: &[u8]) -> io::Result<()> {
    while !bytes.is_empty() {
        match stream.inner().write(bytes) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => bytes = &bytes[n..],
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if watch.wait(stream, Waiting::RestOfRequest, requests) == Wake::Expired {
                    return Err(io::ErrorKind::TimedOut.into());
                }
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// The bytes received and not yet parsed. Zeroed only when it grows, not on every read.
#[derive(Default)]
struct InputBuffer {
    bytes: Vec<u8>,
    filled: usize,
}

impl InputBuffer {
    /// Gives the memory back when nothing waits in it.
    fn release(&mut self) {
        if self.filled == 0 {
            self.bytes = Vec::new();
        }
    }

    fn data(&self) -> &[u8] {
        &self.bytes[..self.filled]
    }

    fn is_empty(&self) -> bool {
        self.filled == 0
    }

    /// Forgets the first `n` bytes (a parsed request), keeping what follows (pipelining).
    fn consume(&mut self, n: usize) {
        self.bytes.copy_within(n..self.filled, 0);
        self.filled -= n;
    }

    /// One read into the free space, grown by a chunk when less than half a chunk is left.
    fn read_from(&mut self, socket: &mut impl Read) -> io::Result<usize> {
        if self.bytes.len() - self.filled < READ_CHUNK / 2 {
            self.bytes.resize(self.bytes.len() + READ_CHUNK, 0);
        }
        let n = socket.read(&mut self.bytes[self.filled..])?;
        self.filled += n;
        Ok(n)
    }
}

/// The panic net: a handler that panics answers `500 internal` and the server goes on.
fn call_guarded(service: &dyn Service, request: Request, options: &ServerOptions) -> Response {
    panic::catch_unwind(AssertUnwindSafe(|| service.call(request)))
        .unwrap_or_else(|_| own_answer(error_response(500, "internal", "internal error"), options))
}

/// An answer of the layer's own, with the headers the options set for them.
fn own_answer(response: Response, options: &ServerOptions) -> Response {
    options
        .own_answer_headers
        .iter()
        .fold(response, |response, &(name, value)| {
            response.replace_header(name, value)
        })
}

fn encode(response: &Response, is_head: bool, close: bool, out: &mut Vec<u8>) {
    let body = &response.body;
    out.extend_from_slice(b"HTTP/1.1 ");
    out.extend_from_slice(itoa::Buffer::new().format(response.status).as_bytes());
    out.push(b' ');
    out.extend_from_slice(reason(response.status).as_bytes());
    out.extend_from_slice(b"\r\n");
    // RFC 9110 §8.6: no Content-Length on a 204.
    if response.status != 204 {
        out.extend_from_slice(b"Content-Length: ");
        out.extend_from_slice(itoa::Buffer::new().format(body.len()).as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    for (name, value) in &response.headers {
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    if close {
        out.extend_from_slice(b"Connection: close\r\n");
    }
    out.extend_from_slice(b"\r\n");
    if !is_head {
        out.extend_from_slice(body);
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        204 => "No Content",
        303 => "See Other",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        409 => "Conflict",
        410 => "Gone",
        411 => "Length Required",
        417 => "Expectation Failed",
        422 => "Unprocessable Content",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

#[cfg(test)]
mod tests {
    use super::reason;

    #[test]
    fn every_status_the_service_answers_has_its_reason_phrase() {
        let statuses = [
            200, 201, 204, 303, 400, 401, 403, 404, 405, 408, 409, 410, 411, 417, 422, 429, 431,
            500, 503,
        ];
        for status in statuses {
            assert_ne!(reason(status), "Status", "{status}");
        }
        assert_eq!(reason(303), "See Other");
        assert_eq!(reason(410), "Gone");
    }
}
