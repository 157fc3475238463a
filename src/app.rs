//! The running service's shared state: what every area's handlers work with. The dispatcher
//! (`crate::dispatch`) hands requests to those handlers; this module knows none of them.

use crate::blocking::BlockingPool;
use crate::config::Config;
use crate::delivery::Delivery;
use crate::http::Request;
use crate::icon::Fetcher;
use crate::limits::RateLimiter;
use crate::mail::Mailer;
use crate::password::Passwords;
use crate::pool::{Conn, Pool, Role};
use crate::proof_of_work::Proofs;
use crate::token_use::TokenUse;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Threads that run database work for the management API and the other routes.
const BLOCKING_THREADS: usize = 16;
const BLOCKING_QUEUE: usize = 4096;
/// Threads hashing passwords (the console's sign-ins and new passwords), at most: they run at
/// the lowest priority, on what the two cores of a small machine leave; four times as many
/// hashes may wait for a turn, the rest are refused with a `503`.
const PASSWORD_THREADS: usize = 2;

pub struct App {
    pub config: Config,
    /// The primary's pool: writes, and every read that must see them.
    pub pool: Pool,
    /// The replica's pool (`AGENTCARD_REPLICA_URL`), for the reads that may lag: the reports.
    replica: Option<Pool>,
    pub blocking: BlockingPool,
    pub limiter: RateLimiter,
    pub token_use: TokenUse,
    /// The console's password hashing: threads of its own, a queue, a global rate.
    pub passwords: Passwords,
    /// The sign-in's proofs of work: the fleet's key once read, the demand that sets the work.
    pub proofs: Proofs,
    /// `/fragment`: the snapshot in memory, its refresher, the report.
    pub delivery: Delivery,
    /// Sites' icons, looked for in the background.
    pub icons: Fetcher,
    /// Where links are also mailed (`AGENTCARD_SMTP_URL`); `None`: passed on by hand.
    pub mailer: Option<Mailer>,
    /// Set when a shutdown begins: `/ready` then answers `503`.
    stopping: AtomicBool,
}

impl App {
    /// Opens the pool and starts the background threads (cache refresher, report writer,
    /// token-use writer, icon fetch).
    pub fn new(config: Config) -> Result<Arc<App>, postgres::Error> {
        let pool = Pool::start(&config.database_url, config.db_pool_size, Role::Primary)?;
        let replica = (config.replica_url.as_deref())
            .map(|url| Pool::start(url, config.db_pool_size, Role::Replica))
            .transpose()?;
        Ok(Arc::new(App {
            token_use: TokenUse::start(pool.clone()),
            delivery: Delivery::start(&config),
            icons: Fetcher::start(&pool, config.icon_fetch.as_ref()),
            blocking: BlockingPool::new(BLOCKING_THREADS, BLOCKING_QUEUE),
            limiter: RateLimiter::new(config.unknown_browser_sign_ins_per_block),
            passwords: password_hashing(&config),
            proofs: Proofs::default(),
            mailer: Mailer::configured(&config),
            stopping: AtomicBool::new(false),
            pool,
            replica,
            config,
        }))
    }

    /// Stops the background threads (cache refresher, report writer without a last flush,
    /// token-use writer, icon fetch, the pools' probes), and waits until they have stopped.
    pub fn stop(&self) {
        self.delivery.stop();
        self.token_use.stop();
        self.icons.stop();
        self.pool.stop();
        if let Some(replica) = &self.replica {
            replica.stop();
        }
    }

    /// A connection to the replica for a read that may lag, when one is set and answers;
    /// `None`: read on the primary.
    pub fn replica(&self) -> Option<Conn> {
        let replica = self.replica.as_ref().filter(|pool| pool.database_up())?;
        replica.get().ok()
    }

    /// From now on the instance says it is not ready, so that a load balancer drains it.
    pub fn begin_stopping(&self) {
        self.stopping.store(true, Ordering::Release);
    }

    pub fn is_stopping(&self) -> bool {
        self.stopping.load(Ordering::Acquire)
    }

    /// The client address of a request, as configured (see `http::ClientAddress`).
    pub fn client_ip(&self, request: &Request) -> IpAddr {
        self.config.client_address.of(request)
    }
}

/// One hashing thread per worker core (a hash is CPU and memory work), within
/// `PASSWORD_THREADS`.
fn password_hashing(config: &Config) -> Passwords {
    let threads = config.workers.clamp(1, PASSWORD_THREADS);
    Passwords::new(threads, 4 * threads, config.password_rates)
}
