//! The contract's error object and the answers the HTTP layer itself gives with it.
//!
//! Every JSON error body of the service — the management API's, `/fragment`'s, the HTTP
//! layer's own refusals — is written by [`error_json`], so the envelope has one shape.

use super::{Request, Response};
use serde_json::{json, Value};

/// The error object: `{"error": {code, message, field?, retry_after?}}`.
pub fn error_json(
    code: &str,
    message: &str,
    field: Option<&str>,
    retry_after: Option<u32>,
) -> Value {
    let mut error = json!({"code": code, "message": message});
    if let Some(field) = field {
        error["field"] = json!(field);
    }
    if let Some(seconds) = retry_after {
        error["retry_after"] = json!(seconds);
    }
    json!({ "error": error })
}

/// An error answer with `code` and `message` only, never stored by a cache.
pub fn error_response(status: u16, code: &str, message: &str) -> Response {
    Response::json(status, &error_json(code, message, None, None))
        .header("Cache-Control", "no-store")
}

pub const METHOD_NOT_ALLOWED: &str = "method_not_allowed";

/// `405` with the methods the path accepts in `Allow`.
pub fn method_not_allowed(allow: &str) -> Response {
    error_response(405, METHOD_NOT_ALLOWED, "method not allowed").header("Allow", allow.to_string())
}

/// The method guard of the routes read with `GET` (and `HEAD`, answered without a body).
pub fn require_get_or_head(request: &Request) -> Result<(), Response> {
    match request.method() {
        "GET" | "HEAD" => Ok(()),
        _ => Err(method_not_allowed("GET, HEAD")),
    }
}
