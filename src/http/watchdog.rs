//! Connection deadlines kept by one thread, so that a connection's wait for its next request
//! costs no timer.
//!
//! Why not `may`'s read timeouts: a read that waits with a timeout puts a timer in a shared
//! list and takes it out again, on every request of a keep-alive connection. A connection
//! instead publishes, before it waits, what it waits for (an atomic word it alone writes), and
//! the watchdog thread looks at every connection a few times per timeout: a connection seen
//! waiting on the same word for longer than its timeout is marked expired and woken. The
//! deadline so falls up to two sweeps late, never early.
//!
//! The word is `requests << 2 | phase`, `requests` being the count of requests the connection
//! has had. It changes when a request completes and when the phase does, and stays the same
//! across the waits for the rest of one request: the request deadline runs from the first
//! wait, however slowly the bytes trickle, and a wake-up that brings nothing does not restart
//! the idle period.
//!
//! The watchdog also outlives the sockets it watched by a moment: a socket is handed back to it
//! ([`Watch::retire`]) and dropped a second later. `may` reads a socket's registration just after
//! it has handed the waiting coroutine to the event loop, and on another worker that coroutine
//! may already run on and drop its socket: kept alive a while longer, that read never sees freed
//! memory.

use may::io::{WaitIo, WaitIoWaker};
use may::net::TcpStream;
use parking_lot::Mutex;
use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What a connection waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waiting {
    /// The next request: the idle timeout applies.
    NextRequest,
    /// The rest of a request that has begun: the request timeout applies.
    RestOfRequest,
}

impl Waiting {
    /// The word of a connection waiting so, after `requests` requests.
    fn word(self, requests: u64) -> u64 {
        let phase = match self {
            Waiting::NextRequest => IDLE,
            Waiting::RestOfRequest => PARTIAL,
        };
        requests << 2 | phase
    }
}

/// The phases in the low two bits of a connection's word.
const BUSY: u64 = 0;
const IDLE: u64 = 1;
const PARTIAL: u64 = 2;
/// Set by the watchdog in place of a waiting word: the connection's deadline has passed.
const EXPIRED: u64 = u64::MAX;
/// Set by the watchdog in place of an idle word: the connection has been idle a while and
/// should give its buffers back, then wait again.
const SHRINK: u64 = u64::MAX - 1;
/// How long a connection waits for its next request before it gives its buffers back: under
/// load a connection never waits that long, so the hot path keeps its buffers.
const SHRINK_AFTER: Duration = Duration::from_secs(1);

/// How long a retired socket stays open before it is dropped (see the module's docs).
const RETIRED_FOR: Duration = Duration::from_secs(1);

/// A connection's two deadlines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// How long it may wait for its next request (and, at the edge, stall between two reads
    /// or writes).
    pub idle: Duration,
    /// How long the rest of a request may take once it has begun.
    pub request: Duration,
}

/// Sweeps per timeout: the deadline falls at most two sweeps late (10 % of it each).
const SWEEPS_PER_TIMEOUT: u32 = 10;
/// Sweeps at least this often, whatever the timeouts.
const LONGEST_SWEEP: Duration = Duration::from_millis(100);
/// And at most this often, however short they are.
const SHORTEST_SWEEP: Duration = Duration::from_millis(1);

/// One connection's state as the watchdog sees it.
struct Watched {
    word: AtomicU64,
    waker: WaitIoWaker,
}

/// The watchdog's own record of a connection: the word it last saw and since when.
struct Sighting {
    watched: Arc<Watched>,
    word: u64,
    since: Instant,
    /// Told to give its buffers back during this idle period.
    shrunk: bool,
    peer: IpAddr,
    timeouts: Timeouts,
}

/// Every open connection, and how many each client address holds.
#[derive(Default)]
struct Registry {
    connections: HashMap<u64, Sighting>,
    per_address: HashMap<IpAddr, usize>,
    /// Sockets done with, and since when.
    retired: VecDeque<(Instant, Box<TcpStream>)>,
}

/// What woke a waiting connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wake {
    /// The socket is readable (or may be).
    Ready,
    /// Its deadline passed.
    Expired,
    /// It has been idle a while: it should give its buffers back, then wait again.
    Shrink,
}

/// Every open connection's deadline state, swept by one thread.
pub struct Watchdog {
    registry: Mutex<Registry>,
    next_id: AtomicU64,
    /// Set when a shutdown begins: each answer closes its connection.
    closing: AtomicBool,
    /// Set when the listener closes: a connection waiting for its next request is expired at
    /// once.
    draining: AtomicBool,
    /// The deadlines of [`Watchdog::watch`]; the shortest ones any connection may have.
    timeouts: Timeouts,
}

