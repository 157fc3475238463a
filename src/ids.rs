//! Identifiers, one type per kind of object, so that one kind can never be passed where another
//! is expected. Those that leave the service are random and unguessable: a type prefix (`acc_`,
//! `frg_`, …) and 24 characters of `[0-9a-z]` (about 124 bits), never sequential. A site is
//! addressed by its domain; its row key ([`SiteId`]) never leaves the service.
//!
//! Swapping two ids of different kinds does not compile:
//!
//! ```compile_fail,E0308
//! use agentcard::ids::{KeyId, OrgId};
//! fn revoke(org: &OrgId, key: &KeyId) {}
//! let (org, key) = (OrgId::generate(), KeyId::generate());
//! revoke(&key, &org);
//! ```
//!
//! while the same call with the ids in their places does:
//!
//! ```
//! use agentcard::ids::{KeyId, OrgId};
//! fn revoke(org: &OrgId, key: &KeyId) {}
//! let (org, key) = (OrgId::generate(), KeyId::generate());
//! revoke(&org, &key);
//! ```

use rand::Rng;
use std::fmt;

const ALPHABET: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";
const RANDOM_CHARS: usize = 24;
/// The longest tail [`parse`](OrgId::parse) accepts: room for longer ids made elsewhere (bench
/// data, older releases), never an unbounded string.
const MAX_TAIL: usize = 64;

/// A running instance of the service, as its report flushes name it.
pub const INSTANCE: &str = "ins_";

/// A new random id with this prefix.
pub fn new_id(prefix: &str) -> String {
    let mut rng = rand::thread_rng();
    let mut id = String::with_capacity(prefix.len() + RANDOM_CHARS);
    id.push_str(prefix);
    for _ in 0..RANDOM_CHARS {
        id.push(ALPHABET[rng.gen_range(0..ALPHABET.len())] as char);
    }
    id
}

/// Whether `text` is `prefix` followed by 1 to [`MAX_TAIL`] characters of the id alphabet.
fn has_shape(text: &str, prefix: &str) -> bool {
    text.strip_prefix(prefix).is_some_and(|tail| {
        (1..=MAX_TAIL).contains(&tail.len()) && tail.bytes().all(|c| ALPHABET.contains(&c))
    })
}

/// The text of an id that does not have the shape of its kind (a stored value gone wrong).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{text:?} is not an id of the form {prefix}…")]
pub struct NotAnId {
    pub prefix: &'static str,
    pub text: String,
}

macro_rules! random_id {
    ($(#[$doc:meta])* $name:ident, $prefix:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(String);

        impl $name {
            pub const PREFIX: &'static str = $prefix;

            pub fn generate() -> Self {
                $name(new_id(Self::PREFIX))
            }

            /// The id in `text` (a path segment, a command-line argument): `None` when it has
            /// not the shape of this kind, which names nothing, as an unknown id does.
            pub fn parse(text: &str) -> Option<Self> {
                has_shape(text, Self::PREFIX).then(|| $name(text.to_owned()))
            }

            /// A stored id, which must have the shape of its kind.
            pub fn stored(text: String) -> Result<Self, NotAnId> {
                if has_shape(&text, Self::PREFIX) {
                    Ok($name(text))
                } else {
                    Err(NotAnId { prefix: Self::PREFIX, text })
                }
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(&self.0)
            }
        }
    };
}

random_id!(
    /// An organisation (the contract's account, `partner_id` of `/fragment`).
    OrgId,
    "acc_"
);
random_id!(
    /// A management token.
    TokenId,
    "mgt_"
);
random_id!(
    /// A fragment.
    FragmentId,
    "frg_"
);
random_id!(
    /// A card, an organisation's or a platform card.
    CardId,
    "crd_"
);
random_id!(
    /// A delivery key.
    KeyId,
    "key_"
);
random_id!(
    /// A routing rule.
    RouteId,
    "rte_"
);
random_id!(
    /// A person who signs in to the console.
    PersonId,
    "prs_"
);

/// A site's row key: sites are addressed by their domain, so this never leaves the service.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SiteId(pub i64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_have_prefix_and_random_tail() {
        let a = FragmentId::generate();
        let b = FragmentId::generate();
        assert_ne!(a, b);
        assert!(a.as_str().starts_with("frg_") && a.as_str().len() == 28);
        assert!(a.as_str()[4..].bytes().all(|c| ALPHABET.contains(&c)));
        assert_eq!(FragmentId::parse(a.as_str()), Some(a));
    }

    #[test]
    fn an_id_of_another_shape_names_nothing() {
        let long = format!("crd_{}", "a".repeat(MAX_TAIL + 1));
        let refused = [
            "frg_abc", "crd_", "crd_ABC", "crd_a-b", "crd_%2F", "crd_a b", "crd", "", &long,
        ];
        for text in refused {
            assert_eq!(CardId::parse(text), None, "{text:?}");
        }
        assert!(CardId::parse("crd_000000000000000000000000").is_some());
        assert_eq!(
            KeyId::stored("acc_x".into()),
            Err(NotAnId {
                prefix: "key_",
                text: "acc_x".into()
            })
        );
    }
}
