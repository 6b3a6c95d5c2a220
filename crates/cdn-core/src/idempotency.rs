//! Idempotency-Key records and request fingerprints.
//!
//! Scope: the credential (API key id or upload-token hash) plus method and route. A request
//! first *claims* its key (an in-flight record); on success the record is completed with the
//! request fingerprint and the response; on failure it is released, so a retry runs again.
//! Records are kept at least 24 hours, then swept.
//!
//! An in-flight claim belongs to a live owner: it carries a lease of [`LEASE_SECS`] that the
//! owner renews every [`RENEW_EVERY_SECS`] while its request runs. A claim whose lease ran out
//! (its instance crashed or lost the database) is taken over by the next request with the key,
//! so a retry after a crash proceeds within seconds, while two live requests never both run.
//! Renewing, completing and releasing name the owner, so a request whose lease was taken over
//! cannot complete or release the new owner's claim.
//!
//! Responses are stored as the exact bytes sent (not as `jsonb`, which refuses U+0000 and would
//! have left a response with an escaped NUL unstorable and its key in flight), so any response
//! can be replayed byte for byte.

use async_trait::async_trait;
use auth_core::StoreError;
use chrono::{DateTime, Utc};
use serde_json::Value;

pub const RETENTION_HOURS: i64 = 24;
/// How long an in-flight claim lives without renewal.
pub const LEASE_SECS: i64 = 5;
/// How often a running request renews its claim.
pub const RENEW_EVERY_SECS: u64 = 1;
pub const MAX_KEY_LEN: usize = 255;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IdemScope {
    pub scope: String,
    pub method: String,
    pub route: String,
    pub key: String,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Claim {
    /// This request owns the key now (under the owner it claimed with).
    Claimed,
    /// Another request with the same key is still running.
    InFlight,
    /// A request with this key succeeded before.
    Done {
        fingerprint: Vec<u8>,
        status: u16,
        /// The response body as sent.
        response: Vec<u8>,
    },
}

#[async_trait]
pub trait IdempotencyStore: Send + Sync {
    /// Claims the key for `owner` with a lease until `now` + [`LEASE_SECS`]: a new key, or an
    /// in-flight one whose lease ran out before `now`.
    async fn claim(
        &self,
        scope: &IdemScope,
        owner: &str,
        now: DateTime<Utc>,
    ) -> Result<Claim, StoreError>;
    /// Extends `owner`'s lease to `now` + [`LEASE_SECS`]; false when the claim is no longer
    /// `owner`'s (taken over, released or completed).
    async fn renew(
        &self,
        scope: &IdemScope,
        owner: &str,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError>;
    /// Stores the response of `owner`'s successful request (nothing when the claim is no longer
    /// `owner`'s).
    async fn complete(
        &self,
        scope: &IdemScope,
        owner: &str,
        fingerprint: &[u8],
        status: u16,
        response: &[u8],
    ) -> Result<(), StoreError>;
    /// Drops `owner`'s in-flight claim (never a completed record).
    async fn release(&self, scope: &IdemScope, owner: &str) -> Result<(), StoreError>;
    /// Deletes records created before `before`; returns how many.
    async fn sweep(&self, before: DateTime<Utc>) -> Result<u64, StoreError>;
}

/// Validates an `Idempotency-Key` header value: 1 to 255 visible ASCII characters.
pub fn validate_key(raw: &[u8]) -> Result<String, String> {
    let s = std::str::from_utf8(raw).map_err(|_| "Idempotency-Key must be ASCII".to_owned())?;
    let s = s.trim();
    if s.is_empty() || s.len() > MAX_KEY_LEN || !s.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(format!(
            "Idempotency-Key must be 1 to {MAX_KEY_LEN} visible ASCII characters"
        ));
    }
    Ok(s.to_owned())
}

/// Builds a fingerprint over a request's meaning, independent of its encoding.
#[derive(Default)]
pub struct Fingerprint {
    parts: Vec<Value>,
}

impl Fingerprint {
    pub fn new() -> Self {
        Self::default()
    }
    /// A text field (or query parameter).
    pub fn field(&mut self, name: &str, value: &str) {
        self.parts.push(serde_json::json!(["f", name, value]));
    }
    /// A file part: name, file name, declared type and content digest.
    pub fn file(
        &mut self,
        name: &str,
        file_name: Option<&str>,
        declared: Option<&str>,
        digest: &str,
    ) {
        self.parts.push(serde_json::json!([
            "file", name, file_name, declared, digest
        ]));
    }
    /// A parsed JSON body (object keys are sorted, so key order and whitespace do not matter).
    pub fn json(&mut self, body: &Value) {
        self.parts.push(serde_json::json!(["json", body]));
    }
    pub fn finish(self) -> Vec<u8> {
        auth_core::canonical::digest(&Value::Array(self.parts)).to_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys() {
        assert_eq!(validate_key(b"abc-123").as_deref(), Ok("abc-123"));
        assert!(validate_key(b"").is_err());
        assert!(validate_key(b"a b").is_err());
        assert!(validate_key(&[b'a'; 255]).is_ok());
        assert!(validate_key(&[b'a'; 256]).is_err());
        assert!(validate_key(b"\xff").is_err());
    }

    #[test]
    fn fingerprints_ignore_encoding_but_not_meaning() {
        let a: Value = serde_json::from_str(r#"{"paths":["a","b"],"x":1}"#).unwrap();
        let b: Value = serde_json::from_str(r#"{ "x" : 1, "paths" : ["a","b"] }"#).unwrap();
        let c: Value = serde_json::from_str(r#"{"paths":["b","a"],"x":1}"#).unwrap();
        let fp = |v: &Value| {
            let mut f = Fingerprint::new();
            f.json(v);
            f.finish()
        };
        assert_eq!(fp(&a), fp(&b));
        assert_ne!(fp(&a), fp(&c));
        let mut f1 = Fingerprint::new();
        f1.file("file", Some("a.png"), Some("image/png"), "abc");
        f1.field("path", "images");
        let mut f2 = Fingerprint::new();
        f2.file("file", Some("a.png"), Some("image/png"), "abd");
        f2.field("path", "images");
        assert_ne!(f1.finish(), f2.finish());
        let _ = json!(null);
    }
}
