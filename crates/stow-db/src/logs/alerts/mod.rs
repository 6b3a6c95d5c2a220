//! Alerts in Postgres (migration 29): the rules and destinations store, the evaluation in the
//! batch commit (the outbox), and the delivery worker's queue.

pub(crate) mod commit;
mod queue;
mod store;

pub use commit::RuleCache;
pub(crate) use store::bump_version;
pub use store::{PgAlerts, RETRY_FOR};
