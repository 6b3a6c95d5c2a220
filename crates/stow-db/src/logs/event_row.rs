//! A stored event as Postgres returns it: the columns every event read selects, and the row.

use chrono::{DateTime, Utc};
use diesel::QueryableByName;
use logs_core::store::EventRow;
use serde_json::Value;

use crate::schema::log_events;

pub(super) const COLUMNS: &str = "id, event_id, cfx_id, batch_id, level, event_type, occurred_at, \
     ingested_at, player_id, target_player_id, player_identifiers, target_player_identifiers, \
     resource, trace_id, environment, message, data";

#[derive(QueryableByName)]
#[diesel(table_name = log_events)]
pub(super) struct Row {
    id: i64,
    event_id: String,
    cfx_id: String,
    batch_id: String,
    level: String,
    event_type: String,
    occurred_at: DateTime<Utc>,
    ingested_at: DateTime<Utc>,
    player_id: Option<String>,
    target_player_id: Option<String>,
    player_identifiers: Option<Value>,
    target_player_identifiers: Option<Value>,
    resource: Option<String>,
    trace_id: Option<String>,
    environment: Option<String>,
    message: String,
    data: Option<Value>,
}

impl From<Row> for EventRow {
    fn from(r: Row) -> Self {
        EventRow {
            id: r.id,
            event_id: r.event_id,
            cfx_id: r.cfx_id,
            batch_id: r.batch_id,
            level: r.level,
            event_type: r.event_type,
            occurred_at: r.occurred_at,
            ingested_at: r.ingested_at,
            player_id: r.player_id,
            target_player_id: r.target_player_id,
            player_identifiers: r.player_identifiers,
            target_player_identifiers: r.target_player_identifiers,
            resource: r.resource,
            trace_id: r.trace_id,
            environment: r.environment,
            message: r.message,
            data: r.data,
        }
    }
}
