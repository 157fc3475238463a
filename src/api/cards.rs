//! `/v1/cards`: the cards an organisation sees (read-only) and their eligibility lists.

use super::{Ctx, Reply};
use crate::error::ApiError;
use crate::ids::CardId;
use crate::ops;
use crate::wire;
use serde_json::Value;

pub fn list_cards(ctx: &mut Ctx) -> Result<Reply, ApiError> {
    let cards = ops::cards::list_cards(&mut *ctx.db, &ctx.caller)?;
    Ok(Reply::ok(wire::card_list_json(&cards)))
}

pub fn get_eligibility(ctx: &mut Ctx, id: &str) -> Result<Reply, ApiError> {
    let id = CardId::parse(id).ok_or(ApiError::NotFound)?;
    let items = ops::cards::get_eligibility(&mut *ctx.db, &ctx.caller, &id)?;
    Ok(Reply::ok(wire::eligibility_json(&items)))
}

pub fn replace_eligibility(ctx: &mut Ctx, id: &str, body: &Value) -> Result<Reply, ApiError> {
    let wanted = wire::eligibility_write(body)?;
    let id = CardId::parse(id).ok_or(ApiError::NotFound)?;
    let items = ops::cards::replace_eligibility(&mut *ctx.db, &ctx.caller, &id, &wanted)?;
    Ok(Reply::ok(wire::eligibility_json(&items)))
}
