//! PLACEHOLDER: replaced by the issue-3 implementation.

use super::{Ctx, Reply};
use crate::error::ApiError;
use serde_json::Value;

pub fn list_cards(_ctx: &mut Ctx) -> Result<Reply, ApiError> {
    Err(ApiError::NotFound)
}

pub fn get_eligibility(_ctx: &mut Ctx, _id: &str) -> Result<Reply, ApiError> {
    Err(ApiError::NotFound)
}

pub fn replace_eligibility(_ctx: &mut Ctx, _id: &str, _body: &Value) -> Result<Reply, ApiError> {
    Err(ApiError::NotFound)
}
