//! The validated values of agentcard: every value a client can send (domains,
//! fragment references, route paths, names, key/values) is parsed here into a
//! type that can only hold a valid value, so the rest of the service never
//! re-checks input. A refusal is an [`Invalid`] naming the field at fault, in
//! words a console user can act on. Nothing here does I/O or panics.

use std::fmt;

/// `as_str` and `Display` for newtypes over a validated `String`.
macro_rules! text_value {
    ($($name:ident),+) => {$(
        impl $name {
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }
    )+};
}

pub mod alert;
pub mod card;
pub(crate) mod closed_set;
pub mod domain_name;
pub mod fragment_ref;
pub mod key_values;
pub mod path;
mod percent;
pub mod person;
pub mod request;
pub mod values;

pub use alert::{Alert, AlertKind, Measured};
pub use card::{CardText, LinkUrl, CARD_BODY_MAX, CARD_TEXT_MAX};
pub use domain_name::DomainName;
pub use fragment_ref::FragmentRef;
pub use key_values::KeyValues;
pub use path::{CanonicalPath, MatchMode};
pub use person::{Email, NewPassword, Role};
pub use request::{Ending, Format, Outcome, Purpose, Reason, Refused};
pub use values::{
    refuse_controls, Cadence, CardStatus, Description, FragmentName, FragmentStatus, KeyName, Lang,
    Lines, OrgName, SiteName, TokenName,
};

/// A refused value: `field` is the JSON member (or path parameter) at fault, as the API reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid {
    pub field: String,
    pub message: String,
}

impl Invalid {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Invalid {
            field: field.into(),
            message: message.into(),
        }
    }

    /// The same refusal reported on another field (a domain read as a card's `brand_domain`).
    pub fn on(self, field: impl Into<String>) -> Self {
        Invalid {
            field: field.into(),
            ..self
        }
    }
}

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

// Lets callers use `?` into `Box<dyn Error>` or error enums with `#[from]`.
impl std::error::Error for Invalid {}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(field: &str, message: &str, expected: &str) {
        assert_eq!(Invalid::new(field, message).to_string(), expected);
    }

    #[test]
    fn display_is_field_colon_message() {
        let cases = [
            ("domain", "must not be empty", "domain: must not be empty"),
            ("routes[3].ref", "bad", "routes[3].ref: bad"),
            ("", "", ": "),
        ];
        for (field, message, expected) in cases {
            check(field, message, expected);
        }
    }

    #[test]
    fn new_keeps_both_parts() {
        let invalid = Invalid::new(String::from("name"), "too long");
        assert_eq!(invalid.field, "name");
        assert_eq!(invalid.message, "too long");
    }
}
