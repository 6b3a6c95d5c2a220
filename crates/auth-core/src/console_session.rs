//! Console sessions: the console exchanges an API key, or a member's sign-in name and password,
//! for a session whose token lives only in an HttpOnly cookie. The store keeps the token's hash
//! and who the session acts as ([`Subject`]): a key's hash (the one `api_keys` already holds,
//! never the key itself), or a member in one organization. Each request through the console
//! authenticates that subject again, so a disabled, expired or deleted key, or a member removed
//! from the organization, ends its sessions.

use std::time::Duration;

use async_trait::async_trait;
use base64::Engine;
use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};

use crate::ids::{KeyId, MemberId, OrgId};
use crate::store::StoreError;

/// How long a session lives: `idle` since its last request, `absolute` since sign-in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lifetimes {
    pub idle: Duration,
    pub absolute: Duration,
}

/// The last use is recorded at most this often (a write per console request is not needed to
/// keep idle expiry within a minute of exact).
pub const TOUCH_EVERY: Duration = Duration::from_secs(60);

impl Lifetimes {
    /// Whether `session` may still be used at `now`.
    pub fn alive(&self, session: &Session, now: DateTime<Utc>) -> bool {
        let idle = chrono::Duration::from_std(self.idle).unwrap_or(chrono::Duration::MAX);
        let absolute = chrono::Duration::from_std(self.absolute).unwrap_or(chrono::Duration::MAX);
        now < session.last_seen_at + idle && now < session.created_at + absolute
    }
}

/// Whether a live session's last use is old enough to record again.
pub fn needs_touch(session: &Session, now: DateTime<Utc>) -> bool {
    let every = chrono::Duration::from_std(TOUCH_EVERY).unwrap_or(chrono::Duration::MAX);
    now >= session.last_seen_at + every
}

/// Who a session acts as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subject {
    /// Signed in with an API key.
    Key {
        key_id: KeyId,
        /// The key's stored hash ([`crate::secret::hash`]).
        key_hash: [u8; 32],
    },
    /// A member signed in with their password, acting in one of their organizations.
    Member { member_id: MemberId, org_id: OrgId },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// SHA-256 of the cookie's token.
    pub id_hash: [u8; 32],
    pub subject: Subject,
    /// Sent back in `X-CSRF-Token` by every state-changing console request.
    pub csrf_token: String,
    pub created_at: DateTime<Utc>,
    pub last_seen_at: DateTime<Utc>,
}

/// A fresh random token (32 bytes, URL-safe Base64 without padding) for a cookie or CSRF value.
pub fn new_token() -> String {
    use rand::RngCore;
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// What the store keeps of a cookie's token.
pub fn token_hash(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

/// Compares two CSRF values without an early exit on the first difference.
pub fn csrf_matches(expected: &str, presented: &str) -> bool {
    let (a, b) = (expected.as_bytes(), presented.as_bytes());
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[async_trait]
pub trait ConsoleSessionStore: Send + Sync {
    async fn create(&self, session: &Session) -> Result<(), StoreError>;
    /// The session with this token hash, whatever its age (expiry is [`Lifetimes::alive`]).
    async fn get(&self, id_hash: &[u8; 32]) -> Result<Option<Session>, StoreError>;
    /// Records a use at `at`.
    async fn touch(&self, id_hash: &[u8; 32], at: DateTime<Utc>) -> Result<(), StoreError>;
    /// Ends one session (sign-out, expiry); ending an unknown one is not an error.
    async fn end(&self, id_hash: &[u8; 32]) -> Result<(), StoreError>;
    /// Ends every session of a key; returns how many there were.
    async fn end_for_key(&self, key_id: &KeyId) -> Result<u64, StoreError>;
    /// Ends a member's sessions in one organization (their role changed or they left it), or in
    /// every organization (`None`: a new password); returns how many there were.
    async fn end_for_member(
        &self,
        member_id: &MemberId,
        org_id: Option<&OrgId>,
    ) -> Result<u64, StoreError>;
    /// Deletes sessions last used before `idle_before` or created before `created_before`.
    async fn sweep(
        &self,
        idle_before: DateTime<Utc>,
        created_before: DateTime<Utc>,
    ) -> Result<u64, StoreError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(created: DateTime<Utc>, seen: DateTime<Utc>) -> Session {
        Session {
            id_hash: token_hash("t"),
            subject: Subject::Key {
                key_id: "key_1".into(),
                key_hash: [7; 32],
            },
            csrf_token: "c".into(),
            created_at: created,
            last_seen_at: seen,
        }
    }

    #[test]
    fn a_session_expires_when_idle_or_old_at_the_exact_limit() {
        let l = Lifetimes {
            idle: Duration::from_secs(60),
            absolute: Duration::from_secs(3600),
        };
        let t0 = Utc::now();
        let s = session(t0, t0);
        let secs = chrono::Duration::seconds;
        assert!(l.alive(&s, t0 + secs(59)));
        assert!(!l.alive(&s, t0 + secs(60)), "idle limit is exclusive");
        let used = session(t0, t0 + secs(3590));
        assert!(l.alive(&used, t0 + secs(3599)));
        assert!(
            !l.alive(&used, t0 + secs(3600)),
            "absolute limit whatever the use"
        );
    }

    #[test]
    fn use_is_recorded_once_a_minute() {
        let t0 = Utc::now();
        let s = session(t0, t0);
        assert!(!needs_touch(&s, t0 + chrono::Duration::seconds(59)));
        assert!(needs_touch(&s, t0 + chrono::Duration::seconds(60)));
    }

    #[test]
    fn tokens_are_random_url_safe_and_hashed() {
        let (a, b) = (new_token(), new_token());
        assert_ne!(a, b);
        assert_eq!(a.len(), 43);
        assert!(a
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_'));
        assert_ne!(token_hash(&a), token_hash(&b));
    }

    #[test]
    fn csrf_values_match_only_exactly() {
        assert!(csrf_matches("abc", "abc"));
        assert!(!csrf_matches("abc", "abd"));
        assert!(!csrf_matches("abc", "ab"));
        assert!(!csrf_matches("abc", ""));
        assert!(!csrf_matches("", "x"));
    }
}
