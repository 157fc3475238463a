//! The management API's connection pool, which knows whether the database answers (apart
//! from `db/`, which knows only SQL and domain types: the pool also logs and runs a thread).
//!
//! r2d2's checkout waits its whole timeout while no connection can be made: through an outage,
//! every management request would hold a blocking thread that long before its `500`. The pool
//! instead follows the database's state from what r2d2 sees (a connection made or checked out
//! is an answer, a failed connect or check is not), and a thread of its own checks a
//! connection out every second, so that the state is known without traffic. While the
//! database is down a checkout does not wait; r2d2 keeps trying to connect meanwhile, and the
//! first connection made ends the outage.
//!
//! The primary's pool holds only connections that accept writes: it connects with
//! `target_session_attrs=read-write` (of several hosts, to the one that accepts writes), and a
//! connection checked out is first asked whether its server became read-only (a standby, a
//! demoted primary, `default_transaction_read_only`). A server that accepts no writes counts as
//! an outage, so that the writes of a failover's gap answer `503` at once, and the first
//! connection to the new primary ends it. A replica's pool
//! (`AGENTCARD_REPLICA_URL`) is read-only by nature and asks nothing.

use crate::background::Background;
use crate::db::{self, pg_config};
use crate::failure_log::FailureLog;
use postgres::config::TargetSessionAttrs;
use postgres::{Client, NoTls};
use r2d2::event::{AcquireEvent, CheckoutEvent, HandleEvent};
use r2d2::{HandleError, ManageConnection};
use r2d2_postgres::PostgresConnectionManager;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub type Conn = r2d2::PooledConnection<Manager>;

/// What a pool's server is to the service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// `DATABASE_URL`: every write; its connections must accept them.
    Primary,
    /// `AGENTCARD_REPLICA_URL`: reads that may lag.
    Replica,
}

/// How long a checkout waits for a connection while the database answers.
const CHECKOUT_TIMEOUT: Duration = Duration::from_secs(3);
/// A checkout looks at the database's state this often while it waits: an outage noticed
/// meanwhile ends the wait.
const CHECKOUT_SLICE: Duration = Duration::from_millis(100);
/// How often the pool's own thread checks a connection out.
const PROBE_EVERY: Duration = Duration::from_secs(1);

/// The pool and the database's state; clones share both.
#[derive(Clone)]
pub struct Pool(Arc<Shared>);

struct Shared {
    checkout: Checkout,
    /// The thread that checks a connection out every `PROBE_EVERY`; it stops with the pool.
    probe: Background,
}

/// What a checkout needs: r2d2's pool and the database's state (clones share both).
#[derive(Clone)]
struct Checkout {
    connections: r2d2::Pool<Manager>,
    database: Arc<DatabaseState>,
}

impl Pool {
    /// A pool that does not require the database to be up at start (connections are made on
    /// demand), and the thread that keeps its state; the thread stops with the pool (its last
    /// clone dropped) or [`Pool::stop`].
    pub fn start(database_url: &str, size: u32, role: Role) -> Result<Pool, postgres::Error> {
        let mut config = pg_config(database_url)?;
        if role == Role::Primary {
            // Of several hosts, the one that accepts writes; of one, only while it does.
            config.target_session_attrs(TargetSessionAttrs::ReadWrite);
        }
        let manager = Manager {
            connections: PostgresConnectionManager::new(config, NoTls),
            role,
        };
        let database = Arc::new(DatabaseState::of(role));
        let connections = r2d2::Pool::builder()
            .max_size(size)
            .min_idle(Some(0))
            .connection_timeout(CHECKOUT_TIMEOUT)
            .test_on_check_out(true)
            .error_handler(Box::new(Observer(Arc::clone(&database))))
            .event_handler(Box::new(Observer(Arc::clone(&database))))
            .build_unchecked(manager);
        let checkout = Checkout {
            connections,
            database,
        };
        let probing = checkout.clone();
        let probe = Background::spawn("db-probe", move |stop| {
            while !stop.wait(PROBE_EVERY) {
                // The state follows from the events of the checkout; its result tells nothing
                // more.
                let _ = probing.get();
            }
        });
        Ok(Pool(Arc::new(Shared { checkout, probe })))
    }

