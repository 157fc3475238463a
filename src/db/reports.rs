//! The fragment request report: batch inserts, and the summary of `agentcard admin report`.

use crate::report::ReportRow;
use postgres::GenericClient;
use std::time::SystemTime;

/// Inserts a batch in one statement (arrays unnested server-side) and records the keys' last
/// use. `purpose` classifies each agent User-Agent.
pub fn insert(
    db: &mut impl GenericClient,
    rows: &[ReportRow],
    purpose: impl Fn(Option<&str>) -> &'static str,
) -> Result<(), postgres::Error> {
    let at: Vec<SystemTime> = rows.iter().map(|r| r.at).collect();
    let text =
        |f: fn(&ReportRow) -> Option<&str>| -> Vec<Option<&str>> { rows.iter().map(f).collect() };
    let status: Vec<i16> = rows.iter().map(|r| r.status as i16).collect();
    let outcome: Vec<&str> = rows.iter().map(|r| r.outcome).collect();
    let reason: Vec<&str> = rows.iter().map(|r| r.reason).collect();
    let purposes: Vec<&str> = rows
        .iter()
        .map(|r| purpose(r.agent_ua.as_deref()))
        .collect();
    db.execute(
        "INSERT INTO fragment_requests (at, org_id, key_id, requested_fragment_id, resolved_fragment_id,
             site_domain, page_url, lang, format, status, outcome, reason, card_id, agent_ua, agent_purpose)
         SELECT * FROM unnest($1::timestamptz[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
             $7::text[], $8::text[], $9::text[], $10::smallint[], $11::text[], $12::text[], $13::text[],
             $14::text[], $15::text[])",
        &[
            &at,
            &text(|r| r.org_id.as_deref()),
            &text(|r| r.key_id.as_deref()),
            &text(|r| r.requested_fragment_id.as_deref()),
            &text(|r| r.resolved_fragment_id.as_deref()),
            &text(|r| r.site_domain.as_deref()),
            &text(|r| r.page_url.as_deref()),
            &text(|r| r.lang),
            &text(|r| r.format),
            &status,
            &outcome,
            &reason,
            &text(|r| r.card_id.as_deref()),
            &text(|r| r.agent_ua.as_deref()),
            &purposes,
        ],
    )?;
    let mut keys: Vec<&str> = rows.iter().filter_map(|r| r.key_id.as_deref()).collect();
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
