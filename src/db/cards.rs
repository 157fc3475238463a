//! Cards and their eligibility lists.
//!
//! An organisation sees its own cards and the platform cards (`org_id` null). Eligibility rows
//! are kept per (card, organisation): for an organisation's own card no rows means eligible
//! everywhere in it; for a platform card each organisation has its own list, hidden from the
//! others, and no rows means not eligible there. Writers of a list lock the card row first so
//! that concurrent replacements serialise and the result is one of the written lists.

use super::{read_all, read_opt};
use crate::domain::{CardStatus, CardText, DomainName, FragmentRef, KeyValues, Lang, LinkUrl};
use crate::ids::{CardId, FragmentId, OrgId, SiteId};
use postgres::types::ToSql;
use postgres::GenericClient;
use serde_json::Value;

#[derive(Debug, Clone, PartialEq)]
pub struct CardRow {
    pub id: CardId,
    /// `None`: a platform card.
    pub org_id: Option<OrgId>,
    pub status: CardStatus,
    pub name: String,
    pub lang: Lang,
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

/// A card's content as the console writes it, every value already validated.
#[derive(Debug, Clone, PartialEq)]
pub struct CardContent {
    pub name: CardText,
    pub lang: Lang,
    pub brand: CardText,
    pub brand_domain: Option<DomainName>,
    pub title: CardText,
    pub body: CardText,
    pub link: Option<CardLink>,
    pub key_values: KeyValues,
}

/// A card's link: its URL and label go together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardLink {
    pub url: LinkUrl,
    pub label: CardText,
}

/// One fragment of a card's eligibility list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EligibilityRow {
    pub domain: String,
    /// `None` for a console-made fragment without a reference.
    pub fragment_ref: Option<String>,
    pub fragment_id: FragmentId,
}

/// What a `(domain, ref)` pair names in an organisation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolved {
    Fragment(FragmentId),
    NoSite,
    NoFragment,
}

pub(super) const CARD_COLUMNS: &str =
    "id, org_id, status, name, lang, brand, brand_domain, title, body,
     link_url, link_label, key_values, rfc3339(created_at), rfc3339(updated_at)";

/// The cards an organisation (`$1`) sees: its own and the platform cards.
const VISIBLE_TO_ORG: &str = "(org_id = $1 OR org_id IS NULL)";

pub(super) fn card_row(r: &postgres::Row) -> Result<CardRow, postgres::Error> {
    Ok(CardRow {
        id: r.try_get(0)?,
        org_id: r.try_get(1)?,
        status: r.try_get(2)?,
        name: r.try_get(3)?,
        lang: r.try_get(4)?,
        brand: r.try_get(5)?,
        brand_domain: r.try_get(6)?,
        title: r.try_get(7)?,
        body: r.try_get(8)?,
        link_url: r.try_get(9)?,
        link_label: r.try_get(10)?,
        key_values: r.try_get(11)?,
        created_at: r.try_get(12)?,
        updated_at: r.try_get(13)?,
    })
}

/// The organisation's cards and the platform cards, ordered by id (bytes).
pub fn list_visible_cards(
    db: &mut impl GenericClient,
    org_id: &OrgId,
) -> Result<Vec<CardRow>, postgres::Error> {
    let sql = format!(
        "SELECT {CARD_COLUMNS} FROM cards WHERE {VISIBLE_TO_ORG} ORDER BY id COLLATE \"C\""
    );
    read_all(&db.query(&sql, &[org_id])?, card_row)
}

/// The language most of the organisation's fragments and own cards are in (a tie: the first
/// name alphabetically); `None` when it has neither.
pub fn most_used_lang(
    db: &mut impl GenericClient,
    org_id: &OrgId,
) -> Result<Option<Lang>, postgres::Error> {
    let row = db.query_opt(
        "SELECT lang FROM (
             SELECT f.lang FROM fragments f JOIN sites s ON s.id = f.site_id WHERE s.org_id = $1
             UNION ALL
             SELECT c.lang FROM cards c WHERE c.org_id = $1) used
          GROUP BY lang ORDER BY count(*) DESC, lang LIMIT 1",
        &[org_id],
    )?;
    row.map(|r| r.try_get(0)).transpose()
}

/// The card `id` if the organisation sees it (its own or a platform card).
pub fn find_visible_card(
    db: &mut impl GenericClient,
    org_id: &OrgId,
    id: &CardId,
) -> Result<Option<CardRow>, postgres::Error> {
    let sql = format!("SELECT {CARD_COLUMNS} FROM cards WHERE {VISIBLE_TO_ORG} AND id = $2");
    read_opt(db.query_opt(&sql, &[org_id, id])?, card_row)
}

