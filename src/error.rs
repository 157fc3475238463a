//! The one error enum of the management API and its mapping to the contract's error codes.
//!
//! Every handler returns `Result<_, ApiError>`; this file is the only place that knows which
//! status, `code`, `message`, `field` and `retry_after` an error answers with. Low-level errors
//! (database, pool) are classified here at the boundary: their cause goes to the log, the client
//! gets the generic `internal error`.

use crate::db;
use crate::domain::Invalid;
use crate::http::{self, Response, BODY_LIMIT};
use serde_json::Value;

/// The `retry_after` value and `Retry-After` header of every `429`.
pub const RETRY_AFTER_SECONDS: u32 = 60;
/// The `Retry-After` header of a `503 unavailable`: a failover's new primary takes seconds.
pub const UNAVAILABLE_RETRY_AFTER_SECONDS: u32 = 5;

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("unsupported media type")]
    UnsupportedMediaType,
    #[error("body too large")]
    BodyTooLarge,
    #[error("invalid json")]
    InvalidJson,
    #[error("unknown field {0}")]
    UnknownField(String),
    #[error("missing token")]
    MissingToken,
    #[error("invalid token")]
    InvalidToken,
    #[error("platform card")]
    PlatformCard,
    #[error("not found")]
    NotFound,
    #[error("method not allowed")]
    MethodNotAllowed { allow: String },
    #[error("conflict on {field}: {message}")]
    Conflict { field: String, message: String },
    #[error("validation of {field}: {message}")]
    Validation { field: String, message: String },
    #[error("rate limited")]
    RateLimited,
    /// The database does not answer, or accepts no writes: an outage, a failover's gap.
    #[error("unavailable: {0}")]
    Unavailable(String),
    #[error("internal: {0}")]
    Internal(String),
}

impl ApiError {
    pub fn validation(field: impl Into<String>, message: impl Into<String>) -> Self {
        ApiError::Validation {
            field: field.into(),
            message: message.into(),
        }
    }

    pub fn conflict(field: impl Into<String>, message: impl Into<String>) -> Self {
        ApiError::Conflict {
            field: field.into(),
            message: message.into(),
        }
    }

    pub fn status(&self) -> u16 {
        match self {
            ApiError::UnsupportedMediaType
            | ApiError::BodyTooLarge
            | ApiError::InvalidJson
            | ApiError::UnknownField(_) => 400,
            ApiError::MissingToken | ApiError::InvalidToken => 401,
            ApiError::PlatformCard => 403,
            ApiError::NotFound => 404,
            ApiError::MethodNotAllowed { .. } => 405,
            ApiError::Conflict { .. } => 409,
            ApiError::Validation { .. } => 422,
            ApiError::RateLimited => 429,
            ApiError::Unavailable(_) => 503,
            ApiError::Internal(_) => 500,
        }
    }

