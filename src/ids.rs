//! Random, unguessable identifiers: a type prefix (`acc_`, `frg_`, …) and 24 characters of
//! `[0-9a-z]` (about 124 bits), never sequential.

use postgres::types::{FromSql, Type};
use rand::Rng;

const ALPHABET: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";
const RANDOM_CHARS: usize = 24;

pub const ORG: &str = "acc_";
pub const TOKEN: &str = "mgt_";
pub const FRAGMENT: &str = "frg_";
pub const CARD: &str = "crd_";
pub const KEY: &str = "key_";
pub const ROUTE: &str = "rte_";
/// A running instance of the service, as its report flushes name it.
pub const INSTANCE: &str = "ins_";
pub const PERSON: &str = "prs_";

pub fn new_id(prefix: &str) -> String {
    let mut rng = rand::thread_rng();
    let mut id = String::with_capacity(prefix.len() + RANDOM_CHARS);
    id.push_str(prefix);
    for _ in 0..RANDOM_CHARS {
        id.push(ALPHABET[rng.gen_range(0..ALPHABET.len())] as char);
    }
    id
}

/// A person of the console (`prs_…`): made here or read from a row or a path segment, so that
/// a string of another kind never stands for a person. Bound in queries as `as_str()`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PersonId(String);

impl PersonId {
    pub fn generate() -> PersonId {
        PersonId(new_id(PERSON))
    }

    /// A path segment of the form `prs_` and 24 characters of `[0-9a-z]`; else `None`, which
    /// is "not found".
    pub fn parse(segment: &str) -> Option<PersonId> {
        let tail = segment.strip_prefix(PERSON)?;
        let valid = tail.len() == RANDOM_CHARS && tail.bytes().all(|b| ALPHABET.contains(&b));
        valid.then(|| PersonId(segment.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for PersonId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl<'a> FromSql<'a> for PersonId {
    fn from_sql(
        ty: &Type,
        raw: &'a [u8],
    ) -> Result<PersonId, Box<dyn std::error::Error + Sync + Send>> {
        String::from_sql(ty, raw).map(PersonId)
    }

    fn accepts(ty: &Type) -> bool {
        <String as FromSql>::accepts(ty)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_have_prefix_and_random_tail() {
        let a = new_id(FRAGMENT);
        let b = new_id(FRAGMENT);
        assert_ne!(a, b);
        assert!(a.starts_with("frg_") && a.len() == 28);
        assert!(a[4..].bytes().all(|c| ALPHABET.contains(&c)));
    }

    #[test]
    fn person_ids_parse_only_their_own_form() {
        let id = PersonId::generate();
        assert_eq!(PersonId::parse(id.as_str()), Some(id.clone()));
        let other = new_id(ORG);
        for segment in [
            &other[..],
            "prs_",
            "prs_ABCDEFGHIJKLMNOPQRSTUVWX",
            &id.as_str()[..27],
        ] {
            assert_eq!(PersonId::parse(segment), None, "{segment}");
        }
    }
}
