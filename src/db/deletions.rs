//! The deletion of a site or a fragment (a console action), and the reckoning of what goes
//! with it. The schema's cascades remove what hangs off them: rules, eligibility rows, a site
//! default. (Console-made fragments are
//! inserted by `db::fragments::insert_fragment`, their sites by `db::sites::ensure_site`.)

use crate::domain::DomainName;
use crate::ids::{CardId, FragmentId, OrgId};
use postgres::GenericClient;

/// The organisation's own cards whose whole eligibility list is among `fragment_ids`: deleting
/// those fragments empties their list, which makes them eligible everywhere.
pub fn cards_eligible_only_on(
    db: &mut impl GenericClient,
    org_id: &OrgId,
    fragment_ids: &[FragmentId],
) -> Result<Vec<CardId>, postgres::Error> {
    let rows = db.query(
        "SELECT e.card_id FROM card_eligibility e JOIN cards c ON c.id = e.card_id
          WHERE c.org_id = $1 AND e.org_id = $1
          GROUP BY e.card_id
         HAVING bool_and(e.fragment_id = ANY($2::text[]))
          ORDER BY e.card_id COLLATE \"C\"",
        &[org_id, &fragment_ids],
    )?;
    rows.iter().map(|r| r.try_get(0)).collect()
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
