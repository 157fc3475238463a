//! Credentials: management tokens and delivery keys. Both are 160 random bits shown once;
//! only their SHA-256 hash and a 12-character listed prefix are stored, so a database leak
//! reveals no usable secret. Lookups go by hash, so no secret is ever compared byte by byte.

use crate::error::ApiError;
use crate::http::Request;
use rand::RngCore;
use sha2::{Digest, Sha256};

/// Characters of a token or key that are stored and listed.
pub const LISTED_PREFIX_LEN: usize = 12;
const SECRET_HEX_LEN: usize = 40;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SecretKind {
    /// `{prefix}_mgmt_…`, for the management API.
    ManagementToken,
    /// `{prefix}_live_…`, for the fragment endpoint.
    DeliveryKey,
}

impl SecretKind {
    fn marker(self) -> &'static str {
        match self {
            SecretKind::ManagementToken => "_mgmt_",
            SecretKind::DeliveryKey => "_live_",
        }
    }

    /// `svc_mgmt_` for service prefix `svc`.
    pub fn lead(self, service_prefix: &str) -> String {
        format!("{service_prefix}{}", self.marker())
    }
}

/// A freshly generated secret: the full value (shown once), its hash and listed prefix.
pub struct NewSecret {
    pub value: String,
    pub hash: Vec<u8>,
    pub prefix: String,
}

pub fn generate(kind: SecretKind, service_prefix: &str) -> NewSecret {
    let value = format!(
        "{}{}",
        kind.lead(service_prefix),
        random_hex(SECRET_HEX_LEN / 2)
    );
    NewSecret {
        hash: hash(&value).to_vec(),
        prefix: value[..LISTED_PREFIX_LEN].to_string(),
        value,
    }
}

/// `bytes` random bytes as lowercase hex: the console's session and link secrets (256 bits).
pub fn random_hex(bytes: usize) -> String {
    let mut random = vec![0u8; bytes];
    rand::thread_rng().fill_bytes(&mut random);
    hex::encode(random)
}

/// Whether `value` has the form of a [`random_hex`] secret of `bytes` bytes.
pub fn is_random_hex(value: &str, bytes: usize) -> bool {
    value.len() == 2 * bytes
        && value
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

pub fn hash(secret: &str) -> [u8; 32] {
    Sha256::digest(secret.as_bytes()).into()
}

/// Does `value` have the form of this kind of secret? Management tokens are lowercase hex;
/// delivery keys accept either case, as the contract says "hexadecimal".
pub fn is_well_formed(kind: SecretKind, service_prefix: &str, value: &str) -> bool {
    let tail = value
        .strip_prefix(service_prefix)
        .and_then(|rest| rest.strip_prefix(kind.marker()));
    let Some(tail) = tail else {
        return false;
    };
    tail.len() == SECRET_HEX_LEN
        && tail.bytes().all(|b| match kind {
            SecretKind::ManagementToken => b.is_ascii_digit() || (b'a'..=b'f').contains(&b),
            SecretKind::DeliveryKey => b.is_ascii_hexdigit(),
        })
}

/// What the `Authorization` header(s) of a request present.
#[derive(Debug, PartialEq, Eq)]
pub enum Presented<'a> {
    /// No bearer header at all: `401 missing_token`.
    Nothing,
    /// Something that cannot be a live token (empty, several headers, wrong form).
    Malformed,
    /// A value of the management-token form, still to be checked against the database.
    WellFormed(&'a str),
}

/// Reads the bearer token. Scheme matching is case-insensitive; cookies are never read.
pub fn presented_token<'a>(request: &'a Request, service_prefix: &str) -> Presented<'a> {
    let mut headers = request.header_all("authorization");
    let Some(first) = headers.next() else {
        return Presented::Nothing;
    };
    if headers.next().is_some() {
        return Presented::Malformed;
    }
    let (scheme, value) = first.trim().split_once(' ').unwrap_or((first.trim(), ""));
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Presented::Nothing;
    }
    let value = value.trim();
    if is_well_formed(SecretKind::ManagementToken, service_prefix, value) {
        Presented::WellFormed(value)
    } else {
        Presented::Malformed
    }
}

/// The `401` a presented-but-refused token gets (missing header gets `missing_token`).
pub fn refusal(presented: &Presented) -> ApiError {
    match presented {
        Presented::Nothing => ApiError::MissingToken,
        _ => ApiError::InvalidToken,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(headers: &[(&str, &str)]) -> Request {
        let mut request =
            Request::new("GET", "/v1/me", None, "127.0.0.1:1".parse().unwrap(), 64, 1);
        for (name, value) in headers {
            request.push_header(name, value);
        }
        request
    }

    #[test]
    fn generated_secrets_have_the_contract_form() {
        let token = generate(SecretKind::ManagementToken, "svc");
        assert!(is_well_formed(
            SecretKind::ManagementToken,
            "svc",
            &token.value
        ));
        assert_eq!(token.prefix, &token.value[..12]);
        assert_eq!(token.hash, hash(&token.value).to_vec());
        let key = generate(SecretKind::DeliveryKey, "svc");
        assert!(key.value.starts_with("svc_live_") && key.value.len() == 49);
        assert!(!is_well_formed(
            SecretKind::ManagementToken,
            "svc",
            &key.value
        ));
    }

    #[test]
    fn bearer_header_cases() {
        let token = format!("svc_mgmt_{}", "a".repeat(40));
        let upper = format!("svc_mgmt_{}", "A".repeat(40));
        let bearer = format!("Bearer {token}");
        let lower = format!("bearer {token}");
        let upper_bearer = format!("Bearer {upper}");
        let cases: Vec<(Vec<(&str, &str)>, Presented)> = vec![
            (vec![], Presented::Nothing),
            (vec![("cookie", "session=1")], Presented::Nothing),
            (
                vec![("authorization", "Basic dXNlcg==")],
                Presented::Nothing,
            ),
            (vec![("authorization", "Bearer ")], Presented::Malformed),
            (vec![("authorization", "Bearer")], Presented::Malformed),
            (
                vec![("authorization", &bearer), ("authorization", &bearer)],
                Presented::Malformed,
            ),
            (
                vec![("authorization", "Bearer svc_live_0123")],
                Presented::Malformed,
            ),
            (vec![("authorization", &upper_bearer)], Presented::Malformed),
            (
                vec![("authorization", &bearer)],
                Presented::WellFormed(&token),
            ),
            (
                vec![("authorization", &lower)],
                Presented::WellFormed(&token),
            ),
        ];
        for (headers, expected) in cases {
            let req = request(&headers);
            assert_eq!(presented_token(&req, "svc"), expected, "{headers:?}");
        }
    }
}
