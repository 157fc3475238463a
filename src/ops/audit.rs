//! The audit log as people read it: every operation named in words with the changes it made
//! ("before → after"), each object by the name it had when written beside its id, the actor as
//! a person's email, a token's name and prefix, or "command line"; an organisation's writes
//! newest first, page after page back to the first, within a window, and as CSV.
//!
//! A write records what it saw: its object's name and each changed field's value before and
//! after, read in the writing transaction. Nothing is resolved when the log is read, so a later
//! rename or deletion changes no entry.

use super::{Actor, Caller};
use crate::db::audit::{self, ActorKind, AuditRow, Change, Filter, NewEntry};
use crate::db::people::{self, Person};
use crate::error::ApiError;
use crate::ids::OrgId;
use postgres::GenericClient;
use std::time::SystemTime;

/// The operations, each with its stored name and its words: one line each, from which the
/// enum, [`Operation::ALL`] and both names are made.
macro_rules! operations {
    ($($(#[$doc:meta])* $op:ident: $stored:literal, $words:literal;)*) => {
        /// What a write did. The stored names are those the log has always held; the words are
        /// what a person reads.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Operation {
            $($(#[$doc])* $op,)*
        }

        impl Operation {
            /// Every operation.
            pub const ALL: [Operation; [$(Operation::$op),*].len()] = [$(Operation::$op),*];

            /// The name stored in the log.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Operation::$op => $stored,)*
                }
            }

            /// What it did, in words.
            const fn plain_words(self) -> &'static str {
                match self {
                    $(Operation::$op => $words,)*
                }
            }
        }
    };
}

operations! {
    CreateOrg: "create_org", "organisation created";
    PutSite: "put_site", "site saved";
    DeleteSite: "delete_site", "site deleted";
    PutDefaultFragment: "put_default_fragment", "site default set";
    DeleteDefaultFragment: "delete_default_fragment", "site default removed";
    CreateFragment: "create_fragment", "fragment created";
    PutFragment: "put_fragment", "fragment saved";
    DeleteFragment: "delete_fragment", "fragment deleted";
    CreateRoute: "create_route", "rule added";
    ReplaceRoutes: "replace_routes", "rules replaced";
    DeleteRoute: "delete_route", "rule deleted";
    CreateCard: "create_card", "card created";
    EditCard: "edit_card", "card edited";
    SetCardStatus: "set_card_status", "card status changed";
    DeleteCard: "delete_card", "card deleted";
    /// A card set to draft because the deletion of a site or a fragment emptied its list.
    DraftAfterDeletion: "draft_after_deletion", "card set to draft as everything it was eligible on was deleted";
    ReplaceEligibility: "replace_eligibility", "eligibility replaced";
    SetPlatformEligibility: "set_platform_eligibility", "platform card's eligibility set";
    CreateKey: "create_key", "key created";
    RevokeKey: "revoke_key", "key revoked";
    DeleteKey: "delete_key", "key deleted";
    CreateToken: "create_token", "token created";
    RevokeToken: "revoke_token", "token revoked";
    DeleteToken: "delete_token", "token deleted";
    InviteMember: "invite_member", "member invited";
    RevokeInvitation: "revoke_invitation", "invitation revoked";
    ChangeRole: "change_role", "role changed";
    RemoveMember: "remove_member", "member removed";
    Join: "join", "joined the organisation";
    CreatePerson: "create_person", "person created";
    PasswordLink: "password_link", "password link made";
    SetPassword: "set_password", "password set";
    /// A person's password changed by themselves, signed in.
    ChangePassword: "change_password", "password changed";
    /// The demonstration's owner made (`admin demo`).
    MakeOwner: "make_owner", "owner made";
    RenameSite: "rename_site", "site renamed";
    EditFragment: "edit_fragment", "fragment edited";
    SetFragmentStatus: "set_fragment_status", "fragment status changed";
    UpdateRoute: "update_route", "rule edited";
    AddAuthenticatorApp: "add_authenticator_app", "authenticator app added";
    RemoveAuthenticatorApp: "remove_authenticator_app", "authenticator app removed";
    NewRecoveryCodes: "new_recovery_codes", "recovery codes made";
    UseRecoveryCode: "use_recovery_code", "recovery code used";
    /// Every second factor of a person removed by the operator (`admin user reset`).
    RemoveSecondFactors: "remove_second_factors", "second factors removed";
    RequireSecondFactor: "require_second_factor", "second factor required";
    StopRequiringSecondFactor: "stop_requiring_second_factor", "second factor no longer required";
    AddPasskey: "add_passkey", "passkey added";
    RemovePasskey: "remove_passkey", "passkey removed";
    SaveAlerts: "save_alerts", "alerts saved";
}

