//! The alert outbox as the delivery worker drives it ([`AlertQueue`]): lease due deliveries,
//! renew leases while a request is in flight, record what became of an attempt, hold a
//! destination back, prune what is finished. Any number of workers in any number of instances
//! share one queue; a lease that is not recorded (its worker died) runs out and the delivery is
//! taken again, with the same id.
//!
//! Order: a delivery is due only when no earlier delivery of its rule to its destination is
//! pending, so one rule's firings arrive in order; a held destination is skipped until its hold
//! ends.

use async_trait::async_trait;
use auth_core::StoreError;
use chrono::{DateTime, Duration, Utc};

/// A delivery taken by a worker.
#[derive(Debug, Clone, PartialEq)]
pub struct Leased {
    pub seq: i64,
    /// The `webhook-id`.
    pub id: String,
    pub destination_id: String,
    /// The destination's kind (`discord`, `webhook`).
    pub kind: String,
    /// The destination's sealed secrets.
    pub sealed: Vec<u8>,
    pub rule_id: Option<String>,
    /// The firing (`None`: a test message).
    pub body: Option<serde_json::Value>,
    /// Attempts including this one.
    pub attempts: i32,
    pub give_up_at: DateTime<Utc>,
}

/// What became of an attempt.
#[derive(Debug, Clone, PartialEq)]
pub enum Attempt {
    Delivered {
        code: i32,
    },
    /// Try again at `retry_at` (past the delivery's 24 hours: failed).
    Failed {
        code: Option<i32>,
        error: String,
        retry_at: DateTime<Utc>,
    },
    /// The receiver asked to wait (Discord's 429): again at `until`, not counted as an attempt.
    Held {
        until: DateTime<Utc>,
    },
}

#[async_trait]
pub trait AlertQueue: Send + Sync {
    /// Takes up to `limit` due deliveries for `lease` (their attempt counted): pending, due, not
    /// leased, the destination not held, first in their queue; by due time.
    async fn lease_due(
        &self,
        limit: usize,
        now: DateTime<Utc>,
        lease: Duration,
    ) -> Result<Vec<Leased>, StoreError>;
    /// Takes the pending deliveries queued behind `head` for the same rule and destination (at
    /// most `limit`), to be sent in one Discord message with it.
    async fn lease_behind(
        &self,
        head: &Leased,
        limit: usize,
        now: DateTime<Utc>,
        lease: Duration,
    ) -> Result<Vec<Leased>, StoreError>;
    /// Takes the next due delivery of `after`'s queue (its rule and destination) once `after`
    /// is finished, so a queue drains as fast as its receiver answers.
    async fn lease_next(
        &self,
        after: &Leased,
        now: DateTime<Utc>,
        lease: Duration,
    ) -> Result<Option<Leased>, StoreError>;
    /// Extends the lease of deliveries `seqs` (being sent) to `until`.
    async fn renew(&self, seqs: &[i64], until: DateTime<Utc>) -> Result<(), StoreError>;
    /// Records what became of an attempt at deliveries `seqs` (sent together).
    async fn finish(
        &self,
        seqs: &[i64],
        destination_id: &str,
        attempt: &Attempt,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError>;
    /// Holds a destination back until `until` (a later hold wins), without an attempt.
    async fn hold(&self, destination_id: &str, until: DateTime<Utc>) -> Result<(), StoreError>;
    /// Removes what alerts no longer need: deliveries (and their firings) finished more than
    /// `keep` ago, and threshold counts older than their rule's window.
    async fn prune(&self, now: DateTime<Utc>, keep: Duration) -> Result<(), StoreError>;
}
