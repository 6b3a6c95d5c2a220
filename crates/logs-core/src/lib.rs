//! Pure log-pipeline policy: batch and event validation (atomic, with every offending field
//! reported), canonical batch digests for idempotent retries, query validation and signed
//! cursors, and the storage trait with an in-memory implementation.

// no production function over 100 lines of code (test code is exempt)
#![cfg_attr(not(test), warn(clippy::too_many_lines))]

pub mod alert_delivery;
pub mod alert_messages;
pub mod alert_queue;
pub mod alert_store;
pub mod alerts;
pub mod counts;
pub mod criteria;
pub mod event;
pub mod facets;
pub mod memory;
pub mod params;
pub mod patterns;
pub mod plan;
pub mod player;
pub mod players;
#[cfg(test)]
mod proptests;
pub mod query;
pub mod saved;
pub mod search;
pub mod slots;
pub mod store;
pub mod tail;
#[cfg(any(test, feature = "testsuite"))]
#[allow(clippy::too_many_lines)] // a suite case reads as one story
pub mod testsuite;
pub mod words;

pub use event::{parse_batch, Batch, BatchError, Detail, Event, Level};
pub use slots::{ExportGuard, Lease, LeaseKind, LeaseRequest, ReadSlotStore};
pub use store::{EventRow, IngestOutcome, IngestTarget, LogStore, ServerId};
