//! Cards and their eligibility lists.
//!
//! An organisation sees its own cards and the platform cards (`org_id` null). Eligibility rows
//! are kept per (card, organisation): for an organisation's own card no rows means eligible
//! everywhere in it; for a platform card each organisation has its own list, hidden from the
//! others, and no rows means not eligible there. Writers of a list lock the card row first so
//! that concurrent replacements serialise and the result is one of the written lists.

use crate::domain::{CardStatus, DomainName, FragmentRef, KeyValues, Lang};
use crate::ids;
use postgres::GenericClient;
use serde_json::Value;

#[derive(Debug, Clone, PartialEq)]
pub struct CardRow {
    pub id: String,
    /// `None`: a platform card.
    pub org_id: Option<String>,
    pub status: String,
    pub name: String,
    pub lang: String,
    pub brand: String,
    pub brand_domain: Option<String>,
    pub title: String,
    pub body: String,
    pub link_url: Option<String>,
    pub link_label: Option<String>,
    pub key_values: Value,
    pub created_at: String,
    pub updated_at: String,
}

impl CardRow {
    pub fn is_platform(&self) -> bool {
        self.org_id.is_none()
    }
}

/// A card as the console creates it, every value already validated.
#[derive(Debug, Clone)]
pub struct NewCard {
    /// `None`: a platform card.
    pub org_id: Option<String>,
    pub status: CardStatus,
    pub name: String,
    pub lang: Lang,
    pub brand: String,
    pub brand_domain: Option<DomainName>,
    pub title: String,
    pub body: String,
    /// The link's URL and label, which go together.
    pub link: Option<(String, String)>,
    pub key_values: KeyValues,
}

/// One fragment of a card's eligibility list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EligibilityRow {
    pub domain: String,
    /// `None` for a console-made fragment without a reference.
    pub fragment_ref: Option<String>,
    pub fragment_id: String,
}

/// What a `(domain, ref)` pair names in an organisation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolved {
    Fragment(String),
    NoSite,
    NoFragment,
}

pub(super) const CARD_COLUMNS: &str =
    "id, org_id, status, name, lang, brand, brand_domain, title, body,
     link_url, link_label, key_values, rfc3339(created_at), rfc3339(updated_at)";

/// The cards an organisation (`$1`) sees: its own and the platform cards.
const VISIBLE_TO_ORG: &str = "(org_id = $1 OR org_id IS NULL)";

pub(super) fn card_row(r: &postgres::Row) -> CardRow {
    CardRow {
        id: r.get(0),
        org_id: r.get(1),
        status: r.get(2),
        name: r.get(3),
        lang: r.get(4),
        brand: r.get(5),
        brand_domain: r.get(6),
        title: r.get(7),
        body: r.get(8),
        link_url: r.get(9),
        link_label: r.get(10),
        key_values: r.get(11),
        created_at: r.get(12),
        updated_at: r.get(13),
    }
}

/// The organisation's cards and the platform cards, ordered by id (bytes).
pub fn list_visible_cards(
    db: &mut impl GenericClient,
    org_id: &str,
) -> Result<Vec<CardRow>, postgres::Error> {
    let sql = format!(
        "SELECT {CARD_COLUMNS} FROM cards WHERE {VISIBLE_TO_ORG} ORDER BY id COLLATE \"C\""
    );
    Ok(db.query(&sql, &[&org_id])?.iter().map(card_row).collect())
}

/// The card `id` if the organisation sees it (its own or a platform card).
pub fn find_visible_card(
    db: &mut impl GenericClient,
    org_id: &str,
    id: &str,
) -> Result<Option<CardRow>, postgres::Error> {
    let sql = format!("SELECT {CARD_COLUMNS} FROM cards WHERE {VISIBLE_TO_ORG} AND id = $2");
    Ok(db.query_opt(&sql, &[&org_id, &id])?.as_ref().map(card_row))
}

/// Same as [`find_visible_card`], locking the row until the transaction ends.
pub fn lock_visible_card(
    db: &mut impl GenericClient,
    org_id: &str,
    id: &str,
) -> Result<Option<CardRow>, postgres::Error> {
    let sql =
        format!("SELECT {CARD_COLUMNS} FROM cards WHERE {VISIBLE_TO_ORG} AND id = $2 FOR UPDATE");
    Ok(db.query_opt(&sql, &[&org_id, &id])?.as_ref().map(card_row))
}

/// Any card by id, locked until the transaction ends (the console's view).
pub fn lock_card(
    db: &mut impl GenericClient,
    id: &str,
) -> Result<Option<CardRow>, postgres::Error> {
    let sql = format!("SELECT {CARD_COLUMNS} FROM cards WHERE id = $1 FOR UPDATE");
    Ok(db.query_opt(&sql, &[&id])?.as_ref().map(card_row))
}