impl Operation {
    /// What it did, in words, followed by each change it made ("site renamed: name Old →
    /// New"). An entry written before the log kept changes may hold the value it set alone
    /// ("card set to active").
    pub fn words(self, changes: &[Change], detail: Option<&str>) -> String {
        if !changes.is_empty() {
            let changes: Vec<String> = changes
                .iter()
                .map(|c| format!("{} {} → {}", c.field, c.before, c.after))
                .collect();
            return format!("{}: {}", self.plain_words(), changes.join("; "));
        }
        match (self, detail) {
            (Operation::SetCardStatus, Some(status)) => format!("card set to {status}"),
            (Operation::ChangeRole, Some(role)) => format!("role set to {role}"),
            _ => self.plain_words().to_owned(),
        }
    }

    /// The operation of a stored name; `None` for a name none of ours.
    pub fn parse(name: &str) -> Option<Operation> {
        Operation::ALL.into_iter().find(|op| op.as_str() == name)
    }
}

/// What a value reads as in the log when there is none.
pub const NONE: &str = "none";

/// Which entries to read: one actor's (a token's prefix, a person's email, `cli`, whatever the
/// case), within `[since, until)`, older than the entry `before` (a page's cursor), the newest
/// `limit`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Query<'a> {
    pub actor: Option<&'a str>,
    pub since: Option<SystemTime>,
    pub until: Option<SystemTime>,
    pub before: Option<i64>,
    pub limit: u32,
}

/// An entry as people read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub row: AuditRow,
    pub operation: Operation,
}

impl Entry {
    /// The operation in words, with its changes.
    pub fn what(&self) -> String {
        let row = &self.row;
        self.operation.words(&row.changes, row.detail.as_deref())
    }

    /// Who: the person's email, the token's name and prefix, or "command line".
    pub fn who(&self) -> String {
        match (self.row.actor_kind, &self.row.actor_name) {
            (ActorKind::Cli, _) => "command line".into(),
            (ActorKind::Token, Some(name)) if !name.is_empty() => {
                format!("token {name} ({})", self.row.actor)
            }
            (ActorKind::Token, _) => format!("token {}", self.row.actor),
            (ActorKind::Person, _) => self.row.actor.clone(),
        }
    }

    /// The object: its kind, the name it had when written, and its id.
    pub fn object(&self) -> String {
        let row = &self.row;
        match row.object_name.as_deref().filter(|name| !name.is_empty()) {
            Some(name) => format!("{} {name} ({})", row.object_kind, row.object),
            None => format!("{} {}", row.object_kind, row.object),
        }
    }
}

/// A page of the log: its entries, newest first, and the cursor of the page of older ones
/// when there is one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    pub entries: Vec<Entry>,
    pub older: Option<i64>,
}

/// The caller's organisation's entries `query` keeps, newest first, and whether older ones
/// follow.
pub fn page(db: &mut impl GenericClient, caller: &Caller, query: &Query) -> Result<Page, ApiError> {
    // One more than the page holds says whether older entries follow.
    let mut entries = read(db, &caller.org.id, query, Some(i64::from(query.limit) + 1))?;
    let limit = usize::try_from(query.limit).unwrap_or(usize::MAX);
    let older = if entries.len() > limit {
        entries.truncate(limit);
        entries.last().map(|entry| entry.row.id)
    } else {
        None
    };
    Ok(Page { entries, older })
}

/// The caller's organisation's entries `query` keeps, newest first (its `limit` aside).
pub fn entries(
    db: &mut impl GenericClient,
    caller: &Caller,
    query: &Query,
) -> Result<Vec<Entry>, ApiError> {
    read(db, &caller.org.id, query, Some(i64::from(query.limit)))
}

/// How many entries [`csv`] reads at a time.
const CSV_BATCH: u32 = 1000;

/// Every entry of the caller's organisation `query` keeps, whatever its `limit` and cursor, as
/// CSV (RFC 4180), a header line first: read a batch after another, each older than the last.
pub fn csv(
    db: &mut impl GenericClient,
    caller: &Caller,
    query: &Query,
) -> Result<String, ApiError> {
    let mut out = crate::csv::line(&CSV_HEADER);
    let mut batch = Query {
        limit: CSV_BATCH,
        before: None,
        ..*query
    };
    loop {
        let page = page(db, caller, &batch)?;
        out.push_str(&csv_lines(&page.entries));
        match page.older {
            Some(older) => batch.before = Some(older),
            None => return Ok(out),
        }
    }
}

