//! Random, unguessable identifiers: a type prefix (`acc_`, `frg_`, …) and 24 characters of
//! `[0-9a-z]` (about 124 bits), never sequential.

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

pub fn new_id(prefix: &str) -> String {
    let mut rng = rand::thread_rng();
    let mut id = String::with_capacity(prefix.len() + RANDOM_CHARS);
    id.push_str(prefix);
    for _ in 0..RANDOM_CHARS {
        id.push(ALPHABET[rng.gen_range(0..ALPHABET.len())] as char);
    }
    id
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
}
