//! Why a console request is refused, as its error page says (`pages::refusal` renders it).

use crate::error::ApiError;
use crate::password::Refused;

/// Why a console request is refused, as its error page says.
#[derive(Debug)]
pub(crate) enum Refusal {
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
}

impl From<ApiError> for Refusal {
    fn from(error: ApiError) -> Self {
        Refusal::Api(error)
    }
}

impl From<crate::domain::Invalid> for Refusal {
    fn from(invalid: crate::domain::Invalid) -> Self {
        Refusal::Api(invalid.into())
    }
}

impl From<postgres::Error> for Refusal {
    fn from(error: postgres::Error) -> Self {
        Refusal::Api(error.into())
    }
}

impl From<r2d2::Error> for Refusal {
    fn from(error: r2d2::Error) -> Self {
        Refusal::Api(error.into())
    }
}

impl From<Refused> for Refusal {
    fn from(refused: Refused) -> Self {
        match refused {
            Refused::Busy => Refusal::Busy,
            Refused::TooMany => Refusal::Api(ApiError::RateLimited),
        }
    }
}

impl Refusal {
    /// A refusal of what was sent (not the service's own trouble): for sign-in, a failure.
    pub fn of_input(&self) -> bool {
        !matches!(self, Refusal::Busy | Refusal::Api(ApiError::Internal(_)))
    }
}
