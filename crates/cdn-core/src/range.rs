//! The single byte range of a `Range` request header (RFC 9110 §14.1.2), resolved against the
//! object's size.
//!
//! Every number comes from the client, so nothing here can overflow: a last-byte position past
//! the end (up to `u64::MAX`) is clamped to the last byte, as RFC 9110 §14.1.2 says, instead of
//! computing `last + 1`. A header we do not serve a range for (another unit, several ranges) means
//! the whole body; a range that cannot be satisfied is a 416.

use std::ops::Range;

/// A `Range` header that cannot be satisfied (416).
#[derive(Debug, PartialEq, Eq)]
pub struct Unsatisfiable;

/// Parses a single `bytes=` range against `size`. `Ok(None)`: serve the whole body (no range
/// unit we know, or several ranges); `Err(Unsatisfiable)`: answer 416. An `Ok(Some(r))` range is
/// never empty and lies within `0..size`.
pub fn parse_range(header: &str, size: u64) -> Result<Option<Range<u64>>, Unsatisfiable> {
    let Some(spec) = header.trim().strip_prefix("bytes=") else {
        return Ok(None);
    };
    if spec.contains(',') {
        return Ok(None);
    }
    let (first, last) = spec.split_once('-').ok_or(Unsatisfiable)?;
    let (first, last) = (first.trim(), last.trim());
    let range = if first.is_empty() {
        // suffix range: the last `n` bytes
        let n = position(last)?;
        if n == 0 {
            return Err(Unsatisfiable);
        }
        size.saturating_sub(n)..size
    } else {
        let start = position(first)?;
        let end = if last.is_empty() {
            size
        } else {
            let last = position(last)?;
            if last < start {
                return Err(Unsatisfiable);
            }
            // `last` is inclusive; past the end it means "to the end" (no `last + 1`: it may be
            // u64::MAX)
            last.min(size.saturating_sub(1)).saturating_add(1)
        };
        start..end
    };
    if range.start >= size {
        return Err(Unsatisfiable);
    }
    Ok(Some(range))
}

/// A byte position: ASCII digits only (`u64::from_str` would also take a leading `+`).
fn position(text: &str) -> Result<u64, Unsatisfiable> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Unsatisfiable);
    }
    text.parse().map_err(|_| Unsatisfiable)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn ranges() {
        assert_eq!(parse_range("bytes=0-9", 100), Ok(Some(0..10)));
        assert_eq!(parse_range("bytes=90-", 100), Ok(Some(90..100)));
        assert_eq!(parse_range("bytes=-10", 100), Ok(Some(90..100)));
        assert_eq!(parse_range("bytes=-200", 100), Ok(Some(0..100)));
        assert_eq!(parse_range("bytes=0-999", 100), Ok(Some(0..100)));
        assert_eq!(parse_range("bytes=99-99", 100), Ok(Some(99..100)));
        assert_eq!(parse_range("bytes=100-", 100), Err(Unsatisfiable));
        assert_eq!(parse_range("bytes=100-200", 100), Err(Unsatisfiable));
        assert_eq!(parse_range("bytes=5-4", 100), Err(Unsatisfiable));
        assert_eq!(parse_range("bytes=-0", 100), Err(Unsatisfiable));
        assert_eq!(parse_range("bytes=a-b", 100), Err(Unsatisfiable));
        assert_eq!(parse_range("bytes=+1-5", 100), Err(Unsatisfiable));
        assert_eq!(parse_range("bytes=0-+5", 100), Err(Unsatisfiable));
        assert_eq!(parse_range("bytes=0-1,5-6", 100), Ok(None));
        assert_eq!(parse_range("items=0-1", 100), Ok(None));
        assert_eq!(parse_range("bytes=0-", 0), Err(Unsatisfiable));
        assert_eq!(parse_range("bytes=-5", 0), Err(Unsatisfiable));
    }

    #[test]
    fn positions_near_u64_max_clamp_instead_of_wrapping() {
        let max = u64::MAX;
        assert_eq!(
            parse_range(&format!("bytes=0-{max}"), 100),
            Ok(Some(0..100))
        );
        assert_eq!(
            parse_range(&format!("bytes=0-{}", max - 1), 100),
            Ok(Some(0..100))
        );
        assert_eq!(
            parse_range(&format!("bytes=99-{max}"), 100),
            Ok(Some(99..100))
        );
        assert_eq!(parse_range(&format!("bytes=-{max}"), 100), Ok(Some(0..100)));
        assert_eq!(
            parse_range(&format!("bytes={max}-"), 100),
            Err(Unsatisfiable)
        );
        assert_eq!(
            parse_range(&format!("bytes={max}-{max}"), 100),
            Err(Unsatisfiable)
        );
        // one past u64::MAX does not parse: unsatisfiable, never a panic or a wrap
        assert_eq!(
            parse_range("bytes=0-18446744073709551616", 100),
            Err(Unsatisfiable)
        );
        // an object of the largest size
        assert_eq!(
            parse_range(&format!("bytes=0-{max}"), max),
            Ok(Some(0..max))
        );
        assert_eq!(
            parse_range(&format!("bytes={}-", max - 1), max),
            Ok(Some(max - 1..max))
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// Any header, any size: no panic, and a served range is non-empty and inside the object.
        #[test]
        fn any_header_gives_a_range_inside_the_object(header in ".{0,40}", size in any::<u64>()) {
            if let Ok(Some(r)) = parse_range(&header, size) {
                prop_assert!(r.start < r.end && r.end <= size);
            }
        }

        /// `bytes=a-b` against RFC 9110's arithmetic, for any numbers.
        #[test]
        fn first_last_ranges_follow_rfc_9110(
            a in prop_oneof![0u64..2_000_000, any::<u64>()],
            b in prop_oneof![0u64..2_000_000, any::<u64>(), (u64::MAX - 2)..=u64::MAX],
            size in 0u64..1_000_000,
        ) {
            let got = parse_range(&format!("bytes={a}-{b}"), size);
            if b < a || a >= size {
                prop_assert_eq!(got, Err(Unsatisfiable));
            } else {
                prop_assert_eq!(got, Ok(Some(a..(u128::from(b) + 1).min(u128::from(size)) as u64)));
            }
        }

        /// `bytes=-n`: the last n bytes, the whole object when n is larger.
        #[test]
        fn suffix_ranges_follow_rfc_9110(n in any::<u64>(), size in any::<u64>()) {
            let got = parse_range(&format!("bytes=-{n}"), size);
            if n == 0 || size == 0 {
                prop_assert_eq!(got, Err(Unsatisfiable));
            } else {
                prop_assert_eq!(got, Ok(Some(size - n.min(size)..size)));
            }
        }
    }
}
