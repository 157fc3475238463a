//! The console's answers: a page rendered, a refusal's page with its status and headers, and
//! the redirect after a write (post/redirect/get).

use super::layout::Layout;
use super::notice::Notice;
use super::refusal::PageRefusal;
use super::session::Visit;
use crate::error::{ApiError, RETRY_AFTER_SECONDS, UNAVAILABLE_RETRY_AFTER_SECONDS};
use crate::http::Response;
use crate::password::Caller;
use askama::Template;

#[derive(Template)]
#[template(path = "console/error.html")]
struct ErrorPage {
    layout: Layout,
    status: u16,
    title: &'static str,
    message: String,
    next_href: &'static str,
    next_label: &'static str,
}

/// The page of a refusal, with its status (and `Allow`, `Retry-After` where they belong); to a
/// signed-in person, with the header of their pages.
pub fn refusal(refusal: &PageRefusal, visit: Option<&Visit>) -> Response {
    let (status, message) = match refusal {
        PageRefusal::Api(ApiError::RateLimited) => (
            429,
            "Too many failed attempts came from your address, or for this email, in the last \
             minute: nothing was done. Wait a minute, then try again."
                .into(),
        ),
        PageRefusal::Api(ApiError::NotFound) => (
            404,
            "There is no such page, or it is not open to you: check the address, or start again \
             from the console."
                .into(),
        ),
        PageRefusal::Api(error) => (error.status(), error.message()),
        PageRefusal::BadRequest(message) => (400, message.to_string()),
        PageRefusal::Forbidden(message) => (403, message.to_string()),
        PageRefusal::Gone(message) => (410, message.to_string()),
        PageRefusal::Busy => (
            503,
            "The console is busy at this moment: nothing was done. Try again in a few seconds."
                .into(),
        ),
        PageRefusal::Hashes(Caller::Unknown | Caller::Proven) => (
            429,
            "Many sign-ins are coming from browsers new to their person at this moment: nothing \
             was done. Open the sign-in page again and sign in: this browser will first do a few \
             seconds of work. A browser you signed in from before is not held up."
                .into(),
        ),
        PageRefusal::Hashes(Caller::Known) => (
            429,
            "Many passwords are being checked at this moment: nothing was done. Wait a minute, \
             then do it again."
                .into(),
        ),
        PageRefusal::UnknownBrowsers => (
            429,
            "Too many sign-ins from browsers new to their person came for this email, or from \
             your network, in the last minute: nothing was done. Wait a minute, then sign in \
             again. A browser you signed in from before is not held up: sign in there if you can."
                .into(),
        ),
    };
    let page = ErrorPage {
        layout: Layout::of(visit, None),
        status,
        title: error_title(status),
        message,
        next_href: "/",
        next_label: "Back to the console",
    };
    let response = html(status, &page);
    match refusal {
        PageRefusal::Api(ApiError::MethodNotAllowed { allow }) => {
            response.header("Allow", allow.clone())
        }
        PageRefusal::Api(ApiError::RateLimited)
        | PageRefusal::Busy
        | PageRefusal::Hashes(_)
        | PageRefusal::UnknownBrowsers => {
            response.header("Retry-After", RETRY_AFTER_SECONDS.to_string())
        }
        PageRefusal::Api(ApiError::Unavailable(_)) => {
            response.header("Retry-After", UNAVAILABLE_RETRY_AFTER_SECONDS.to_string())
        }
        _ => response,
    }
}

/// What happened, in a refusal page's heading, by its status.
fn error_title(status: u16) -> &'static str {
    match status {
        400 => "Not understood",
        403 => "Not allowed",
        404 => "Not found",
        405 => "Not possible on this page",
        409 => "Not done: it conflicts with what is there",
        410 => "Link not valid",
        413 => "Too large",
        422 => "Not done: a value was refused",
        429 => "Too many attempts",
        503 => "Busy",
        500..=599 => "Something went wrong on our side",
        _ => "Not done",
    }
}

/// `303 See Other` to a page of the console: after a write, the browser reads the result
/// with a `GET` (post/redirect/get).
pub fn redirect(location: &str) -> Response {
    Response::new(303).header("Location", location.to_string())
}

/// The redirect after a write to a page that says `notice`.
pub fn redirect_with(location: &str, notice: Notice) -> Response {
    redirect(&format!("{location}?notice={}", notice.as_str()))
}

/// The redirect after a write about one object (a key, a token): its id rides in the query
/// (`about`), and the page names it from its own list, so a crafted link cannot make the page
/// say a name of its choosing.
pub fn redirect_about(location: &str, notice: Notice, about: &str) -> Response {
    redirect(&format!(
        "{location}?notice={}&about={about}",
        notice.as_str()
    ))
}

pub fn html(status: u16, page: &impl Template) -> Response {
    match page.render() {
        Ok(body) => Response::new(status)
            .header("Content-Type", "text/html; charset=utf-8")
            .body(body.into_bytes()),
        Err(error) => {
            log::error!("console page not rendered: {error}");
            Response::new(500)
                .header("Content-Type", "text/plain; charset=utf-8")
                .body(b"internal error\n".to_vec())
        }
    }
}
