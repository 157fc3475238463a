//! PLACEHOLDER: replaced by the issue-3 implementation.

use super::{Ctx, Reply};
use crate::error::ApiError;
use serde_json::Value;

pub fn list_fragments(_ctx: &mut Ctx, _domain: &str) -> Result<Reply, ApiError> {
    Err(ApiError::NotFound)
}

pub fn put_fragment(
    _ctx: &mut Ctx,
    _domain: &str,
    _ref: &str,
    _body: &Value,
) -> Result<Reply, ApiError> {
    Err(ApiError::NotFound)
}
