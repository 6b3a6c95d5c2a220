//! Object keys and folder paths.
//!
//! A key is a relative path: segments joined by `/`, no leading or trailing slash, no empty
//! segments after normalization (`a//b` becomes `a/b`), at most 1024 bytes of UTF-8 in NFC.
//! Rejected: `.` and `..` segments, segments starting with `.`, backslashes, a leading `/`,
//! control characters (NUL included) and any percent-encoded sequence (`%2e`, `%2F`, ...): keys
//! are taken literally and never URL-decoded a second time.

use std::borrow::Cow;

use unicode_normalization::{is_nfc, UnicodeNormalization};

pub const MAX_KEY_BYTES: usize = 1024;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("path is empty")]
    Empty,
    #[error("absolute paths are not allowed (remove the leading `/`)")]
    Absolute,
    #[error("backslashes are not allowed in paths")]
    Backslash,
    #[error("control characters are not allowed in paths")]
    ControlCharacter,
    #[error(
        "percent-encoded sequences are not allowed in paths (`{0}`); send the literal characters"
    )]
    PercentEncoded(String),
    #[error("`.` and `..` segments are not allowed in paths")]
    DotSegment,
    #[error("segments starting with `.` are not allowed (`{0}`)")]
    HiddenSegment(String),
    #[error("path is {0} bytes; the limit is 1024 bytes of UTF-8")]
    TooLong(usize),
}

fn percent_sequence(s: &str) -> Option<String> {
    let b = s.as_bytes();
    (0..b.len().saturating_sub(2))
        .find(|&i| b[i] == b'%' && b[i + 1].is_ascii_hexdigit() && b[i + 2].is_ascii_hexdigit())
        .map(|i| s[i..i + 3].to_owned())
}

fn normalize(input: &str, allow_empty: bool) -> Result<String, PathError> {
    if input.chars().any(char::is_control) {
        return Err(PathError::ControlCharacter);
    }
    if input.contains('\\') {
        return Err(PathError::Backslash);
    }
    if let Some(seq) = percent_sequence(input) {
        return Err(PathError::PercentEncoded(seq));
    }
    if input.starts_with('/') {
        return Err(PathError::Absolute);
    }
    // most keys are already NFC (all ASCII ones are): only rebuild the ones that are not
    let nfc: Cow<str> = if is_nfc(input) {
        Cow::Borrowed(input)
    } else {
        Cow::Owned(input.nfc().collect())
    };
    let mut segments = Vec::new();
    for seg in nfc.split('/') {
        if seg.is_empty() {
            continue;
        }
        if seg == "." || seg == ".." {
            return Err(PathError::DotSegment);
        }
        if seg.starts_with('.') {
            return Err(PathError::HiddenSegment(seg.to_owned()));
        }
        segments.push(seg);
    }
    let joined = segments.join("/");
    if joined.len() > MAX_KEY_BYTES {
        return Err(PathError::TooLong(joined.len()));
    }
    if joined.is_empty() && !allow_empty {
        return Err(PathError::Empty);
    }
    Ok(joined)
}

auth_core::string_id!(
    /// An object's key within its organization: a normalized path ([`normalize_key`]).
    ObjectKey
);

/// Normalizes an object key; it must name something (not empty).
pub fn normalize_key(input: &str) -> Result<ObjectKey, PathError> {
    normalize(input, false).map(ObjectKey::from)
}

/// Normalizes a folder path; the empty string (or `""` after normalization) is the root.
/// A trailing slash is allowed and dropped (`images/` is the folder `images`).
pub fn normalize_folder(input: &str) -> Result<String, PathError> {
    normalize(input, true)
}

/// `folder/name`, normalized as a key.
pub fn join_key(folder: &str, name: &str) -> Result<ObjectKey, PathError> {
    if folder.is_empty() {
        normalize_key(name)
    } else {
        // both parts were checked separately, so a `..` in `name` cannot climb out of `folder`
        normalize_folder(folder)?;
        normalize_key(name)?;
        normalize_key(&format!("{folder}/{name}"))
    }
}

