//! A site's icon: the attempts to fetch it and the stored copy (`sql/008_site_icons.sql`).

use crate::domain::DomainName;
use crate::ids::{OrgId, SiteId};
use postgres::GenericClient;
use std::time::Duration;

/// A site's stored icon.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredIcon {
    pub content_type: String,
    pub bytes: Vec<u8>,
}

/// Records an attempt to fetch the site's icon now, unless the site has one already, another
/// attempt was made within `retry`, or the site is gone: `true` when the attempt is ours to
/// make. One statement, so that of instances trying at once one makes it.
pub fn claim_attempt(
    db: &mut impl GenericClient,
    site: SiteId,
    retry: Duration,
) -> Result<bool, postgres::Error> {
    let claimed = db.query_opt(
        "INSERT INTO site_icons (site_id, tried_at)
         SELECT id, now() FROM sites WHERE id = $1 AND icon IS NULL
         ON CONFLICT (site_id) DO UPDATE SET tried_at = now()
          WHERE site_icons.bytes IS NULL
            AND site_icons.tried_at <= now() - make_interval(secs => $2)
         RETURNING site_id",
        &[&site, &retry.as_secs_f64()],
    )?;
    Ok(claimed.is_some())
}

/// Stores the icon fetched for the site, and shows its source URL as the site's `icon`. The
/// site's `updated_at` stays: nobody wrote the site.
pub fn store(
    db: &mut impl GenericClient,
    site: SiteId,
    source_url: &str,
    content_type: &str,
    bytes: &[u8],
) -> Result<(), postgres::Error> {
    db.execute(
        "WITH stored AS (
            UPDATE site_icons SET source_url = $2, content_type = $3, bytes = $4
             WHERE site_id = $1 RETURNING site_id)
         UPDATE sites SET icon = $2 WHERE id IN (SELECT site_id FROM stored)",
        &[&site, &source_url, &content_type, &bytes],
    )?;
    Ok(())
}

/// The stored icon of the organisation's site with this domain.
pub fn stored_icon(
    db: &mut impl GenericClient,
    org_id: &OrgId,
    domain: &DomainName,
) -> Result<Option<StoredIcon>, postgres::Error> {
    let row = db.query_opt(
        "SELECT i.content_type, i.bytes FROM site_icons i JOIN sites s ON s.id = i.site_id
          WHERE s.org_id = $1 AND s.domain = $2 AND i.bytes IS NOT NULL",
        &[org_id, domain],
    )?;
    super::read_opt(row, |r| {
        Ok(StoredIcon {
            content_type: r.try_get(0)?,
            bytes: r.try_get(1)?,
        })
    })
}
