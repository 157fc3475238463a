//! `/v1/cards`: the cards an organisation sees (read-only) and their eligibility lists.
//!
//! A platform card is visible to every organisation, but its lists are the service operator's
//! business: each organisation reads only its own list of it, and cannot write it (`403`).

use super::{Ctx, Reply};
use crate::db::{
    self,
    cards::{self, CardRow, Resolved},
};
use crate::error::ApiError;
use crate::ids::{CardId, FragmentId};
use crate::wire::{self, FRAGMENTS};
use serde_json::Value;

pub fn list_cards(ctx: &mut Ctx) -> Result<Reply, ApiError> {
    let cards = cards::list_visible_cards(&mut *ctx.db, &ctx.owner.org.id)?;
    Ok(Reply::ok(wire::card_list_json(&cards)))
}

pub fn get_eligibility(ctx: &mut Ctx, id: &str) -> Result<Reply, ApiError> {
    let org_id = &ctx.owner.org.id;
    let id = CardId::parse(id).ok_or(ApiError::NotFound)?;
    let card = cards::find_visible_card(&mut *ctx.db, org_id, &id)?.ok_or(ApiError::NotFound)?;
    let items = cards::list_eligibility(&mut *ctx.db, &card.id, org_id)?;
    Ok(Reply::ok(wire::eligibility_json(&items)))
}

/// `{fragments: [{domain, ref}]}` replaces the list at once: the card row is locked for the
/// whole check-and-write, so concurrent replacements serialise and nothing is written unless
/// every entry names a fragment of the organisation.
pub fn replace_eligibility(ctx: &mut Ctx, id: &str, body: &Value) -> Result<Reply, ApiError> {
    let wanted = wire::eligibility_write(body)?;
    let org_id = ctx.owner.org.id.clone();
    let id = CardId::parse(id).ok_or(ApiError::NotFound)?;
    let mut tx = ctx.db.transaction()?;
    let card = cards::lock_visible_card(&mut tx, &org_id, &id)?.ok_or(ApiError::NotFound)?;
    refuse_platform_card(&card)?;
    let resolved = cards::resolve_fragments(&mut tx, &org_id, &wanted)?;
    let fragment_ids = fragment_ids_or_refusal(resolved)?;
    cards::replace_eligibility(&mut tx, &card.id, &org_id, &fragment_ids)
        .map_err(conflict_if_fragment_gone)?;
    let items = cards::list_eligibility(&mut tx, &card.id, &org_id)?;
    tx.commit()?;
    Ok(Reply::ok(wire::eligibility_json(&items)))
}

fn refuse_platform_card(card: &CardRow) -> Result<(), ApiError> {
    if card.is_platform() {
        return Err(ApiError::PlatformCard);
    }
    Ok(())
}

/// The fragment ids, or the `422` of the first entry that names no fragment of the
/// organisation.
fn fragment_ids_or_refusal(resolved: Vec<Resolved>) -> Result<Vec<FragmentId>, ApiError> {
    resolved
        .into_iter()
        .enumerate()
        .map(|(index, found)| match found {
            Resolved::Fragment(id) => Ok(id),
            Resolved::NoSite => Err(ApiError::validation(
                format!("{FRAGMENTS}[{index}].domain"),
                "no site of your organisation has this domain",
            )),
            Resolved::NoFragment => Err(ApiError::validation(
                format!("{FRAGMENTS}[{index}].ref"),
                "no fragment of this site has this reference",
            )),
        })
        .collect()
}

/// A fragment deleted from the console between the check and the write: the contract's rare
/// `409` of a write colliding with another (read again, then retry).
fn conflict_if_fragment_gone(error: postgres::Error) -> ApiError {
    if db::is_foreign_key_violation(&error) {
        return ApiError::conflict(
            FRAGMENTS,
            "a fragment was deleted meanwhile: read, then retry",
        );
    }
    error.into()
}
