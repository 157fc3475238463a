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

use may::io::{WaitIo, WaitIoWaker};
use may::net::TcpStream;
use parking_lot::Mutex;
use std::collections::HashMap;
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

/// The phases in the low two bits of a connection's word.
const BUSY: u64 = 0;
const IDLE: u64 = 1;
const PARTIAL: u64 = 2;
/// Set by the watchdog in place of a waiting word: the connection's deadline has passed.
const EXPIRED: u64 = u64::MAX;

/// Sweeps per timeout: the deadline falls at most two sweeps late (10 % of it each).
const SWEEPS_PER_TIMEOUT: u32 = 10;
/// Sweeps at least this often, whatever the timeouts.
const LONGEST_SWEEP: Duration = Duration::from_millis(100);

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
}

/// Every open connection's deadline state, swept by one thread.
pub struct Watchdog {
    connections: Mutex<HashMap<u64, Sighting>>,
    next_id: AtomicU64,
    /// Set at shutdown: a connection waiting for its next request is expired at once.
    draining: AtomicBool,
    idle_timeout: Duration,
    request_timeout: Duration,
}

impl Watchdog {
    /// Starts the sweeping thread; it lives as long as the process.
    pub fn start(idle_timeout: Duration, request_timeout: Duration) -> Arc<Watchdog> {
        let watchdog = Arc::new(Watchdog {
            connections: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(0),
            draining: AtomicBool::new(false),
            idle_timeout,
            request_timeout,
        });
        let period = (idle_timeout.min(request_timeout) / SWEEPS_PER_TIMEOUT).min(LONGEST_SWEEP);
        let sweeper = Arc::clone(&watchdog);
        std::thread::Builder::new()
            .name("http-watchdog".into())
            .spawn(move || loop {
                std::thread::sleep(period);
                sweeper.sweep(Instant::now());
            })
            .expect("cannot start the connection watchdog at startup");
        watchdog
    }

    /// Watches `stream` until the returned guard drops.
    pub fn watch(self: &Arc<Self>, stream: &TcpStream) -> Watch {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let watched = Arc::new(Watched {
            word: AtomicU64::new(BUSY),
            waker: stream.waker(),
        });
        let sighting = Sighting {
            watched: Arc::clone(&watched),
            word: BUSY,
            since: Instant::now(),
        };
        self.connections.lock().insert(id, sighting);
        Watch {
            watchdog: Arc::clone(self),
            id,
            watched,
        }
    }

    /// From now on, connections waiting for their next request are closed (at once, and at
    /// every sweep); those inside a request keep their deadline.
    pub fn drain(&self) {
        self.draining.store(true, Ordering::Release);
        self.sweep(Instant::now());
    }

    pub fn is_draining(&self) -> bool {
        self.draining.load(Ordering::Relaxed)
    }

    /// Connections open now.
    pub fn open_connections(&self) -> usize {
        self.connections.lock().len()
    }

    fn sweep(&self, now: Instant) {
        let draining = self.is_draining();
        for sighting in self.connections.lock().values_mut() {
            let word = sighting.watched.word.load(Ordering::Acquire);
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
                }
                continue;
            }
            let timeout = match word & 3 {
                IDLE => self.idle_timeout,
                PARTIAL => self.request_timeout,
                _ => continue,
            };
            if now.duration_since(sighting.since) >= timeout {
                sighting.expire(word);
            }
        }
    }
}

impl Sighting {
    /// Marks the connection expired and wakes it, unless it moved on from `word` meanwhile.
    fn expire(&self, word: u64) {
        let expired = self
            .watched
            .word
            .compare_exchange(word, EXPIRED, Ordering::AcqRel, Ordering::Acquire)
            .is_ok();
        if expired {
            self.watched.waker.wakeup();
        }
    }
}

/// A connection's side of the watchdog; dropping it stops the watching.
pub struct Watch {
    watchdog: Arc<Watchdog>,
    id: u64,
    watched: Arc<Watched>,
}

impl Watch {
    /// Whether the server is shutting down.
    pub fn is_draining(&self) -> bool {
        self.watchdog.is_draining()
    }

    /// Waits for the socket to become readable, under the deadline of `waiting`
    /// (`requests` is the count of requests this connection has had so far). `false`: the
    /// deadline passed.
    pub fn wait(&self, stream: &TcpStream, waiting: Waiting, requests: u64) -> bool {
        let phase = match waiting {
            Waiting::NextRequest => IDLE,
            Waiting::RestOfRequest => PARTIAL,
        };
        let word = requests << 2 | phase;
        self.watched.word.store(word, Ordering::Release);
        stream.wait_io();
        // A swap, not a store: the watchdog may have expired the word in the meantime.
        self.watched.word.swap(BUSY, Ordering::AcqRel) != EXPIRED
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.watchdog.connections.lock().remove(&self.id);
    }
}
