//! Token-bucket limits that hold across instances ([`auth_core::rate`]): each check spends a
//! token borrowed from the shared bucket, borrowing a few more when none is left here.
//!
//! While the shared store cannot be reached, each instance counts on its own (a `governor`
//! bucket with the same quota), so an outage loosens the limit to one bucket per instance rather
//! than lifting it.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use auth_core::rate::{Quota, RateBucketStore, ALLOWANCE_TTL};
use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, RateLimiter};

/// Borrowed tokens of one bucket on this instance.
struct Allowance {
    tokens: u32,
    until: Instant,
}

/// Allowances kept at most before the expired ones are dropped.
const MAX_ALLOWANCES: usize = 10_000;
/// How long a take from the shared store may wait before this instance counts on its own.
const TAKE_DEADLINE: Duration = Duration::from_millis(500);
/// After a failed take, how long this instance counts on its own before asking the store again
/// (so an outage does not add a wait to every request).
const OUTAGE_BACKOFF: Duration = Duration::from_secs(2);

pub struct SharedLimiter {
    store: Arc<dyn RateBucketStore>,
    quota: Quota,
    allowances: Mutex<HashMap<String, Allowance>>,
    /// This instance's own count, for while the store is unreachable.
    fallback: DefaultKeyedRateLimiter<String>,
    /// Until when the store is taken to be unreachable.
    outage_until: Mutex<Option<Instant>>,
}

impl SharedLimiter {
    pub fn new(store: Arc<dyn RateBucketStore>, quota: Quota) -> Self {
        let burst = NonZeroU32::new(quota.burst.max(1)).unwrap_or(NonZeroU32::MIN);
        let period =
            Duration::from_secs_f64(1.0 / quota.per_second.max(1e-6)).max(Duration::from_nanos(1));
        let fallback_quota = governor::Quota::with_period(period)
            .unwrap_or_else(|| governor::Quota::per_second(NonZeroU32::MIN))
            .allow_burst(burst);
        Self {
            store,
            quota,
            allowances: Mutex::new(HashMap::new()),
            fallback: RateLimiter::keyed(fallback_quota),
            outage_until: Mutex::new(None),
        }
    }

    fn allowances(&self) -> std::sync::MutexGuard<'_, HashMap<String, Allowance>> {
        self.allowances.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Spends one token of `bucket`; `Err` carries how long until one is there.
    pub async fn check(&self, bucket: &str) -> Result<(), Duration> {
        let now = Instant::now();
        if let Some(a) = self.allowances().get_mut(bucket) {
            if a.tokens > 0 && a.until > now {
                a.tokens -= 1;
                return Ok(());
            }
        }
        let in_outage = self
            .outage_until
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some_and(|until| now < until);
        let taken = if in_outage {
            Err(auth_core::StoreError::Unavailable(
                "in outage backoff".into(),
            ))
        } else {
            let take = self.store.take(bucket, self.quota.chunk(), self.quota);
            match tokio::time::timeout(TAKE_DEADLINE, take).await {
                Ok(taken) => taken,
                Err(_) => Err(auth_core::StoreError::Unavailable(
                    format!("no answer within {TAKE_DEADLINE:?}").into(),
                )),
            }
        };
        match taken {
            Ok(taken) if taken.granted > 0 => {
                let mut allowances = self.allowances();
                if allowances.len() >= MAX_ALLOWANCES {
                    allowances.retain(|_, a| a.until > now);
                }
                let a = allowances.entry(bucket.to_owned()).or_insert(Allowance {
                    tokens: 0,
                    until: now,
                });
                // concurrent borrowers of one bucket each add what they got
                a.tokens = if a.until > now { a.tokens } else { 0 } + taken.granted - 1;
                a.until = now + ALLOWANCE_TTL;
                Ok(())
            }
            Ok(taken) => Err(self.quota.wait(taken.left)),
            Err(e) => {
                if !in_outage {
                    tracing::warn!(error = %e, "shared rate buckets unreachable; each instance counts on its own for a while");
                    *self.outage_until.lock().unwrap_or_else(|e| e.into_inner()) =
                        Some(now + OUTAGE_BACKOFF);
                }
                if self.fallback.len() > MAX_ALLOWANCES {
                    self.fallback.retain_recent();
                }
                self.fallback
                    .check_key(&bucket.to_owned())
                    .map_err(|not_until| not_until.wait_time_from(DefaultClock::default().now()))
            }
        }
    }
}

