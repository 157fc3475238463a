//! A TCP socket for blocking code on a coroutine that never relies on `may`'s own socket reads,
//! writes or io time-outs: bytes move through the raw non-blocking socket, a read or write that
//! would block waits with `wait_io`, and the deadlines are the watchdog's, a thread of ours that
//! wakes the socket when one passes. The socket is the watchdog's to drop (see `watchdog`).
//!
//! Why: `may`'s io time-outs wake their coroutine from its timer handler, where the wake-up can
//! sit unnoticed until the worker's next timer (seconds), and its read path was seen racing
//! across workers. `wait_io` on the raw socket, with deadlines kept by our own thread, is the path
//! the service has always served on.

use super::server::ACCEPT_BACKOFF;
use super::watchdog::{Timeouts, Waiting, Wake, Watch, Watchdog};
use crate::failure_log::FailureLog;
use may::net::{TcpListener, TcpStream};
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr};
use std::os::fd::{FromRawFd, IntoRawFd};
use std::sync::Arc;

/// How a socket's waits are bounded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Patience {
    /// Each wait within the idle timeout; every read or write that moves bytes restarts it.
    Stall,
    /// Every wait from now on within the request timeout of the first, however the bytes trickle
    /// in (a head, a connection being opened, a card call).
    Whole,
}

/// A connected socket, watched until it drops.
pub struct Socket {
    /// Boxed, so that `may`'s registration of it stays where it is until the watchdog drops it.
    stream: Option<Box<TcpStream>>,
    watch: Option<Watch>,
    patience: Patience,
    /// Moves the watchdog's clock on: a wait with a new value starts a new deadline.
    ticks: u64,
}

/// Serves every connection `listener` accepts, each as a [`Socket`] under `timeouts`, on a
/// coroutine of its own, for as long as the process runs; the loop runs on a coroutine too. An
/// accept that fails (out of descriptors, a reset before it) is logged once per run of failures,
/// and the loop pauses a moment.
pub fn serve_each(
    listener: TcpListener,
    watchdog: Arc<Watchdog>,
    timeouts: Timeouts,
    serve: impl Fn(Socket) + Send + Sync + 'static,
) {
    let serve = Arc::new(serve);
    may::go!(move || {
        let refusals = FailureLog::new("accepting connections");
        loop {
            match Socket::accept(&listener, &watchdog, timeouts) {
                Ok(socket) => {
                    refusals.succeeded();
                    let serve = Arc::clone(&serve);
                    may::go!(move || serve(socket));
                }
                Err(error) => {
                    refusals.failed(&error.to_string());
                    may::coroutine::sleep(ACCEPT_BACKOFF);
                }
            }
        }
    });
}

impl Socket {
    /// The next connection `listener` accepts, under `timeouts`.
    pub fn accept(
        listener: &TcpListener,
        watchdog: &Arc<Watchdog>,
        timeouts: Timeouts,
    ) -> io::Result<Socket> {
        let (stream, peer) = listener.accept()?;
        Socket::watched(stream, peer, watchdog, timeouts)
    }

    fn watched(
        stream: TcpStream,
        peer: SocketAddr,
        watchdog: &Arc<Watchdog>,
        timeouts: Timeouts,
    ) -> io::Result<Socket> {
        let watch = watchdog
            .watch_with(&stream, peer.ip(), usize::MAX, timeouts)
            .ok_or_else(|| io::Error::other("not watched"))?;
        Ok(Socket {
            stream: Some(Box::new(stream)),
            watch: Some(watch),
            patience: Patience::Stall,
            ticks: 0,
        })
    }

    /// Opens a connection to `address`, within `timeouts.request`; the socket then keeps
    /// `timeouts`.
    pub fn connect(
        address: &SocketAddr,
        watchdog: &Arc<Watchdog>,
        timeouts: Timeouts,
    ) -> io::Result<Socket> {
        use socket2::{Domain, Protocol, Type};
        let raw = socket2::Socket::new(
            Domain::for_address(*address),
            Type::STREAM,
            Some(Protocol::TCP),
        )?;
        raw.set_nonblocking(true)?;
        raw.set_nodelay(true)?;
        match raw.connect(&(*address).into()) {
            Ok(()) => {}
            Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {}
            Err(e) => return Err(e),
        }
        // SAFETY: the descriptor is a socket nothing else owns (`into_raw_fd` gave it up); may's
        // stream takes it whole.
        let stream = unsafe { TcpStream::from_raw_fd(raw.into_raw_fd()) };
        let mut socket = Socket::watched(stream, *address, watchdog, timeouts)?;
        socket.set_patience(Patience::Whole);
        socket.await_connected()?;
        socket.set_patience(Patience::Stall);
        Ok(socket)
    }

    /// Waits until the connection is made or has failed.
    fn await_connected(&mut self) -> io::Result<()> {
        loop {
            if let Some(error) = self.stream().take_error()? {
                return Err(error);
            }
            match self.stream().peer_addr() {
                Ok(_) => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::NotConnected => self.wait()?,
                Err(e) => return Err(e),
            }
        }
    }

    fn stream(&self) -> &TcpStream {
        self.stream
            .as_deref()
            .expect("a socket has its stream until it drops")
    }

    /// How the waits from now on are bounded; each call starts a new deadline.
    pub fn set_patience(&mut self, patience: Patience) {
        self.patience = patience;
        self.ticks += 1;
    }

    pub fn set_nodelay(&self, nodelay: bool) -> io::Result<()> {
        self.stream().set_nodelay(nodelay)
    }

    /// Whether the peer has sent nothing and has not closed: an idle kept-alive connection fit
    /// to carry another exchange.
    pub fn is_quiet(&self) -> bool {
        let mut byte = [0u8; 1];
        match self.stream().inner().peek(&mut byte) {
            Err(e) => e.kind() == io::ErrorKind::WouldBlock,
            Ok(_) => false,
        }
    }

    /// Waits for the socket under its deadline; `TimedOut` once that has passed.
    fn wait(&mut self) -> io::Result<()> {
        let waiting = match self.patience {
            Patience::Stall => Waiting::NextRequest,
            Patience::Whole => Waiting::RestOfRequest,
        };
        let stream = self.stream.as_deref().expect("a socket has its stream");
        let watch = self.watch.as_ref().expect("a socket has its watch");
        match watch.wait(stream, waiting, self.ticks) {
            Wake::Expired => Err(io::ErrorKind::TimedOut.into()),
            Wake::Ready | Wake::Shrink => Ok(()),
        }
    }

    /// Bytes moved: a stall's deadline starts again.
    fn progressed(&mut self) {
        if self.patience == Patience::Stall {
            self.ticks += 1;
        }
    }

    /// Retries `step` until it does not block, waiting in between.
    fn until_done(
        &mut self,
        mut step: impl FnMut(&std::net::TcpStream) -> io::Result<usize>,
    ) -> io::Result<usize> {
        loop {
            match step(self.stream().inner()) {
                Ok(n) => {
                    self.progressed();
                    return Ok(n);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.wait()?,
                Err(e) => return Err(e),
            }
        }
    }
}

impl Read for Socket {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.until_done(|mut raw| raw.read(buf))
    }
}

impl Write for Socket {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.until_done(|mut raw| raw.write(buf))
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Drop for Socket {
    /// Closed for the peer now; the descriptor itself a moment later, by the watchdog.
    fn drop(&mut self) {
        if let (Some(stream), Some(watch)) = (self.stream.take(), self.watch.take()) {
            let _ = stream.shutdown(Shutdown::Both);
            watch.retire(stream);
        }
    }
}
