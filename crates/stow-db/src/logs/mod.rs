//! Postgres storage of log batches and events: ingestion, queries, partition maintenance, usage
//! counters and the organizations' read slots.

pub mod alerts;
mod batch_commit;
mod event_row;
mod event_store;
mod export_lock;
mod last_batches;
mod leases;
mod message_runs;
mod names;
mod partitions;
mod player_events;
mod read_slots;
mod reads;
mod saved_searches;
mod search_sql;
mod tail;
mod writers;

pub use batch_commit::PendingBatch;
pub use message_runs::{within as message_within, Within, MAX_RUNS};
pub use partitions::{
    maintain_partitions, MaintenanceReport, PARTITIONS_AHEAD_DAYS, PARTITIONS_BEHIND_DAYS,
    PARTITION_SETTINGS,
};
pub use read_slots::PgReadSlots;
pub use saved_searches::PgSavedSearches;
pub use writers::WRITERS;

use auth_core::StoreError;
use logs_core::store::IngestOutcome;

use crate::Db;

/// The length of a `log_level_counts_15m` slot: events per server and level are counted in
/// 15-minute slots aligned to the Unix epoch (migration 14).
pub(crate) use logs_core::plan::LEVEL_SLOT;

pub struct PgLogs {
    pub(crate) db: Db,
    rules: std::sync::Arc<alerts::RuleCache>,
    writers: writers::Writers,
}

impl PgLogs {
    /// Ingestion commits through [`WRITERS`] writer tasks, started on the first `ingest`.
    pub fn new(db: Db) -> Self {
        Self::with_writers(db, WRITERS)
    }

    pub fn with_writers(db: Db, writers: usize) -> Self {
        let rules = std::sync::Arc::new(alerts::RuleCache::default());
        Self {
            writers: writers::Writers::new(db.clone(), std::sync::Arc::clone(&rules), writers),
            rules,
            db,
        }
    }

    /// Stores these batches in one transaction, as the writers do with the batches queued
    /// behind each other: one answer per batch, in order (for tests and tools).
    pub async fn ingest_together(
        &self,
        batches: &[PendingBatch],
    ) -> Vec<Result<IngestOutcome, StoreError>> {
        batch_commit::store_group(&self.db, &self.rules, batches).await
    }
}
