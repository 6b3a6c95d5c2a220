//! Opaque, tamper-proof continuation tokens for `GET /v1/objects`.
//!
//! A token carries the last key of the previous page and the folder it was made for, signed
//! with the server secret and bound to the organization. A forged token, or one presented with
//! another `path` or by another organization, is refused.

use auth_core::signing::SigningKeys;
use serde::{Deserialize, Serialize};

pub const DEFAULT_LIMIT: usize = 100;
pub const MAX_LIMIT: usize = 1000;

#[derive(Serialize, Deserialize)]
struct Payload {
    v: u8,
    f: String,
    a: String,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    #[error("continuationToken is malformed or was not issued by this service")]
    Invalid,
    #[error("continuationToken was issued for another path; start a new listing")]
    Mismatch,
}

fn context(org_id: &str) -> String {
    format!("list:{org_id}")
}

pub fn make_token(keys: &SigningKeys, org_id: &str, folder: &str, last_key: &str) -> String {
    let payload = Payload {
        v: 1,
        f: folder.to_owned(),
        a: last_key.to_owned(),
    };
    let bytes = serde_json::to_vec(&payload).unwrap_or_default();
    keys.sign(&context(org_id), &bytes)
}

/// The key to continue after.
pub fn read_token(
    keys: &SigningKeys,
    org_id: &str,
    folder: &str,
    token: &str,
) -> Result<String, TokenError> {
    let bytes = keys
        .verify(&context(org_id), token)
        .map_err(|_| TokenError::Invalid)?;
    let p: Payload = serde_json::from_slice(&bytes).map_err(|_| TokenError::Invalid)?;
    if p.v != 1 {
        return Err(TokenError::Invalid);
    }
    if p.f != folder {
        return Err(TokenError::Mismatch);
    }
    Ok(p.a)
}

/// Parses `limit` (1 to 1000, default 100).
pub fn parse_limit(raw: Option<&str>) -> Result<usize, String> {
    match raw {
        None => Ok(DEFAULT_LIMIT),
        Some(s) => match s.trim().parse::<usize>() {
            Ok(n) if (1..=MAX_LIMIT).contains(&n) => Ok(n),
            _ => Err(format!(
                "limit must be an integer from 1 to {MAX_LIMIT} (got {s:?})"
            )),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens() {
        let t = make_token(
            &SigningKeys::single(b"k"),
            "org_a",
            "images",
            "images/b.png",
        );
        assert_eq!(
            read_token(&SigningKeys::single(b"k"), "org_a", "images", &t).unwrap(),
            "images/b.png"
        );
        assert_eq!(
            read_token(&SigningKeys::single(b"k"), "org_a", "clips", &t),
            Err(TokenError::Mismatch)
        );
        assert_eq!(
            read_token(&SigningKeys::single(b"k"), "org_b", "images", &t),
            Err(TokenError::Invalid)
        );
        assert_eq!(
            read_token(&SigningKeys::single(b"x"), "org_a", "images", &t),
            Err(TokenError::Invalid)
        );
        assert_eq!(
            read_token(&SigningKeys::single(b"k"), "org_a", "images", "garbage"),
            Err(TokenError::Invalid)
        );
        let mut forged = t.clone();
        forged.insert(3, 'A');
        assert_eq!(
            read_token(&SigningKeys::single(b"k"), "org_a", "images", &forged),
            Err(TokenError::Invalid)
        );
    }

    #[test]
    fn limits() {
        assert_eq!(parse_limit(None), Ok(100));
        assert_eq!(parse_limit(Some("1")), Ok(1));
        assert_eq!(parse_limit(Some("999")), Ok(999));
        assert_eq!(parse_limit(Some("1000")), Ok(1000));
        assert!(parse_limit(Some("1001")).is_err());
        assert!(parse_limit(Some("0")).is_err());
        assert!(parse_limit(Some("-1")).is_err());
        assert!(parse_limit(Some("abc")).is_err());
        assert!(parse_limit(Some("1.5")).is_err());
        assert!(parse_limit(Some("")).is_err());
    }
}
