//! Scoped upload URLs: token format, creation rules and the storage trait.
//!
//! A token is 43 characters of URL-safe Base64 (32 random bytes); only its SHA-256 is stored.
//! A URL never grants more than the key that made it: its path lock lies inside the key's scope
//! and its MIME list inside the key's MIME restriction.
//!
//! Over 400 lines only with its unit tests (the rules are about 235).

use async_trait::async_trait;
use auth_core::policy::{mime_essence, mime_list_within, PathScope};
use auth_core::{KeyId, OrgId, StoreError};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use chrono::{DateTime, Utc};
use rand::RngCore;
use sha2::{Digest, Sha256};

use crate::path::{normalize_folder, PathError};

pub const DEFAULT_EXPIRES_IN: i64 = 900;
pub const DEFAULT_MAX_FILES: i32 = 1;
/// Upper bound of `maxFiles` for one URL.
pub const MAX_FILES_CEILING: i32 = 1000;
pub const MIN_TOKEN_LEN: usize = 32;
pub const MAX_TOKEN_LEN: usize = 512;

pub struct NewToken {
    pub token: String,
    pub hash: [u8; 32],
}

pub fn generate_token() -> NewToken {
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    let token = URL_SAFE_NO_PAD.encode(bytes);
    NewToken {
        hash: hash_token(&token),
        token,
    }
}

