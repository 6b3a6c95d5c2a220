//! A game server's join code (cfx.re), as an operator registers it.

/// The longest join code accepted.
pub const MAX_JOIN_CODE_CHARS: usize = 64;

/// Why a join code is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a join code is 1 to {MAX_JOIN_CODE_CHARS} letters, digits, `-` or `_`")]
pub struct InvalidJoinCode;

/// The join code `input` names, trimmed: 1 to 64 ASCII letters, digits, `-` or `_`. Join codes
/// compare case-insensitively wherever they are looked up; the spelling given here is kept.
pub fn parse(input: &str) -> Result<&str, InvalidJoinCode> {
    let code = input.trim();
    let valid = !code.is_empty()
        && code.len() <= MAX_JOIN_CODE_CHARS
        && code
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if valid {
        Ok(code)
    } else {
        Err(InvalidJoinCode)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn join_codes() {
        assert_eq!(parse(" Abc-12_3 "), Ok("Abc-12_3"));
        assert_eq!(parse(&"a".repeat(63)).map(str::len), Ok(63));
        assert_eq!(parse(&"a".repeat(64)).map(str::len), Ok(64));
        assert_eq!(parse(&"a".repeat(65)), Err(InvalidJoinCode));
        for bad in [
            "",
            "   ",
            "a b",
            "a/b",
            "../x",
            "é",
            "a.b",
            "a\0",
            "ab\u{202e}",
        ] {
            assert_eq!(parse(bad), Err(InvalidJoinCode), "{bad:?}");
        }
    }
}