/// Same as [`find_visible_card`], locking the row until the transaction ends.
pub fn lock_visible_card(
    db: &mut impl GenericClient,
    org_id: &OrgId,
    id: &CardId,
) -> Result<Option<CardRow>, postgres::Error> {
    let sql =
        format!("SELECT {CARD_COLUMNS} FROM cards WHERE {VISIBLE_TO_ORG} AND id = $2 FOR UPDATE");
    read_opt(db.query_opt(&sql, &[org_id, id])?, card_row)
}

/// Any card by id, locked until the transaction ends (the console's view).
pub fn lock_card(
    db: &mut impl GenericClient,
    id: &CardId,
) -> Result<Option<CardRow>, postgres::Error> {
    let sql = format!("SELECT {CARD_COLUMNS} FROM cards WHERE id = $1 FOR UPDATE");
    read_opt(db.query_opt(&sql, &[id])?, card_row)
}

/// A new card of `org_id` (`None`: a platform card).
pub fn create_card(
    db: &mut impl GenericClient,
    org_id: Option<&OrgId>,
    status: CardStatus,
    content: &CardContent,
) -> Result<CardRow, postgres::Error> {
    let sql = format!(
        "INSERT INTO cards (id, org_id, status, name, lang, brand, brand_domain, title, body,
                            link_url, link_label, key_values)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
         RETURNING {CARD_COLUMNS}"
    );
    let id = CardId::generate();
    let row = with_content(&[&id, &org_id, &status], content, |params| {
        db.query_one(&sql, params)
    })?;
    card_row(&row)
}

/// Replaces a card's content (its owner and status stay); `None`: no such card.
pub fn update_card(
    db: &mut impl GenericClient,
    id: &CardId,
    content: &CardContent,
) -> Result<Option<CardRow>, postgres::Error> {
    let sql = format!(
        "UPDATE cards SET name = $2, lang = $3, brand = $4, brand_domain = $5, title = $6,
                body = $7, link_url = $8, link_label = $9, key_values = $10, updated_at = now()
          WHERE id = $1 RETURNING {CARD_COLUMNS}"
    );
    let row = with_content(&[id], content, |params| db.query_opt(&sql, params))?;
    read_opt(row, card_row)
}

/// Runs `write` with `leading` then the nine stored fields of `content` as parameters.
fn with_content<T>(
    leading: &[&(dyn ToSql + Sync)],
    content: &CardContent,
    write: impl FnOnce(&[&(dyn ToSql + Sync)]) -> T,
) -> T {
    let (link_url, link_label) = match &content.link {
        Some(link) => (Some(&link.url), Some(&link.label)),
        None => (None, None),
    };
    let key_values = content.key_values.to_json();
    let mut params = leading.to_vec();
    params.extend_from_slice(&[
        &content.name,
        &content.lang,
        &content.brand,
        &content.brand_domain,
        &content.title,
        &content.body,
        &link_url,
        &link_label,
        &key_values,
    ]);
    write(&params)
}
/// `None`: no such card.
pub fn set_card_status(
    db: &mut impl GenericClient,
    id: &CardId,
    status: CardStatus,
) -> Result<Option<CardRow>, postgres::Error> {
    let sql = format!(
        "UPDATE cards SET status = $2, updated_at = now() WHERE id = $1 RETURNING {CARD_COLUMNS}"
    );
    read_opt(db.query_opt(&sql, &[id, &status])?, card_row)
}

/// Deletes a card and every eligibility list of it; `true` when it existed.
pub fn delete_card(db: &mut impl GenericClient, id: &CardId) -> Result<bool, postgres::Error> {
    Ok(db.execute("DELETE FROM cards WHERE id = $1", &[id])? == 1)
}

/// The organisation's eligibility list of a card, sorted by domain then ref (bytes), the
/// fragments without a reference last.
pub fn list_eligibility(
    db: &mut impl GenericClient,
    card_id: &CardId,
    org_id: &OrgId,
) -> Result<Vec<EligibilityRow>, postgres::Error> {
    let rows = db.query(
        "SELECT s.domain, f.ref, f.id
           FROM card_eligibility e
           JOIN fragments f ON f.id = e.fragment_id
           JOIN sites s ON s.id = f.site_id
          WHERE e.card_id = $1 AND e.org_id = $2
          ORDER BY s.domain COLLATE \"C\", f.ref COLLATE \"C\" NULLS LAST, f.id COLLATE \"C\"",
        &[card_id, org_id],
    )?;
    read_all(&rows, |r| {
        Ok(EligibilityRow {
            domain: r.try_get(0)?,
            fragment_ref: r.try_get(1)?,
            fragment_id: r.try_get(2)?,
        })
    })
}

