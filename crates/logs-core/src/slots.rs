//! An organization's limited log-read slots, held across every instance: leases on open live
//! tails and running searches (each kind up to a limit), and the one-export-at-a-time lock.
//!
//! A lease lasts until its `expires_at`; its holder renews it while it runs, and the lease of a
//! holder that died is taken back once expired. The export lock is held by a guard: unlocking or
//! dropping it frees the lock (a store may notice a drop later than an unlock).

use async_trait::async_trait;
use auth_core::{OrgId, StoreError};
use chrono::{DateTime, Utc};

/// What a lease is for; each kind has its own limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LeaseKind {
    /// An open live tail (`LOGS_TAIL_LIMIT` per organization).
    Tail,
    /// A running query, count or facets request (the plan's concurrent searches).
    Search,
}

impl LeaseKind {
    /// The prefix of this kind's lease ids (`tail_…`, `search_…`).
    pub fn prefix(self) -> &'static str {
        match self {
            LeaseKind::Tail => "tail",
            LeaseKind::Search => "search",
        }
    }

    /// A new lease id of this kind.
    pub fn new_id(self) -> String {
        auth_core::model::new_id(self.prefix())
    }
}

/// A held lease: its kind and id (`tail_…`, `search_…`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Lease {
    pub kind: LeaseKind,
    pub id: String,
}

/// What an acquirer asks for: a lease of `kind` until `expires_at`, unless `limit` are held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaseRequest {
    pub kind: LeaseKind,
    pub limit: usize,
    pub expires_at: DateTime<Utc>,
}

/// The held export lock of an organization.
#[async_trait]
pub trait ExportGuard: Send {
    /// Frees the lock now: the next export can have it as soon as this returns.
    async fn unlock(self: Box<Self>);
}

#[async_trait]
pub trait ReadSlotStore: Send + Sync {
    /// A lease of `req.kind` for the organization until `req.expires_at`, or `None` while
    /// `req.limit` unexpired leases of that kind are held. Expired leases are taken back first;
    /// two callers never both take the last slot.
    async fn acquire(
        &self,
        org_id: &OrgId,
        req: &LeaseRequest,
    ) -> Result<Option<Lease>, StoreError>;
    /// Extends the lease to `expires_at`; `false` when it is gone (released, or expired and
    /// taken back).
    async fn renew(&self, lease: &Lease, expires_at: DateTime<Utc>) -> Result<bool, StoreError>;
    /// Gives the lease up (nothing happens for one that is gone).
    async fn release(&self, lease: &Lease) -> Result<(), StoreError>;
    /// The organization's export lock, or `None` while another export holds it.
    async fn try_export_lock(
        &self,
        org_id: &OrgId,
    ) -> Result<Option<Box<dyn ExportGuard>>, StoreError>;
}
