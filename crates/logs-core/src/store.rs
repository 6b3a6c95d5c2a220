//! The log storage trait: atomic, idempotent batch ingestion and keyset-paginated queries.

use async_trait::async_trait;
use auth_core::StoreError;
use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::event::{Batch, Level};

/// A registered server's id (`srv_…`), as opposed to its join code (`cfx_id`), which the wire
/// calls `serverId`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ServerId(pub String);

impl ServerId {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for ServerId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Where a batch goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IngestTarget {
    pub org_id: String,
    pub server_id: ServerId,
    /// Join code as registered.
    pub cfx_id: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IngestOutcome {
    /// Committed now (batch row, events and usage in one transaction).
    Accepted {
        accepted_events: i32,
        ingested_at: DateTime<Utc>,
    },
    /// The same batch was accepted before; nothing was written.
    Replayed {
        accepted_events: i32,
        ingested_at: DateTime<Utc>,
    },
    /// The batch id was used before with a different payload.
    Conflict,
    /// Another request is still committing this batch id.
    InProgress,
}

/// A stored event as returned by queries.
#[derive(Debug, Clone, PartialEq)]
pub struct EventRow {
    /// Internal, monotonic; the pagination tiebreak.
    pub id: i64,
    pub event_id: String,
    /// The server's join code as registered (the wire's `serverId`; not the registered id).
    pub cfx_id: String,
    pub batch_id: String,
    pub level: String,
    pub event_type: String,
    pub occurred_at: DateTime<Utc>,
    pub ingested_at: DateTime<Utc>,
    pub player_id: Option<String>,
    pub target_player_id: Option<String>,
    pub player_identifiers: Option<Value>,
    pub target_player_identifiers: Option<Value>,
    pub resource: Option<String>,
    pub trace_id: Option<String>,
    pub environment: Option<String>,
    pub message: String,
    pub data: Option<Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Owner {
    Player,
    Target,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdentifierFilter {
    pub owner: Owner,
    pub key: String,
    pub value: String,
}

/// One page of a search: newest first, strictly after `after` in that order.
#[derive(Debug, Clone, PartialEq)]
pub struct EventQuery {
    pub server_id: ServerId,
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
    /// The levels an event may have; `None` for any.
    pub levels: Option<Vec<Level>>,
    pub event_type: Option<String>,
    pub resource: Option<String>,
    /// Case-insensitive substring.
    pub message: Option<String>,
    /// Matches `player_id` or `target_player_id`.
    pub player_id: Option<String>,
    pub identifier: Option<IdentifierFilter>,
    /// `(occurred_at, id)` of the last event of the previous page.
    pub after: Option<(DateTime<Utc>, i64)>,
    pub limit: usize,
}

#[async_trait]
pub trait LogStore: Send + Sync {
    async fn ingest(
        &self,
        target: &IngestTarget,
        batch: &Batch,
        now: DateTime<Utc>,
    ) -> Result<IngestOutcome, StoreError>;
    async fn query(&self, q: &EventQuery) -> Result<Vec<EventRow>, StoreError>;
    /// Accepted log events of an organization this month.
    async fn monthly_usage(&self, org_id: &str, now: DateTime<Utc>) -> Result<i64, StoreError>;
}

/// A server-made event id: a ULID (sortable, 26 characters, valid as an event id).
pub fn new_event_id() -> String {
    ulid::Ulid::new().to_string()
}
