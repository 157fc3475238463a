//! The deletion of a site or a fragment (a console action), and the reckoning of what goes
//! with it. The schema's cascades remove what hangs off them: rules, eligibility rows, a site
//! default. (Console-made fragments are
//! inserted by `db::fragments::insert_fragment`, their sites by `db::sites::ensure_site`.)

use crate::domain::DomainName;
use crate::ids::{CardId, FragmentId, OrgId};
use postgres::GenericClient;

/// A card named as people read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedCard {
    pub id: CardId,
    pub name: String,
}

impl std::fmt::Display for NamedCard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "\u{201c}{}\u{201d} ({})", self.name, self.id)
    }
}

/// The organisation's active cards whose whole eligibility list is among `fragment_ids`:
/// deleting those fragments would empty their list, which means everywhere.
pub fn active_cards_only_on(
    db: &mut impl GenericClient,
    org_id: &OrgId,
    fragment_ids: &[FragmentId],
) -> Result<Vec<NamedCard>, postgres::Error> {
    let rows = db.query(
        "SELECT c.id, c.name FROM card_eligibility e JOIN cards c ON c.id = e.card_id
          WHERE c.org_id = $1 AND e.org_id = $1 AND c.status = 'active'
          GROUP BY c.id, c.name
         HAVING bool_and(e.fragment_id = ANY($2::text[]))
          ORDER BY c.id COLLATE \"C\"",
        &[org_id, &fragment_ids],
    )?;
    rows.iter()
        .map(|r| {
            Ok(NamedCard {
                id: r.try_get(0)?,
                name: r.try_get(1)?,
            })
        })
        .collect()
}

/// Locks, until the transaction ends, the organisation's cards listed on these fragments, then
/// the fragments: a concurrent change of those lists (which locks its card, then the fragments
/// it names) either ends first or waits for the deletion, so what the deletion reads of them
/// next stays true.
pub fn lock_for_deletion(
    db: &mut impl GenericClient,
    org_id: &OrgId,
    fragment_ids: &[FragmentId],
) -> Result<(), postgres::Error> {
    db.execute(
        "SELECT 1 FROM cards
          WHERE org_id = $1
            AND id IN (SELECT card_id FROM card_eligibility WHERE fragment_id = ANY($2::text[]))
          ORDER BY id FOR UPDATE",
        &[org_id, &fragment_ids],
    )?;
    db.execute(
        "SELECT 1 FROM fragments WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE",
        &[&fragment_ids],
    )?;
    Ok(())
}

/// The domain of the organisation's site whose default is this fragment, if one is.
pub fn site_defaulting_to(
    db: &mut impl GenericClient,
    org_id: &OrgId,
    fragment_id: &FragmentId,
) -> Result<Option<String>, postgres::Error> {
    let row = db.query_opt(
        "SELECT domain FROM sites WHERE org_id = $1 AND default_fragment_id = $2",
        &[org_id, fragment_id],
    )?;
    row.map(|r| r.try_get(0)).transpose()
}

/// Deletes one of the organisation's fragments; `true` when it existed there.
pub fn delete_fragment(
    db: &mut impl GenericClient,
    org_id: &OrgId,
    fragment_id: &FragmentId,
) -> Result<bool, postgres::Error> {
    let deleted = db.execute(
        "DELETE FROM fragments f USING sites s
          WHERE f.id = $2 AND s.id = f.site_id AND s.org_id = $1",
        &[org_id, fragment_id],
    )?;
    Ok(deleted == 1)
}

/// Deletes the organisation's site `domain` with everything in it; `true` when it existed.
pub fn delete_site(
    db: &mut impl GenericClient,
    org_id: &OrgId,
    domain: &DomainName,
) -> Result<bool, postgres::Error> {
    let deleted = db.execute(
        "DELETE FROM sites WHERE org_id = $1 AND domain = $2",
        &[org_id, domain],
    )?;
    Ok(deleted == 1)
}

/// How many eligibility entries name one of these fragments.
pub fn count_eligibility_on(
    db: &mut impl GenericClient,
    fragment_ids: &[FragmentId],
) -> Result<i64, postgres::Error> {
    let row = db.query_one(
        "SELECT count(*) FROM card_eligibility WHERE fragment_id = ANY($1::text[])",
        &[&fragment_ids],
    )?;
    row.try_get(0)
}
