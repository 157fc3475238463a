//! `GET /v1/me`: who the token acts for. Clients call it first to check `account.id`.

use super::{Ctx, Reply};
use crate::error::ApiError;
use crate::ops;
use crate::wire;

pub fn get_me(ctx: &mut Ctx) -> Result<Reply, ApiError> {
    Ok(Reply::ok(wire::me_json(&ops::orgs::get_me(&ctx.caller)?)))
}
