//! The audit log: one row per write of an organisation (or of the platform's cards), inserted
//! in the writing transaction, listed newest first.

use super::read_all;
use crate::ids::{OrgId, TokenId};
use postgres::types::Json;
use postgres::GenericClient;
use serde::{Deserialize, Serialize};
use std::time::SystemTime;

/// Who wrote: a management token, a person signed in to the console, or the CLI.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActorKind {
    Token,
    Person,
    Cli,
}

impl ActorKind {
    pub const ALL: [ActorKind; 3] = [ActorKind::Token, ActorKind::Person, ActorKind::Cli];

    pub fn as_str(self) -> &'static str {
        match self {
            ActorKind::Token => "token",
            ActorKind::Person => "person",
            ActorKind::Cli => "cli",
        }
    }
}

/// A field a write changed, with its value before and after (never a secret).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    pub field: String,
    pub before: String,
    pub after: String,
}

/// One write to record. `actor` is the token's prefix, the person's email or `cli`; `object`
/// the written object's id, or its key where it has no id (a site's domain); `object_name` its
/// name as the write saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewEntry<'a> {
    /// `None`: the platform's own objects.
    pub org_id: Option<&'a OrgId>,
    pub actor_kind: ActorKind,
    pub actor: &'a str,
    /// The acting token, whose name is stored beside its prefix.
    pub actor_token: Option<&'a TokenId>,
    pub operation: &'a str,
    pub object_kind: &'a str,
    pub object: &'a str,
    pub object_name: Option<&'a str>,
    pub changes: &'a [Change],
}

/// A recorded write, as it was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditRow {
    /// Where the row stands in the log: the cursor of the page after it.
    pub id: i64,
    pub at: String,
    pub actor_kind: ActorKind,
    pub actor: String,
    /// The acting token's name when it wrote.
    pub actor_name: Option<String>,
    pub operation: String,
    /// The value a change set, in the entries written before the log kept changes.
    pub detail: Option<String>,
    pub object_kind: String,
    pub object: String,
    /// The object's name when it was written.
    pub object_name: Option<String>,
    pub changes: Vec<Change>,
    /// Whether the object still has a page to link to (a card, a site).
    pub object_exists: bool,
}

/// Which entries [`list`] reads: one actor's when given (whatever its case), within
/// `[since, until)`, older than the entry `before` when given, the newest `limit` (all when
/// `None`).
#[derive(Debug, Clone, Copy)]
pub struct Filter<'a> {
    pub actor: Option<&'a str>,
    pub since: Option<SystemTime>,
    pub until: Option<SystemTime>,
    pub before: Option<i64>,
    pub limit: Option<i64>,
}

/// Whether an entry's object still has its page: the link beside the stored name.
const OBJECT_EXISTS: &str = "CASE a.object_kind
     WHEN 'site' THEN EXISTS (SELECT 1 FROM sites WHERE org_id = a.org_id AND domain = a.object)
     WHEN 'card' THEN EXISTS (SELECT 1 FROM cards WHERE id = a.object)
     ELSE false
   END";

/// Records the entry, with the acting token's name as it is in this transaction.
pub fn insert(db: &mut impl GenericClient, entry: &NewEntry) -> Result<(), postgres::Error> {
    let changes = (!entry.changes.is_empty()).then_some(Json(entry.changes));
    db.execute(
        "INSERT INTO audit_log
             (org_id, actor_kind, actor, actor_token_id, actor_name, operation, object_kind,
              object, object_name, changes)
         VALUES ($1, $2, $3, $4,
                 (SELECT nullif(name, '') FROM mgmt_tokens WHERE id = $4::text),
                 $5, $6, $7, $8, $9)",
        &[
            &entry.org_id,
            &entry.actor_kind,
            &entry.actor,
            &entry.actor_token,
            &entry.operation,
            &entry.object_kind,
            &entry.object,
            &entry.object_name,
            &changes,
        ],
    )?;
    Ok(())
}

/// The organisation's entries `filter` keeps, newest first.
pub fn list(
    db: &mut impl GenericClient,
    org_id: &OrgId,
    filter: &Filter,
) -> Result<Vec<AuditRow>, postgres::Error> {
    let sql = format!(
        "SELECT a.id, rfc3339(a.at), a.actor_kind, a.actor, a.actor_name, a.operation, a.detail,
                a.object_kind, a.object, a.object_name, a.changes, {OBJECT_EXISTS}
           FROM audit_log a
          WHERE a.org_id = $1 AND ($2::text IS NULL OR lower(a.actor) = lower($2))
            AND ($3::timestamptz IS NULL OR a.at >= $3)
            AND ($4::timestamptz IS NULL OR a.at < $4)
            AND ($5::bigint IS NULL OR (a.at, a.id) < (SELECT at, id FROM audit_log
                                                        WHERE id = $5 AND org_id = $1))
          ORDER BY a.at DESC, a.id DESC
          LIMIT $6"
    );
    let params: [&(dyn postgres::types::ToSql + Sync); 6] = [
        org_id,
        &filter.actor,
        &filter.since,
        &filter.until,
        &filter.before,
        &filter.limit,
    ];
    let rows = db.query(&sql, &params)?;
    read_all(&rows, |r| {
        let changes: Option<Json<Vec<Change>>> = r.try_get(10)?;
        Ok(AuditRow {
            id: r.try_get(0)?,
            at: r.try_get(1)?,
            actor_kind: r.try_get(2)?,
            actor: r.try_get(3)?,
            actor_name: r.try_get(4)?,
            operation: r.try_get(5)?,
            detail: r.try_get(6)?,
            object_kind: r.try_get(7)?,
            object: r.try_get(8)?,
            object_name: r.try_get(9)?,
            changes: changes.map(|c| c.0).unwrap_or_default(),
            object_exists: r.try_get(11)?,
        })
    })
}
