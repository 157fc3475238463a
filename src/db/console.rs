//! Site and fragment writes that only the console makes: creating a fragment (with or without
//! a reference, creating its site on the way) and deleting a fragment or a whole site. The
//! schema's cascades remove what hangs off them: rules, eligibility rows, a site default.

use crate::domain::{Domain, FragmentName, FragmentRef};
use crate::ids;
use postgres::GenericClient;
use serde_json::Value;

/// A fragment as the console made it.
#[derive(Debug, Clone, PartialEq)]
pub struct ConsoleFragment {
    pub id: String,
    pub fragment_ref: Option<String>,
    pub name: String,
    pub lang: String,
    pub description: Option<String>,
    pub key_values: Value,
    pub status: String,
    pub created_at: String,
    pub updated_at: String,
}

/// The organisation's site for `domain`, created if absent; `true` when it was created.
pub fn ensure_site(
    db: &mut impl GenericClient,
    org_id: &str,
    domain: &Domain,
) -> Result<(i64, bool), postgres::Error> {
    let inserted = db.query_opt(
        "INSERT INTO sites (org_id, domain) VALUES ($1, $2)
         ON CONFLICT (org_id, domain) DO NOTHING RETURNING id",
        &[&org_id, &domain.as_str()],
    )?;
    if let Some(row) = inserted {
        return Ok((row.get(0), true));
    }
    let row = db.query_one(
        "SELECT id FROM sites WHERE org_id = $1 AND domain = $2",
        &[&org_id, &domain.as_str()],
    )?;
    Ok((row.get(0), false))
}

/// An active `fr` fragment with no description or key-values. A reference already used in
/// the site fails with a unique violation.
pub fn create_fragment(
    db: &mut impl GenericClient,
    site_id: i64,
    fragment_ref: Option<&FragmentRef>,
    name: &FragmentName,
) -> Result<ConsoleFragment, postgres::Error> {
    let id = ids::new_id(ids::FRAGMENT);
    let row = db.query_one(
        "INSERT INTO fragments (id, site_id, ref, name, lang, status)
         VALUES ($1, $2, $3, $4, 'fr', 'active')
         RETURNING id, ref, name, lang, description, key_values, status,
                   rfc3339(created_at), rfc3339(updated_at)",
        &[
            &id,
            &site_id,
            &fragment_ref.map(FragmentRef::as_str),
            &name.as_str(),
        ],
    )?;
    Ok(ConsoleFragment {
        id: row.get(0),
        fragment_ref: row.get(1),
        name: row.get(2),
        lang: row.get(3),
        description: row.get(4),
        key_values: row.get(5),
        status: row.get(6),
        created_at: row.get(7),
        updated_at: row.get(8),
    })
}

/// The ids of the fragments of the organisation's site `domain` (none if no such site).
pub fn site_fragment_ids(
    db: &mut impl GenericClient,
    org_id: &str,
    domain: &Domain,
) -> Result<Vec<String>, postgres::Error> {
    let rows = db.query(
        "SELECT f.id FROM fragments f JOIN sites s ON s.id = f.site_id
          WHERE s.org_id = $1 AND s.domain = $2",
        &[&org_id, &domain.as_str()],
    )?;
    Ok(rows.iter().map(|r| r.get(0)).collect())
}

/// The organisation's own cards whose whole eligibility list is among `fragment_ids`: deleting
/// those fragments empties their list, which makes them eligible everywhere.
pub fn cards_eligible_only_on(
    db: &mut impl GenericClient,
    org_id: &str,
    fragment_ids: &[String],
) -> Result<Vec<String>, postgres::Error> {
    let rows = db.query(
        "SELECT e.card_id FROM card_eligibility e JOIN cards c ON c.id = e.card_id
          WHERE c.org_id = $1 AND e.org_id = $1
          GROUP BY e.card_id
         HAVING bool_and(e.fragment_id = ANY($2::text[]))
          ORDER BY e.card_id COLLATE \"C\"",
        &[&org_id, &fragment_ids],
    )?;
    Ok(rows.iter().map(|r| r.get(0)).collect())
}

/// Deletes one of the organisation's fragments; `true` when it existed there.
pub fn delete_fragment(
    db: &mut impl GenericClient,
    org_id: &str,
    fragment_id: &str,
) -> Result<bool, postgres::Error> {
    let deleted = db.execute(
        "DELETE FROM fragments f USING sites s
          WHERE f.id = $2 AND s.id = f.site_id AND s.org_id = $1",
        &[&org_id, &fragment_id],
    )?;
    Ok(deleted == 1)
}

/// Deletes the organisation's site `domain` with everything in it; `true` when it existed.
pub fn delete_site(
    db: &mut impl GenericClient,
    org_id: &str,
    domain: &Domain,
) -> Result<bool, postgres::Error> {
    let deleted = db.execute(
        "DELETE FROM sites WHERE org_id = $1 AND domain = $2",
        &[&org_id, &domain.as_str()],
    )?;
    Ok(deleted == 1)
}
