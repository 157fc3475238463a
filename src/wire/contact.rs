//! The contact form's message: `name`, `email`, `message`, as the form page asks for them.

use super::{as_object, deny_unknown, required_str};
use crate::domain::{refuse_controls, Lines};
use crate::error::ApiError;
use serde_json::Value;

const NAME_MAX: usize = 200;
const EMAIL_MAX: usize = 254;
const MESSAGE_MAX: usize = 5000;

/// A validated message.
#[derive(Debug, PartialEq, Eq)]
pub struct ContactMessage {
    pub name: String,
    pub email: String,
    pub message: String,
}

/// The form's fields (from JSON or a form-urlencoded body) checked as the form checks them.
pub fn contact_message(body: &Value) -> Result<ContactMessage, ApiError> {
    let fields = as_object(body)?;
    deny_unknown(fields, &["name", "email", "message"], "")?;
    let name = bounded(
        required_str(fields, "name", "name")?,
        "name",
        NAME_MAX,
        Lines::One,
    )?;
    let email = bounded(
        required_str(fields, "email", "email")?,
        "email",
        EMAIL_MAX,
        Lines::One,
    )?;
    if !looks_like_email(&email) {
        return Err(ApiError::validation(
            "email",
            "enter an email address such as name@example.com",
        ));
    }
    let message = bounded(
        required_str(fields, "message", "message")?,
        "message",
        MESSAGE_MAX,
        Lines::Several,
    )?;
    Ok(ContactMessage {
        name,
        email,
        message,
    })
}

fn bounded(value: &str, field: &str, max: usize, lines: Lines) -> Result<String, ApiError> {
    let value = value.trim();
    refuse_controls(value, field, lines)?;
    if value.is_empty() || value.chars().count() > max {
        return Err(ApiError::validation(
            field,
            format!("{field} must be 1 to {max} characters"),
        ));
    }
    Ok(value.to_string())
}

/// One `@` with text on both sides, a dot in the domain, no spaces: a typo guard, not RFC 5322.
fn looks_like_email(email: &str) -> bool {
    match email.split_once('@') {
        Some((local, domain)) => {
            !local.is_empty()
                && !domain.contains('@')
                && domain.contains('.')
                && !domain.starts_with('.')
                && !domain.ends_with('.')
                && !email.chars().any(char::is_whitespace)
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn contact_fields_are_validated() {
        let ok = json!({"name": " Ann ", "email": "ann@example.com", "message": "Hello"});
        let cases = [
            (ok.clone(), Ok(())),
            (
                json!({"name": "A", "email": "no-at-sign", "message": "x"}),
                Err("email"),
            ),
            (
                json!({"name": "", "email": "a@b.co", "message": "x"}),
                Err("name"),
            ),
            (json!({"name": "A", "email": "a@b.co"}), Err("message")),
            (
                json!({"name": "A", "email": "a@b.co", "message": "x".repeat(5001)}),
                Err("message"),
            ),
            (
                json!({"name": "A", "email": "a@b.co", "message": "x", "extra": 1}),
                Err("extra"),
            ),
        ];
        for (input, expected) in cases {
            let got = contact_message(&input)
                .map(|_| ())
                .map_err(|e| e.to_json()["error"]["field"].as_str().unwrap().to_string());
            assert_eq!(got, expected.map_err(str::to_string), "{input}");
        }
        let message = contact_message(&ok).unwrap();
        assert_eq!(message.name, "Ann");
    }
}
