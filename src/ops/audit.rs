//! The audit log as people read it: every operation named in words, each object by its name
//! beside its id, the actor as a person's email, a token's name and prefix, or "command line";
//! an organisation's writes newest first, within a window, and as CSV.

use super::{Actor, Caller};
use crate::db::audit::{self, ActorKind, AuditRow, Filter, NewEntry};
use crate::error::ApiError;
use crate::ids::OrgId;
use postgres::GenericClient;
use std::time::SystemTime;

/// What a write did. The stored names are those the log has always held; the words are what a
/// person reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    CreateOrg,
    PutSite,
    DeleteSite,
    PutDefaultFragment,
    DeleteDefaultFragment,
    CreateFragment,
    PutFragment,
    DeleteFragment,
    CreateRoute,
    ReplaceRoutes,
    DeleteRoute,
    CreateCard,
    EditCard,
    SetCardStatus,
    DeleteCard,
    /// A card set to draft because the deletion of a site or a fragment emptied its list.
    DraftAfterDeletion,
    ReplaceEligibility,
    SetPlatformEligibility,
    CreateKey,
    RevokeKey,
    DeleteKey,
    CreateToken,
    RevokeToken,
    DeleteToken,
    InviteMember,
    RevokeInvitation,
    ChangeRole,
    RemoveMember,
    Join,
    CreatePerson,
    PasswordLink,
    SetPassword,
    /// A person's password changed by themselves, signed in.
    ChangePassword,
    /// The demonstration's owner made (`admin demo`).
    MakeOwner,
    RenameSite,
    EditFragment,
    SetFragmentStatus,
    UpdateRoute,
    AddAuthenticatorApp,
    RemoveAuthenticatorApp,
    NewRecoveryCodes,
    UseRecoveryCode,
    /// Every second factor of a person removed by the operator (`admin user reset`).
    RemoveSecondFactors,
    RequireSecondFactor,
    StopRequiringSecondFactor,
    AddPasskey,
    RemovePasskey,
}