fn read(
    db: &mut impl GenericClient,
    org_id: &OrgId,
    query: &Query,
    limit: Option<i64>,
) -> Result<Vec<Entry>, ApiError> {
    let filter = Filter {
        actor: query.actor,
        since: query.since,
        until: query.until,
        before: query.before,
        limit,
    };
    audit::list(db, org_id, &filter)?
        .into_iter()
        .map(|row| {
            let operation = Operation::parse(&row.operation).ok_or_else(|| {
                ApiError::internal(format!("audit log: unknown operation {}", row.operation))
            })?;
            Ok(Entry { row, operation })
        })
        .collect()
}

/// The columns of [`csv`].
const CSV_HEADER: [&str; 6] = [
    "at",
    "who",
    "operation",
    "object_kind",
    "object_id",
    "object",
];

/// The CSV lines of entries: when, who and what in words, the object's kind, id and name.
fn csv_lines(entries: &[Entry]) -> String {
    let mut out = String::new();
    for entry in entries {
        let row = &entry.row;
        let name = row.object_name.as_deref().unwrap_or("");
        let (who, what) = (entry.who(), entry.what());
        let cells = [
            row.at.as_str(),
            &who,
            &what,
            &row.object_kind,
            &row.object,
            name,
        ];
        out.push_str(&crate::csv::line(&cells));
    }
    out
}

/// An object's fields as the log shows them, in their order: each a label and the value in
/// words ([`NONE`] for none). Never a secret.
pub(super) trait Fields {
    fn fields(&self) -> Vec<(&'static str, String)>;
}

/// An entry of the audit log, as a write records it (`Entry` is one read back, in words): the
/// operation, the object by kind and id (or domain, for a site) and by the name the write saw,
/// and the fields it changed.
pub(super) struct AuditEntry<'a> {
    operation: Operation,
    object_kind: &'static str,
    object: &'a str,
    name: Option<String>,
    changes: Vec<Change>,
}

impl<'a> AuditEntry<'a> {
    pub(super) fn new(
        operation: Operation,
        object_kind: &'static str,
        object: &'a str,
    ) -> AuditEntry<'a> {
        AuditEntry {
            operation,
            object_kind,
            object,
            name: None,
            changes: Vec::new(),
        }
    }

    /// The object's name as the write saw it (none when empty).
    pub(super) fn named(self, name: impl Into<String>) -> AuditEntry<'a> {
        let name = name.into();
        AuditEntry {
            name: (!name.is_empty()).then_some(name),
            ..self
        }
    }

    /// A field set from `before` to `after`; nothing when they are the same.
    pub(super) fn change(
        mut self,
        field: &str,
        before: impl Into<String>,
        after: impl Into<String>,
    ) -> AuditEntry<'a> {
        let (before, after) = (before.into(), after.into());
        if before != after {
            self.changes.push(Change {
                field: field.to_owned(),
                before,
                after,
            });
        }
        self
    }

    /// Each field that differs between an object before and after the write.
    pub(super) fn changes<T: Fields>(self, before: &T, after: &T) -> AuditEntry<'a> {
        before
            .fields()
            .into_iter()
            .zip(after.fields())
            .fold(self, |entry, ((field, before), (_, after))| {
                entry.change(field, before, after)
            })
    }
}

/// A value the log shows, [`NONE`] when absent or empty.
pub(super) fn shown(value: Option<&str>) -> String {
    value.filter(|v| !v.is_empty()).unwrap_or(NONE).to_owned()
}

/// A key's or a token's status as the log shows it.
pub(super) fn revocation_words(revoked_at: Option<&String>) -> &'static str {
    match revoked_at {
        Some(_) => "revoked",
        None => "live",
    }
}

/// Records a write of `org` (`None`: the platform's) by `actor`, in the writing transaction.
pub(super) fn record_by(
    db: &mut impl GenericClient,
    org: Option<&OrgId>,
    actor: &Actor,
    entry: AuditEntry,
) -> Result<(), ApiError> {
    let new = NewEntry {
        org_id: org,
        actor_kind: actor.kind(),
        actor: actor.label(),
        actor_token: actor.token(),
        operation: entry.operation.as_str(),
        object_kind: entry.object_kind,
        object: entry.object,
        object_name: entry.name.as_deref(),
        changes: &entry.changes,
    };
    Ok(audit::insert(db, &new)?)
}

