//! The console's people: an email address, a role in an organisation, a new password. Each
//! refusal names the form field at fault, as the console shows it next to that field.

use std::fmt;

use super::Invalid;

/// Longest address accepted (RFC 5321's path limit).
const EMAIL_MAX: usize = 254;
/// A password's length in characters. Ten at least: with the per-address and per-email limits
/// on sign-in failures, a guess at a time cannot reach that space; 128 at most bounds the work
/// of one hash.
pub const PASSWORD_MIN: usize = 10;
pub const PASSWORD_MAX: usize = 128;

/// An email address as typed, trimmed. Persons are told apart by it whatever its case (the
/// database compares it lowercased); it is not checked beyond its shape, since nothing is
/// mailed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Email(String);

impl Email {
    pub fn parse(input: &str) -> Result<Email, Invalid> {
        let email = input.trim();
        let refuse = || Invalid::new("email", "enter an email address, like name@example.com");
        if email.is_empty() || email.len() > EMAIL_MAX {
            return Err(refuse());
        }
        let (local, domain) = email.rsplit_once('@').ok_or_else(refuse)?;
        let domain_ok = domain.contains('.')
            && !domain.starts_with('.')
            && !domain.ends_with('.')
            && !domain.contains('@');
        let clean = !email.chars().any(|c| c.is_whitespace() || c.is_control());
        if local.is_empty() || !domain_ok || !clean {
            return Err(refuse());
        }
        Ok(Email(email.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Email {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A person's role in an organisation. Owners also manage its members and management tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    Owner,
    Member,
}

impl Role {
    pub const ALL: [Role; 2] = [Role::Owner, Role::Member];

    pub fn parse(input: &str) -> Result<Role, Invalid> {
        Role::ALL
            .into_iter()
            .find(|role| role.as_str() == input)
            .ok_or_else(|| Invalid::new("role", "role must be \"owner\" or \"member\""))
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Owner => "owner",
            Role::Member => "member",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A password a person chose, checked for length only (no composition rules: length is what
/// makes a password hard to guess). Never printed: `Debug` hides it.
#[derive(Clone, PartialEq, Eq)]
pub struct NewPassword(String);

impl NewPassword {
    /// A refusal names `new_password`: the console asks for a new password in that field only.
    pub fn parse(input: &str) -> Result<NewPassword, Invalid> {
        let length = input.chars().count();
        if !(PASSWORD_MIN..=PASSWORD_MAX).contains(&length) {
            return Err(Invalid::new(
                "new_password",
                format!("a password has {PASSWORD_MIN} to {PASSWORD_MAX} characters"),
            ));
        }
        Ok(NewPassword(input.to_string()))
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for NewPassword {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("NewPassword(…)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emails_are_trimmed_and_shaped() {
        assert_eq!(
            Email::parse("  Ana@Example.org ").unwrap().as_str(),
            "Ana@Example.org"
        );
        for bad in [
            "",
            "ana",
            "@example.org",
            "ana@",
            "ana@localhost",
            "ana@.org",
            "ana@example.",
            "a na@example.org",
            "ana@exa\u{0}mple.org",
        ] {
            let refused = Email::parse(bad).unwrap_err();
            assert_eq!(refused.field, "email", "{bad:?}");
        }
        assert!(Email::parse(&format!("{}@example.org", "a".repeat(250))).is_err());
    }

    #[test]
    fn roles_are_spelled_exactly() {
        assert_eq!(Role::parse("owner").unwrap(), Role::Owner);
        assert_eq!(Role::parse("member").unwrap(), Role::Member);
        assert_eq!(Role::parse("Owner").unwrap_err().field, "role");
    }

    #[test]
    fn passwords_count_characters_and_hide_in_debug() {
        assert!(NewPassword::parse("ééééééééé").is_err());
        let ok = NewPassword::parse("éééééééééé").unwrap();
        assert_eq!(format!("{ok:?}"), "NewPassword(…)");
        let long = "x".repeat(PASSWORD_MAX + 1);
        assert_eq!(NewPassword::parse(&long).unwrap_err().field, "new_password");
    }
}
