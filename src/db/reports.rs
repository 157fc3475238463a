//! The fragment request report: batch inserts, and the summary of `agentcard admin report`.

use postgres::binary_copy::BinaryCopyInWriter;
use postgres::types::Type;
use postgres::GenericClient;
use std::time::SystemTime;

/// One `/fragment` request, as decisions.md lists the report fields, borrowed from the
/// request and the snapshot until it is recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReportRow<'a> {
    pub at: SystemTime,
    pub org_id: Option<&'a str>,
    pub key_id: Option<&'a str>,
    pub requested_fragment_id: Option<&'a str>,
    pub resolved_fragment_id: Option<&'a str>,
    pub site_domain: Option<&'a str>,
    pub page_url: Option<&'a str>,
    pub lang: Option<&'static str>,
    pub format: Option<&'static str>,
    pub status: u16,
    /// `served`, `no_fill` or `refused`.
    pub outcome: &'static str,
    /// `served`, `no_eligible_card`, `fragment_paused`, `serving_error`, or the error code.
    pub reason: &'static str,
    pub card_id: Option<&'a str>,
    pub agent_ua: Option<&'a str>,
}

/// Inserts a batch with `COPY … FROM STDIN BINARY` (the cheapest way in for Postgres, which
/// shares the machine with the service) and records the keys' last use. `purpose` classifies
/// each agent User-Agent.
pub fn insert<'a>(
    db: &mut impl GenericClient,
    rows: impl Iterator<Item = ReportRow<'a>> + Clone,
    mut purpose: impl FnMut(Option<&str>) -> &'static str,
) -> Result<(), postgres::Error> {
    let sink = db.copy_in(
        "COPY fragment_requests (at, org_id, key_id, requested_fragment_id, resolved_fragment_id,
             site_domain, page_url, lang, format, status, outcome, reason, card_id, agent_ua,
             agent_purpose) FROM STDIN BINARY",
    )?;
    let text = Type::TEXT;
    let mut writer = BinaryCopyInWriter::new(
        sink,
        &[
            Type::TIMESTAMPTZ,
            text.clone(),
            text.clone(),
            text.clone(),
            text.clone(),
            text.clone(),
            text.clone(),
            text.clone(),
            text.clone(),
            Type::INT2,
            text.clone(),
            text.clone(),
            text.clone(),
            text.clone(),
            text,
        ],
    );
    for row in rows.clone() {
        writer.write(&[
            &row.at,
            &row.org_id,
            &row.key_id,
            &row.requested_fragment_id,
            &row.resolved_fragment_id,
            &row.site_domain,
            &row.page_url,
            &row.lang,
            &row.format,
            &(row.status as i16),
            &row.outcome,
            &row.reason,
            &row.card_id,
            &row.agent_ua,
            &purpose(row.agent_ua),
        ])?;
    }
    writer.finish()?;
    let mut keys: Vec<&str> = rows.filter_map(|row| row.key_id).collect();
    keys.sort_unstable();
    keys.dedup();
    if !keys.is_empty() {
        db.execute(
            "UPDATE delivery_keys SET last_used_at = now() WHERE id = ANY($1)",
            &[&keys],
        )?;
    }
    Ok(())
}

/// One group of report rows: requests of a site and fragment with the same reason and agent
/// purpose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportGroup {
    pub site: Option<String>,
    pub fragment_id: Option<String>,
    pub fragment_ref: Option<String>,
    pub reason: String,
    pub purpose: String,
    pub count: i64,
}

/// The start of a report window, as PostgreSQL reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Since {
    /// An interval back from now, such as `36 hours`.
    Ago(String),
    /// A `timestamptz` text, such as an RFC 3339 time.
    At(String),
}

/// The time a window starts; an unreadable time is PostgreSQL's error.
pub fn since_timestamp(
    db: &mut impl GenericClient,
    since: &Since,
) -> Result<SystemTime, postgres::Error> {
    let row = match since {
        Since::Ago(interval) => db.query_one("SELECT now() - $1::text::interval", &[interval])?,
        Since::At(time) => db.query_one("SELECT $1::text::timestamptz", &[time])?,
    };
    Ok(row.get(0))
}

/// The organisation's requests since `since`, grouped by site, fragment (the resolved one, else
/// the requested one), reason and agent purpose; by site, then fragment.
pub fn summary(
    db: &mut impl GenericClient,
    org_id: &str,
    since: SystemTime,
) -> Result<Vec<ReportGroup>, postgres::Error> {
    let rows = db.query(
        "WITH grouped AS (
             SELECT r.site_domain AS site,
                    coalesce(r.resolved_fragment_id, r.requested_fragment_id) AS fragment,
                    r.reason, coalesce(r.agent_purpose, 'none') AS purpose, count(*) AS n
               FROM fragment_requests r
              WHERE r.org_id = $1 AND r.at >= $2
              GROUP BY 1, 2, 3, 4)
         SELECT g.site, g.fragment, f.ref, g.reason, g.purpose, g.n
           FROM grouped g LEFT JOIN fragments f ON f.id = g.fragment
          ORDER BY g.site COLLATE \"C\" NULLS LAST, g.fragment COLLATE \"C\", g.reason, g.purpose",
        &[&org_id, &since],
    )?;
    Ok(rows
        .iter()
        .map(|r| ReportGroup {
            site: r.get(0),
            fragment_id: r.get(1),
            fragment_ref: r.get(2),
            reason: r.get(3),
            purpose: r.get(4),
            count: r.get(5),
        })
        .collect())
}
