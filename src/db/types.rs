//! How our ids and the stored enums are written and read: as text, each read checked once, so
//! a row gives typed values or a [`postgres::Error`] naming the bad value (an internal error,
//! never a refusal of the client's input).

use super::audit::ActorKind;
use super::orgs::Creator;
use crate::domain::{
    AlertKind, Cadence, CanonicalPath, CardStatus, CardText, Description, DomainName, FragmentName,
    FragmentRef, FragmentStatus, KeyName, Lang, LinkUrl, MatchMode, OrgName, Purpose, Reason, Role,
    SiteName, TokenName,
};
use crate::ids::{CardId, FragmentId, KeyId, NotAnId, OrgId, PersonId, RouteId, SiteId, TokenId};
use bytes::BytesMut;
use postgres::types::{to_sql_checked, FromSql, IsNull, ToSql, Type};
use std::error::Error;

type BoxedError = Box<dyn Error + Sync + Send>;

/// A stored enum value that is none of the enum's.
#[derive(Debug, thiserror::Error)]
#[error("stored {kind} {text:?} is none of its values")]
pub struct NotStored {
    kind: &'static str,
    text: String,
}

/// Is this error a stored value our types refuse (a row gone wrong, not a database outage)?
pub fn is_bad_stored_value(error: &postgres::Error) -> bool {
    error
        .source()
        .is_some_and(|source| source.is::<NotStored>() || source.is::<NotAnId>())
}

/// Text written as text, for each of our types that `as_text` turns into a `&str`.
macro_rules! stored_as_text {
    ($($name:ty => $as_text:expr, $from_text:expr;)+) => {$(
        impl ToSql for $name {
            fn to_sql(&self, ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxedError> {
                let as_text: fn(&$name) -> &str = $as_text;
                as_text(self).to_sql(ty, out)
            }
            fn accepts(ty: &Type) -> bool {
                <&str as ToSql>::accepts(ty)
            }
            to_sql_checked!();
        }

        impl<'a> FromSql<'a> for $name {
            fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Self, BoxedError> {
                let text = <String as FromSql>::from_sql(ty, raw)?;
                let from_text: fn(String) -> Result<$name, BoxedError> = $from_text;
                from_text(text)
            }
            fn accepts(ty: &Type) -> bool {
                <String as FromSql>::accepts(ty)
            }
        }
    )+};
}

stored_as_text! {
    OrgId => |id| id.as_str(), |text| Ok(OrgId::stored(text)?);
    TokenId => |id| id.as_str(), |text| Ok(TokenId::stored(text)?);
    FragmentId => |id| id.as_str(), |text| Ok(FragmentId::stored(text)?);
    CardId => |id| id.as_str(), |text| Ok(CardId::stored(text)?);
    KeyId => |id| id.as_str(), |text| Ok(KeyId::stored(text)?);
    RouteId => |id| id.as_str(), |text| Ok(RouteId::stored(text)?);
    PersonId => |id| id.as_str(), |text| Ok(PersonId::stored(text)?);
    Lang => |lang| lang.as_str(), |text| named("language", Lang::named, text);
    Reason => |reason| reason.as_str(), |text| named("reason", Reason::named, text);
    Purpose => |purpose| purpose.as_str(), |text| named("agent purpose", Purpose::named, text);
    FragmentStatus => |status| status.as_str(),
        |text| one_of("fragment status", &FragmentStatus::ALL, FragmentStatus::as_str, text);
    CardStatus => |status| status.as_str(),
        |text| one_of("card status", &CardStatus::ALL, CardStatus::as_str, text);
    MatchMode => |mode| mode.as_str(),
        |text| one_of("match mode", &MatchMode::ALL, MatchMode::as_str, text);
    Creator => |creator| creator.as_str(),
        |text| one_of("token creator", &Creator::ALL, Creator::as_str, text);
    ActorKind => |kind| kind.as_str(),
        |text| one_of("actor kind", &ActorKind::ALL, ActorKind::as_str, text);
    Role => |role| role.as_str(), |text| one_of("role", &Role::ALL, Role::as_str, text);
    Cadence => |cadence| cadence.as_str(), |text| named("cadence", Cadence::named, text);
    AlertKind => |kind| kind.as_str(), |text| named("alert kind", AlertKind::named, text);
}

/// The value of a closed set (`domain::closed_set!`) a stored name names.
fn named<T>(
    kind: &'static str,
    named: fn(&str) -> Option<T>,
    text: String,
) -> Result<T, BoxedError> {
    named(&text).ok_or_else(|| Box::new(NotStored { kind, text }) as BoxedError)
}

/// The value of `all` whose name is `text`.
fn one_of<T: Copy>(
    kind: &'static str,
    all: &[T],
    name: fn(T) -> &'static str,
    text: String,
) -> Result<T, BoxedError> {
    match all.iter().find(|value| name(**value) == text) {
        Some(value) => Ok(*value),
        None => Err(Box::new(NotStored { kind, text })),
    }
}

impl ToSql for SiteId {
    fn to_sql(&self, ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxedError> {
        self.0.to_sql(ty, out)
    }
    fn accepts(ty: &Type) -> bool {
        <i64 as ToSql>::accepts(ty)
    }
    to_sql_checked!();
}

impl<'a> FromSql<'a> for SiteId {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Self, BoxedError> {
        i64::from_sql(ty, raw).map(SiteId)
    }
    fn accepts(ty: &Type) -> bool {
        <i64 as FromSql>::accepts(ty)
    }
}

/// Validated values written as their text; they are read back as plain strings.
macro_rules! written_as_text {
    ($($name:ty),+) => {$(
        impl ToSql for $name {
            fn to_sql(&self, ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxedError> {
                self.as_str().to_sql(ty, out)
            }
            fn accepts(ty: &Type) -> bool {
                <&str as ToSql>::accepts(ty)
            }
            to_sql_checked!();
        }
    )+};
}

written_as_text!(
    DomainName,
    FragmentRef,
    CanonicalPath,
    FragmentName,
    OrgName,
    SiteName,
    KeyName,
    TokenName,
    Description,
    CardText,
    LinkUrl
);
