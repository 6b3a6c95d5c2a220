//! [`ReadSlotStore`] in Postgres: lease rows (`leases`) and the export's advisory lock
//! (`export_lock`), so each limit holds across instances.

use async_trait::async_trait;
use auth_core::OrgId;
use auth_core::StoreError;
use chrono::{DateTime, Utc};
use logs_core::slots::{ExportGuard, Lease, LeaseRequest, ReadSlotStore};

use super::{export_lock, leases};
use crate::Db;

pub struct PgReadSlots {
    db: Db,
}

impl PgReadSlots {
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

#[async_trait]
impl ReadSlotStore for PgReadSlots {
    async fn acquire(
        &self,
        org_id: &OrgId,
        req: &LeaseRequest,
    ) -> Result<Option<Lease>, StoreError> {
        let id = leases::acquire_lease(&self.db, req.kind, org_id, req.limit, req.expires_at);
        Ok(id.await?.map(|id| Lease { kind: req.kind, id }))
    }

    async fn renew(&self, lease: &Lease, expires_at: DateTime<Utc>) -> Result<bool, StoreError> {
        leases::renew_lease(&self.db, lease.kind, &lease.id, expires_at).await
    }

    async fn release(&self, lease: &Lease) -> Result<(), StoreError> {
        leases::release_lease(&self.db, lease.kind, &lease.id).await
    }

    async fn try_export_lock(
        &self,
        org_id: &OrgId,
    ) -> Result<Option<Box<dyn ExportGuard>>, StoreError> {
        let lock = export_lock::try_export_lock(&self.db, org_id).await?;
        Ok(lock.map(|l| Box::new(l) as Box<dyn ExportGuard>))
    }
}
