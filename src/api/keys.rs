//! PLACEHOLDER: replaced by the issue-3 implementation.

use super::{Ctx, Reply};
use crate::error::ApiError;
use serde_json::Value;

pub fn list_keys(_ctx: &mut Ctx) -> Result<Reply, ApiError> {
    Err(ApiError::NotFound)
}

pub fn create_key(_ctx: &mut Ctx, _body: &Value) -> Result<Reply, ApiError> {
    Err(ApiError::NotFound)
}

pub fn revoke_key(_ctx: &mut Ctx, _id: &str, _body: &Value) -> Result<Reply, ApiError> {
    Err(ApiError::NotFound)
}
