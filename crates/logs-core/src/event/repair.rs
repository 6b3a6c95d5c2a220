//! Text PostgreSQL cannot hold, repaired before parsing (decisions.md, "Text that PostgreSQL
//! cannot hold", pinned): the escapes `\u0000` (NUL, which `text` and `jsonb` refuse) and a UTF-16
//! surrogate escape without its partner (`"…\ud83d"`, an emoji cut in half by a client's
//! truncation; JSON parsers refuse it) become `\ufffd`, U+FFFD REPLACEMENT CHARACTER.
//!
//! Both escapes and their replacement are six bytes, so the body keeps its length and every
//! other byte. A backslash only begins an escape inside a string (anywhere else the body is not
//! JSON and the parse that follows refuses it), so the escapes are found without tracking strings:
//! each backslash and the character after it are one escape, `\\u0000` (an escaped backslash
//! followed by `u0000`) included. Raw bytes are untouched: a raw NUL is a control character JSON
//! forbids unescaped, and invalid UTF-8 stays a refusal.

use std::borrow::Cow;

const REPLACEMENT: &[u8; 4] = b"fffd";

/// `body` with every NUL escape and unpaired surrogate escape replaced by `\ufffd`; borrowed
/// when there is none (the usual case: one `memchr` pass over the body).
pub fn repair_unstorable_escapes(body: &[u8]) -> Cow<'_, [u8]> {
    let mut out: Option<Vec<u8>> = None;
    let mut i = 0;
    while let Some(at) = memchr::memchr(b'\\', &body[i..]) {
        let esc = i + at;
        match unit_at(body, esc) {
            Some(unit) if unit == 0 || (0xDC00..=0xDFFF).contains(&unit) => {
                replace(&mut out, body, esc);
                i = esc + 6;
            }
            Some(0xD800..=0xDBFF) => match unit_at(body, esc + 6) {
                // a well-formed pair: keep both
                Some(0xDC00..=0xDFFF) => i = esc + 12,
                _ => {
                    replace(&mut out, body, esc);
                    i = esc + 6;
                }
            },
            Some(_) => i = esc + 6,
            // `\"`, `\\`, `\n`, …: two bytes, whatever the second is
            None => i = esc + 2,
        }
        if i >= body.len() {
            break;
        }
    }
    match out {
        Some(v) => Cow::Owned(v),
        None => Cow::Borrowed(body),
    }
}

/// The code unit of a `\uXXXX` escape starting at `at`, if one does.
fn unit_at(body: &[u8], at: usize) -> Option<u16> {
    let esc = body.get(at..at + 6)?;
    if esc[0] != b'\\' || esc[1] != b'u' {
        return None;
    }
    let hex = std::str::from_utf8(&esc[2..]).ok()?;
    if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u16::from_str_radix(hex, 16).ok()
}

fn replace(out: &mut Option<Vec<u8>>, body: &[u8], esc: usize) {
    let v = out.get_or_insert_with(|| body.to_vec());
    v[esc + 2..esc + 6].copy_from_slice(REPLACEMENT);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fix(s: &str) -> String {
        String::from_utf8(repair_unstorable_escapes(s.as_bytes()).into_owned()).unwrap()
    }

    #[test]
    fn nul_and_lone_surrogates_become_the_replacement_character() {
        assert_eq!(fix(r#""a\u0000b""#), r#""a\ufffdb""#);
        // a high surrogate cut off at the end, before another escape, before text
        assert_eq!(fix(r#""cut \ud83d""#), r#""cut \ufffd""#);
        assert_eq!(fix(r#""\ud83d\n""#), r#""\ufffd\n""#);
        assert_eq!(fix(r#""\uD83Dx""#), r#""\ufffdx""#);
        // two high surrogates: neither has its partner
        assert_eq!(fix(r#""\ud83d\ud83d""#), r#""\ufffd\ufffd""#);
        // a low surrogate alone, and one after a high surrogate's partner
        assert_eq!(fix(r#""\ude00""#), r#""\ufffd""#);
        assert_eq!(fix(r#""\ud83d\ude00\ude00""#), r#""\ud83d\ude00\ufffd""#);
        // a high surrogate followed by a non-surrogate escape
        assert_eq!(fix(r#""\ud83d\u0041""#), r#""\ufffd\u0041""#);
    }

    #[test]
    fn everything_else_is_kept_and_borrowed() {
        for s in [
            r#"{"a":"\ud83d\ude00 \u00e9 \u0001 \\ \" \/ \n"}"#,
            // an escaped backslash followed by the letters u0000 is text, not an escape
            r#""\\u0000 \\ud83d""#,
            // escapes cut short at the end of the body: left to the parser to refuse
            r#""\u00"#,
            r#""\"#,
            "",
            "😀 raw multi-byte text",
        ] {
            assert!(
                matches!(repair_unstorable_escapes(s.as_bytes()), Cow::Borrowed(_)),
                "{s}"
            );
        }
    }

    #[test]
    fn the_repaired_body_parses_to_replacement_characters() {
        let v: serde_json::Value =
            serde_json::from_str(&fix(r#"{"k\u0000":["\ud83d","ok \ud83d\ude00"]}"#)).unwrap();
        assert_eq!(v, serde_json::json!({"k\u{fffd}": ["\u{fffd}", "ok 😀"]}));
    }
}
