//! The console's people: an email address, a role in an organisation, a new password. Each
//! refusal names the form field at fault, as the console shows it next to that field.

use std::collections::HashSet;
use std::fmt;
use std::sync::OnceLock;

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
    /// One `@`, a name before it, a domain of two labels or more after it, no space.
    pub fn parse(input: &str) -> Result<Email, Invalid> {
        let email = input.trim();
        let refuse = || {
            Invalid::new(
                "email",
                "enter an email address: a name, one @, and a domain with a dot, without \
                 spaces, like name@example.com",
            )
        };
        if email.is_empty() || email.len() > EMAIL_MAX {
            return Err(refuse());
        }
        let (local, domain) = email.split_once('@').ok_or_else(refuse)?;
        let labels: Vec<&str> = domain.split('.').collect();
        let domain_ok = labels.len() > 1 && labels.iter().all(|label| !label.is_empty());
        let clean = !email.chars().any(|c| c.is_whitespace() || c.is_control());
        if local.is_empty() || domain.contains('@') || !domain_ok || !clean {
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

/// A person's role in an organisation, least first: a viewer reads what a member reads and
/// changes nothing of the organisation; a member also writes its sites, cards and keys; an
/// owner also manages its members and management tokens, deletes its sites and sets its
/// security. Each role may do all that the roles before it may (`Ord`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Role {
    Viewer,
    Member,
    Owner,
}

impl Role {
    /// As the console's forms list them: the usual choice first.
    pub const ALL: [Role; 3] = [Role::Owner, Role::Member, Role::Viewer];

    pub fn parse(input: &str) -> Result<Role, Invalid> {
        Role::ALL
            .into_iter()
            .find(|role| role.as_str() == input)
            .ok_or_else(|| Invalid::new("role", "role must be \"owner\", \"member\" or \"viewer\""))
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Owner => "owner",
            Role::Member => "member",
            Role::Viewer => "viewer",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The most common passwords (`data/common-passwords.txt`, its source and licence in its
/// header), lowercase, one a line.
const COMMON_PASSWORDS: &str = include_str!("../../data/common-passwords.txt");

/// Whether a password, whatever its case, is one of the most common ones; the set is built on
/// first use.
fn is_common(password: &str) -> bool {
    static COMMON: OnceLock<HashSet<&'static str>> = OnceLock::new();
    let common = COMMON.get_or_init(|| {
        COMMON_PASSWORDS
            .lines()
            .filter(|line| !line.starts_with('#') && !line.is_empty())
            .collect()
    });
    common.contains(password.to_lowercase().as_str())
}

/// A password a person chose: long enough, and none a guesser tries first (not all whitespace,
/// none of the most common passwords, not the person's email). No composition rules: length
/// is what makes a password hard to guess. Never printed: `Debug` hides it.
#[derive(Clone, PartialEq, Eq)]
pub struct NewPassword(String);

impl NewPassword {
    /// The password `email`'s person chose: every rule. A refusal names `new_password`: the
    /// console asks for a new password in that field only.
    pub fn for_person(input: &str, email: &str) -> Result<NewPassword, Invalid> {
        let password = NewPassword::parse(input)?;
        if input.trim().to_lowercase() == email.trim().to_lowercase() {
            return Err(refused(
                "a password may not be your email address: choose another",
            ));
        }
        Ok(password)
    }

    /// The rules that need no person (tests hash passwords made this way).
    pub fn parse(input: &str) -> Result<NewPassword, Invalid> {
        let length = input.chars().count();
        if !(PASSWORD_MIN..=PASSWORD_MAX).contains(&length) {
            return Err(refused(&format!(
                "a password has {PASSWORD_MIN} to {PASSWORD_MAX} characters"
            )));
        }
        if input.chars().all(char::is_whitespace) {
            return Err(refused(
                "a password may not be only spaces: choose one with other characters",
            ));
        }
        if is_common(input) {
            return Err(refused(
                "this is one of the 10 000 most common passwords, which are guessed first: \
                 choose another",
            ));
        }
        Ok(NewPassword(input.to_string()))
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

fn refused(message: &str) -> Invalid {
    Invalid::new("new_password", message)
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
            "x@@y.example",
            "a@b@example.org",
            "ana@example..org",
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
        assert_eq!(Role::parse("viewer").unwrap(), Role::Viewer);
        assert_eq!(Role::parse("Owner").unwrap_err().field, "role");
        assert!(Role::Viewer < Role::Member && Role::Member < Role::Owner);
    }

    #[test]
    fn passwords_count_characters_and_hide_in_debug() {
        assert!(NewPassword::parse("ééééééééé").is_err());
        let ok = NewPassword::parse("éééééééééé").unwrap();
        assert_eq!(format!("{ok:?}"), "NewPassword(…)");
        let long = "x".repeat(PASSWORD_MAX + 1);
        assert_eq!(NewPassword::parse(&long).unwrap_err().field, "new_password");
    }

    #[test]
    fn passwords_guessed_first_are_refused() {
        for guessed in [" ".repeat(10), "\t \u{a0}".repeat(4), "Password123".into()] {
            let refused = NewPassword::parse(&guessed).unwrap_err();
            assert_eq!(refused.field, "new_password", "{guessed:?}");
        }
        assert!(is_common("qwertyuiop") && is_common("1234567890"));
        assert!(!is_common("correct horse battery"));
        let email = "Ana@Example.org";
        let refused = NewPassword::for_person(" ana@example.ORG", email).unwrap_err();
        assert!(refused.message.contains("email"), "{}", refused.message);
        assert!(NewPassword::for_person("correct horse battery", email).is_ok());
    }

    #[test]
    fn the_common_passwords_are_ten_thousand_lowercase_lines() {
        let lines: Vec<&str> = COMMON_PASSWORDS
            .lines()
            .filter(|line| !line.starts_with('#'))
            .collect();
        assert_eq!(lines.len(), 10_000);
        assert!(lines
            .iter()
            .all(|l| !l.is_empty() && *l == l.to_lowercase()));
    }
}