    /// A connection; at once an error while the database is down.
    pub fn get(&self) -> Result<Conn, r2d2::Error> {
        self.0.checkout.get()
    }

    /// Whether the database answered the last time the pool asked it something.
    pub fn database_up(&self) -> bool {
        self.0.checkout.database_up()
    }

    /// Connections open and idle.
    pub fn state(&self) -> r2d2::State {
        self.0.checkout.connections.state()
    }

    /// Stops the probe (for every clone), and waits until it has stopped.
    pub fn stop(&self) {
        self.0.probe.stop();
    }
}

impl Checkout {
    fn get(&self) -> Result<Conn, r2d2::Error> {
        let deadline = Instant::now() + CHECKOUT_TIMEOUT;
        loop {
            let wait = if self.database_up() {
                CHECKOUT_SLICE.min(deadline.saturating_duration_since(Instant::now()))
            } else {
                Duration::ZERO
            };
            match self.connections.get_timeout(wait) {
                Err(_) if self.database_up() && Instant::now() < deadline => {}
                checked_out => return checked_out,
            }
        }
    }

    fn database_up(&self) -> bool {
        self.database.up.load(Ordering::Acquire)
    }
}

/// Whether the database answers, as the pool last saw it; a start is taken as an answer.
struct DatabaseState {
    up: AtomicBool,
    outage: FailureLog,
}

impl std::fmt::Debug for DatabaseState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DatabaseState")
            .field("up", &self.up)
            .finish_non_exhaustive()
    }
}

impl DatabaseState {
    /// Up, until the pool sees otherwise; its outages logged under the role's name.
    fn of(role: Role) -> Self {
        let name = match role {
            Role::Primary => "the database",
            Role::Replica => "the replica",
        };
        DatabaseState {
            up: AtomicBool::new(true),
            outage: FailureLog::new(name),
        }
    }

    fn answered(&self) {
        if !self.up.swap(true, Ordering::AcqRel) {
            self.outage.succeeded();
        }
    }
}

/// r2d2_postgres's connections, checked for their role when checked out.
#[derive(Debug)]
pub struct Manager {
    connections: PostgresConnectionManager<NoTls>,
    role: Role,
}

/// Why a connection was not made, or not kept.
#[derive(Debug, thiserror::Error)]
pub enum ConnectionError {
    #[error("{}", db::describe(.0))]
    Postgres(#[from] postgres::Error),
    #[error("the server accepts no writes (a standby, or default_transaction_read_only is on)")]
    ReadOnly,
}

impl ManageConnection for Manager {
    type Connection = Client;
    type Error = ConnectionError;

    fn connect(&self) -> Result<Client, ConnectionError> {
        Ok(self.connections.connect()?)
    }

    /// One round trip, as r2d2_postgres's own check: the primary's asks whether it still
    /// accepts writes.
    fn is_valid(&self, client: &mut Client) -> Result<(), ConnectionError> {
        match self.role {
            Role::Primary if db::is_read_only(client)? => Err(ConnectionError::ReadOnly),
            Role::Primary => Ok(()),
            Role::Replica => Ok(self.connections.is_valid(client)?),
        }
    }

    fn has_broken(&self, client: &mut Client) -> bool {
        self.connections.has_broken(client)
    }
}

/// What r2d2 tells of its connections, turned into the database's state.
#[derive(Debug)]
struct Observer(Arc<DatabaseState>);

impl HandleError<ConnectionError> for Observer {
    fn handle_error(&self, error: ConnectionError) {
        self.0.up.store(false, Ordering::Release);
        self.0.outage.failed(&error.to_string());
    }
}

impl HandleEvent for Observer {
    fn handle_acquire(&self, _: AcquireEvent) {
        self.0.answered();
    }

    fn handle_checkout(&self, _: CheckoutEvent) {
        self.0.answered();
    }
}
