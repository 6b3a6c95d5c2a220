//! Token buckets that hold across instances: the per-key rate limit and the console's sign-in
//! throttle count every instance's requests against one bucket.
//!
//! A bucket lives in a [`RateBucketStore`] (Postgres in production). Asking it on every request
//! would put a database write on every request, so an instance *borrows* a few tokens at a time
//! ([`Quota::chunk`]) and spends them locally for at most [`ALLOWANCE_TTL`]; tokens it did not
//! spend by then are lost, so a key may get slightly fewer requests than its limit, never more.
//! The refill rule ([`refill_and_take`]) is the same in every adapter (the Postgres one states
//! it in SQL; the shared suite holds both to it).

use std::time::Duration;

use async_trait::async_trait;

use crate::StoreError;

/// How long borrowed tokens may be spent locally.
pub const ALLOWANCE_TTL: Duration = Duration::from_secs(1);

/// A bucket's refill rate and size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Quota {
    /// Tokens added per second.
    pub per_second: f64,
    /// The most tokens a bucket holds (a full bucket at first use).
    pub burst: u32,
}

impl Quota {
    /// Tokens an instance borrows at a time: a twentieth of a second's refill, at least 1 and at
    /// most 50 (and never more than the burst), so borrowing costs one database write per
    /// handful of requests while little is lost to an allowance that expires unspent.
    pub fn chunk(&self) -> u32 {
        let twentieth = (self.per_second / 20.0).floor();
        (twentieth.clamp(1.0, 50.0) as u32).min(self.burst.max(1))
    }

    /// How long until a bucket holding `left` tokens has one.
    pub fn wait(&self, left: f64) -> Duration {
        let missing = (1.0 - left).max(0.0);
        Duration::from_secs_f64(missing / self.per_second.max(f64::MIN_POSITIVE))
            .min(Duration::from_secs(3600))
    }
}

/// What a take from a bucket gave.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Taken {
    /// Whole tokens granted (0 to the number asked).
    pub granted: u32,
    /// Tokens left in the bucket.
    pub left: f64,
}

/// The rule every adapter applies: a bucket that held `tokens` `elapsed_secs` ago is refilled
/// (up to the burst), then gives up to `want` whole tokens. A bucket seen for the first time is
/// full.
pub fn refill_and_take(tokens: Option<f64>, elapsed_secs: f64, want: u32, quota: Quota) -> Taken {
    let burst = f64::from(quota.burst);
    let now = match tokens {
        None => burst,
        Some(t) => (t + quota.per_second * elapsed_secs.max(0.0)).min(burst),
    };
    let granted = f64::from(want).min(now.floor()).max(0.0);
    Taken {
        granted: granted as u32,
        left: now - granted,
    }
}

#[async_trait]
pub trait RateBucketStore: Send + Sync {
    /// Refills the bucket named `bucket` and takes up to `want` tokens from it
    /// ([`refill_and_take`]), atomically with respect to every other take.
    async fn take(&self, bucket: &str, want: u32, quota: Quota) -> Result<Taken, StoreError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    const Q: Quota = Quota {
        per_second: 10.0,
        burst: 20,
    };

    #[test]
    fn a_new_bucket_is_full_and_refills_up_to_its_burst() {
        assert_eq!(
            refill_and_take(None, 0.0, 5, Q),
            Taken {
                granted: 5,
                left: 15.0
            }
        );
        assert_eq!(
            refill_and_take(None, 0.0, 50, Q),
            Taken {
                granted: 20,
                left: 0.0
            }
        );
        // 0.25 s at 10/s: 2.5 tokens, two whole ones given
        assert_eq!(
            refill_and_take(Some(0.0), 0.25, 5, Q),
            Taken {
                granted: 2,
                left: 0.5
            }
        );
        // a long pause fills it only to the burst
        assert_eq!(
            refill_and_take(Some(3.0), 3600.0, 30, Q),
            Taken {
                granted: 20,
                left: 0.0
            }
        );
        // an empty bucket gives nothing; time going backwards refills nothing
        assert_eq!(
            refill_and_take(Some(0.9), 0.0, 1, Q),
            Taken {
                granted: 0,
                left: 0.9
            }
        );
        assert_eq!(
            refill_and_take(Some(0.5), -5.0, 1, Q),
            Taken {
                granted: 0,
                left: 0.5
            }
        );
        assert_eq!(
            refill_and_take(Some(4.0), 0.0, 0, Q),
            Taken {
                granted: 0,
                left: 4.0
            }
        );
    }

    #[test]
    fn chunks_are_small_and_never_above_the_burst() {
        let q = |per_second, burst| Quota { per_second, burst };
        assert_eq!(q(500.0, 1000).chunk(), 25);
        assert_eq!(q(10_000.0, 10_000).chunk(), 50);
        assert_eq!(q(2.0, 4).chunk(), 1);
        assert_eq!(q(1.0 / 6.0, 10).chunk(), 1);
        assert_eq!(q(400.0, 3).chunk(), 3);
    }

    #[test]
    fn the_wait_is_until_one_whole_token() {
        assert_eq!(Q.wait(0.0), Duration::from_millis(100));
        assert_eq!(Q.wait(0.5), Duration::from_millis(50));
        assert_eq!(Q.wait(3.0), Duration::ZERO);
        let slow = Quota {
            per_second: 1.0 / 6.0,
            burst: 10,
        };
        assert_eq!(slow.wait(0.0).as_secs(), 6);
    }
}
