//! `POST /v1/logs/counts`: a search's events counted per level in time buckets.
//!
//! Buckets are aligned to multiples of their length since 1970-01-01T00:00:00Z, so an hour
//! starts at :00 and a day at UTC midnight whatever the request's offsets; the first and last
//! may be partial (they count only events inside the window). `auto` picks the shortest of
//! [`STEPS`] that gives at most [`AUTO_BUCKETS`] buckets. Any window: the plan's retention bounds
//! it, and the bucket length is chosen for the window that is searched ([`ValidCounts::bucket`]).

use chrono::{DateTime, Duration, Utc};

use crate::search::{validate_search, RangeLimit, Search};
use crate::store::{bucket_start, BucketCount};
#[cfg(test)]
use crate::Level;

/// The most buckets an answer may have (an explicit interval that would give more is refused).
pub const MAX_BUCKETS: i64 = 1_000;
/// The most buckets `auto` gives.
pub const AUTO_BUCKETS: i64 = 120;
/// The intervals `auto` chooses from, in seconds.
pub const STEPS: [i64; 20] = [
    1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1_800, 3_600, 7_200, 10_800, 21_600, 43_200,
    86_400, 172_800, 604_800,
];
/// The longest bucket.
pub const MAX_INTERVAL_SECONDS: i64 = 7 * 86_400;

crate::search_request! {
    /// `POST /v1/logs/counts`.
    pub struct CountsRequest {
        /// Bucket length: `auto` (the default) or a whole number and a unit, `s`, `m`, `h` or
        /// `d` (`30s`, `15m`, `1h`, `1d`), from 1 second to 7 days.
        pub interval: Option<String>,
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ValidCounts {
    pub search: Search,
    pub interval: Interval,
}

/// The bucket length asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interval {
    Auto,
    Seconds(i64),
}

impl ValidCounts {
    /// The bucket length for the window `[from, to)` that is searched (the request's, with
    /// `from` raised to the plan's retention): `auto` picks the shortest of [`STEPS`] giving at
    /// most [`AUTO_BUCKETS`] buckets; an explicit interval giving more than [`MAX_BUCKETS`] is
    /// refused, naming both.
    pub fn bucket(&self, from: DateTime<Utc>, to: DateTime<Utc>) -> Result<Duration, String> {
        let seconds = match self.interval {
            Interval::Auto => STEPS
                .into_iter()
                .find(|s| bucket_count(from, to, *s) <= AUTO_BUCKETS)
                .unwrap_or(MAX_INTERVAL_SECONDS),
            Interval::Seconds(seconds) => {
                let n = bucket_count(from, to, seconds);
                if n > MAX_BUCKETS {
                    return Err(format!(
                        "`interval` {} gives {n} buckets over this range; at most {MAX_BUCKETS} are allowed (use a longer interval or `auto`)",
                        interval_name(seconds)
                    ));
                }
                seconds
            }
        };
        Ok(Duration::seconds(seconds))
    }
}

/// `"15m"` → 900 seconds.
fn parse_interval(s: &str) -> Option<i64> {
    let unit = match s.chars().last()? {
        's' => 1,
        'm' => 60,
        'h' => 3_600,
        'd' => 86_400,
        _ => return None,
    };
    let digits = &s[..s.len() - 1];
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) || digits.len() > 7 {
        return None;
    }
    digits.parse::<i64>().ok()?.checked_mul(unit)
}

/// The shortest way to write `seconds` with one unit (`900` → `15m`).
pub fn interval_name(seconds: i64) -> String {
    for (unit, size) in [("d", 86_400), ("h", 3_600), ("m", 60)] {
        if seconds % size == 0 {
            return format!("{}{unit}", seconds / size);
        }
    }
    format!("{seconds}s")
}

/// The start of every bucket that holds part of `[from, to)`.
pub fn bucket_starts(
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    bucket: Duration,
) -> Vec<DateTime<Utc>> {
    let mut starts = Vec::new();
    let mut t = bucket_start(from, bucket);
    while t < to {
        starts.push(t);
        t += bucket;
    }
    starts
}

/// Events per level, in [`Level::ALL`] order.
pub type LevelTotals = [i64; 5];

/// One bucket of a histogram: its start and its events per level.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Filled {
    pub start: DateTime<Utc>,
    pub levels: LevelTotals,
}

impl Filled {
    pub fn total(&self) -> i64 {
        self.levels.iter().sum()
    }
}

/// Every bucket that holds part of `[from, to)`, oldest first, with the counts the store found
/// (`rows`, in any order) and zeros where it found none; and the sum of them all. A row outside
/// those buckets (none should be) is left out of both.
pub fn fill(
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    bucket: Duration,
    rows: &[BucketCount],
) -> (Vec<Filled>, i64) {
    let mut filled: Vec<Filled> = bucket_starts(from, to, bucket)
        .into_iter()
        .map(|start| Filled {
            start,
            levels: [0; 5],
        })
        .collect();
    let mut total = 0;
    for row in rows {
        if let Ok(i) = filled.binary_search_by(|b| b.start.cmp(&row.start)) {
            filled[i].levels[row.level as usize] += row.count;
            total += row.count;
        }
    }
    (filled, total)
}

