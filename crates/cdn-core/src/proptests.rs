//! Property tests of the parsers that take client input: object keys and folders, content
//! sniffing and delivery policy, and listing continuation tokens. They run a bounded number of
//! cases in `just test` (proptest's default, 256 per property; set `PROPTEST_CASES` for a longer
//! run). Range parsing has its own in `range`.

use proptest::prelude::*;

use crate::content_type::{effective, renders_inline, sniff};
use crate::listing::{make_token, read_token};
use crate::path::{join_key, normalize_folder, normalize_key, MAX_KEY_BYTES};

/// Strings built from the pieces that make paths interesting.
fn path_like() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("/".to_owned()),
        Just("//".to_owned()),
        Just(".".to_owned()),
        Just("..".to_owned()),
        Just("\\".to_owned()),
        Just("%2e".to_owned()),
        Just("%2F".to_owned()),
        Just("\u{0}".to_owned()),
        Just("e\u{301}".to_owned()), // NFD é
        Just("\u{958}".to_owned()),  // grows under NFC
        Just(".hidden".to_owned()),
        "[a-z0-9_-]{1,8}",
        "\\PC{1,4}",
        any::<String>(),
    ];
    prop::collection::vec(piece, 0..12).prop_map(|v| v.concat())
}

fn check_key(key: &str) -> Result<(), TestCaseError> {
    prop_assert!(!key.is_empty());
    prop_assert!(key.len() <= MAX_KEY_BYTES);
    prop_assert!(!key.starts_with('/') && !key.ends_with('/'), "{key:?}");
    prop_assert!(!key.contains('\\'), "{key:?}");
    prop_assert!(!key.chars().any(char::is_control), "{key:?}");
    for seg in key.split('/') {
        prop_assert!(!seg.is_empty(), "empty segment in {key:?}");
        prop_assert!(!seg.starts_with('.'), "dot segment in {key:?}");
    }
    Ok(())
}

proptest! {
    /// A normalized key is a clean relative path, and normalizing it again changes nothing.
    #[test]
    fn normalized_keys_are_clean_and_stable(input in path_like()) {
        if let Ok(key) = normalize_key(&input) {
            check_key(&key)?;
            prop_assert_eq!(normalize_key(&key), Ok(key.clone()));
            prop_assert_eq!(normalize_folder(&key), Ok(key.into_string()));
        }
        if let Ok(folder) = normalize_folder(&input) {
            if !folder.is_empty() {
                check_key(&folder)?;
            }
            prop_assert_eq!(normalize_folder(&folder), Ok(folder));
        }
    }

    /// A name joined under a folder never climbs out of it.
    #[test]
    fn joined_keys_stay_under_their_folder(folder in path_like(), name in path_like()) {
        if let Ok(key) = join_key(&folder, &name) {
            check_key(&key)?;
            let folder = normalize_folder(&folder).unwrap_or_default();
            if !folder.is_empty() {
                prop_assert!(key.starts_with(&format!("{folder}/")), "{key:?} under {folder:?}");
            }
        }
    }

    /// Sniffing any bytes answers a well-formed type or nothing; the effective type is always a
    /// `type/subtype`; markup never renders inline whatever it is declared as.
    #[test]
    fn content_detection_is_total(
        head in prop::collection::vec(any::<u8>(), 0..600),
        declared in prop::option::of("\\PC{0,30}"),
        name in prop::option::of("\\PC{0,20}"),
    ) {
        if let Some(t) = sniff(&head) {
            prop_assert!(t.contains('/'), "{t}");
        }
        let t = effective(&head, declared.as_deref(), name.as_deref());
        prop_assert!(t.split_once('/').is_some_and(|(a, b)| !a.is_empty() && !b.is_empty()), "{t}");
        let lower = t.to_ascii_lowercase();
        if ["html", "svg", "xml", "script"].iter().any(|w| lower.contains(w)) {
            prop_assert!(!renders_inline(&t), "{t}");
        }
    }

    #[test]
    fn markup_in_any_ascii_case_is_never_inline(
        ws in "[ \\t\\r\\n]{0,20}",
        tag in prop_oneof![
            "<[hH][tT][mM][lL]",
            "<[sS][vV][gG]",
            "<[sS][cC][rR][iI][pP][tT]",
            "<![dD][oO][cC][tT][yY][pP][eE] [hH][tT][mM][lL]",
        ],
    ) {
        let head = format!("{ws}{tag}>");
        prop_assert!(!renders_inline(&effective(head.as_bytes(), Some("image/png"), Some("a.png"))));
    }

    /// A continuation token reads back as made; any other string, or the token cut short or
    /// with a changed character, is refused (never a panic).
    #[test]
    fn continuation_tokens_are_unforgeable(
        folder in "[a-z/]{0,12}",
        last in "\\PC{0,40}",
        junk in "\\PC{0,80}",
        cut in any::<prop::sample::Index>(),
        flip in any::<prop::sample::Index>(),
    ) {
        let secret = &auth_core::signing::SigningKeys::single(b"a-signing-secret-for-tests");
        let token = make_token(secret, "org_1", &folder, &last);
        prop_assert_eq!(read_token(secret, "org_1", &folder, &token), Ok(last));
        prop_assert!(read_token(secret, "org_2", &folder, &token).is_err());
        prop_assert!(read_token(secret, "org_1", &folder, &junk).is_err());
        let short = &token[..cut.index(token.len())];
        prop_assert!(read_token(secret, "org_1", &folder, short).is_err());
        let at = flip.index(token.len());
        let mut changed = token.clone().into_bytes();
        changed[at] = if changed[at] == b'A' { b'B' } else { b'A' };
        if changed != token.as_bytes() {
            let changed = String::from_utf8(changed).unwrap_or_default();
            prop_assert!(read_token(secret, "org_1", &folder, &changed).is_err());
        }
    }
}
