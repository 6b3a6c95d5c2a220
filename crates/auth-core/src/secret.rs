//! API key secrets: generation, recognition and hashing.
//!
//! A secret is `stw_srv_` (server key) or `stw_dev_` (developer key) followed by 43 characters of
//! unpadded URL-safe Base64 holding 32 random bytes. The prefix lets secret scanners find leaked
//! keys and tells the two kinds apart. Only the SHA-256 of the whole secret is stored; with 256 bits
//! of entropy a fast hash is appropriate, and lookups go by hash, so no comparison leaks timing.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use rand::RngCore;
use sha2::{Digest, Sha256};

use crate::credential::CredentialType;

pub const SERVER_PREFIX: &str = "stw_srv_";
pub const DEVELOPER_PREFIX: &str = "stw_dev_";
const RANDOM_BYTES: usize = 32;
const ENCODED_LEN: usize = 43;

/// A freshly generated secret and the hash to store.
pub struct NewSecret {
    pub secret: String,
    pub hash: [u8; 32],
    /// A non-secret hint for listings: the kind prefix only (`stw_srv_…`).
    pub hint: String,
}

pub fn prefix_for(kind: CredentialType) -> &'static str {
    match kind {
        CredentialType::Server => SERVER_PREFIX,
        CredentialType::Developer => DEVELOPER_PREFIX,
    }
}

pub fn generate(kind: CredentialType) -> NewSecret {
    let mut bytes = [0u8; RANDOM_BYTES];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    let secret = format!("{}{}", prefix_for(kind), URL_SAFE_NO_PAD.encode(bytes));
    // nothing of the random part is kept outside the hash, not even a suffix
    let hint = format!("{}…", prefix_for(kind));
    NewSecret {
        hash: hash(&secret),
        secret,
        hint,
    }
}

pub fn hash(secret: &str) -> [u8; 32] {
    Sha256::digest(secret.as_bytes()).into()
}

/// Recognizes a presented secret by shape only; whether it exists is the store's business.
pub fn recognize(presented: &str) -> Option<CredentialType> {
    let (kind, rest) = if let Some(rest) = presented.strip_prefix(SERVER_PREFIX) {
        (CredentialType::Server, rest)
    } else if let Some(rest) = presented.strip_prefix(DEVELOPER_PREFIX) {
        (CredentialType::Developer, rest)
    } else {
        return None;
    };
    let well_formed = rest.len() == ENCODED_LEN
        && rest
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    well_formed.then_some(kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_secrets_are_recognized_and_distinct() {
        let a = generate(CredentialType::Server);
        let b = generate(CredentialType::Developer);
        assert!(a.secret.starts_with(SERVER_PREFIX));
        assert!(b.secret.starts_with(DEVELOPER_PREFIX));
        assert_eq!(recognize(&a.secret), Some(CredentialType::Server));
        assert_eq!(recognize(&b.secret), Some(CredentialType::Developer));
        assert_ne!(a.secret, generate(CredentialType::Server).secret);
        assert_eq!(a.hash, hash(&a.secret));
        assert_eq!(a.hint, "stw_srv_…");
        assert!(!a.hint.contains(&a.secret[SERVER_PREFIX.len()..][..4]));
        assert!(!a.hint.contains(&a.secret[a.secret.len() - 4..]));
    }

    #[test]
    fn malformed_secrets_are_not_recognized() {
        let good = generate(CredentialType::Server).secret;
        assert_eq!(recognize(&good[..good.len() - 1]), None, "one short");
        assert_eq!(recognize(&format!("{good}A")), None, "one long");
        assert_eq!(recognize(""), None);
        assert_eq!(recognize("stw_srv_"), None);
        assert_eq!(recognize("sk_live_abcdef"), None);
        let mut bad = good.clone();
        bad.replace_range(10..11, "+");
        assert_eq!(recognize(&bad), None, "non url-safe char");
        assert_eq!(recognize(&good.to_uppercase()), None);
        let unicode = format!("{SERVER_PREFIX}{}", "é".repeat(21));
        assert_eq!(recognize(&unicode), None);
    }
}