/// Whole seconds for `Retry-After`: at least 1.
pub fn retry_after_secs(wait: Duration) -> u64 {
    (wait.as_secs() + u64::from(wait.subsec_nanos() > 0)).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use auth_core::memory::MemoryRateBuckets;

    fn limiter(per_second: f64, burst: u32) -> SharedLimiter {
        SharedLimiter::new(
            Arc::new(MemoryRateBuckets::default()),
            Quota { per_second, burst },
        )
    }

    #[tokio::test]
    async fn a_bucket_gives_its_burst_then_says_how_long_to_wait() {
        let l = limiter(1e-3, 3);
        for _ in 0..3 {
            assert!(l.check("key:a").await.is_ok());
        }
        let wait = l.check("key:a").await.unwrap_err();
        assert!(wait > Duration::from_secs(100), "{wait:?}");
        assert!(l.check("key:b").await.is_ok(), "buckets are apart");
    }

    #[tokio::test]
    async fn two_instances_on_one_store_share_the_bucket() {
        let store: Arc<dyn RateBucketStore> = Arc::new(MemoryRateBuckets::default());
        let quota = Quota {
            per_second: 1e-3,
            burst: 4,
        };
        let (a, b) = (
            SharedLimiter::new(Arc::clone(&store), quota),
            SharedLimiter::new(store, quota),
        );
        let mut passed = 0;
        for i in 0..10 {
            let l = if i % 2 == 0 { &a } else { &b };
            passed += usize::from(l.check("key:k").await.is_ok());
        }
        assert_eq!(passed, 4);
    }

    #[tokio::test]
    async fn borrowed_tokens_are_spent_locally() {
        // 500/s borrows 25 at a time: the store is asked once for the first 25 checks
        let l = limiter(500.0, 1000);
        for _ in 0..25 {
            assert!(l.check("key:c").await.is_ok());
        }
        assert_eq!(l.allowances()["key:c"].tokens, 0);
    }

    /// A store that never answers.
    struct Hung;

    #[async_trait::async_trait]
    impl RateBucketStore for Hung {
        async fn take(
            &self,
            _: &str,
            _: u32,
            _: Quota,
        ) -> Result<auth_core::rate::Taken, auth_core::StoreError> {
            std::future::pending().await
        }
    }

    #[tokio::test(start_paused = true)]
    async fn an_unanswering_store_costs_one_short_wait_then_each_instance_counts_alone() {
        let l = SharedLimiter::new(
            Arc::new(Hung),
            Quota {
                per_second: 1e-3,
                burst: 2,
            },
        );
        let started = tokio::time::Instant::now();
        assert!(l.check("key:h").await.is_ok());
        assert_eq!(started.elapsed(), TAKE_DEADLINE);
        // within the backoff the store is not asked: no more waiting, and the local bucket counts
        assert!(l.check("key:h").await.is_ok());
        assert!(l.check("key:h").await.is_err());
        assert_eq!(started.elapsed(), TAKE_DEADLINE);
    }

    #[test]
    fn retry_after_is_whole_seconds_and_at_least_one() {
        assert_eq!(retry_after_secs(Duration::ZERO), 1);
        assert_eq!(retry_after_secs(Duration::from_millis(100)), 1);
        assert_eq!(retry_after_secs(Duration::from_millis(1500)), 2);
        assert_eq!(retry_after_secs(Duration::from_secs(6)), 6);
    }
}