impl Watchdog {
    /// Starts the sweeping thread. It sweeps often enough for `timeouts` (no connection may be
    /// given shorter ones), and returns once it alone holds the watchdog and every socket has
    /// been dropped: a server shut down leaves nothing running.
    pub fn start(timeouts: Timeouts) -> Arc<Watchdog> {
        let watchdog = Arc::new(Watchdog {
            registry: Mutex::new(Registry::default()),
            next_id: AtomicU64::new(0),
            closing: AtomicBool::new(false),
            draining: AtomicBool::new(false),
            timeouts,
        });
        let shortest = timeouts.idle.min(timeouts.request);
        let period = (shortest / SWEEPS_PER_TIMEOUT).clamp(SHORTEST_SWEEP, LONGEST_SWEEP);
        let sweeper = Arc::clone(&watchdog);
        std::thread::Builder::new()
            .name("http-watchdog".into())
            .spawn(move || loop {
                std::thread::sleep(period);
                sweeper.sweep(Instant::now());
                // Nobody else holds it: no connection can be watched any more.
                if Arc::strong_count(&sweeper) == 1 && sweeper.is_empty() {
                    return;
                }
            })
            .expect("cannot start the connection watchdog at startup");
        watchdog
    }

    /// Watches a connection the listener has just accepted, from `peer`, until the returned
    /// guard drops; `None` when that address holds `max_per_address` connections already.
    ///
    /// From its accept the connection waits for its first request, as an idle one: its
    /// coroutine may run only after a burst of accepts, and meanwhile the idle timeout runs and
    /// shedding may pick it. The coroutine takes it up with [`Watch::begin`].
    pub fn watch_accepted(
        self: &Arc<Self>,
        stream: &TcpStream,
        peer: IpAddr,
        max_per_address: usize,
    ) -> Option<Watch> {
        let first_request = Waiting::NextRequest.word(0);
        self.register(stream, peer, max_per_address, self.timeouts, first_request)
    }

    /// Watches `stream` from `peer` until the returned guard drops, with deadlines of its own
    /// (no shorter than the watchdog's); `None` when that address holds `max_per_address`
    /// connections already. Its deadlines run from its first wait.
    pub fn watch_with(
        self: &Arc<Self>,
        stream: &TcpStream,
        peer: IpAddr,
        max_per_address: usize,
        timeouts: Timeouts,
    ) -> Option<Watch> {
        self.register(stream, peer, max_per_address, timeouts, BUSY)
    }

    fn register(
        self: &Arc<Self>,
        stream: &TcpStream,
        peer: IpAddr,
        max_per_address: usize,
        timeouts: Timeouts,
        word: u64,
    ) -> Option<Watch> {
        let mut registry = self.registry.lock();
        let held = registry.per_address.entry(peer).or_default();
        if *held >= max_per_address {
            return None;
        }
        *held += 1;
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let watched = Arc::new(Watched {
            word: AtomicU64::new(word),
            waker: stream.waker(),
        });
        let sighting = Sighting {
            watched: Arc::clone(&watched),
            word,
            since: Instant::now(),
            shrunk: false,
            peer,
            timeouts,
        };
        registry.connections.insert(id, sighting);
        Some(Watch {
            watchdog: Arc::clone(self),
            id,
            watched,
        })
    }

    /// Closes up to `count` of the connections waiting for their next request, the longest
    /// idle first, less those told to close already that have not gone yet: near the
    /// open-files limit, a new client must still get in, and a burst of accepts, each seeing
    /// the batch before still open, must not close every connection.
    pub fn shed_idle(&self, count: usize) {
        let registry = self.registry.lock();
        let mut leaving = 0;
        let mut idle = Vec::new();
        for (&id, sighting) in &registry.connections {
            match sighting.watched.word.load(Ordering::Acquire) {
                EXPIRED => leaving += 1,
                word if word & 3 == IDLE => idle.push((id, sighting, word)),
                _ => {}
            }
        }
        // One sweep sees many connections go idle at once, and connections accepted in one
        // burst may share an instant: among those, the oldest (the smallest id) goes first,
        // not whichever the map lists first.
        idle.sort_by_key(|&(id, sighting, _)| (sighting.since, id));
        for (_, sighting, word) in idle.into_iter().take(count.saturating_sub(leaving)) {
            sighting.expire(word);
        }
    }

    /// From now on, each answer closes its connection; idle connections stay open for the
    /// requests their clients may have sent already.
    pub fn close_after_answers(&self) {
        self.closing.store(true, Ordering::Release);
    }

    /// From now on, connections waiting for their next request are closed (at once, and at
    /// every sweep); those inside a request keep their deadline.
    pub fn drain(&self) {
        self.close_after_answers();
        self.draining.store(true, Ordering::Release);
        self.sweep(Instant::now());
    }

    pub fn is_draining(&self) -> bool {
        self.draining.load(Ordering::Relaxed)
    }