fn bucket_count(from: DateTime<Utc>, to: DateTime<Utc>, seconds: i64) -> i64 {
    let size = seconds * 1_000_000;
    let first = bucket_start(from, Duration::seconds(seconds)).timestamp_micros();
    (to.timestamp_micros() - first + size - 1) / size
}

pub fn validate(req: &CountsRequest) -> Result<ValidCounts, String> {
    let search = validate_search(&req.search(), RangeLimit::None)?;
    let interval = match req.interval.as_deref() {
        None | Some("auto") => Interval::Auto,
        Some(text) => Interval::Seconds(
            parse_interval(text)
                .filter(|s| (1..=MAX_INTERVAL_SECONDS).contains(s))
                .ok_or_else(|| {
                    format!("`interval` must be `auto` or a whole number of s, m, h or d from 1s to 7d, e.g. 15m (got {text:?})")
                })?,
        ),
    };
    // the bucket count is checked on the window searched (`bucket`), after retention
    Ok(ValidCounts { search, interval })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(from: &str, to: &str, interval: Option<&str>) -> CountsRequest {
        CountsRequest {
            from: Some(from.into()),
            to: Some(to.into()),
            interval: interval.map(Into::into),
            ..Default::default()
        }
    }

    fn at(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    #[test]
    fn a_histogram_has_every_bucket_with_zeros_where_nothing_was_counted() {
        let row = |start: &str, level, count| BucketCount {
            start: at(start),
            level,
            count,
        };
        // 10:07 to 10:52 in 15-minute buckets: 10:00 (partial), 10:15, 10:30, 10:45 (partial)
        let (filled, total) = fill(
            at("2026-11-20T10:07:00Z"),
            at("2026-11-20T10:52:00Z"),
            Duration::minutes(15),
            &[
                row("2026-11-20T10:30:00Z", Level::Warn, 2),
                row("2026-11-20T10:00:00Z", Level::Info, 3),
                row("2026-11-20T10:30:00Z", Level::Fatal, 1),
                // a row outside the buckets counts nowhere
                row("2026-11-20T11:00:00Z", Level::Info, 9),
            ],
        );
        let starts: Vec<String> = filled
            .iter()
            .map(|b| b.start.format("%H:%M").to_string())
            .collect();
        assert_eq!(starts, ["10:00", "10:15", "10:30", "10:45"]);
        assert_eq!(filled[0].levels, [0, 3, 0, 0, 0]);
        assert_eq!(filled[1].levels, [0; 5]);
        assert_eq!(filled[2].levels, [0, 0, 2, 0, 1]);
        assert_eq!(filled[2].total(), 3);
        assert_eq!(total, 6);
        // an empty window has no bucket at all
        let (none, zero) = fill(
            at("2026-11-20T10:00:00Z"),
            at("2026-11-20T10:00:00Z"),
            Duration::minutes(15),
            &[],
        );
        assert!(none.is_empty() && zero == 0);
    }

    #[test]
    fn retention_raises_from_and_can_empty_the_window() {
        let now = at("2026-11-20T12:00:00Z");
        let search = |from: &str, to: &str| Search {
            from: at(from),
            to: at(to),
            filters: Default::default(),
        };
        // inside 7 days: unchanged; a second older than that: raised to the retention's start
        let inside =
            search("2026-11-13T12:00:00Z", "2026-11-20T12:00:00Z").within_retention(7, now);
        assert_eq!(inside.from, at("2026-11-13T12:00:00Z"));
        let older = search("2026-11-13T11:59:59Z", "2026-11-20T12:00:00Z").within_retention(7, now);
        assert_eq!(older.from, at("2026-11-13T12:00:00Z"));
        assert!(!older.is_empty());
        // a window that ended before retention starts holds nothing
        let gone = search("2026-11-01T00:00:00Z", "2026-11-13T11:00:00Z").within_retention(7, now);
        assert!(gone.is_empty());
        // no retention at all: only the future
        assert!(search("2026-11-20T11:00:00Z", "2026-11-20T12:00:00Z")
            .within_retention(0, now)
            .is_empty());
    }

    #[test]
    fn intervals_are_a_number_and_a_unit() {
        for (s, secs) in [
            ("1s", Some(1)),
            ("15m", Some(900)),
            ("1h", Some(3600)),
            ("7d", Some(604_800)),
            ("0010m", Some(600)),
        ] {
            assert_eq!(parse_interval(s), secs, "{s}");
        }
        for s in [
            "",
            "m",
            "15",
            "1.5h",
            "-1m",
            "1w",
            "15 m",
            "１m",
            "99999999d",
        ] {
            assert_eq!(parse_interval(s), None, "{s}");
        }
        for (secs, name) in [
            (1, "1s"),
            (90, "90s"),
            (900, "15m"),
            (7200, "2h"),
            (86_400, "1d"),
            (5_400, "90m"),
        ] {
            assert_eq!(interval_name(secs), name);
        }
    }

    #[test]
    fn auto_gives_at_most_120_buckets_and_at_least_about_half() {
        for (from, to, want) in [
            ("2026-11-20T00:00:00Z", "2026-11-21T00:00:00Z", 900),
            ("2026-11-14T00:00:00Z", "2026-11-21T00:00:00Z", 7_200),
            ("2026-11-20T10:00:00Z", "2026-11-20T11:00:00Z", 30),
            ("2026-11-20T10:00:00Z", "2026-11-20T10:00:01Z", 1),
        ] {
            let v = validate(&req(from, to, None)).unwrap();
            assert_eq!(bucket(&v).unwrap().num_seconds(), want, "{from}..{to}");
            assert_eq!(validate(&req(from, to, Some("auto"))).unwrap(), v);
        }
        // a week of 2 hours: 84 buckets; not aligned, one more
        let n = bucket_count(
            at("2026-11-14T00:30:00Z"),
            at("2026-11-21T00:30:00Z"),
            7_200,
        );
        assert_eq!(n, 85);
    }

    /// The bucket of `v` over its own window.
    fn bucket(v: &ValidCounts) -> Result<Duration, String> {
        v.bucket(v.search.from, v.search.to)
    }

    fn counts(from: &str, to: &str, interval: Option<&str>) -> Result<Duration, String> {
        bucket(&validate(&req(from, to, interval))?)
    }

    #[test]
    fn explicit_intervals_are_bounded_by_the_bucket_count() {
        // 1000 minutes: N - 1, N, N + 1 buckets
        let from = "2026-11-20T00:00:00Z";
        assert!(counts(from, "2026-11-20T16:39:00Z", Some("1m")).is_ok());
        assert!(counts(from, "2026-11-20T16:40:00Z", Some("1m")).is_ok());
        let e = counts(from, "2026-11-20T16:40:01Z", Some("1m")).unwrap_err();
        assert!(
            e.contains("`interval` 1m gives 1001 buckets") && e.contains("at most 1000"),
            "{e}"
        );
        for bad in ["0s", "8d", "fast"] {
            let e = counts(from, "2026-11-21T00:00:00Z", Some(bad)).unwrap_err();
            assert!(e.contains("`interval` must be"), "{e}");
        }
        // the bound is on the window searched: retention can bring a long one within it
        let long = validate(&req(from, "2026-12-20T00:00:00Z", Some("15m"))).unwrap();
        assert!(bucket(&long).unwrap_err().contains("gives 2880 buckets"));
        assert_eq!(
            long.bucket(at("2026-12-19T00:00:00Z"), at("2026-12-20T00:00:00Z")),
            Ok(Duration::minutes(15))
        );
    }

    #[test]
    fn windows_longer_than_a_week_are_counted_in_longer_buckets() {
        // 30 days: 6 hours (120 buckets); 90 days: days (90); a year: weeks (53)
        for (from, to, want) in [
            ("2026-10-21T00:00:00Z", "2026-11-20T00:00:00Z", 21_600),
            ("2026-08-22T00:00:00Z", "2026-11-20T00:00:00Z", 86_400),
            ("2025-11-20T00:00:00Z", "2026-11-20T00:00:00Z", 604_800),
        ] {
            assert_eq!(
                counts(from, to, None).unwrap().num_seconds(),
                want,
                "{from}..{to}"
            );
        }
        // a day as an interval over 90 days: 90 buckets
        assert_eq!(
            counts("2026-08-22T00:00:00Z", "2026-11-20T00:00:00Z", Some("1d")),
            Ok(Duration::days(1))
        );
    }

    #[test]
    fn buckets_are_utc_aligned_whatever_the_offsets_of_the_window() {
        let v = validate(&req(
            "2026-11-20T10:30:00+02:00",
            "2026-11-20T12:10:00+02:00",
            Some("1h"),
        ))
        .unwrap();
        assert_eq!(v.search.from, at("2026-11-20T08:30:00Z"));
        assert_eq!(
            bucket_starts(v.search.from, v.search.to, bucket(&v).unwrap()),
            [
                at("2026-11-20T08:00:00Z"),
                at("2026-11-20T09:00:00Z"),
                at("2026-11-20T10:00:00Z")
            ]
        );
        // a window ending on a bucket start has no empty bucket after it
        assert_eq!(
            bucket_starts(
                at("2026-11-20T08:00:00Z"),
                at("2026-11-20T10:00:00Z"),
                Duration::hours(1)
            )
            .len(),
            2
        );
        // before the epoch too
        assert_eq!(
            bucket_start(at("1969-12-31T23:30:00Z"), Duration::hours(1)),
            at("1969-12-31T23:00:00Z")
        );
    }
}
