//! Postgres storage of log batches and events: ingestion, queries, partition maintenance and
//! usage counters.

mod event_store;
mod export_lock;
mod partitions;
mod reads;
mod search_sql;
mod tail;
mod tail_leases;
mod usage;

pub use export_lock::{try_export_lock, ExportLock};
pub use partitions::{
    maintain_partitions, MaintenanceReport, PARTITIONS_AHEAD_DAYS, PARTITIONS_BEHIND_DAYS,
};
pub use tail_leases::{acquire_tail, release_tail, renew_tail};
pub use usage::{last_batches, org_usage, Usage};

use crate::Db;

pub struct PgLogs {
    pub(crate) db: Db,
}

impl PgLogs {
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}