pub fn hash_token(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

/// Whether a presented token has the shape of one we issue.
pub fn well_formed(token: &str) -> bool {
    (MIN_TOKEN_LEN..=MAX_TOKEN_LEN).contains(&token.len())
        && token
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// The parameters of `GET /v1/presigned-url`, as received (repeated parameters collected).
#[derive(Debug, Default, Clone)]
pub struct RawParams {
    pub expires_in: Option<String>,
    pub path: Option<String>,
    pub max_files: Option<String>,
    pub max_file_size: Option<String>,
    pub allowed_mime_types: Vec<String>,
    pub allow_custom_metadata: Option<String>,
    pub randomize_name: Option<String>,
}

/// Limits of the workspace (from the organization's plan).
#[derive(Debug, Clone, Copy)]
pub struct WorkspaceLimits {
    pub max_file_size: i64,
    pub max_url_lifetime_secs: i64,
}

/// A validated upload-URL scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UploadSpec {
    pub expires_in: i64,
    pub path: String,
    pub max_files: i32,
    pub max_file_size: i64,
    pub allowed_mime: Option<Vec<String>>,
    pub allow_custom_metadata: bool,
    pub randomize_name: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    #[error("{0}")]
    Invalid(String),
    #[error("invalid path: {0}")]
    InvalidPath(PathError),
    #[error("path `{0}` is outside this key's allowed paths")]
    PathNotAllowed(String),
    #[error("allowedMimeTypes includes types outside this key's MIME restriction")]
    MimeNotAllowed,
}

fn positive(name: &str, raw: Option<&str>) -> Result<Option<i64>, SpecError> {
    match raw {
        None => Ok(None),
        Some(s) => match s.trim().parse::<i64>() {
            Ok(n) if n > 0 => Ok(Some(n)),
            _ => Err(SpecError::Invalid(format!(
                "{name} must be a positive integer (got {s:?})"
            ))),
        },
    }
}

fn boolean(name: &str, raw: Option<&str>) -> Result<bool, SpecError> {
    match raw.map(|s| s.trim().to_ascii_lowercase()).as_deref() {
        None | Some("false") | Some("0") => Ok(false),
        Some("true") | Some("1") => Ok(true),
        Some(other) => Err(SpecError::Invalid(format!(
            "{name} must be true or false (got {other:?})"
        ))),
    }
}

fn valid_mime(m: &str) -> bool {
    let Some((t, sub)) = m.split_once('/') else {
        return false;
    };
    let token = |x: &str| {
        !x.is_empty()
            && x.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$&^_.+-*".contains(&b))
    };
    token(t) && token(sub) && (t != "*" || sub == "*")
}

/// Validates creation parameters against the key and the workspace limits.
pub fn build_spec(
    raw: &RawParams,
    scope: &PathScope,
    key_mime: Option<&[String]>,
    limits: WorkspaceLimits,
) -> Result<UploadSpec, SpecError> {
    let expires_in = positive("expiresIn", raw.expires_in.as_deref())?
        .unwrap_or(DEFAULT_EXPIRES_IN)
        .min(limits.max_url_lifetime_secs);
    let max_files = match positive("maxFiles", raw.max_files.as_deref())? {
        None => DEFAULT_MAX_FILES,
        Some(n) if n <= i64::from(MAX_FILES_CEILING) => n as i32,
        Some(n) => {
            return Err(SpecError::Invalid(format!(
                "maxFiles must be at most {MAX_FILES_CEILING} (got {n})"
            )))
        }
    };
    let max_file_size = positive("maxFileSize", raw.max_file_size.as_deref())?
        .unwrap_or(limits.max_file_size)
        .min(limits.max_file_size);
    let path =
        normalize_folder(raw.path.as_deref().unwrap_or("")).map_err(SpecError::InvalidPath)?;
    if !scope.allows_listing(&path) {
        return Err(SpecError::PathNotAllowed(path));
    }
    let mut requested: Vec<String> = raw
        .allowed_mime_types
        .iter()
        .flat_map(|v| v.split(','))
        .map(mime_essence)
        .filter(|m| !m.is_empty())
        .collect();
    requested.dedup();
    if let Some(bad) = requested.iter().find(|m| !valid_mime(m)) {
        return Err(SpecError::Invalid(format!(
            "allowedMimeTypes has an invalid MIME type {bad:?}"
        )));
    }
    let allowed_mime = if requested.is_empty() {
        key_mime.map(|k| k.to_vec())
    } else {
        if !mime_list_within(key_mime, &requested) {
            return Err(SpecError::MimeNotAllowed);
        }
        Some(requested)
    };
    Ok(UploadSpec {
        expires_in,
        path,
        max_files,
        max_file_size,
        allowed_mime,
        allow_custom_metadata: boolean(
            "allowCustomMetadata",
            raw.allow_custom_metadata.as_deref(),
        )?,
        randomize_name: boolean("randomizeName", raw.randomize_name.as_deref())?,
    })
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UploadUrlRecord {
    pub token_hash: [u8; 32],
    pub org_id: OrgId,
    pub key_id: KeyId,
    pub path: String,
    pub max_files: i32,
    pub files_used: i32,
    pub max_file_size: i64,
    pub allowed_mime: Option<Vec<String>>,
    pub allow_custom_metadata: bool,
    pub randomize_name: bool,
    pub expires_at: DateTime<Utc>,
}

/// The outcome of reserving file slots.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reservation {
    Reserved,
    NotFound,
    Expired,
    /// No slot left at all.
    Exhausted,
    /// Fewer slots left than requested (and at least one).
    TooMany {
        remaining: i32,
    },
}

#[async_trait]
pub trait UploadUrlStore: Send + Sync {
    async fn create(&self, record: &UploadUrlRecord) -> Result<(), StoreError>;
    async fn get(&self, token_hash: &[u8; 32]) -> Result<Option<UploadUrlRecord>, StoreError>;
    /// Atomically takes `n` slots, or none.
    async fn reserve(
        &self,
        token_hash: &[u8; 32],
        n: i32,
        now: DateTime<Utc>,
    ) -> Result<Reservation, StoreError>;
    /// Gives back `n` slots (files that failed).
    async fn release(&self, token_hash: &[u8; 32], n: i32) -> Result<(), StoreError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> WorkspaceLimits {
        WorkspaceLimits {
            max_file_size: 1000,
            max_url_lifetime_secs: 3600,
        }
    }

    fn raw() -> RawParams {
        RawParams::default()
    }

    #[test]
    fn defaults() {
        let s = build_spec(&raw(), &PathScope::unrestricted(), None, limits()).unwrap();
        assert_eq!(s.expires_in, 900);
        assert_eq!(s.max_files, 1);
        assert_eq!(s.max_file_size, 1000);
        assert_eq!(s.path, "");
        assert_eq!(s.allowed_mime, None);
        assert!(!s.allow_custom_metadata);
        assert!(!s.randomize_name);
    }

    #[test]
    fn clamping_and_numbers() {
        let mut r = raw();
        r.expires_in = Some("3599".into());
        assert_eq!(
            build_spec(&r, &PathScope::unrestricted(), None, limits())
                .unwrap()
                .expires_in,
            3599
        );
        r.expires_in = Some("3600".into());
        assert_eq!(
            build_spec(&r, &PathScope::unrestricted(), None, limits())
                .unwrap()
                .expires_in,
            3600
        );
        r.expires_in = Some("3601".into());
        assert_eq!(
            build_spec(&r, &PathScope::unrestricted(), None, limits())
                .unwrap()
                .expires_in,
            3600
        );
        for bad in ["0", "-1", "abc", "1.5", ""] {
            r.expires_in = Some(bad.into());
            let e = build_spec(&r, &PathScope::unrestricted(), None, limits()).unwrap_err();
            assert!(e.to_string().contains("expiresIn"), "{e}");
        }
        let mut r = raw();
        r.max_file_size = Some("5000".into());
        assert_eq!(
            build_spec(&r, &PathScope::unrestricted(), None, limits())
                .unwrap()
                .max_file_size,
            1000
        );
        r.max_file_size = Some("10".into());
        assert_eq!(
            build_spec(&r, &PathScope::unrestricted(), None, limits())
                .unwrap()
                .max_file_size,
            10
        );
        r.max_files = Some("0".into());
        assert!(build_spec(&r, &PathScope::unrestricted(), None, limits())
            .unwrap_err()
            .to_string()
            .contains("maxFiles"));
        r.max_files = Some("1000".into());
        assert_eq!(
            build_spec(&r, &PathScope::unrestricted(), None, limits())
                .unwrap()
                .max_files,
            1000
        );
        r.max_files = Some("1001".into());
        assert!(build_spec(&r, &PathScope::unrestricted(), None, limits()).is_err());
    }

    #[test]
    fn booleans() {
        let mut r = raw();
        r.allow_custom_metadata = Some("TRUE".into());
        r.randomize_name = Some("1".into());
        let s = build_spec(&r, &PathScope::unrestricted(), None, limits()).unwrap();
        assert!(s.allow_custom_metadata && s.randomize_name);
        r.randomize_name = Some("yes".into());
        assert!(build_spec(&r, &PathScope::unrestricted(), None, limits())
            .unwrap_err()
            .to_string()
            .contains("randomizeName"));
    }

    #[test]
    fn scope_and_mime_never_widen() {
        let scope = PathScope::new(vec!["images".into()], vec!["images/private".into()]);
        let mut r = raw();
        assert!(matches!(
            build_spec(&r, &scope, None, limits()),
            Err(SpecError::PathNotAllowed(_))
        ));
        r.path = Some("images/2024".into());
        assert_eq!(
            build_spec(&r, &scope, None, limits()).unwrap().path,
            "images/2024"
        );
        r.path = Some("images/private/x".into());
        assert!(matches!(
            build_spec(&r, &scope, None, limits()),
            Err(SpecError::PathNotAllowed(_))
        ));
        r.path = Some("images2".into());
        assert!(matches!(
            build_spec(&r, &scope, None, limits()),
            Err(SpecError::PathNotAllowed(_))
        ));
        r.path = Some("images/../videos".into());
        assert!(matches!(
            build_spec(&r, &scope, None, limits()),
            Err(SpecError::InvalidPath(_))
        ));

        let key_mime = vec!["image/*".to_string()];
        let mut r = raw();
        let s = build_spec(&r, &PathScope::unrestricted(), Some(&key_mime), limits()).unwrap();
        assert_eq!(
            s.allowed_mime,
            Some(key_mime.clone()),
            "the key's list is passed on"
        );
        r.allowed_mime_types = vec!["image/png,image/webp".into()];
        let s = build_spec(&r, &PathScope::unrestricted(), Some(&key_mime), limits()).unwrap();
        assert_eq!(
            s.allowed_mime,
            Some(vec!["image/png".into(), "image/webp".into()])
        );
        r.allowed_mime_types = vec!["image/png".into(), "text/html".into()];
        assert_eq!(
            build_spec(&r, &PathScope::unrestricted(), Some(&key_mime), limits()),
            Err(SpecError::MimeNotAllowed)
        );
        r.allowed_mime_types = vec!["not a mime".into()];
        assert!(matches!(
            build_spec(&r, &PathScope::unrestricted(), None, limits()),
            Err(SpecError::Invalid(_))
        ));
    }

    #[test]
    fn tokens() {
        let t = generate_token();
        assert!(well_formed(&t.token));
        assert_eq!(t.hash, hash_token(&t.token));
        assert_ne!(t.token, generate_token().token);
        assert!(!well_formed(&"a".repeat(31)));
        assert!(well_formed(&"a".repeat(32)));
        assert!(well_formed(&"a".repeat(512)));
        assert!(!well_formed(&"a".repeat(513)));
        assert!(!well_formed(&format!("{}.", "a".repeat(40))));
        assert!(!well_formed(&format!("{}%2e", "a".repeat(40))));
    }
}

/// Refused uploads (any 4xx) an upload URL takes within [`REFUSED_WINDOW_SECS`] before it
/// answers 429 until that window ends: a token handed to a browser cannot be used to make the
/// service read hostile bodies again and again for free.
pub const MAX_REFUSED_ATTEMPTS: u32 = 10;
pub const REFUSED_WINDOW_SECS: u64 = 60;

/// Refused attempts through one upload URL in the current window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RefusedAttempts {
    /// When the window started.
    pub since: std::time::Instant,
    pub count: u32,
}

