//! PLACEHOLDER: replaced by the issue-3 implementation.

use super::{Ctx, Reply};
use crate::error::ApiError;
use serde_json::Value;

pub fn list_routes(_ctx: &mut Ctx, _domain: &str) -> Result<Reply, ApiError> {
    Err(ApiError::NotFound)
}

pub fn replace_routes(_ctx: &mut Ctx, _domain: &str, _body: &Value) -> Result<Reply, ApiError> {
    Err(ApiError::NotFound)
}

pub fn create_route(_ctx: &mut Ctx, _domain: &str, _body: &Value) -> Result<Reply, ApiError> {
    Err(ApiError::NotFound)
}

pub fn delete_route(
    _ctx: &mut Ctx,
    _domain: &str,
    _id: &str,
    _body: &Value,
) -> Result<Reply, ApiError> {
    Err(ApiError::NotFound)
}