/// The last segment of a client-supplied file name (browsers may send `C:\dir\a.png`).
pub fn last_segment(file_name: &str) -> &str {
    file_name.rsplit(['/', '\\']).next().unwrap_or(file_name)
}

/// Whether a stored key has a dot-prefixed segment (such keys are never listed or served).
pub fn is_hidden(key: &str) -> bool {
    key.split('/').any(|s| s.starts_with('.'))
}

/// The extension of a file name, lowercase, without the dot (`"PNG"` → `"png"`).
pub fn extension(name: &str) -> Option<String> {
    let name = last_segment(name);
    let (stem, ext) = name.rsplit_once('.')?;
    (!stem.is_empty()
        && !ext.is_empty()
        && ext.len() <= 16
        && ext.chars().all(|c| c.is_ascii_alphanumeric()))
    .then(|| ext.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    enum Want {
        Ok(&'static str),
        Err(PathError),
        AnyErr,
    }
    use Want::*;

    fn check(table: &[(&str, Want)], f: fn(&str) -> Result<String, PathError>) -> usize {
        for (input, want) in table {
            let got = f(input);
            match want {
                Ok(expected) => {
                    assert_eq!(got.as_deref(), Result::Ok(*expected), "input {input:?}")
                }
                Err(e) => assert_eq!(got.as_ref(), Result::Err(e), "input {input:?}"),
                AnyErr => assert!(got.is_err(), "input {input:?} gave {got:?}"),
            }
        }
        table.len()
    }

    #[test]
    fn key_table() {
        let long_ok = "a".repeat(MAX_KEY_BYTES);
        let long_bad = "a".repeat(MAX_KEY_BYTES + 1);
        let long_minus = "a".repeat(MAX_KEY_BYTES - 1);
        let seg_limit = format!("{}/{}", "a".repeat(511), "b".repeat(512));
        let seg_over = format!("{}/{}", "a".repeat(512), "b".repeat(512));
        let cjk_limit = "猫".repeat(341); // 1023 bytes
        let cjk_over = "猫".repeat(342); // 1026 bytes
        let leaked: Vec<&'static str> = [
            long_ok, long_bad, long_minus, seg_limit, seg_over, cjk_limit, cjk_over,
        ]
        .into_iter()
        .map(|s| &*Box::leak(s.into_boxed_str()))
        .collect();
        let table: Vec<(&str, Want)> = vec![
            // plain
            ("a.png", Ok("a.png")),
            ("images/a.png", Ok("images/a.png")),
            ("images/2024/01/a.png", Ok("images/2024/01/a.png")),
            ("a", Ok("a")),
            ("a b/c d.png", Ok("a b/c d.png")),
            ("file.tar.gz", Ok("file.tar.gz")),
            ("UPPER/Case.PNG", Ok("UPPER/Case.PNG")),
            ("dash-under_score/x", Ok("dash-under_score/x")),
            ("100%.png", Ok("100%.png")),
            ("50% off/x", Ok("50% off/x")),
            ("%", Ok("%")),
            ("%g1", Ok("%g1")),
            ("a%2", Ok("a%2")),
            ("name.", Ok("name.")),
            ("a..b", Ok("a..b")),
            ("a/b..", Ok("a/b..")),
            ("...a", Err(PathError::HiddenSegment("...a".into()))),
            ("~/x", Ok("~/x")),
            ("a:b", Ok("a:b")),
            ("a?b#c", Ok("a?b#c")),
            ("with'quote\"", Ok("with'quote\"")),
            ("<script>", Ok("<script>")),
            // empty segments collapse
            ("a//b", Ok("a/b")),
            ("a///b", Ok("a/b")),
            ("a/b/", Ok("a/b")),
            ("a/b//", Ok("a/b")),
            ("a//b//c", Ok("a/b/c")),
            // empty
            ("", Err(PathError::Empty)),
            ("//", Err(PathError::Absolute)),
            // absolute
            ("/a", Err(PathError::Absolute)),
            ("/", Err(PathError::Absolute)),
            ("/etc/passwd", Err(PathError::Absolute)),
            ("//server/share", Err(PathError::Absolute)),
            // traversal
            ("..", Err(PathError::DotSegment)),
            (".", Err(PathError::DotSegment)),
            ("../a", Err(PathError::DotSegment)),
            ("a/..", Err(PathError::DotSegment)),
            ("a/../b", Err(PathError::DotSegment)),
            ("a/./b", Err(PathError::DotSegment)),
            ("./a", Err(PathError::DotSegment)),
            ("a/../../etc/passwd", Err(PathError::DotSegment)),
            ("images/../../secret", Err(PathError::DotSegment)),
            ("a/b/c/../../..", Err(PathError::DotSegment)),
            ("a//..//b", Err(PathError::DotSegment)),
            // hidden
            (".env", Err(PathError::HiddenSegment(".env".into()))),
            (
                "a/.git/config",
                Err(PathError::HiddenSegment(".git".into())),
            ),
            (".hidden/a", Err(PathError::HiddenSegment(".hidden".into()))),
            ("a/.b", Err(PathError::HiddenSegment(".b".into()))),
            ("a/.../b", Err(PathError::HiddenSegment("...".into()))),
            (
                ".well-known/x",
                Err(PathError::HiddenSegment(".well-known".into())),
            ),
            // backslashes
            ("a\\b", Err(PathError::Backslash)),
            ("..\\a", Err(PathError::Backslash)),
            ("\\a", Err(PathError::Backslash)),
            ("a\\..\\..\\b", Err(PathError::Backslash)),
            ("C:\\Windows\\x", Err(PathError::Backslash)),
            // percent-encoded
            ("%2e%2e/a", Err(PathError::PercentEncoded("%2e".into()))),
            ("%2E%2E/a", Err(PathError::PercentEncoded("%2E".into()))),
            ("a%2fb", Err(PathError::PercentEncoded("%2f".into()))),
            ("a%2Fb", Err(PathError::PercentEncoded("%2F".into()))),
            ("a%5cb", Err(PathError::PercentEncoded("%5c".into()))),
            ("%00", Err(PathError::PercentEncoded("%00".into()))),
            ("a%20b", Err(PathError::PercentEncoded("%20".into()))),
            ("%252e%252e", Err(PathError::PercentEncoded("%25".into()))),
            ("..%2f", Err(PathError::PercentEncoded("%2f".into()))),
            (
                "%c0%ae%c0%ae/x",
                Err(PathError::PercentEncoded("%c0".into())),
            ),
            ("a/%2e", Err(PathError::PercentEncoded("%2e".into()))),
            ("x%41", Err(PathError::PercentEncoded("%41".into()))),
            // control characters
            ("a\0b", Err(PathError::ControlCharacter)),
            ("\0", Err(PathError::ControlCharacter)),
            ("a\nb", Err(PathError::ControlCharacter)),
            ("a\rb", Err(PathError::ControlCharacter)),
            ("a\tb", Err(PathError::ControlCharacter)),
            ("a\x1bb", Err(PathError::ControlCharacter)),
            ("a\x7fb", Err(PathError::ControlCharacter)),
            ("a\u{85}b", Err(PathError::ControlCharacter)),
            ("a\u{9f}b", Err(PathError::ControlCharacter)),
            ("../\0", Err(PathError::ControlCharacter)),
            // unicode
            ("猫.png", Ok("猫.png")),
            ("照片/猫.png", Ok("照片/猫.png")),
            ("😀/🎮.png", Ok("😀/🎮.png")),
            ("스크린샷.jpg", Ok("스크린샷.jpg")),
            ("скриншот/файл.png", Ok("скриншот/файл.png")),
            ("صورة.png", Ok("صورة.png")),
            ("e\u{301}.png", Ok("\u{e9}.png")),   // NFD → NFC
            ("\u{e9}.png", Ok("\u{e9}.png")),     // already NFC
            ("q\u{301}.png", Ok("q\u{301}.png")), // NFC with a combining mark: kept as sent
            ("\u{1100}\u{1161}.png", Ok("\u{ac00}.png")), // conjoining jamo compose
            ("a/e\u{301}/b", Ok("a/\u{e9}/b")),   // a non-NFC segment among ASCII ones
            ("A\u{30a}/x", Ok("\u{c5}/x")),       // Å composed
            ("\u{212b}", Ok("\u{c5}")),           // Angstrom sign → Å
            ("\u{ff0e}\u{ff0e}/x", Ok("\u{ff0e}\u{ff0e}/x")), // fullwidth dots are not dots
            ("\u{2024}\u{2024}", Ok("\u{2024}\u{2024}")), // one-dot leaders are not dots
            ("a\u{200b}b", Ok("a\u{200b}b")),     // zero-width space is a format char, kept
            ("\u{202e}gnp.exe", Ok("\u{202e}gnp.exe")), // bidi override is not a control char
            ("a/b/c/d/e/f/g/h/i/j", Ok("a/b/c/d/e/f/g/h/i/j")),
            ("a /b", Ok("a /b")),
            (" ", Ok(" ")),
            ("..a/b", Err(PathError::HiddenSegment("..a".into()))),
            ("a/..b", Err(PathError::HiddenSegment("..b".into()))),
            ("a/b/.", Err(PathError::DotSegment)),
            ("a%2", Ok("a%2")),
            ("a%%2e", Err(PathError::PercentEncoded("%2e".into()))),
            // length limits
            (leaked[0], Ok(leaked[0])),
            (leaked[1], Err(PathError::TooLong(MAX_KEY_BYTES + 1))),
            (leaked[2], Ok(leaked[2])),
            (leaked[3], Ok(leaked[3])),
            (leaked[4], Err(PathError::TooLong(MAX_KEY_BYTES + 1))),
            (leaked[5], Ok(leaked[5])),
            (leaked[6], Err(PathError::TooLong(1026))),
        ];
        let n = check(&table, |k| normalize_key(k).map(String::from));
        assert!(n >= 100, "table has {n} cases");
    }

    #[test]
    fn folder_table() {
        let table = vec![
            ("", Ok("")),
            ("images", Ok("images")),
            ("images/", Ok("images")),
            ("images//2024/", Ok("images/2024")),
            ("/images", Err(PathError::Absolute)),
            ("images/..", Err(PathError::DotSegment)),
            (
                "images/.cache",
                Err(PathError::HiddenSegment(".cache".into())),
            ),
            ("img%2F", AnyErr),
        ];
        check(&table, normalize_folder);
    }

    #[test]
    fn joining_and_helpers() {
        assert_eq!(
            join_key("images", "a.png").as_deref(),
            Result::Ok("images/a.png")
        );
        assert_eq!(join_key("", "a.png").as_deref(), Result::Ok("a.png"));
        assert_eq!(
            join_key("images/", "sub/a.png").as_deref(),
            Result::Ok("images/sub/a.png")
        );
        assert_eq!(
            join_key("images", "../a.png"),
            Result::Err(PathError::DotSegment)
        );
        assert_eq!(
            join_key("images", "/a.png"),
            Result::Err(PathError::Absolute)
        );
        assert_eq!(join_key("images", ""), Result::Err(PathError::Empty));
        assert_eq!(last_segment("C:\\Users\\me\\shot.png"), "shot.png");
        assert_eq!(last_segment("a/b/c.png"), "c.png");
        assert_eq!(last_segment("c.png"), "c.png");
        assert!(is_hidden(".a"));
        assert!(is_hidden("a/.b/c"));
        assert!(!is_hidden("a/b.c"));
        assert_eq!(extension("a.PNG").as_deref(), Some("png"));
        assert_eq!(extension("a.tar.gz").as_deref(), Some("gz"));
        assert_eq!(extension("noext"), None);
        assert_eq!(extension(".bashrc"), None);
        assert_eq!(extension("a."), None);
    }
}
