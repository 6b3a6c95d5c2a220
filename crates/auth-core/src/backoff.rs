//! Failed sign-ins per sign-in name, with delays that grow: the first few mistakes cost nothing,
//! then each further failure doubles the wait before the next attempt is even looked at, up to
//! [`MAX_DELAY`]. A success clears the count. Names nobody has count the same way, so the delays
//! say nothing about which names exist.

use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use crate::store::StoreError;

/// Failures in a row that cost no wait.
pub const FREE_FAILURES: u32 = 5;
/// The longest wait.
pub const MAX_DELAY: Duration = Duration::from_secs(15 * 60);
/// A count with no failure for this long starts again from zero.
pub const FORGET_AFTER: Duration = Duration::from_secs(24 * 3600);

/// The wait after `failures` failures in a row: none for the first [`FREE_FAILURES`], then 1 s,
/// 2 s, 4 s, … doubling, at most [`MAX_DELAY`].
pub fn delay_after(failures: u32) -> Duration {
    if failures < FREE_FAILURES {
        return Duration::ZERO;
    }
    let doublings = (failures - FREE_FAILURES).min(20);
    Duration::from_secs(1u64 << doublings).min(MAX_DELAY)
}

/// The failures of one sign-in name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Failures {
    /// In a row, since the last success (or since [`FORGET_AFTER`] without one).
    pub count: u32,
    pub last_at: DateTime<Utc>,
    /// No attempt is looked at before this.
    pub blocked_until: DateTime<Utc>,
}

/// The count after one more failure at `now`, given the stored one.
pub fn after_failure(stored: Option<Failures>, now: DateTime<Utc>) -> Failures {
    let forget = chrono::Duration::from_std(FORGET_AFTER).unwrap_or(chrono::Duration::MAX);
    let count = match stored {
        Some(f) if now - f.last_at < forget => f.count.saturating_add(1),
        _ => 1,
    };
    let wait = chrono::Duration::from_std(delay_after(count)).unwrap_or(chrono::Duration::MAX);
    Failures {
        count,
        last_at: now,
        blocked_until: now + wait,
    }
}

#[async_trait]
pub trait SignInFailureStore: Send + Sync {
    /// When the next attempt for `subject` may be looked at, if it must wait past `now`.
    async fn blocked_until(
        &self,
        subject: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<DateTime<Utc>>, StoreError>;
    /// Counts a failure at `now` (by [`after_failure`], in one step, so concurrent failures all
    /// count); the new state.
    async fn fail(&self, subject: &str, now: DateTime<Utc>) -> Result<Failures, StoreError>;
    /// A success: the count starts again.
    async fn clear(&self, subject: &str) -> Result<(), StoreError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_double_after_the_free_failures_up_to_the_cap() {
        let secs = |n| delay_after(n).as_secs();
        assert_eq!([secs(0), secs(1), secs(4)], [0, 0, 0]);
        assert_eq!([secs(5), secs(6), secs(7), secs(8)], [1, 2, 4, 8]);
        assert_eq!(secs(14), 512);
        assert_eq!(secs(15), 900, "capped at 15 minutes");
        assert_eq!(secs(u32::MAX), 900);
    }

    #[test]
    fn a_count_grows_and_is_forgotten_after_a_quiet_day() {
        let t0 = Utc::now();
        let first = after_failure(None, t0);
        assert_eq!((first.count, first.blocked_until), (1, t0));
        let mut f = first;
        let mut at = t0;
        for _ in 0..5 {
            at += chrono::Duration::seconds(1);
            f = after_failure(Some(f), at);
        }
        assert_eq!(f.count, 6);
        assert_eq!(f.blocked_until, at + chrono::Duration::seconds(2));
        let quiet = at + chrono::Duration::hours(24);
        assert_eq!(after_failure(Some(f), quiet).count, 1);
        let almost = at + chrono::Duration::hours(24) - chrono::Duration::seconds(1);
        assert_eq!(after_failure(Some(f), almost).count, 7);
    }
}

/// The shared suite of [`SignInFailureStore`] (every adapter runs it).
#[cfg(any(test, feature = "testsuite"))]
#[allow(clippy::unwrap_used, clippy::expect_used)]
pub mod suite {
    use super::*;

    /// Failures count up, block with growing waits, and clear on success; names are apart.
    pub async fn failures_block_with_growing_waits_and_clear(store: &dyn SignInFailureStore) {
        let t0 = DateTime::from_timestamp_micros(Utc::now().timestamp_micros()).unwrap_or_default();
        assert_eq!(store.blocked_until("ana", t0).await.unwrap(), None);
        let mut last = None;
        for i in 0..7 {
            last = Some(store.fail("ana", t0).await.unwrap());
            assert_eq!(last.unwrap().count, i + 1);
        }
        let f = last.unwrap();
        assert_eq!(f.blocked_until, t0 + chrono::Duration::seconds(4));
        assert_eq!(
            store.blocked_until("ana", t0).await.unwrap(),
            Some(f.blocked_until)
        );
        assert_eq!(
            store.blocked_until("ana", f.blocked_until).await.unwrap(),
            None,
            "free again at the exact time"
        );
        assert_eq!(
            store.blocked_until("bob", t0).await.unwrap(),
            None,
            "another name"
        );
        store.clear("ana").await.unwrap();
        assert_eq!(store.blocked_until("ana", t0).await.unwrap(), None);
        assert_eq!(store.fail("ana", t0).await.unwrap().count, 1);
        store.clear("nobody").await.unwrap();
    }
}