/// Each operation, its stored name and its words.
const OPERATIONS: [(Operation, &str, &str); 47] = [
    (Operation::CreateOrg, "create_org", "organisation created"),
    (Operation::PutSite, "put_site", "site saved"),
    (Operation::DeleteSite, "delete_site", "site deleted"),
    (
        Operation::PutDefaultFragment,
        "put_default_fragment",
        "site default set",
    ),
    (
        Operation::DeleteDefaultFragment,
        "delete_default_fragment",
        "site default removed",
    ),
    (
        Operation::CreateFragment,
        "create_fragment",
        "fragment created",
    ),
    (Operation::PutFragment, "put_fragment", "fragment saved"),
    (
        Operation::DeleteFragment,
        "delete_fragment",
        "fragment deleted",
    ),
    (Operation::CreateRoute, "create_route", "rule added"),
    (Operation::ReplaceRoutes, "replace_routes", "rules replaced"),
    (Operation::DeleteRoute, "delete_route", "rule deleted"),
    (Operation::CreateCard, "create_card", "card created"),
    (Operation::EditCard, "edit_card", "card edited"),
    (
        Operation::SetCardStatus,
        "set_card_status",
        "card status changed",
    ),
    (Operation::DeleteCard, "delete_card", "card deleted"),
    (
        Operation::DraftAfterDeletion,
        "draft_after_deletion",
        "card set to draft: everything it was eligible on was deleted",
    ),
    (
        Operation::ReplaceEligibility,
        "replace_eligibility",
        "eligibility replaced",
    ),
    (
        Operation::SetPlatformEligibility,
        "set_platform_eligibility",
        "platform card's eligibility set",
    ),
    (Operation::CreateKey, "create_key", "key created"),
    (Operation::RevokeKey, "revoke_key", "key revoked"),
    (Operation::DeleteKey, "delete_key", "key deleted"),
    (Operation::CreateToken, "create_token", "token created"),
    (Operation::RevokeToken, "revoke_token", "token revoked"),
    (Operation::DeleteToken, "delete_token", "token deleted"),
    (Operation::InviteMember, "invite_member", "member invited"),
    (
        Operation::RevokeInvitation,
        "revoke_invitation",
        "invitation revoked",
    ),
    (Operation::ChangeRole, "change_role", "role changed"),
    (Operation::RemoveMember, "remove_member", "member removed"),
    (Operation::Join, "join", "joined the organisation"),
    (Operation::CreatePerson, "create_person", "person created"),
    (
        Operation::PasswordLink,
        "password_link",
        "password link made",
    ),
    (Operation::SetPassword, "set_password", "password set"),
    (
        Operation::ChangePassword,
        "change_password",
        "password changed",
    ),
    (Operation::MakeOwner, "make_owner", "owner made"),
    (Operation::RenameSite, "rename_site", "site renamed"),
    (Operation::EditFragment, "edit_fragment", "fragment edited"),
    (
        Operation::SetFragmentStatus,
        "set_fragment_status",
        "fragment status changed",
    ),
    (Operation::UpdateRoute, "update_route", "rule edited"),
    (
        Operation::AddAuthenticatorApp,
        "add_authenticator_app",
        "authenticator app added",
    ),
    (
        Operation::RemoveAuthenticatorApp,
        "remove_authenticator_app",
        "authenticator app removed",
    ),
    (
        Operation::NewRecoveryCodes,
        "new_recovery_codes",
        "recovery codes made",
    ),
    (
        Operation::UseRecoveryCode,
        "use_recovery_code",
        "recovery code used",
    ),
    (
        Operation::RemoveSecondFactors,
        "remove_second_factors",
        "second factors removed",
    ),
    (
        Operation::RequireSecondFactor,
        "require_second_factor",
        "second factor required",
    ),
    (
        Operation::StopRequiringSecondFactor,
        "stop_requiring_second_factor",
        "second factor no longer required",
    ),
    (Operation::AddPasskey, "add_passkey", "passkey added"),
    (
        Operation::RemovePasskey,
        "remove_passkey",
        "passkey removed",
    ),
];

impl Operation {
    fn entry(self) -> &'static (Operation, &'static str, &'static str) {
        OPERATIONS
            .iter()
            .find(|(op, ..)| *op == self)
            .expect("every operation is in OPERATIONS")
    }

    /// The name stored in the log.
    pub fn as_str(self) -> &'static str {
        self.entry().1
    }

    /// What it did, in words; with the value it set when the log holds one
    /// ("card set to active", "role set to owner").
    pub fn words(self, detail: Option<&str>) -> String {
        match (self, detail) {
            (Operation::SetCardStatus, Some(status)) => format!("card set to {status}"),
            (Operation::ChangeRole, Some(role)) => format!("role set to {role}"),
            _ => self.entry().2.to_owned(),
        }
    }

    /// The operation of a stored name; `None` for a name none of ours.
    pub fn parse(name: &str) -> Option<Operation> {
        OPERATIONS
            .iter()
            .find(|(_, stored, _)| *stored == name)
            .map(|(op, ..)| *op)
    }
}

/// Which entries to read: one actor's (a token's prefix, a person's email, `cli`), within
/// `[since, until)`, the newest `limit`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Query<'a> {
    pub actor: Option<&'a str>,
    pub since: Option<SystemTime>,
    pub until: Option<SystemTime>,
    pub limit: u32,
}

/// An entry as people read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub row: AuditRow,
    pub operation: Operation,
}

impl Entry {
    /// The operation in words.
    pub fn what(&self) -> String {
        self.operation.words(self.row.detail.as_deref())
    }

    /// Who: the person's email, the token's name and prefix, or "command line".
    pub fn who(&self) -> String {
        match (self.row.actor_kind, &self.row.token_name) {
            (ActorKind::Cli, _) => "command line".into(),
            (ActorKind::Token, Some(name)) if !name.is_empty() => {
                format!("token {name} ({})", self.row.actor)
            }
            (ActorKind::Token, _) => format!("token {}", self.row.actor),
            (ActorKind::Person, _) => self.row.actor.clone(),
        }
    }

