//! `GET /health` (the process answers) and `GET /ready` (this instance can serve `/fragment`):
//! what a load balancer or orchestrator polls (decisions.md, "Fleet").
//!
//! `/ready` answers from memory, never waiting on the database: `/fragment` serves from the
//! snapshot through a database outage, so a balancer must keep sending traffic then. The
//! database's state is in the body, for the operator.

use crate::app::App;
use crate::http::{require_get_or_head, Request, Response};
use serde_json::json;
use std::sync::Arc;

pub fn health(request: &Request) -> Response {
    if let Err(refused) = require_get_or_head(request) {
        return refused;
    }
    Response::json(200, &json!({"status": "ok"})).header("Cache-Control", "no-store")
}

/// `200` once the snapshot has loaded, `503` before and from the start of a shutdown.
pub fn ready(app: &Arc<App>, request: &Request) -> Response {
    if let Err(refused) = require_get_or_head(request) {
        return refused;
    }
    let cache_loaded = app.delivery.cache.is_loaded();
    let stopping = app.is_stopping();
    let (status, said) = match (stopping, cache_loaded) {
        (true, _) => (503, "stopping"),
        (false, false) => (503, "unavailable"),
        (false, true) => (200, "ready"),
    };
    let body = json!({
        "status": said,
        "database": if app.pool.database_up() { "up" } else { "down" },
        "fragment_cache": if cache_loaded { "loaded" } else { "loading" },
        "report_pending_counters": app.delivery.reporter.status().pending_keys,
    });
    Response::json(status, &body).header("Cache-Control", "no-store")
}