pub fn create_card(
    db: &mut impl GenericClient,
    card: &NewCard,
) -> Result<CardRow, postgres::Error> {
    let id = ids::new_id(ids::CARD);
    let (link_url, link_label) = match &card.link {
        Some((url, label)) => (Some(url.as_str()), Some(label.as_str())),
        None => (None, None),
    };
    let sql = format!(
        "INSERT INTO cards (id, org_id, status, name, lang, brand, brand_domain, title, body,
                            link_url, link_label, key_values)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
         RETURNING {CARD_COLUMNS}"
    );
    let row = db.query_one(
        &sql,
        &[
            &id,
            &card.org_id,
            &card.status.as_str(),
            &card.name,
            &card.lang.as_str(),
            &card.brand,
            &card.brand_domain.as_ref().map(DomainName::as_str),
            &card.title,
            &card.body,
            &link_url,
            &link_label,
            &card.key_values.to_json(),
        ],
    )?;
    Ok(card_row(&row))
}

/// `None`: no such card.
pub fn set_card_status(
    db: &mut impl GenericClient,
    id: &str,
    status: CardStatus,
) -> Result<Option<CardRow>, postgres::Error> {
    let sql = format!(
        "UPDATE cards SET status = $2, updated_at = now() WHERE id = $1 RETURNING {CARD_COLUMNS}"
    );
    let row = db.query_opt(&sql, &[&id, &status.as_str()])?;
    Ok(row.as_ref().map(card_row))
}

/// Deletes a card and every eligibility list of it; `true` when it existed.
pub fn delete_card(db: &mut impl GenericClient, id: &str) -> Result<bool, postgres::Error> {
    Ok(db.execute("DELETE FROM cards WHERE id = $1", &[&id])? == 1)
}

/// The organisation's eligibility list of a card, sorted by domain then ref (bytes), the
/// fragments without a reference last.
pub fn list_eligibility(
    db: &mut impl GenericClient,
    card_id: &str,
    org_id: &str,
) -> Result<Vec<EligibilityRow>, postgres::Error> {
    let rows = db.query(
        "SELECT s.domain, f.ref, f.id
           FROM card_eligibility e
           JOIN fragments f ON f.id = e.fragment_id
           JOIN sites s ON s.id = f.site_id
          WHERE e.card_id = $1 AND e.org_id = $2
          ORDER BY s.domain COLLATE \"C\", f.ref COLLATE \"C\" NULLS LAST, f.id COLLATE \"C\"",
        &[&card_id, &org_id],
    )?;
    Ok(rows
        .iter()
        .map(|r| EligibilityRow {
            domain: r.get(0),
            fragment_ref: r.get(1),
            fragment_id: r.get(2),
        })
        .collect())
}

/// Looks up each `(domain, ref)` among the organisation's fragments, in one query; the answer
/// has one entry per pair, in order. Paused fragments count.
pub fn resolve_fragments(
    db: &mut impl GenericClient,
    org_id: &str,
    pairs: &[(DomainName, FragmentRef)],
) -> Result<Vec<Resolved>, postgres::Error> {
    let domains: Vec<&str> = pairs.iter().map(|(domain, _)| domain.as_str()).collect();
    let refs: Vec<&str> = pairs
        .iter()
        .map(|(_, reference)| reference.as_str())
        .collect();
    let rows = db.query(
        "SELECT s.id IS NOT NULL, f.id
           FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS wanted (domain, ref, position)
           LEFT JOIN sites s ON s.org_id = $1 AND s.domain = wanted.domain
           LEFT JOIN fragments f ON f.site_id = s.id AND f.ref = wanted.ref
          ORDER BY wanted.position",
        &[&org_id, &domains, &refs],
    )?;
    Ok(rows
        .iter()
        .map(
            |r| match (r.get::<_, bool>(0), r.get::<_, Option<String>>(1)) {
                (_, Some(fragment_id)) => Resolved::Fragment(fragment_id),
                (true, None) => Resolved::NoFragment,
                (false, None) => Resolved::NoSite,
            },
        )
        .collect())
}

/// Replaces the organisation's list of a card with `fragment_ids` (duplicates count once).
/// The caller holds the card row lock in the same transaction.
pub fn replace_eligibility(
    db: &mut impl GenericClient,
    card_id: &str,
    org_id: &str,
    fragment_ids: &[String],
) -> Result<(), postgres::Error> {
    db.execute(
        "DELETE FROM card_eligibility WHERE card_id = $1 AND org_id = $2",
        &[&card_id, &org_id],
    )?;
    db.execute(
        "INSERT INTO card_eligibility (card_id, org_id, fragment_id)
         SELECT $1, $2, fragment_id FROM unnest($3::text[]) AS wanted (fragment_id)
         ON CONFLICT DO NOTHING",
        &[&card_id, &org_id, &fragment_ids],
    )?;
    Ok(())
}
