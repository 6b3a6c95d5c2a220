//! Where the token-signing secrets live ([`SigningSecretStore`]): one current secret and the
//! secrets rotated out, each accepted until the end of its grace period. A fresh database has a
//! current secret from its migration, so tokens and cursors stay valid across restarts and
//! instances without configuration.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use crate::signing::SigningKeys;
use crate::store::StoreError;

/// One stored secret, as `stowctl` lists it (never the secret itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretInfo {
    pub id: i64,
    pub created_at: DateTime<Utc>,
    /// `None` for the current secret; for a rotated-out one, until when its tokens are accepted.
    pub accepted_until: Option<DateTime<Utc>>,
}

#[async_trait]
pub trait SigningSecretStore: Send + Sync {
    /// The current secret and the rotated-out ones still accepted at `now` (newest first).
    /// `NotFound` when there is no current secret.
    async fn keys(&self, now: DateTime<Utc>) -> Result<SigningKeys, StoreError>;
    /// Makes `secret` the current one; the one it replaces is accepted until `previous_until`;
    /// secrets whose acceptance ended before `now` are dropped.
    async fn rotate(
        &self,
        secret: &[u8],
        now: DateTime<Utc>,
        previous_until: DateTime<Utc>,
    ) -> Result<(), StoreError>;
    /// The stored secrets still accepted at `now`, newest first.
    async fn list(&self, now: DateTime<Utc>) -> Result<Vec<SecretInfo>, StoreError>;
}

/// The keys of the stored secrets `(secret, accepted_until)` (any order, newest first among the
/// previous ones when ordered so): the current one (no `accepted_until`) signs, the others still
/// accepted at `now` verify too. `NotFound` without a current secret.
pub fn keys_from<'a>(
    rows: impl IntoIterator<Item = (&'a [u8], Option<DateTime<Utc>>)>,
    now: DateTime<Utc>,
) -> Result<SigningKeys, StoreError> {
    let mut current = None;
    let mut previous = Vec::new();
    for (secret, accepted_until) in rows {
        match accepted_until {
            None => current = Some(secret.to_vec()),
            Some(until) if until > now => previous.push(secret.to_vec()),
            Some(_) => {}
        }
    }
    let current = current.ok_or_else(|| {
        StoreError::NotFound("no current signing secret (run `stowctl migrate`)".into())
    })?;
    Ok(SigningKeys::new(current, previous))
}

/// 32 random bytes for a new secret.
pub fn generate() -> Vec<u8> {
    use rand::RngCore;
    let mut bytes = vec![0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    bytes
}
