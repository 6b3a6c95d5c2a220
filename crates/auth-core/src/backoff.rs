//! Failed sign-ins per sign-in name, with delays that grow: the first few mistakes cost nothing,
//! then each further failure doubles the wait before the next attempt is even looked at, up to
//! [`MAX_DELAY`]. A success clears the count. Names nobody has count the same way, so the delays
//! say nothing about which names exist.
//!
//! Two counts per name ([`subjects`]): one per name *and client address* (its /64 for IPv6),
//! free for [`FREE_FAILURES`], and one per name from anywhere, free for
//! [`FREE_FAILURES_PER_NAME`]. Someone who knows a sign-in name and guesses from one place only
//! makes their own place wait, not the name's owner signing in from elsewhere; guessing from many
//! places at once still makes the name wait after 100 failures.

use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use crate::store::StoreError;

/// Failures in a row of one name from one address that cost no wait.
pub const FREE_FAILURES: u32 = 5;
/// Failures in a row of one name from anywhere that cost no wait. From one address the waits
/// of [`FREE_FAILURES`] make reaching it take hours; it holds a guess from many addresses.
pub const FREE_FAILURES_PER_NAME: u32 = 100;

/// The two counts a sign-in of `login` from the client address `address` (its bucket) adds to
/// on a failure, each with its free failures: this name from this address, and this name.
pub fn subjects(login: &str, address: &str) -> [(String, u32); 2] {
    [
        (format!("login:{login}@{address}"), FREE_FAILURES),
        (format!("login:{login}"), FREE_FAILURES_PER_NAME),
    ]
}
/// The longest wait.
pub const MAX_DELAY: Duration = Duration::from_secs(15 * 60);
/// A count with no failure for this long starts again from zero.
pub const FORGET_AFTER: Duration = Duration::from_secs(24 * 3600);

/// The wait after `failures` failures in a row: none for the first `free`, then 1 s, 2 s, 4 s,
/// … doubling, at most [`MAX_DELAY`].
pub fn delay_after(failures: u32, free: u32) -> Duration {
    if failures < free {
        return Duration::ZERO;
    }
    let doublings = (failures - free).min(20);
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

/// The count after one more failure at `now`, given the stored one (`free` failures cost no
/// wait).
pub fn after_failure(stored: Option<Failures>, now: DateTime<Utc>, free: u32) -> Failures {
    let forget = chrono::Duration::from_std(FORGET_AFTER).unwrap_or(chrono::Duration::MAX);
    let count = match stored {
        Some(f) if now - f.last_at < forget => f.count.saturating_add(1),
        _ => 1,
    };
    let wait =
        chrono::Duration::from_std(delay_after(count, free)).unwrap_or(chrono::Duration::MAX);
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
    /// Counts a failure at `now` (by [`after_failure`] with `free` failures free, in one step,
    /// so concurrent failures all count); the new state.
    async fn fail(
        &self,
        subject: &str,
        now: DateTime<Utc>,
        free: u32,
    ) -> Result<Failures, StoreError>;
    /// A success: the count starts again.
    async fn clear(&self, subject: &str) -> Result<(), StoreError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_double_after_the_free_failures_up_to_the_cap() {
        let secs = |n| delay_after(n, FREE_FAILURES).as_secs();
        assert_eq!([secs(0), secs(1), secs(4)], [0, 0, 0]);
        assert_eq!([secs(5), secs(6), secs(7), secs(8)], [1, 2, 4, 8]);
        assert_eq!(secs(14), 512);
        assert_eq!(secs(15), 900, "capped at 15 minutes");
        assert_eq!(secs(u32::MAX), 900);
        // the count per name from anywhere: 100 free
        assert_eq!(delay_after(99, FREE_FAILURES_PER_NAME).as_secs(), 0);
        assert_eq!(delay_after(100, FREE_FAILURES_PER_NAME).as_secs(), 1);
        assert_eq!(delay_after(101, FREE_FAILURES_PER_NAME).as_secs(), 2);
    }

    #[test]
    fn a_name_counts_per_address_and_from_anywhere() {
        let [(here, free_here), (anywhere, free_anywhere)] = subjects("ana", "203.0.113.7");
        assert_eq!(here, "login:ana@203.0.113.7");
        assert_eq!(anywhere, "login:ana");
        assert_eq!((free_here, free_anywhere), (5, 100));
        assert_ne!(subjects("ana", "198.51.100.1")[0].0, here);
    }

    #[test]
    fn a_count_grows_and_is_forgotten_after_a_quiet_day() {
        let t0 = Utc::now();
        let first = after_failure(None, t0, FREE_FAILURES);
        assert_eq!((first.count, first.blocked_until), (1, t0));
        let mut f = first;
        let mut at = t0;
        for _ in 0..5 {
            at += chrono::Duration::seconds(1);
            f = after_failure(Some(f), at, FREE_FAILURES);
        }
        assert_eq!(f.count, 6);
        assert_eq!(f.blocked_until, at + chrono::Duration::seconds(2));
        let quiet = at + chrono::Duration::hours(24);
        assert_eq!(after_failure(Some(f), quiet, FREE_FAILURES).count, 1);
        let almost = at + chrono::Duration::hours(24) - chrono::Duration::seconds(1);
        assert_eq!(after_failure(Some(f), almost, FREE_FAILURES).count, 7);
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
            last = Some(store.fail("ana", t0, FREE_FAILURES).await.unwrap());
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
        assert_eq!(store.fail("ana", t0, FREE_FAILURES).await.unwrap().count, 1);
        store.clear("nobody").await.unwrap();
    }
}
