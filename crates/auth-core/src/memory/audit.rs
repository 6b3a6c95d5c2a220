//! In-memory [`AuditStore`]: the log the memory adapters write their changes' entries to.

use std::sync::Mutex;

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use crate::audit::{AuditEntry, AuditEvent, AuditQuery, AuditStore};
use crate::ids::OrgId;
use crate::store::StoreError;

#[derive(Default)]
pub struct MemoryAudit {
    events: Mutex<Vec<AuditEvent>>,
}

impl MemoryAudit {
    /// Appends entries (a memory adapter calls this while it holds the lock of its change, so
    /// readers see both or neither).
    pub fn append(&self, entries: impl IntoIterator<Item = AuditEntry>) {
        let mut events = self.events.lock().unwrap_or_else(|e| e.into_inner());
        for entry in entries {
            let id = events.last().map_or(1, |e| e.id + 1);
            events.push(AuditEvent {
                id,
                at: Utc::now(),
                entry,
            });
        }
    }
}

#[async_trait]
impl AuditStore for MemoryAudit {
    async fn record(&self, entries: &[AuditEntry]) -> Result<(), StoreError> {
        self.append(entries.iter().cloned());
        Ok(())
    }

    async fn page(&self, org: &OrgId, query: &AuditQuery) -> Result<Vec<AuditEvent>, StoreError> {
        let events = self.events.lock().unwrap_or_else(|e| e.into_inner());
        Ok(events
            .iter()
            .rev()
            .filter(|e| e.entry.org_id == *org && query.matches(e))
            .take(query.limit)
            .cloned()
            .collect())
    }

    async fn prune(&self, org: &OrgId, before: DateTime<Utc>) -> Result<u64, StoreError> {
        let mut events = self.events.lock().unwrap_or_else(|e| e.into_inner());
        let was = events.len();
        events.retain(|e| e.entry.org_id != *org || e.at >= before);
        Ok((was - events.len()) as u64)
    }
}