    /// Connections open now.
    pub fn open_connections(&self) -> usize {
        self.registry.lock().connections.len()
    }

    /// No connection open, no socket waiting to be dropped.
    fn is_empty(&self) -> bool {
        let registry = self.registry.lock();
        registry.connections.is_empty() && registry.retired.is_empty()
    }

    fn sweep(&self, now: Instant) {
        let draining = self.is_draining();
        let mut registry = self.registry.lock();
        let mut done_with = Vec::new();
        while let Some((since, _)) = registry.retired.front() {
            if now.duration_since(*since) < RETIRED_FOR {
                break;
            }
            done_with.extend(registry.retired.pop_front());
        }
        for sighting in registry.connections.values_mut() {
            let word = sighting.watched.word.load(Ordering::Acquire);
            if word == EXPIRED || word == SHRINK {
                // Woken, not yet awake.
                continue;
            }
            if draining && word & 3 == IDLE {
                sighting.expire(word);
                continue;
            }
            if word != sighting.word {
                // A busy connection keeps its last waiting word's clock: a request trickling
                // in wakes its connection at every byte.
                if word & 3 != BUSY {
                    sighting.word = word;
                    sighting.since = now;
                    sighting.shrunk = false;
                }
                continue;
            }
            let idle_for = now.duration_since(sighting.since);
            if word & 3 == IDLE && !sighting.shrunk && idle_for >= SHRINK_AFTER {
                sighting.shrunk = sighting.wake_with(word, SHRINK);
            }
            let timeout = match word & 3 {
                IDLE => sighting.timeouts.idle,
                PARTIAL => sighting.timeouts.request,
                _ => continue,
            };
            if now.duration_since(sighting.since) >= timeout {
                sighting.expire(word);
            }
        }
        // Closing sockets is a system call each: not while every connection waits on the lock.
        drop(registry);
        drop(done_with);
    }
}

impl Sighting {
    /// Marks the connection expired and wakes it, unless it moved on from `word` meanwhile.
    fn expire(&self, word: u64) {
        self.wake_with(word, EXPIRED);
    }

    /// Replaces `word` by `signal` and wakes the connection; `false` if it moved on meanwhile.
    fn wake_with(&self, word: u64, signal: u64) -> bool {
        let swapped = self
            .watched
            .word
            .compare_exchange(word, signal, Ordering::AcqRel, Ordering::Acquire)
            .is_ok();
        if swapped {
            self.watched.waker.wakeup();
        }
        swapped
    }
}

/// A connection's side of the watchdog; dropping it stops the watching.
pub struct Watch {
    watchdog: Arc<Watchdog>,
    id: u64,
    watched: Arc<Watched>,
}

impl Watch {
    /// Whether the server closes its idle connections (the listener has closed).
    pub fn is_draining(&self) -> bool {
        self.watchdog.is_draining()
    }

    /// Whether an answer may leave its connection open for the next request.
    pub fn keeps_alive(&self) -> bool {
        !self.watchdog.closing.load(Ordering::Relaxed)
    }

    /// The connection's coroutine takes up a connection watched since its accept
    /// ([`Watchdog::watch_accepted`]): `Expired` when it was closed meanwhile (shed, timed out
    /// or drained), as if in its first wait.
    pub fn begin(&self) -> Wake {
        self.take_word()
    }

    /// Waits for the socket to become readable, under the deadline of `waiting`
    /// (`requests` is the count of requests this connection has had so far).
    pub fn wait(&self, stream: &TcpStream, waiting: Waiting, requests: u64) -> Wake {
        self.watched
            .word
            .store(waiting.word(requests), Ordering::Release);
        stream.wait_io();
        self.take_word()
    }

    /// Marks the connection busy and tells what the watchdog wrote while it waited: a swap, not
    /// a store, since the watchdog may have changed the word in the meantime.
    fn take_word(&self) -> Wake {
        match self.watched.word.swap(BUSY, Ordering::AcqRel) {
            EXPIRED => Wake::Expired,
            SHRINK => Wake::Shrink,
            _ => Wake::Ready,
        }
    }
}

impl Watch {
    /// Stops watching `stream` and keeps it open a moment longer (see the module's docs); the
    /// caller has shut it down if its peer is to see it closed now.
    pub fn retire(self, stream: Box<TcpStream>) {
        let watchdog = Arc::clone(&self.watchdog);
        drop(self);
        watchdog
            .registry
            .lock()
            .retired
            .push_back((Instant::now(), stream));
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let mut registry = self.watchdog.registry.lock();
        if let Some(sighting) = registry.connections.remove(&self.id) {
            let held = registry.per_address.entry(sighting.peer).or_default();
            *held = held.saturating_sub(1);
            if *held == 0 {
                registry.per_address.remove(&sighting.peer);
            }
        }
    }
}
