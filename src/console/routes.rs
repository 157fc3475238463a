//! The console's paths, parsed by hand: a path names a page, the method picks what is done
//! with it (`GET`/`HEAD` read, `POST` writes). Anything else is `404` or `405`.

use super::Refusal;
use crate::error::ApiError;

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
    Stylesheet,
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
        ["console.css"] => (Some(Route::Stylesheet), None),
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
            route("GET", "/sign-out"),
            Err(Refusal::Api(ApiError::MethodNotAllowed { allow })) if allow == "POST"
        ));
    }
}
