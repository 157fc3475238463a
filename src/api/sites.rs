//! PLACEHOLDER: replaced by the issue-3 implementation.

use super::{Ctx, Reply};
use crate::error::ApiError;
use serde_json::Value;

pub fn list_sites(_ctx: &mut Ctx) -> Result<Reply, ApiError> {
    Err(ApiError::NotFound)
}

pub fn put_site(_ctx: &mut Ctx, _domain: &str, _body: &Value) -> Result<Reply, ApiError> {
    Err(ApiError::NotFound)
}

pub fn put_default_fragment(
    _ctx: &mut Ctx,
    _domain: &str,
    _body: &Value,
) -> Result<Reply, ApiError> {
    Err(ApiError::NotFound)
}

pub fn delete_default_fragment(
    _ctx: &mut Ctx,
    _domain: &str,
    _body: &Value,
) -> Result<Reply, ApiError> {
    Err(ApiError::NotFound)
}
