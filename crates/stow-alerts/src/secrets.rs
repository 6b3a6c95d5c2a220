//! What a destination keeps secret — its address (a Discord webhook's address holds its token)
//! and a generic webhook's signing secret — sealed under the operator's `SECOND_FACTOR_KEY`,
//! bound to the destination's id.

use auth_core::second_factor::{SealKey, Unsealable};
use rand::RngCore;
use serde::{Deserialize, Serialize};

/// Bytes of a new signing secret.
const SIGNING_SECRET_BYTES: usize = 32;

#[derive(Clone, Serialize, Deserialize)]
pub struct Secrets {
    pub url: String,
    /// `whsec_…` (generic webhooks only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signing_secret: Option<String>,
}

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secrets(…)")
    }
}

fn bound(destination_id: &str) -> Vec<u8> {
    format!("alert-destination:{destination_id}").into_bytes()
}

impl Secrets {
    pub fn seal(&self, key: &SealKey, destination_id: &str) -> Vec<u8> {
        let plain = serde_json::to_vec(self).unwrap_or_default();
        key.seal_bound(&bound(destination_id), &plain)
    }

    pub fn open(key: &SealKey, destination_id: &str, sealed: &[u8]) -> Result<Self, Unsealable> {
        let plain = key.open_bound(&bound(destination_id), sealed)?;
        serde_json::from_slice(&plain).map_err(|_| Unsealable)
    }
}

/// A new Standard Webhooks signing secret: `whsec_` and 32 random bytes in Base64.
pub fn new_signing_secret() -> String {
    use base64::Engine;
    let mut bytes = [0u8; SIGNING_SECRET_BYTES];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    format!(
        "whsec_{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_secrets_open_only_for_their_destination() {
        let key = SealKey::new([9; 32]);
        let s = Secrets {
            url: "https://discord.com/api/webhooks/1/t".into(),
            signing_secret: Some(new_signing_secret()),
        };
        let sealed = s.seal(&key, "dst_a");
        let back = Secrets::open(&key, "dst_a", &sealed).unwrap();
        assert_eq!(back.url, s.url);
        assert_eq!(back.signing_secret, s.signing_secret);
        assert!(Secrets::open(&key, "dst_b", &sealed).is_err());
        assert!(Secrets::open(&SealKey::new([8; 32]), "dst_a", &sealed).is_err());
        assert_eq!(format!("{s:?}"), "Secrets(…)");
        assert!(standardwebhooks::Webhook::new(s.signing_secret.as_deref().unwrap()).is_ok());
    }
}
