//! The console's people: persons, their memberships (with the rule that every organisation
//! keeps an owner), and the one-time links that invite them or let them set a password.

use crate::domain::{AlertKind, Email, Role};
use crate::ids::{OrgId, PersonId};
use postgres::{GenericClient, Row, Transaction};

#[derive(Debug, Clone)]
pub struct Person {
    pub id: PersonId,
    pub email: String,
    /// The Argon2id PHC string; `None` until the person sets a password.
    pub password_hash: Option<String>,
    pub support: bool,
}

const PERSON_COLUMNS: &str = "id, email, password_hash, support";

fn person(row: &Row) -> Person {
    Person {
        id: row.get(0),
        email: row.get(1),
        password_hash: row.get(2),
        support: row.get(3),
    }
}

/// A new person without a password; `None` when the email is taken (whatever its case).
pub fn create_person(
    db: &mut impl GenericClient,
    email: &Email,
    support: bool,
) -> Result<Option<Person>, postgres::Error> {
    let sql = format!(
        "INSERT INTO persons (id, email, support) VALUES ($1, $2, $3)
         ON CONFLICT ((lower(email))) DO NOTHING RETURNING {PERSON_COLUMNS}"
    );
    let id = PersonId::generate();
    let row = db.query_opt(&sql, &[&id, &email.as_str(), &support])?;
    Ok(row.as_ref().map(person))
}

pub fn find_by_email(
    db: &mut impl GenericClient,
    email: &str,
) -> Result<Option<Person>, postgres::Error> {
    let sql = format!("SELECT {PERSON_COLUMNS} FROM persons WHERE lower(email) = lower($1)");
    Ok(db.query_opt(&sql, &[&email])?.as_ref().map(person))
}

pub fn find_person(
    db: &mut impl GenericClient,
    id: &PersonId,
) -> Result<Option<Person>, postgres::Error> {
    let sql = format!("SELECT {PERSON_COLUMNS} FROM persons WHERE id = $1");
    Ok(db.query_opt(&sql, &[id])?.as_ref().map(person))
}

/// Sets the time zone a person reads the console's times in (`None`: UTC).
pub fn set_time_zone(
    db: &mut impl GenericClient,
    id: &PersonId,
    time_zone: Option<&str>,
) -> Result<(), postgres::Error> {
    db.execute(
        "UPDATE persons SET time_zone = $2 WHERE id = $1",
        &[id, &time_zone],
    )?;
    Ok(())
}

/// Sets a person's password and ends every session they have: a changed password signs out
/// everywhere, whoever changed it. Both in one statement, so neither happens alone.
pub fn set_password(
    db: &mut impl GenericClient,
    id: &PersonId,
    password_hash: &str,
) -> Result<(), postgres::Error> {
    db.execute(
        "WITH ended AS (DELETE FROM sessions WHERE person_id = $1)
         UPDATE persons SET password_hash = $2, password_changed_at = now() WHERE id = $1",
        &[id, &password_hash],
    )?;
    Ok(())
}

/// An organisation a person may open, with their role (`None`: support staff without a
/// membership, who act as an owner).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrgAccess {
    pub org_id: OrgId,
    pub name: String,
    pub role: Option<Role>,
    /// An owner requires every member to have a second factor.
    pub second_factor_required: bool,
    /// The alerts that hold now, for the banner of every page (`sql/021_alerts.sql`).
    pub alerts: Vec<AlertKind>,
}

/// The organisations a person may open, by name: their memberships, or every organisation
/// for support staff.
pub fn orgs_open_to(
    db: &mut impl GenericClient,
    person: &Person,
) -> Result<Vec<OrgAccess>, postgres::Error> {
    let rows = db.query(
        "SELECT o.id, o.name, m.role, o.second_factor_required,
                ARRAY(SELECT a.kind FROM alerts a
                       WHERE a.org_id = o.id AND a.enabled AND a.holding ORDER BY a.kind)
           FROM orgs o LEFT JOIN memberships m ON m.org_id = o.id AND m.person_id = $1
          WHERE m.person_id IS NOT NULL OR $2
          ORDER BY o.name, o.id",
        &[&person.id, &person.support],
    )?;
    Ok(rows
        .iter()
        .map(|r| OrgAccess {
            org_id: r.get(0),
            name: r.get(1),
            role: r.get(2),
            second_factor_required: r.get(3),
            alerts: r.get(4),
        })
        .collect())
}