/// A card eligible on a site's fragment, as the site's page lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EligibleCard {
    /// `None`: an organisation card with an empty list, eligible on every fragment.
    pub fragment_id: Option<FragmentId>,
    pub card_id: CardId,
    pub name: String,
    pub status: CardStatus,
    pub platform: bool,
}

/// The cards eligible on the site's fragments, in one query: each entry of a list naming one
/// of them (the organisation's own cards and the platform cards' lists for it), and the
/// organisation's cards with an empty list, once each; by card name.
pub fn eligible_on_site(
    db: &mut impl GenericClient,
    org_id: &OrgId,
    site_id: SiteId,
) -> Result<Vec<EligibleCard>, postgres::Error> {
    let rows = db.query(
        "SELECT e.fragment_id, c.id, c.name, c.status, c.org_id IS NULL
           FROM card_eligibility e JOIN cards c ON c.id = e.card_id
          WHERE e.org_id = $1
            AND e.fragment_id IN (SELECT id FROM fragments WHERE site_id = $2)
         UNION ALL
         SELECT NULL, c.id, c.name, c.status, false
           FROM cards c
          WHERE c.org_id = $1
            AND NOT EXISTS (SELECT 1 FROM card_eligibility e
                             WHERE e.card_id = c.id AND e.org_id = $1)
          ORDER BY 3, 2",
        &[org_id, &site_id],
    )?;
    read_all(&rows, |r| {
        Ok(EligibleCard {
            fragment_id: r.try_get(0)?,
            card_id: r.try_get(1)?,
            name: r.try_get(2)?,
            status: r.try_get(3)?,
            platform: r.try_get(4)?,
        })
    })
}

/// Looks up each `(domain, ref)` among the organisation's fragments, in one query; the answer
/// has one entry per pair, in order. Paused fragments count.
pub fn resolve_fragments(
    db: &mut impl GenericClient,
    org_id: &OrgId,
    pairs: &[(DomainName, FragmentRef)],
) -> Result<Vec<Resolved>, postgres::Error> {
    let domains: Vec<&DomainName> = pairs.iter().map(|(domain, _)| domain).collect();
    let refs: Vec<&FragmentRef> = pairs.iter().map(|(_, reference)| reference).collect();
    let rows = db.query(
        "SELECT s.id IS NOT NULL, f.id
           FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS wanted (domain, ref, position)
           LEFT JOIN sites s ON s.org_id = $1 AND s.domain = wanted.domain
           LEFT JOIN fragments f ON f.site_id = s.id AND f.ref = wanted.ref
          ORDER BY wanted.position",
        &[org_id, &domains, &refs],
    )?;
    read_all(&rows, |r| {
        Ok(match (r.try_get::<_, bool>(0)?, r.try_get(1)?) {
            (_, Some(fragment_id)) => Resolved::Fragment(fragment_id),
            (true, None) => Resolved::NoFragment,
            (false, None) => Resolved::NoSite,
        })
    })
}

/// Which of `ids` are fragments of the organisation, in one query: one answer per id, in order
/// (`None`: not a fragment of the organisation).
pub fn own_fragments(
    db: &mut impl GenericClient,
    org_id: &OrgId,
    ids: &[FragmentId],
) -> Result<Vec<Option<FragmentId>>, postgres::Error> {
    let rows = db.query(
        "SELECT f.id
           FROM unnest($2::text[]) WITH ORDINALITY AS wanted (id, position)
           LEFT JOIN fragments f ON f.id = wanted.id
            AND f.site_id IN (SELECT id FROM sites WHERE org_id = $1)
          ORDER BY wanted.position",
        &[org_id, &ids],
    )?;
    read_all(&rows, |r| r.try_get(0))
}

/// Replaces the organisation's list of a card with `fragment_ids` (duplicates count once).
/// The caller holds the card row lock in the same transaction.
pub fn replace_eligibility(
    db: &mut impl GenericClient,
    card_id: &CardId,
    org_id: &OrgId,
    fragment_ids: &[FragmentId],
) -> Result<(), postgres::Error> {
    db.execute(
        "DELETE FROM card_eligibility WHERE card_id = $1 AND org_id = $2",
        &[card_id, org_id],
    )?;
    db.execute(
        "INSERT INTO card_eligibility (card_id, org_id, fragment_id)
         SELECT $1, $2, fragment_id FROM unnest($3::text[]) AS wanted (fragment_id)
         ON CONFLICT DO NOTHING",
        &[card_id, org_id, &fragment_ids],
    )?;
    Ok(())
}
