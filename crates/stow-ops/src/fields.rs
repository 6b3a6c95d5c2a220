//! Field rules several operations share: list lengths, folder prefixes, times.

use cdn_core::path::normalize_folder;
use chrono::{DateTime, Utc};

use crate::OpError;

/// Most servers or path prefixes one grant (or key) names.
pub const MAX_ENTRIES: usize = 100;

/// Refuses a list field with more than [`MAX_ENTRIES`] entries, naming it.
pub fn check_entries(fields: &[(&'static str, usize)]) -> Result<(), OpError> {
    match fields.iter().find(|(_, n)| *n > MAX_ENTRIES) {
        Some((field, n)) => Err(OpError::invalid(
            field,
            format!(" has {n} entries; at most {MAX_ENTRIES}"),
        )),
        None => Ok(()),
    }
}

/// Folder prefixes as stored (normalized, none empty: an empty prefix would mean every path).
pub fn folder_prefixes(raw: &[String], field: &'static str) -> Result<Vec<String>, OpError> {
    raw.iter()
        .map(|p| match normalize_folder(p) {
            Ok(n) if !n.is_empty() => Ok(n),
            Ok(_) => Err(OpError::invalid(
                field,
                ": an empty prefix means every path; leave it out instead",
            )),
            Err(e) => Err(OpError::invalid(field, format!(" {p:?}: {e}"))),
        })
        .collect()
}

/// An RFC 3339 time after `now` (an expiry that would never let anything work is refused).
pub fn future_time(
    raw: &str,
    now: DateTime<Utc>,
    field: &'static str,
    what: &str,
) -> Result<DateTime<Utc>, OpError> {
    let at = DateTime::parse_from_rfc3339(raw)
        .map_err(|_| OpError::invalid(field, format!(" {raw:?} is not an RFC 3339 time")))?
        .with_timezone(&Utc);
    if at <= now {
        return Err(OpError::invalid(
            field,
            format!(" {raw:?} is in the past; {what} would never work"),
        ));
    }
    Ok(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_stop_at_the_limit_and_name_the_field() {
        assert!(check_entries(&[("allowPaths", MAX_ENTRIES)]).is_ok(), "N");
        let e = check_entries(&[("servers", 1), ("allowPaths", MAX_ENTRIES + 1)]).unwrap_err();
        assert_eq!(e.to_string(), "`allowPaths` has 101 entries; at most 100");
    }

    #[test]
    fn prefixes_are_normalized_and_never_empty_or_outside() {
        let ok = folder_prefixes(&["a/b/".into(), "c".into()], "allowPaths").unwrap();
        assert_eq!(ok, ["a/b", "c"]);
        for bad in ["", "/abs", "../x", "a/../../b", "a\0b"] {
            let e = folder_prefixes(&[bad.into()], "denyPaths").unwrap_err();
            assert!(e.to_string().starts_with("`denyPaths`"), "{bad:?}: {e}");
        }
    }

    #[test]
    fn times_are_rfc3339_and_after_now() {
        let now = Utc::now();
        let later = (now + chrono::Duration::minutes(1)).to_rfc3339();
        assert!(future_time(&later, now, "expiresAt", "the key").is_ok());
        let e = future_time(&now.to_rfc3339(), now, "expiresAt", "the key").unwrap_err();
        assert!(e.to_string().contains("in the past"), "{e}");
        let e = future_time("soon", now, "expiresAt", "the key").unwrap_err();
        assert_eq!(
            e.to_string(),
            "`expiresAt` \"soon\" is not an RFC 3339 time"
        );
    }
}