    /// The object: its kind, its name where it still has one, and its id.
    pub fn object(&self) -> String {
        let row = &self.row;
        match row.object_name.as_deref().filter(|name| !name.is_empty()) {
            Some(name) => format!("{} {name} ({})", row.object_kind, row.object),
            None => format!("{} {}", row.object_kind, row.object),
        }
    }
}

/// The caller's organisation's entries `query` keeps, newest first.
pub fn entries(
    db: &mut impl GenericClient,
    caller: &Caller,
    query: &Query,
) -> Result<Vec<Entry>, ApiError> {
    let filter = Filter {
        actor: query.actor,
        since: query.since,
        until: query.until,
        limit: i64::from(query.limit),
    };
    audit::list(db, &caller.org.id, &filter)?
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

/// Entries as CSV (RFC 4180), a header line first: when, who and what in words, the object's
/// kind, id and name.
pub fn csv(entries: &[Entry]) -> String {
    let mut out = crate::csv::line(&CSV_HEADER);
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

/// An entry of the audit log, as a write records it (`Entry` is one read back, in words): the operation, the value it set where its
/// words name one, and the object, by kind and id (or domain, for a site).
pub(super) struct AuditEntry<'a> {
    operation: Operation,
    detail: Option<&'a str>,
    object_kind: &'static str,
    object: &'a str,
}

impl<'a> AuditEntry<'a> {
    pub(super) fn new(
        operation: Operation,
        object_kind: &'static str,
        object: &'a str,
    ) -> AuditEntry<'a> {
        AuditEntry {
            operation,
            detail: None,
            object_kind,
            object,
        }
    }

    pub(super) fn detail(self, detail: &'a str) -> AuditEntry<'a> {
        AuditEntry {
            detail: Some(detail),
            ..self
        }
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
        detail: entry.detail,
        object_kind: entry.object_kind,
        object: entry.object,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_operation_has_one_stored_name_that_reads_back() {
        for (op, name, words) in OPERATIONS {
            assert_eq!(Operation::parse(name), Some(op));
            assert_eq!(op.as_str(), name);
            assert!(!words.contains('_'), "{words}");
        }
        let mut names: Vec<&str> = OPERATIONS.iter().map(|e| e.1).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), OPERATIONS.len());
        assert_eq!(Operation::parse("set_card_statuss"), None);
    }

    #[test]
    fn words_say_the_value_set() {
        let status = Operation::SetCardStatus;
        assert_eq!(status.words(Some("active")), "card set to active");
        assert_eq!(status.words(None), "card status changed");
        assert_eq!(Operation::RevokeKey.words(None), "key revoked");
        assert_eq!(
            Operation::ChangeRole.words(Some("owner")),
            "role set to owner"
        );
    }

    fn row(actor_kind: ActorKind, actor: &str, token_name: Option<&str>) -> AuditRow {
        AuditRow {
            at: "2026-11-27T20:41:00Z".into(),
            actor_kind,
            actor: actor.into(),
            token_name: token_name.map(str::to_owned),
            operation: "set_card_status".into(),
            detail: Some("active".into()),
            object_kind: "card".into(),
            object: "crd_1".into(),
            object_name: Some("Summer, \"hot\"".into()),
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
        let gone = entry(row(ActorKind::Token, "svc_mgmt_abc", None));
        assert_eq!(gone.who(), "token svc_mgmt_abc");
        assert_eq!(
            entry(row(ActorKind::Cli, "cli", None)).who(),
            "command line"
        );
        let person = entry(row(ActorKind::Person, "a@example.org", None));
        assert_eq!(person.who(), "a@example.org");
        assert_eq!(person.object(), "card Summer, \"hot\" (crd_1)");
        assert_eq!(
            csv(&[person]),
            "at,who,operation,object_kind,object_id,object\n\
             2026-11-27T20:41:00Z,a@example.org,card set to active,card,crd_1,\"Summer, \"\"hot\"\"\"\n"
        );
    }
}
