//! Members' passwords: the policy a new password meets, and Argon2id hashing (the `argon2` crate,
//! PHC strings, so the parameters travel with each hash).
//!
//! Hashing and verifying are deliberately slow and CPU-bound: callers on an async runtime run
//! them on a blocking pool with bounded concurrency (`stow-http`'s `PasswordWork`).

use std::sync::OnceLock;

use argon2::password_hash::rand_core::OsRng;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::{Algorithm, Argon2, Params, Version};

/// Fewest characters a password has.
pub const MIN_CHARS: usize = 10;
/// Most characters a password has (hashing cost does not depend on it, but a request body that
/// is mostly password is not a password).
pub const MAX_CHARS: usize = 256;

/// Argon2id memory in KiB, iterations and lanes: OWASP's first recommended set (19 MiB, 2, 1).
pub const MEMORY_KIB: u32 = 19_456;
pub const ITERATIONS: u32 = 2;
pub const LANES: u32 = 1;

/// Why a new password is refused. Messages are safe to show and say what would be accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Weak {
    #[error("the password has {0} characters; use at least {MIN_CHARS}")]
    TooShort(usize),
    #[error("the password has {0} characters; use at most {MAX_CHARS}")]
    TooLong(usize),
    #[error("the password contains your sign-in name; choose one that does not")]
    ContainsLogin,
    #[error("the password is too easy to guess ({0}); a few unrelated words make a strong one")]
    Guessable(String),
}

/// Checks a new password: length in characters, not containing the sign-in name, and not among
/// the common passwords, names, words and keyboard patterns `zxcvbn` knows (its score must be at
/// least 2 of 4, "somewhat guessable": over 10^6 guesses).
pub fn check_new(password: &str, login: &str) -> Result<(), Weak> {
    let chars = password.chars().count();
    if chars < MIN_CHARS {
        return Err(Weak::TooShort(chars));
    }
    if chars > MAX_CHARS {
        return Err(Weak::TooLong(chars));
    }
    let login = login.trim().to_lowercase();
    let local = login.split('@').next().unwrap_or_default();
    if local.chars().count() >= 3 && password.to_lowercase().contains(local) {
        return Err(Weak::ContainsLogin);
    }
    let estimate = zxcvbn::zxcvbn(password, &[login.as_str(), local]);
    if estimate.score() < zxcvbn::Score::Two {
        let why = estimate
            .feedback()
            .and_then(|f| f.warning())
            .map_or_else(|| "it is a common pattern".to_owned(), |w| w.to_string());
        return Err(Weak::Guessable(why.trim_end_matches('.').to_lowercase()));
    }
    Ok(())
}

fn hasher() -> Argon2<'static> {
    let params = Params::new(MEMORY_KIB, ITERATIONS, LANES, None).unwrap_or_default();
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
}

/// The PHC string of `password` with a fresh salt.
pub fn hash(password: &str) -> String {
    let salt = SaltString::generate(&mut OsRng);
    match hasher().hash_password(password.as_bytes(), &salt) {
        Ok(phc) => phc.to_string(),
        // only reachable with invalid parameters, which are constants here
        Err(e) => unreachable!("argon2 refused its own parameters: {e}"),
    }
}

/// Whether `password` matches `stored` (a PHC string). An unreadable stored hash never matches.
pub fn verify(password: &str, stored: &str) -> bool {
    PasswordHash::new(stored)
        .is_ok_and(|phc| hasher().verify_password(password.as_bytes(), &phc).is_ok())
}

/// [`verify`] against `stored`, or, when there is no such member, against a hash no password
/// matches, so both answers cost the same time: "no such member" and "wrong password" cannot be
/// told apart by timing.
pub fn verify_or_waste(password: &str, stored: Option<&str>) -> bool {
    static UNMATCHABLE: OnceLock<String> = OnceLock::new();
    match stored {
        Some(stored) => verify(password, stored),
        None => {
            let wasted = UNMATCHABLE.get_or_init(|| hash(&crate::console_session::new_token()));
            verify(password, wasted);
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn length_is_counted_in_characters_at_the_limits() {
        let strong = "tangerine Kettle orbit 77";
        assert_eq!(check_new(strong, "ana@example.com"), Ok(()));
        let nine = "Ωmega-7x!"; // 9 characters, 11 bytes
        assert_eq!(check_new(nine, "ana"), Err(Weak::TooShort(9)));
        let long = "q7#Lm".repeat(52); // 260
        assert_eq!(check_new(&long, "ana"), Err(Weak::TooLong(260)));
        let at_max: String = "zq8#Wv!p".repeat(32); // 256
        assert_eq!(check_new(&at_max, "ana"), Ok(()));
        let ten = "ωmega-7x!ε"; // 10 characters: long enough, whatever its bytes
        assert!(!matches!(check_new(ten, "ana"), Err(Weak::TooShort(_))));
    }

    #[test]
    fn common_passwords_and_the_login_are_refused() {
        for common in [
            "password123",
            "qwertyuiop",
            "iloveyou12",
            "1234567890",
            "aaaaaaaaaa",
        ] {
            assert!(
                matches!(check_new(common, "ana"), Err(Weak::Guessable(_))),
                "{common}"
            );
        }
        assert_eq!(
            check_new("xX-moderator-Xx-91", "Moderator@example.com"),
            Err(Weak::ContainsLogin)
        );
    }

    #[test]
    fn hashes_are_argon2id_salted_and_verify() {
        let a = hash("tangerine Kettle orbit 77");
        let b = hash("tangerine Kettle orbit 77");
        assert!(a.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"), "{a}");
        assert_ne!(a, b, "a fresh salt each time");
        assert!(verify("tangerine Kettle orbit 77", &a));
        assert!(!verify("tangerine kettle orbit 77", &a));
        assert!(!verify("", &a));
        assert!(!verify("anything", "not a phc string"));
        assert!(verify_or_waste("tangerine Kettle orbit 77", Some(&a)));
        assert!(!verify_or_waste("tangerine Kettle orbit 77", None));
    }
}
