//! A member's second factor: a TOTP authenticator (RFC 6238 through the `totp-rs` crate: SHA-1,
//! 6 digits, 30-second steps, the form every authenticator app reads) and single-use recovery
//! codes.
//!
//! The TOTP secret has to be read back to check a code, so it is stored encrypted
//! (XChaCha20-Poly1305 from the `chacha20poly1305` crate, under the operator's
//! `SECOND_FACTOR_KEY`, bound to the member's id); recovery codes are random and stored as
//! SHA-256. A code is accepted for the current step or one step either side (clock drift), and
//! never for a step at or before the last one used, so a code seen over a shoulder cannot be
//! replayed.

use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use rand::RngCore;
use sha2::{Digest, Sha256};
use totp_rs::{Algorithm, TOTP};

use crate::ids::MemberId;

/// Seconds per TOTP step.
pub const STEP_SECONDS: u64 = 30;
/// Bytes of a TOTP secret (160 bits, RFC 4226's recommendation).
pub const SECRET_BYTES: usize = 20;
/// Recovery codes made at enrolment.
pub const RECOVERY_CODES: usize = 10;
/// The issuer authenticator apps show beside the sign-in name.
pub const ISSUER: &str = "Stowage";

/// The operator's key that seals TOTP secrets (`SECOND_FACTOR_KEY`: 32 bytes, Base64).
#[derive(Clone)]
pub struct SealKey([u8; 32]);

impl std::fmt::Debug for SealKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SealKey(…)")
    }
}

/// Why a sealed secret could not be opened: another key sealed it, or it was changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the second factor's secret cannot be opened with this SECOND_FACTOR_KEY")]
pub struct Unsealable;

const NONCE_BYTES: usize = 24;

impl SealKey {
    pub fn new(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }

    /// From 32 bytes in standard Base64 (what `openssl rand -base64 32` prints).
    pub fn from_base64(b64: &str) -> Result<Self, Unsealable> {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD
            .decode(b64.trim())
            .ok()
            .and_then(|b| <[u8; 32]>::try_from(b).ok())
            .map(Self)
            .ok_or(Unsealable)
    }

    /// The secret sealed for `member`: a random nonce, then the ciphertext with its tag.
    pub fn seal(&self, member: &MemberId, secret: &[u8]) -> Vec<u8> {
        self.seal_bound(member.as_bytes(), secret)
    }

    /// The secret sealed to `bound` (what it belongs to, e.g. an id prefixed with its kind): it
    /// opens only with the same key and the same `bound`.
    pub fn seal_bound(&self, bound: &[u8], secret: &[u8]) -> Vec<u8> {
        let mut nonce = [0u8; NONCE_BYTES];
        rand::rngs::OsRng.fill_bytes(&mut nonce);
        let cipher = XChaCha20Poly1305::new(&self.0.into());
        let sealed = cipher
            .encrypt(
                XNonce::from_slice(&nonce),
                Payload {
                    msg: secret,
                    aad: bound,
                },
            )
            .unwrap_or_default();
        let mut out = nonce.to_vec();
        out.extend(sealed);
        out
    }

    /// The secret [`SealKey::seal`] sealed for `member`.
    pub fn open(&self, member: &MemberId, sealed: &[u8]) -> Result<Vec<u8>, Unsealable> {
        self.open_bound(member.as_bytes(), sealed)
    }

    /// The secret [`SealKey::seal_bound`] sealed to `bound`.
    pub fn open_bound(&self, bound: &[u8], sealed: &[u8]) -> Result<Vec<u8>, Unsealable> {
        if sealed.len() <= NONCE_BYTES {
            return Err(Unsealable);
        }
        let (nonce, ciphertext) = sealed.split_at(NONCE_BYTES);
        XChaCha20Poly1305::new(&self.0.into())
            .decrypt(
                XNonce::from_slice(nonce),
                Payload {
                    msg: ciphertext,
                    aad: bound,
                },
            )
            .map_err(|_| Unsealable)
    }
}

/// A new random TOTP secret.
pub fn new_secret() -> Vec<u8> {
    let mut secret = vec![0u8; SECRET_BYTES];
    rand::rngs::OsRng.fill_bytes(&mut secret);
    secret
}

fn totp(secret: &[u8], login: &str) -> TOTP {
    // skew 0: the steps either side are checked one by one, to know which step matched
    TOTP::new_unchecked(
        Algorithm::SHA1,
        6,
        0,
        STEP_SECONDS,
        secret.to_vec(),
        Some(ISSUER.to_owned()),
        login.to_owned(),
    )
}

/// What an authenticator app is given: the `otpauth://` URI (as a QR code or a link) and the
/// secret in Base32 for typing in.
pub fn enrolment(secret: &[u8], login: &str) -> (String, String) {
    let t = totp(secret, login);
    (t.get_url(), t.get_secret_base32())
}

/// The step of `unix_seconds`.
pub fn step_of(unix_seconds: u64) -> u64 {
    unix_seconds / STEP_SECONDS
}

/// The step `code` is right for: the current one or one either side, and after `last_used`
/// (`None` when none was). Spaces in the code are ignored.
pub fn check_code(secret: &[u8], code: &str, now_unix: u64, last_used: Option<u64>) -> Option<u64> {
    let code: String = code.chars().filter(|c| !c.is_whitespace()).collect();
    if code.len() != 6 || !code.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let t = totp(secret, "");
    let now = step_of(now_unix);
    [now.saturating_sub(1), now, now + 1]
        .into_iter()
        .filter(|step| last_used.is_none_or(|last| *step > last))
        .find(|step| t.check(&code, step * STEP_SECONDS))
}