/// A member as the members page lists them.
#[derive(Debug, Clone)]
pub struct Member {
    pub person_id: PersonId,
    pub email: String,
    pub role: Role,
}

pub fn members(
    db: &mut impl GenericClient,
    org_id: &OrgId,
) -> Result<Vec<Member>, postgres::Error> {
    let rows = db.query(
        "SELECT p.id, p.email, m.role FROM memberships m JOIN persons p ON p.id = m.person_id
          WHERE m.org_id = $1 ORDER BY lower(p.email)",
        &[&org_id],
    )?;
    Ok(rows
        .iter()
        .map(|r| Member {
            person_id: r.get(0),
            email: r.get(1),
            role: r.get(2),
        })
        .collect())
}

/// Adds a membership; `false` when the person is already a member (their role unchanged).
pub fn add_membership(
    db: &mut impl GenericClient,
    org_id: &OrgId,
    person: &PersonId,
    role: Role,
) -> Result<bool, postgres::Error> {
    let added = db.execute(
        "INSERT INTO memberships (org_id, person_id, role) VALUES ($1, $2, $3)
         ON CONFLICT DO NOTHING",
        &[&org_id, person, &role],
    )?;
    Ok(added == 1)
}

/// What became of a change of membership.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MembershipChange {
    /// Done; the person's role before.
    Done {
        was: Role,
    },
    NotMember,
    /// Refused: the organisation would be left without an owner.
    LastOwner,
}

/// Changes a person's role (`Some`) or removes them (`None`). The one place of the rule that
/// every organisation keeps an owner: the organisation's row is locked first, so two changes
/// at once cannot each leave the other owner alone and together leave none.
pub fn change_membership(
    tx: &mut Transaction,
    org_id: &OrgId,
    person: &PersonId,
    to: Option<Role>,
) -> Result<MembershipChange, postgres::Error> {
    tx.execute("SELECT 1 FROM orgs WHERE id = $1 FOR UPDATE", &[&org_id])?;
    let rows = tx.query(
        "SELECT person_id, role FROM memberships WHERE org_id = $1",
        &[&org_id],
    )?;
    let role_of = |row: &Row| row.get::<_, Role>(1);
    let Some(current) = rows.iter().find(|r| r.get::<_, PersonId>(0) == *person) else {
        return Ok(MembershipChange::NotMember);
    };
    let other_owners = rows
        .iter()
        .filter(|r| r.get::<_, PersonId>(0) != *person && role_of(r) == Role::Owner)
        .count();
    if role_of(current) == Role::Owner && to != Some(Role::Owner) && other_owners == 0 {
        return Ok(MembershipChange::LastOwner);
    }
    match to {
        Some(role) => tx.execute(
            "UPDATE memberships SET role = $3 WHERE org_id = $1 AND person_id = $2",
            &[&org_id, person, &role],
        )?,
        None => tx.execute(
            "DELETE FROM memberships WHERE org_id = $1 AND person_id = $2",
            &[&org_id, person],
        )?,
    };
    Ok(MembershipChange::Done {
        was: role_of(current),
    })
}

/// What a one-time link lets its holder do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkPurpose {
    /// Join `org_id` as `role` under this email (a new person sets a password first).
    Invitation {
        email: String,
        org_id: OrgId,
        role: Role,
    },
    /// Set the password of this person.
    Reset { person: PersonId },
}

/// A one-time link (an invitation or a password link) found by the hash of its secret.
#[derive(Debug, Clone)]
pub struct OneTimeLink {
    pub id: i64,
    pub purpose: LinkPurpose,
}

