//! Why a console request is refused, as its error page says (`answers::refusal` renders it).

use crate::error::ApiError;
use crate::password::{Caller, Refused};

/// Why a console request is refused, as its error page says.
#[derive(Debug)]
pub(crate) enum PageRefusal {
    /// Not found, method not allowed, rate limited, a bad body, an internal error: the
    /// contract's status and wording.
    Api(ApiError),
    /// `400`: a body the console's forms never send.
    BadRequest(&'static str),
    /// `403`: a check of the console (origin, form token, owners only) refused the request.
    Forbidden(&'static str),
    /// `410`: a one-time link that is unknown, used or expired.
    Gone(&'static str),
    /// `503`: too many passwords are being checked (or requests waiting for a thread);
    /// nothing was done.
    Busy,
    /// `429`: beyond the rate of password hashes of such callers; nothing was done.
    Hashes(Caller),
    /// `429`: beyond the hashes that sign-ins from unknown browsers may cause for this email
    /// or from this address block (`limits::unknown_browser_budgets`); nothing was done.
    UnknownBrowsers,
}

impl From<ApiError> for PageRefusal {
    fn from(error: ApiError) -> Self {
        PageRefusal::Api(error)
    }
}

impl From<crate::domain::Invalid> for PageRefusal {
    fn from(invalid: crate::domain::Invalid) -> Self {
        PageRefusal::Api(invalid.into())
    }
}

impl From<postgres::Error> for PageRefusal {
    fn from(error: postgres::Error) -> Self {
        PageRefusal::Api(error.into())
    }
}

impl From<r2d2::Error> for PageRefusal {
    fn from(error: r2d2::Error) -> Self {
        PageRefusal::Api(error.into())
    }
}

impl From<Refused> for PageRefusal {
    fn from(refused: Refused) -> Self {
        match refused {
            Refused::Busy => PageRefusal::Busy,
            Refused::TooMany(caller) => PageRefusal::Hashes(caller),
        }
    }
}

impl PageRefusal {
    /// A refusal of what was sent (not the service's own trouble): for sign-in, a failure.
    pub fn of_input(&self) -> bool {
        !matches!(
            self,
            PageRefusal::Busy | PageRefusal::Api(ApiError::Internal(_) | ApiError::Unavailable(_))
        )
    }
}
