//! Signed opaque tokens (list continuation tokens, query cursors): `base64url(payload)` `.`
//! `base64url(HMAC-SHA256(secret, context || 0x00 || payload))`. The context binds a token to
//! what it was made for (organization, route), so a token is refused anywhere else.
//!
//! [`SigningKeys`] is what the services sign and check with: the current secret, and the secrets
//! rotated out within their grace period, whose tokens are still accepted. Where the secrets are
//! kept (the database, or one fixed secret from the configuration) is the caller's business.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hmac::{Hmac, Mac};
use sha2::Sha256;

type HmacSha256 = Hmac<Sha256>;

/// Longest token accepted; anything longer is refused before decoding.
pub const MAX_TOKEN_LEN: usize = 4096;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignError {
    #[error("malformed token")]
    Malformed,
    #[error("token signature does not match")]
    BadSignature,
}

fn mac(secret: &[u8], context: &str, payload: &[u8]) -> HmacSha256 {
    #[allow(clippy::expect_used)]
    let mut mac = HmacSha256::new_from_slice(secret).expect("hmac accepts any key length");
    mac.update(context.as_bytes());
    mac.update(&[0]);
    mac.update(payload);
    mac
}

pub fn sign(secret: &[u8], context: &str, payload: &[u8]) -> String {
    let tag = mac(secret, context, payload).finalize().into_bytes();
    format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(payload),
        URL_SAFE_NO_PAD.encode(tag)
    )
}

/// Returns the payload when the token was made by [`sign`] with the same secret and context.
pub fn verify(secret: &[u8], context: &str, token: &str) -> Result<Vec<u8>, SignError> {
    if token.len() > MAX_TOKEN_LEN {
        return Err(SignError::Malformed);
    }
    let (payload, tag) = token.split_once('.').ok_or(SignError::Malformed)?;
    let payload = URL_SAFE_NO_PAD
        .decode(payload)
        .map_err(|_| SignError::Malformed)?;
    let tag = URL_SAFE_NO_PAD
        .decode(tag)
        .map_err(|_| SignError::Malformed)?;
    mac(secret, context, &payload)
        .verify_slice(&tag)
        .map_err(|_| SignError::BadSignature)?;
    Ok(payload)
}

/// The current secret and the previous ones still accepted.
#[derive(Clone, PartialEq, Eq)]
pub struct SigningKeys {
    current: Vec<u8>,
    previous: Vec<Vec<u8>>,
}

impl std::fmt::Debug for SigningKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "SigningKeys(1 current, {} previous)",
            self.previous.len()
        )
    }
}

impl SigningKeys {
    pub fn new(current: Vec<u8>, previous: Vec<Vec<u8>>) -> Self {
        Self { current, previous }
    }

    /// One secret, nothing rotated out.
    pub fn single(secret: &[u8]) -> Self {
        Self::new(secret.to_vec(), Vec::new())
    }

    /// A token signed with the current secret.
    pub fn sign(&self, context: &str, payload: &[u8]) -> String {
        sign(&self.current, context, payload)
    }

    /// The payload of a token signed with the current secret or a previous one still accepted.
    pub fn verify(&self, context: &str, token: &str) -> Result<Vec<u8>, SignError> {
        let mut outcome = verify(&self.current, context, token);
        for secret in &self.previous {
            if outcome != Err(SignError::BadSignature) {
                break;
            }
            outcome = verify(secret, context, token);
        }
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_of_a_previous_secret_verify_until_it_is_dropped() {
        let old = SigningKeys::single(b"secret-old");
        let token = old.sign("org_a", b"payload");
        let rotated = SigningKeys::new(b"secret-new".to_vec(), vec![b"secret-old".to_vec()]);
        assert_eq!(rotated.verify("org_a", &token).unwrap(), b"payload");
        assert_eq!(
            rotated.verify("org_b", &token),
            Err(SignError::BadSignature)
        );
        let fresh = rotated.sign("org_a", b"payload");
        assert_ne!(fresh, token, "new tokens use the new secret");
        assert!(old.verify("org_a", &fresh).is_err());
        let dropped = SigningKeys::single(b"secret-new");
        assert_eq!(
            dropped.verify("org_a", &token),
            Err(SignError::BadSignature)
        );
        assert_eq!(dropped.verify("org_a", "no-dot"), Err(SignError::Malformed));
        assert_eq!(format!("{rotated:?}"), "SigningKeys(1 current, 1 previous)");
    }

    #[test]
    fn round_trip_and_tamper() {
        let t = sign(b"secret-1", "org_a", b"{\"after\":\"x\"}");
        assert_eq!(
            verify(b"secret-1", "org_a", &t).unwrap(),
            b"{\"after\":\"x\"}"
        );
        assert_eq!(
            verify(b"secret-2", "org_a", &t),
            Err(SignError::BadSignature)
        );
        assert_eq!(
            verify(b"secret-1", "org_b", &t),
            Err(SignError::BadSignature)
        );
        let (p, s) = t.split_once('.').unwrap();
        let forged = format!("{}.{s}", URL_SAFE_NO_PAD.encode(b"{\"after\":\"y\"}"));
        assert_eq!(
            verify(b"secret-1", "org_a", &forged),
            Err(SignError::BadSignature)
        );
        assert_eq!(verify(b"secret-1", "org_a", p), Err(SignError::Malformed));
        assert_eq!(
            verify(b"secret-1", "org_a", "!!.??"),
            Err(SignError::Malformed)
        );
        assert_eq!(verify(b"secret-1", "org_a", ""), Err(SignError::Malformed));
        assert_eq!(
            verify(b"secret-1", "org_a", &"a".repeat(MAX_TOKEN_LEN + 1)),
            Err(SignError::Malformed)
        );
        assert!(t
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.'));
    }
}