/// Stores a link by the hash of its secret; it expires after 7 days (the column's default).
pub fn create_link(
    db: &mut impl GenericClient,
    secret_hash: &[u8],
    purpose: &LinkPurpose,
    created_by: &str,
) -> Result<i64, postgres::Error> {
    let (kind, email, org, role, person) = match purpose {
        LinkPurpose::Invitation {
            email,
            org_id,
            role,
        } => (
            "invitation",
            Some(email.as_str()),
            Some(org_id),
            Some(role),
            None,
        ),
        LinkPurpose::Reset { person } => ("reset", None, None, None, Some(person)),
    };
    let row = db.query_one(
        "INSERT INTO one_time_links (secret_hash, kind, email, org_id, role, person_id, created_by)
         VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
        &[
            &secret_hash,
            &kind,
            &email,
            &org,
            &role,
            &person,
            &created_by,
        ],
    )?;
    Ok(row.get(0))
}

const LIVE_LINK: &str = "used_at IS NULL AND expires_at > now()";

fn link(row: &Row) -> OneTimeLink {
    let purpose = match row.get::<_, Option<PersonId>>(4) {
        Some(person) => LinkPurpose::Reset { person },
        None => LinkPurpose::Invitation {
            email: row.get(1),
            org_id: row.get(2),
            role: row.get(3),
        },
    };
    OneTimeLink {
        id: row.get(0),
        purpose,
    }
}

/// The link with this hash, if it is neither used nor expired.
pub fn live_link(
    db: &mut impl GenericClient,
    secret_hash: &[u8],
) -> Result<Option<OneTimeLink>, postgres::Error> {
    let sql = format!(
        "SELECT id, email, org_id, role, person_id FROM one_time_links
          WHERE secret_hash = $1 AND {LIVE_LINK}"
    );
    Ok(db.query_opt(&sql, &[&secret_hash])?.as_ref().map(link))
}

/// Marks a live link used; `false` when it was used or expired meanwhile. Whoever gets `true`
/// is the one use the link has.
pub fn use_link(tx: &mut Transaction, id: i64) -> Result<bool, postgres::Error> {
    let sql = format!("UPDATE one_time_links SET used_at = now() WHERE id = $1 AND {LIVE_LINK}");
    Ok(tx.execute(&sql, &[&id])? == 1)
}

/// An invitation not yet used, as the members page lists it.
#[derive(Debug, Clone)]
pub struct PendingInvitation {
    pub id: i64,
    pub email: String,
    pub role: Role,
    pub created_by: String,
    pub expires_at: String,
}

pub fn pending_invitations(
    db: &mut impl GenericClient,
    org_id: &OrgId,
) -> Result<Vec<PendingInvitation>, postgres::Error> {
    let sql = format!(
        "SELECT id, email, role, created_by, rfc3339(expires_at) FROM one_time_links
          WHERE org_id = $1 AND kind = 'invitation' AND {LIVE_LINK}
          ORDER BY created_at DESC, id DESC"
    );
    let rows = db.query(&sql, &[&org_id])?;
    Ok(rows
        .iter()
        .map(|r| PendingInvitation {
            id: r.get(0),
            email: r.get(1),
            role: r.get(2),
            created_by: r.get(3),
            expires_at: r.get(4),
        })
        .collect())
}

/// Deletes a pending invitation of the organisation; `false`: none with this id.
pub fn revoke_invitation(
    db: &mut impl GenericClient,
    org_id: &OrgId,
    id: i64,
) -> Result<bool, postgres::Error> {
    let sql = format!(
        "DELETE FROM one_time_links WHERE id = $1 AND org_id = $2 AND kind = 'invitation'
           AND {LIVE_LINK}"
    );
    Ok(db.execute(&sql, &[&id, &org_id])? == 1)
}

/// The organisations a person is a member of.
pub fn orgs_of(
    db: &mut impl GenericClient,
    person: &PersonId,
) -> Result<Vec<OrgId>, postgres::Error> {
    let rows = db.query(
        "SELECT org_id FROM memberships WHERE person_id = $1 ORDER BY org_id",
        &[person],
    )?;
    rows.iter().map(|r| r.try_get(0)).collect()
}