    pub fn code(&self) -> &'static str {
        match self {
            ApiError::UnsupportedMediaType => "unsupported_media_type",
            ApiError::BodyTooLarge => "body_too_large",
            ApiError::InvalidJson => "invalid_json",
            ApiError::UnknownField(_) => "unknown_field",
            ApiError::MissingToken => "missing_token",
            ApiError::InvalidToken => "invalid_token",
            ApiError::PlatformCard => "platform_card",
            ApiError::NotFound => "not_found",
            ApiError::MethodNotAllowed { .. } => http::METHOD_NOT_ALLOWED,
            ApiError::Conflict { .. } => "conflict",
            ApiError::Validation { .. } => "validation",
            ApiError::RateLimited => "rate_limited",
            ApiError::Unavailable(_) => "unavailable",
            ApiError::Internal(_) => "internal",
        }
    }

    /// The console wording; fixed where the contract fixes it.
    pub fn message(&self) -> String {
        match self {
            ApiError::UnsupportedMediaType => {
                "send a JSON body with Content-Type: application/json".into()
            }
            ApiError::BodyTooLarge => format!("request body over {BODY_LIMIT} bytes"),
            ApiError::InvalidJson => "request body is not valid JSON".into(),
            ApiError::UnknownField(_) => "unknown field".into(),
            ApiError::MissingToken => {
                "send your management token in an Authorization: Bearer header".into()
            }
            ApiError::InvalidToken => "invalid management token".into(),
            ApiError::PlatformCard => "platform cards are managed by the service operator".into(),
            ApiError::NotFound => "not found".into(),
            ApiError::MethodNotAllowed { .. } => "method not allowed".into(),
            ApiError::Conflict { message, .. } | ApiError::Validation { message, .. } => {
                message.clone()
            }
            ApiError::RateLimited => {
                format!("rate limited — retry after {RETRY_AFTER_SECONDS} seconds")
            }
            ApiError::Unavailable(_) => format!(
                "the database is not available at this moment — retry after \
                 {UNAVAILABLE_RETRY_AFTER_SECONDS} seconds"
            ),
            ApiError::Internal(_) => "internal error".into(),
        }
    }

    pub fn field(&self) -> Option<&str> {
        match self {
            ApiError::UnknownField(field)
            | ApiError::Conflict { field, .. }
            | ApiError::Validation { field, .. } => Some(field),
            _ => None,
        }
    }

    /// The error object of the contract: `{"error": {code, message, field?, retry_after?}}`.
    pub fn to_json(&self) -> Value {
        let retry_after = matches!(self, ApiError::RateLimited).then_some(RETRY_AFTER_SECONDS);
        http::error_json(self.code(), &self.message(), self.field(), retry_after)
    }

    /// The answer: the status and the error object, never stored by a cache; a `405` lists the
    /// allowed methods, a `503` when to retry.
    pub fn response(&self) -> Response {
        match self {
            ApiError::MethodNotAllowed { allow } => http::method_not_allowed(allow),
            ApiError::Unavailable(_) => self
                .json_response()
                .header("Retry-After", UNAVAILABLE_RETRY_AFTER_SECONDS.to_string()),
            _ => self.json_response(),
        }
    }

    fn json_response(&self) -> Response {
        Response::json(self.status(), &self.to_json()).header("Cache-Control", "no-store")
    }
}

impl From<Invalid> for ApiError {
    fn from(invalid: Invalid) -> Self {
        ApiError::Validation {
            field: invalid.field,
            message: invalid.message,
        }
    }
}

impl ApiError {
    /// An unexpected failure: its cause goes to the log, the client gets `internal error`.
    pub fn internal(cause: impl std::fmt::Display) -> ApiError {
        let cause = cause.to_string();
        log::error!("request failed: {cause}");
        ApiError::Internal(cause)
    }
}

/// The database being unavailable changes no state here: the pool follows it and says the
/// outage in the log once (`pool`); a request only fails with it, `503`, to be retried.
impl From<postgres::Error> for ApiError {
    fn from(error: postgres::Error) -> Self {
        let cause = db::describe(&error);
        if db::is_unavailable(&error) {
            ApiError::Unavailable(cause)
        } else {
            ApiError::internal(cause)
        }
    }
}

impl From<r2d2::Error> for ApiError {
    fn from(error: r2d2::Error) -> Self {
        // The pool gives up a checkout only when no connection can be made (or none accepts
        // writes): the database is unavailable, and the pool has marked it so.
        ApiError::Unavailable(format!("no database connection: {error}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn envelope_carries_field_only_where_the_contract_puts_it() {
        let cases: Vec<(ApiError, Value)> = vec![
            (
                ApiError::NotFound,
                json!({"error": {"code": "not_found", "message": "not found"}}),
            ),
            (
                ApiError::UnknownField("routes[3].x".into()),
                json!({"error": {"code": "unknown_field", "message": "unknown field", "field": "routes[3].x"}}),
            ),
            (
                ApiError::RateLimited,
                json!({"error": {"code": "rate_limited", "message": "rate limited — retry after 60 seconds", "retry_after": 60}}),
            ),
            (
                ApiError::BodyTooLarge,
                json!({"error": {"code": "body_too_large", "message": "request body over 262144 bytes"}}),
            ),
            (
                ApiError::Internal("secret cause".into()),
                json!({"error": {"code": "internal", "message": "internal error"}}),
            ),
        ];
        for (error, expected) in cases {
            assert_eq!(error.to_json(), expected);
        }
    }
}
