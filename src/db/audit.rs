//! The audit log: one row per write of an organisation (or of the platform's cards), inserted
//! in the writing transaction, listed newest first.

use super::read_all;
use crate::ids::OrgId;
use postgres::GenericClient;

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
    pub operation: &'a str,
    pub object_kind: &'a str,
    pub object: &'a str,
}

/// A recorded write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditRow {
    pub at: String,
    pub actor_kind: ActorKind,
    pub actor: String,
    pub operation: String,
    pub object_kind: String,
    pub object: String,
}

pub fn insert(db: &mut impl GenericClient, entry: &NewEntry) -> Result<(), postgres::Error> {
    db.execute(
        "INSERT INTO audit_log (org_id, actor_kind, actor, operation, object_kind, object)
         VALUES ($1, $2, $3, $4, $5, $6)",
        &[
            &entry.org_id,
            &entry.actor_kind,
            &entry.actor,
            &entry.operation,
            &entry.object_kind,
            &entry.object,
        ],
    )?;
    Ok(())
}

/// The organisation's last `limit` entries, newest first; only those of `actor` (a token's
/// prefix, a person's email, `cli`) when given.
pub fn list(
    db: &mut impl GenericClient,
    org_id: &OrgId,
    actor: Option<&str>,
    limit: i64,
) -> Result<Vec<AuditRow>, postgres::Error> {
    let rows = db.query(
        "SELECT rfc3339(at), actor_kind, actor, operation, object_kind, object
           FROM audit_log
          WHERE org_id = $1 AND ($2::text IS NULL OR actor = $2)
          ORDER BY at DESC, id DESC
          LIMIT $3",
        &[org_id, &actor, &limit],
    )?;
    read_all(&rows, |r| {
        Ok(AuditRow {
            at: r.try_get(0)?,
            actor_kind: r.try_get(1)?,
            actor: r.try_get(2)?,
            operation: r.try_get(3)?,
            object_kind: r.try_get(4)?,
            object: r.try_get(5)?,
        })
    })
}