/// The code of `step` (tests and the CLI's self-check).
pub fn code_at(secret: &[u8], step: u64) -> String {
    totp(secret, "").generate(step * STEP_SECONDS)
}

/// The alphabet of recovery codes: no 0/O, 1/I/L, so a code read off paper is typed right.
const RECOVERY_ALPHABET: &[u8] = b"23456789abcdefghjkmnpqrstuvwxyz";

/// Fresh recovery codes (`xxxxx-xxxxx-xxxxx`, 15 characters of 31: about 74 bits each), shown
/// once.
pub fn new_recovery_codes() -> Vec<String> {
    (0..RECOVERY_CODES)
        .map(|_| {
            let mut bytes = [0u8; 15];
            rand::rngs::OsRng.fill_bytes(&mut bytes);
            let chars: Vec<char> = bytes
                .iter()
                .map(|b| RECOVERY_ALPHABET[*b as usize % RECOVERY_ALPHABET.len()] as char)
                .collect();
            chars
                .chunks(5)
                .map(|c| c.iter().collect::<String>())
                .collect::<Vec<_>>()
                .join("-")
        })
        .collect()
}

/// What is stored of a recovery code: SHA-256 of it without dashes, spaces or case.
pub fn recovery_hash(code: &str) -> [u8; 32] {
    let normal: String = code
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect();
    Sha256::digest(normal.as_bytes()).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_secret_opens_only_with_its_key_and_member() {
        let key = SealKey::new([7; 32]);
        let ann = MemberId::new("mem_ann");
        let secret = new_secret();
        let sealed = key.seal(&ann, &secret);
        assert_ne!(&sealed[24..], secret.as_slice());
        assert_eq!(key.open(&ann, &sealed).unwrap(), secret);
        // two seals differ (fresh nonces)
        assert_ne!(key.seal(&ann, &secret), sealed);
        assert_eq!(
            key.open(&MemberId::new("mem_bob"), &sealed),
            Err(Unsealable)
        );
        assert_eq!(SealKey::new([8; 32]).open(&ann, &sealed), Err(Unsealable));
        let mut changed = sealed.clone();
        changed[30] ^= 1;
        assert_eq!(key.open(&ann, &changed), Err(Unsealable));
        assert_eq!(key.open(&ann, &sealed[..24]), Err(Unsealable));
        assert_eq!(key.open(&ann, &[]), Err(Unsealable));
        assert_eq!(format!("{key:?}"), "SealKey(…)");
        let b64 = "KioqKioqKioqKioqKioqKioqKioqKioqKioqKioqKio=";
        assert_eq!(SealKey::from_base64(b64).unwrap().0, [42; 32]);
        for bad in [
            "",
            "KioqKioq",
            "not base64!",
            "KioqKioqKioqKioqKioqKioqKioqKioqKioqKioqKioqKg==",
        ] {
            assert!(SealKey::from_base64(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn codes_match_their_step_and_one_either_side_never_twice() {
        // RFC 6238's SHA-1 vector: secret "12345678901234567890", T = 59 s → 94287082 (8
        // digits); its last 6 digits are the 6-digit code
        let rfc = b"12345678901234567890";
        assert_eq!(code_at(rfc, 1), "287082");
        let secret = new_secret();
        let now = 1_800_000_000;
        let step = step_of(now);
        for s in [step - 1, step, step + 1] {
            assert_eq!(
                check_code(&secret, &code_at(&secret, s), now, None),
                Some(s)
            );
        }
        for s in [step - 2, step + 2] {
            assert_eq!(check_code(&secret, &code_at(&secret, s), now, None), None);
        }
        let code = code_at(&secret, step);
        assert_eq!(check_code(&secret, &code, now, Some(step)), None, "replay");
        assert_eq!(check_code(&secret, &code, now, Some(step - 1)), Some(step));
        let spaced = format!("{} {}", &code[..3], &code[3..]);
        assert_eq!(check_code(&secret, &spaced, now, None), Some(step));
        for bad in ["", "12345", "1234567", "abcdef", "１２３４５６"] {
            assert_eq!(check_code(&secret, bad, now, None), None, "{bad}");
        }
    }

    #[test]
    fn enrolment_names_the_issuer_and_member() {
        let (uri, base32) = enrolment(b"12345678901234567890", "ann@example.com");
        assert!(
            uri.starts_with("otpauth://totp/Stowage:ann%40example.com?"),
            "{uri}"
        );
        assert!(uri.contains(&format!("secret={base32}")), "{uri}");
        assert!(uri.contains("issuer=Stowage"), "{uri}");
        assert_eq!(base32, "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ");
    }

    #[test]
    fn recovery_codes_are_distinct_readable_and_hashed_loosely() {
        let codes = new_recovery_codes();
        assert_eq!(codes.len(), RECOVERY_CODES);
        let mut unique = codes.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), RECOVERY_CODES);
        for c in &codes {
            assert_eq!(c.len(), 17, "{c}");
            assert!(c
                .chars()
                .all(|ch| ch == '-' || RECOVERY_ALPHABET.contains(&(ch as u8))));
            let typed = c.replace('-', " ").to_uppercase();
            assert_eq!(recovery_hash(&typed), recovery_hash(c));
        }
        assert_ne!(recovery_hash(&codes[0]), recovery_hash(&codes[1]));
    }
}
