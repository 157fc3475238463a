//! The audit log: one row per write of an organisation (or of the platform's cards), inserted
//! in the writing transaction, listed newest first.

use super::read_all;
use crate::ids::{OrgId, TokenId};
use postgres::GenericClient;
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

/// One write to record. `actor` is the token's prefix, the person's email or `cli`; `object`
/// the written object's id, or its key where it has no id (a site's domain).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewEntry<'a> {
    /// `None`: the platform's own objects.
    pub org_id: Option<&'a OrgId>,
    pub actor_kind: ActorKind,
    pub actor: &'a str,
    /// The acting token, whose name the log shows beside its prefix.
    pub actor_token: Option<&'a TokenId>,
    pub operation: &'a str,
    /// The value the write set, where the operation's words name it (a card's status, a role).
    pub detail: Option<&'a str>,
    pub object_kind: &'a str,
    pub object: &'a str,
}

/// A recorded write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditRow {
    pub at: String,
    pub actor_kind: ActorKind,
    pub actor: String,
    /// The acting token's name, while the token exists.
    pub token_name: Option<String>,
    pub operation: String,
    pub detail: Option<String>,
    pub object_kind: String,
    pub object: String,
    /// The object's name (a person's or an invitation's email), while the object exists.
    pub object_name: Option<String>,
}

/// Which entries [`list`] reads: one actor's when given, within `[since, until)`, the newest
/// `limit`.
#[derive(Debug, Clone, Copy)]
pub struct Filter<'a> {
    pub actor: Option<&'a str>,
    pub since: Option<SystemTime>,
    pub until: Option<SystemTime>,
    pub limit: i64,
}

/// The name of an entry's object, read from its table by kind.
const OBJECT_NAME: &str = "CASE a.object_kind
     WHEN 'site' THEN (SELECT nullif(name, '') FROM sites WHERE org_id = a.org_id AND domain = a.object)
     WHEN 'fragment' THEN (SELECT name FROM fragments WHERE id = a.object)
     WHEN 'card' THEN (SELECT name FROM cards WHERE id = a.object)
     WHEN 'key' THEN (SELECT name FROM delivery_keys WHERE id = a.object)
     WHEN 'token' THEN (SELECT nullif(name, '') FROM mgmt_tokens WHERE id = a.object)
     WHEN 'route' THEN (SELECT path || ' (' || match || ')' FROM routes WHERE id = a.object)
     WHEN 'person' THEN (SELECT email FROM persons WHERE id = a.object)
     WHEN 'invitation' THEN (SELECT email FROM one_time_links
                              WHERE a.object ~ '^[0-9]{1,18}$' AND id = a.object::bigint)
     WHEN 'org' THEN (SELECT name FROM orgs WHERE id = a.object)
   END";

pub fn insert(db: &mut impl GenericClient, entry: &NewEntry) -> Result<(), postgres::Error> {
    db.execute(
        "INSERT INTO audit_log
             (org_id, actor_kind, actor, actor_token_id, operation, detail, object_kind, object)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        &[
            &entry.org_id,
            &entry.actor_kind,
            &entry.actor,
            &entry.actor_token,
            &entry.operation,
            &entry.detail,
            &entry.object_kind,
            &entry.object,
        ],
    )?;
    Ok(())
}

/// The organisation's entries `filter` keeps, newest first, with the names of their actors'
/// tokens and of their objects.
pub fn list(
    db: &mut impl GenericClient,
    org_id: &OrgId,
    filter: &Filter,
) -> Result<Vec<AuditRow>, postgres::Error> {
    let sql = format!(
        "SELECT rfc3339(a.at), a.actor_kind, a.actor, nullif(t.name, ''), a.operation, a.detail,
                a.object_kind, a.object, {OBJECT_NAME}
           FROM audit_log a LEFT JOIN mgmt_tokens t ON t.id = a.actor_token_id
          WHERE a.org_id = $1 AND ($2::text IS NULL OR a.actor = $2)
            AND ($3::timestamptz IS NULL OR a.at >= $3)
            AND ($4::timestamptz IS NULL OR a.at < $4)
          ORDER BY a.at DESC, a.id DESC
          LIMIT $5"
    );
    let params: [&(dyn postgres::types::ToSql + Sync); 5] = [
        org_id,
        &filter.actor,
        &filter.since,
        &filter.until,
        &filter.limit,
    ];
    let rows = db.query(&sql, &params)?;
    read_all(&rows, |r| {
        Ok(AuditRow {
            at: r.try_get(0)?,
            actor_kind: r.try_get(1)?,
            actor: r.try_get(2)?,
            token_name: r.try_get(3)?,
            operation: r.try_get(4)?,
            detail: r.try_get(5)?,
            object_kind: r.try_get(6)?,
            object: r.try_get(7)?,
            object_name: r.try_get(8)?,
        })
    })
}
