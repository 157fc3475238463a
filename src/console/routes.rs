//! The console's paths, parsed by hand: a path names a page, the method picks what is done
//! with it (`GET`/`HEAD` read, `POST` writes). Anything else is `404` or `405`.

use super::Refusal;
use crate::domain::DomainName;
use crate::error::ApiError;
use crate::ids::{FragmentId, KeyId, PersonId, TokenId};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    Home,
    SignInForm,
    SignIn,
    SignOut,
    Sessions,
    EndOtherSessions,
    PasswordForm,
    ChangePassword,
    ChooseOrg,
    Members,
    Invite,
    ChangeRole(PersonId),
    RemoveMember(PersonId),
    RevokeInvitation(i64),
    Tokens,
    CreateToken,
    RevokeToken(TokenId),
    ConfirmDeleteToken(TokenId),
    DeleteToken(TokenId),
    Keys,
    CreateKey,
    RevokeKey(KeyId),
    ConfirmDeleteKey(KeyId),
    DeleteKey(KeyId),
    Sites,
    ConfirmDeleteSite(DomainName),
    DeleteSite(DomainName),
    ConfirmDeleteFragment(FragmentId),
    DeleteFragment(FragmentId),
    Audit,
    LinkPage(String),
    UseLink(String),
    Cards(super::cards::CardPage),
    Asset(Asset),
}

/// The console's own files, served to anyone (they hold nothing of an organisation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asset {
    Stylesheet,
    /// The "Copy" buttons of a secret shown once; without it the secret is selectable text.
    CopyScript,
}

pub fn route(method: &str, path: &str) -> Result<Route, Refusal> {
    let segments: Vec<&str> = path.strip_prefix('/').unwrap_or(path).split('/').collect();
    let (read, write): (Option<Route>, Option<Route>) = match segments.as_slice() {
        [""] => (Some(Route::Home), None),
        ["sign-in"] => (Some(Route::SignInForm), Some(Route::SignIn)),
        ["sign-out"] => (None, Some(Route::SignOut)),
        ["sessions"] => (Some(Route::Sessions), None),
        ["sessions", "end-others"] => (None, Some(Route::EndOtherSessions)),
        ["password"] => (Some(Route::PasswordForm), Some(Route::ChangePassword)),
        ["org"] => (None, Some(Route::ChooseOrg)),
        ["members"] => (Some(Route::Members), None),
        ["members", "invite"] => (None, Some(Route::Invite)),
        ["members", id, "role"] => (None, Some(Route::ChangeRole(person(id)?))),
        ["members", id, "remove"] => (None, Some(Route::RemoveMember(person(id)?))),
        ["invitations", id, "revoke"] => (None, Some(Route::RevokeInvitation(number(id)?))),
        ["tokens"] => (Some(Route::Tokens), Some(Route::CreateToken)),
        ["tokens", id, "revoke"] => (None, Some(Route::RevokeToken(id_of(id)?))),
        ["tokens", id, "delete"] => both(Route::ConfirmDeleteToken, Route::DeleteToken, id)?,
        ["keys"] => (Some(Route::Keys), Some(Route::CreateKey)),
        ["keys", id, "revoke"] => (None, Some(Route::RevokeKey(id_of(id)?))),
        ["keys", id, "delete"] => both(Route::ConfirmDeleteKey, Route::DeleteKey, id)?,
        ["sites"] => (Some(Route::Sites), None),
        ["sites", domain, "delete"] => both(Route::ConfirmDeleteSite, Route::DeleteSite, domain)?,
        ["fragments", id, "delete"] => {
            both(Route::ConfirmDeleteFragment, Route::DeleteFragment, id)?
        }
        ["audit"] => (Some(Route::Audit), None),
        ["link", secret] => (
            Some(Route::LinkPage(secret.to_string())),
            Some(Route::UseLink(secret.to_string())),
        ),
        ["cards", rest @ ..] => super::cards::paths(rest)?,
        ["console.css"] => (Some(Route::Asset(Asset::Stylesheet)), None),
        ["console.js"] => (Some(Route::Asset(Asset::CopyScript)), None),
        _ => return Err(ApiError::NotFound.into()),
    };
    let chosen = match method {
        "GET" | "HEAD" => read.clone(),
        "POST" => write.clone(),
        _ => None,
    };
    chosen.ok_or_else(|| {
        let allow = match (read, write) {
            (Some(_), Some(_)) => "GET, HEAD, POST",
            (Some(_), None) => "GET, HEAD",
            _ => "POST",
        };
        ApiError::MethodNotAllowed {
            allow: allow.into(),
        }
        .into()
    })
}

/// An object named in a path, by its id (or a site by its domain); one of another form names
/// nothing.
trait Named: Sized {
    fn named(segment: &str) -> Option<Self>;
}

impl Named for TokenId {
    fn named(segment: &str) -> Option<Self> {
        TokenId::parse(segment)
    }
}

impl Named for KeyId {
    fn named(segment: &str) -> Option<Self> {
        KeyId::parse(segment)
    }
}

impl Named for FragmentId {
    fn named(segment: &str) -> Option<Self> {
        FragmentId::parse(segment)
    }
}

impl Named for DomainName {
    fn named(segment: &str) -> Option<Self> {
        DomainName::parse(segment).ok()
    }
}

fn id_of<T: Named>(segment: &str) -> Result<T, Refusal> {
    T::named(segment).ok_or(Refusal::Api(ApiError::NotFound))
}

/// The confirmation page (`GET`) and the action (`POST`) of one object.
fn both<T: Named>(
    read: fn(T) -> Route,
    write: fn(T) -> Route,
    segment: &str,
) -> Result<(Option<Route>, Option<Route>), Refusal> {
    Ok((Some(read(id_of(segment)?)), Some(write(id_of(segment)?))))
}

fn person(segment: &str) -> Result<PersonId, Refusal> {
    PersonId::parse(segment).ok_or(Refusal::Api(ApiError::NotFound))
}

/// A positive decimal number, written without sign or leading zero.
fn number(segment: &str) -> Result<i64, Refusal> {
    let canonical = !segment.starts_with('0') && segment.bytes().all(|b| b.is_ascii_digit());
    match segment.parse() {
        Ok(n) if canonical => Ok(n),
        _ => Err(ApiError::NotFound.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_methods() {
        assert_eq!(route("GET", "/").unwrap(), Route::Home);
        assert_eq!(route("HEAD", "/sign-in").unwrap(), Route::SignInForm);
        assert!(matches!(
            route("GET", "/sign-in/"),
            Err(Refusal::Api(ApiError::NotFound))
        ));
        assert_eq!(route("POST", "/sign-in").unwrap(), Route::SignIn);
        assert!(matches!(
            route("DELETE", "/sign-in"),
            Err(Refusal::Api(ApiError::MethodNotAllowed { allow })) if allow == "GET, HEAD, POST"
        ));
        assert!(matches!(
            route("POST", "/members/acc_0123456789/role"),
            Err(Refusal::Api(ApiError::NotFound))
        ));
        assert_eq!(
            route("POST", "/invitations/12/revoke").unwrap(),
            Route::RevokeInvitation(12)
        );
        for bad in ["012", "+1", "-1", "", "99999999999999999999"] {
            assert!(route("POST", &format!("/invitations/{bad}/revoke")).is_err());
        }
        assert!(matches!(
            route("GET", "/sign-out"),
            Err(Refusal::Api(ApiError::MethodNotAllowed { allow })) if allow == "POST"
        ));
    }
}
