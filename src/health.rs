//! `GET /health` (the process answers) and `GET /ready` (the database answers and the
//! fragment cache has loaded): what a load balancer or orchestrator polls.

use crate::app::App;
use crate::http::{require_get_or_head, Request, Response};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

/// `/ready` answers within about this long even when the database does not: a health checker's
/// own timeout is often short.
const READY_DB_TIMEOUT: Duration = Duration::from_secs(1);

pub fn health(request: &Request) -> Response {
    if let Err(refused) = require_get_or_head(request) {
        return refused;
    }
    Response::json(200, &json!({"status": "ok"})).header("Cache-Control", "no-store")
}

pub fn ready(app: &Arc<App>, request: &Request) -> Response {
    if let Err(refused) = require_get_or_head(request) {
        return refused;
    }
    let pool = app.pool.clone();
    let database_up = app
        .blocking
        .run(move || {
            pool.get_timeout(READY_DB_TIMEOUT)
                .map_err(|e| e.to_string())
                .and_then(|mut db| db.simple_query("SELECT 1").map_err(|e| e.to_string()))
                .is_ok()
        })
        .unwrap_or(false);
    let cache_loaded = app.delivery.cache.is_loaded();
    let stopping = app.is_stopping();
    let status = if database_up && cache_loaded && !stopping {
        200
    } else {
        503
    };
    let body = json!({
        "status": match (status, stopping) {
            (200, _) => "ready",
            (_, true) => "stopping",
            _ => "unavailable",
        },
        "database": if database_up { "up" } else { "down" },
        "fragment_cache": if cache_loaded { "loaded" } else { "loading" },
        "report_pending_counters": app.delivery.reporter.status().pending_keys,
    });
    Response::json(status, &body).header("Cache-Control", "no-store")
}
