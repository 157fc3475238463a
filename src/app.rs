//! The running service: shared state, and the entry that sends each request to its area.

use crate::blocking::BlockingPool;
use crate::cache::FragmentCache;
use crate::config::{host_without_port, Config};
use crate::db::{self, Pool};
use crate::fragment::endpoint as fragment_endpoint;
use crate::http::{self, Request, Response, Service};
use crate::limits::RateLimiter;
use crate::report::Reporter;
use crate::router::{self, Area, HostRole};
use crate::{api, contact, status};
use crossbeam::channel::{self, Sender};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Threads that run database work for the management API and the other routes.
const BLOCKING_THREADS: usize = 16;
const BLOCKING_QUEUE: usize = 4096;

pub struct App {
    pub config: Config,
    pub pool: Pool,
    pub blocking: BlockingPool,
    pub limiter: RateLimiter,
    pub token_use: TokenUse,
    pub fragment_cache: Arc<FragmentCache>,
    pub reporter: Reporter,
}

impl App {
    pub fn new(config: Config) -> Result<Arc<App>, postgres::Error> {
        let pool = db::pool(&config.database_url, config.db_pool_size)?;
        let fragment_cache = FragmentCache::new();
        fragment_cache.start_refresher(config.database_url.clone(), config.refresh);
        Ok(Arc::new(App {
            token_use: TokenUse::start(pool.clone()),
            reporter: Reporter::start(config.database_url.clone()),
            fragment_cache,
            blocking: BlockingPool::new(BLOCKING_THREADS, BLOCKING_QUEUE),
            limiter: RateLimiter::default(),
            pool,
            config,
        }))
    }

    /// The client address: the socket peer, or, when the peer is a trusted proxy and a
    /// client-IP header is configured, the right-most address of that header that is not a
    /// trusted proxy itself.
    pub fn client_ip(&self, request: &Request) -> IpAddr {
        let peer = request.peer.ip();
        let Some(header) = &self.config.client_ip_header else {
            return peer;
        };
        if !self.config.is_trusted_proxy(peer) {
            return peer;
        }
        let addresses: Vec<IpAddr> = request
            .header_all(header)
            .flat_map(|v| v.split(','))
            .filter_map(parse_ip)
            .collect();
        addresses
            .iter()
            .rev()
            .find(|ip| !self.config.is_trusted_proxy(**ip))
            .or(addresses.first())
            .copied()
            .unwrap_or(peer)
    }

    fn host_role(&self, request: &Request) -> HostRole {
        // Compared in place, ASCII case aside: the configured hosts are normalized, and this
        // runs on every request.
        let host = host_without_port(request.header("host").unwrap_or(""));
        let is = |configured: &Option<String>| {
            configured
                .as_deref()
                .is_some_and(|configured| configured.eq_ignore_ascii_case(host))
        };
        if is(&self.config.console_host) {
            HostRole::Console
        } else if is(&self.config.legacy_host) {
            HostRole::Legacy
        } else if self.config.base_host.is_none() || is(&self.config.base_host) {
            HostRole::Base
        } else {
            HostRole::Other
        }
    }
}

/// An address as sent in forwarding headers: bare, bracketed IPv6, or with a port.
fn parse_ip(text: &str) -> Option<IpAddr> {
    let text = text.trim();
    text.parse::<IpAddr>()
        .ok()
        .or_else(|| text.parse::<SocketAddr>().ok().map(|s| s.ip()))
        .or_else(|| {
            text.trim_start_matches('[')
                .trim_end_matches(']')
                .parse()
                .ok()
        })
}

/// The service as the HTTP layer calls it.
pub struct AppService(pub Arc<App>);

impl Service for AppService {
    fn call(&self, request: Request) -> Response {
        let app = &self.0;
        match router::area(app.host_role(&request), request.path()) {
            Area::Management => api::handle(app, request),
            Area::ManagementNotFound => api::not_served(app),
            Area::Health => status::health(&request),
            Area::Ready => status::ready(app, &request),
            Area::Contact => contact::handle(app, request),
            Area::Fragment => fragment_endpoint::handle(app, &request),
            Area::NotFound => http::error_response(404, "not_found", "not found"),
        }
    }
}

/// Records a management token's last use at most once a minute, off the request path.
pub struct TokenUse {
    last_sent: Mutex<HashMap<String, Instant>>,
    updates: Sender<String>,
}

const TOKEN_USE_PERIOD: Duration = Duration::from_secs(60);

impl TokenUse {
    fn start(pool: Pool) -> TokenUse {
        let (updates, pending) = channel::bounded::<String>(1024);
        std::thread::Builder::new()
            .name("token-use".into())
            .spawn(move || {
                for token_id in pending {
                    let touched = pool.get().map_err(|e| e.to_string()).and_then(|mut db| {
                        db::orgs::touch_token(&mut *db, &token_id).map_err(|e| e.to_string())
                    });
                    if let Err(error) = touched {
                        log::warn!("cannot record token use: {error}");
                    }
                }
            })
            .expect("cannot start the token-use thread at startup");
        TokenUse {
            last_sent: Mutex::new(HashMap::new()),
            updates,
        }
    }

    pub fn touch(&self, token_id: &str) {
        let now = Instant::now();
        let mut last_sent = self.last_sent.lock();
        let due = last_sent
            .get(token_id)
            .is_none_or(|at| now.duration_since(*at) >= TOKEN_USE_PERIOD);
        if due && self.updates.try_send(token_id.to_string()).is_ok() {
            last_sent.insert(token_id.to_string(), now);
        }
    }
}
