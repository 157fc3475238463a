//! A management token's last use, recorded at most once a minute per token, off the request
//! path: the console lists it, and a write per request would cost every call a round trip.

use crate::background::Background;
use crate::db;
use crate::failure_log::FailureLog;
use crate::ids::TokenId;
use crate::pool::Pool;
use crossbeam::channel::{self, Sender};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::time::{Duration, Instant};

const TOKEN_USE_PERIOD: Duration = Duration::from_secs(60);
/// Updates waiting for the writer; past this, a use is recorded at the next call instead.
const PENDING_UPDATES: usize = 1024;

pub struct TokenUse {
    last_sent: Mutex<HashMap<TokenId, Instant>>,
    updates: Sender<TokenId>,
    writer: Background,
}

impl TokenUse {
    /// Starts the writer thread, which updates `last_used_at` with its own pooled connection;
    /// it stops with this (dropped, or [`TokenUse::stop`]).
    pub fn start(pool: Pool) -> TokenUse {
        let (updates, pending) = channel::bounded::<TokenId>(PENDING_UPDATES);
        let writer = Background::spawn("token-use", move |stop| {
            let outage = FailureLog::new("recording a management token's last use");
            while let Some(token_id) = stop.next(&pending) {
                let touched = pool.get().map_err(|e| e.to_string()).and_then(|mut db| {
                    db::orgs::touch_token(&mut *db, &token_id).map_err(|e| db::describe(&e))
                });
                match touched {
                    Ok(()) => outage.succeeded(),
                    Err(cause) => outage.failed(&cause),
                }
            }
        });
        TokenUse {
            last_sent: Mutex::new(HashMap::new()),
            updates,
            writer,
        }
    }

    /// Stops the writer (uses not yet written are not), and waits until it has stopped.
    pub fn stop(&self) {
        self.writer.stop();
    }

    pub fn touch(&self, token_id: &TokenId) {
        let now = Instant::now();
        let mut last_sent = self.last_sent.lock();
        let due = last_sent
            .get(token_id)
            .is_none_or(|at| now.duration_since(*at) >= TOKEN_USE_PERIOD);
        if due && self.updates.try_send(token_id.clone()).is_ok() {
            last_sent.insert(token_id.clone(), now);
        }
    }
}