/// Records a write of the caller's organisation.
pub(super) fn record(
    db: &mut impl GenericClient,
    caller: &Caller,
    entry: AuditEntry,
) -> Result<(), ApiError> {
    record_by(db, Some(&caller.org.id), &caller.actor, entry)
}

/// Records a write about `person`, named by their email, in each of their organisations'
/// logs; with none, in the platform's.
pub(super) fn record_about_person(
    db: &mut impl GenericClient,
    person: &Person,
    actor: &Actor,
    operation: Operation,
) -> Result<(), ApiError> {
    let orgs = people::orgs_of(db, &person.id)?;
    let logs: Vec<Option<&OrgId>> = match orgs.is_empty() {
        true => vec![None],
        false => orgs.iter().map(Some).collect(),
    };
    for org in logs {
        let entry = AuditEntry::new(operation, "person", person.id.as_str()).named(&person.email);
        record_by(db, org, actor, entry)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_operation_has_one_stored_name_that_reads_back() {
        for op in Operation::ALL {
            assert_eq!(Operation::parse(op.as_str()), Some(op));
            assert!(!op.plain_words().contains('_'), "{op:?}");
        }
        let mut names: Vec<&str> = Operation::ALL.iter().map(|op| op.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Operation::ALL.len());
        assert_eq!(Operation::parse("set_card_statuss"), None);
    }

    fn change(field: &str, before: &str, after: &str) -> Change {
        Change {
            field: field.into(),
            before: before.into(),
            after: after.into(),
        }
    }

    #[test]
    fn words_say_each_change_before_and_after() {
        let status = Operation::SetCardStatus;
        assert_eq!(
            status.words(&[change("status", "draft", "active")], None),
            "card status changed: status draft → active"
        );
        let renamed = [change("name", "Old", "New"), change("lang", "en", "fr")];
        assert_eq!(
            Operation::EditCard.words(&renamed, None),
            "card edited: name Old → New; lang en → fr"
        );
        assert_eq!(Operation::RevokeKey.words(&[], None), "key revoked");
        // Entries written before the log kept changes.
        assert_eq!(status.words(&[], Some("active")), "card set to active");
        assert_eq!(status.words(&[], None), "card status changed");
        assert_eq!(
            Operation::ChangeRole.words(&[], Some("owner")),
            "role set to owner"
        );
    }

    #[test]
    fn an_entry_keeps_only_the_fields_that_changed() {
        struct Two(&'static str, &'static str);
        impl Fields for Two {
            fn fields(&self) -> Vec<(&'static str, String)> {
                vec![("name", self.0.into()), ("lang", self.1.into())]
            }
        }
        let entry = AuditEntry::new(Operation::EditCard, "card", "crd_1")
            .named("")
            .changes(&Two("a", "en"), &Two("b", "en"))
            .change("status", "draft", "draft");
        assert_eq!(entry.name, None);
        assert_eq!(entry.changes, [change("name", "a", "b")]);
        assert_eq!(shown(Some("")), NONE);
        assert_eq!(shown(None), NONE);
    }

    fn row(actor_kind: ActorKind, actor: &str, actor_name: Option<&str>) -> AuditRow {
        AuditRow {
            id: 1,
            at: "2026-11-27T20:41:00Z".into(),
            actor_kind,
            actor: actor.into(),
            actor_name: actor_name.map(str::to_owned),
            operation: "set_card_status".into(),
            detail: None,
            object_kind: "card".into(),
            object: "crd_1".into(),
            object_name: Some("Summer, \"hot\"".into()),
            changes: vec![change("status", "draft", "active")],
            object_exists: true,
        }
    }

    #[test]
    fn who_and_the_csv_name_actor_and_object_in_words() {
        let entry = |row| Entry {
            row,
            operation: Operation::SetCardStatus,
        };
        let token = entry(row(ActorKind::Token, "svc_mgmt_abc", Some("ci")));
        assert_eq!(token.who(), "token ci (svc_mgmt_abc)");
        let unnamed = entry(row(ActorKind::Token, "svc_mgmt_abc", None));
        assert_eq!(unnamed.who(), "token svc_mgmt_abc");
        assert_eq!(
            entry(row(ActorKind::Cli, "cli", None)).who(),
            "command line"
        );
        let person = entry(row(ActorKind::Person, "a@example.org", None));
        assert_eq!(person.who(), "a@example.org");
        assert_eq!(person.object(), "card Summer, \"hot\" (crd_1)");
        assert_eq!(
            csv_lines(&[person]),
            "2026-11-27T20:41:00Z,a@example.org,card status changed: status draft → active,card,crd_1,\"Summer, \"\"hot\"\"\"\n"
        );
    }
}