impl RefusedAttempts {
    /// One more refused attempt at `now` (a new window when the last one is over).
    pub fn record(previous: Option<Self>, now: std::time::Instant) -> Self {
        match previous {
            Some(p) if now.duration_since(p.since).as_secs() < REFUSED_WINDOW_SECS => Self {
                since: p.since,
                count: p.count.saturating_add(1),
            },
            _ => Self {
                since: now,
                count: 1,
            },
        }
    }

    /// Whole seconds until the URL takes attempts again, when it is blocked at `now`.
    pub fn blocked_for(&self, now: std::time::Instant) -> Option<u64> {
        let elapsed = now.duration_since(self.since).as_secs();
        (self.count >= MAX_REFUSED_ATTEMPTS && elapsed < REFUSED_WINDOW_SECS)
            .then(|| REFUSED_WINDOW_SECS - elapsed)
    }
}

#[cfg(test)]
mod refused_attempt_tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn the_limit_blocks_until_the_window_ends() {
        let t0 = Instant::now();
        let mut a = None;
        for n in 1..MAX_REFUSED_ATTEMPTS {
            a = Some(RefusedAttempts::record(
                a,
                t0 + Duration::from_secs(u64::from(n)),
            ));
            assert_eq!(
                a.unwrap().blocked_for(t0 + Duration::from_secs(10)),
                None,
                "{n}"
            );
        }
        let a = RefusedAttempts::record(a, t0 + Duration::from_secs(20));
        assert_eq!(a.count, MAX_REFUSED_ATTEMPTS);
        // the window opened with the first refusal, at 1 s
        assert_eq!(a.since, t0 + Duration::from_secs(1));
        assert_eq!(a.blocked_for(t0 + Duration::from_secs(20)), Some(41));
        assert_eq!(a.blocked_for(t0 + Duration::from_secs(60)), Some(1));
        assert_eq!(a.blocked_for(t0 + Duration::from_secs(61)), None);
        // the next refusal after the window starts a new one
        let b = RefusedAttempts::record(Some(a), t0 + Duration::from_secs(61));
        assert_eq!(b.count, 1);
        assert_eq!(b.since, t0 + Duration::from_secs(61));
    }
}
