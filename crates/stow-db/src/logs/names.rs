//! Events by their player's name ([`LogStore::named`](logs_core::LogStore::named)), through the
//! partial index `log_events_actor_name` on `(server_id, log_actor_name(data), occurred_at DESC,
//! id DESC)` (migration 25): newest first, one index range per partition.

use diesel::sql_types::{BigInt, Text, Timestamptz};
use diesel_async::RunQueryDsl;
use logs_core::store::{EventRow, NameQuery, SearchError};

use super::event_row::{Row, COLUMNS};

use crate::{db_error, Conn};

pub async fn named(conn: &mut Conn, q: &NameQuery) -> Result<Vec<EventRow>, SearchError> {
    let rows: Vec<Row> = diesel::sql_query(format!(
        "SELECT {COLUMNS} FROM log_events WHERE server_id = $1 AND log_actor_name(data) = $2 \
         AND occurred_at >= $3 AND occurred_at < $4 ORDER BY occurred_at DESC, id DESC LIMIT $5"
    ))
    .bind::<Text, _>(q.server_id.as_str())
    .bind::<Text, _>(&q.name)
    .bind::<Timestamptz, _>(q.from)
    .bind::<Timestamptz, _>(q.to)
    .bind::<BigInt, _>(q.limit as i64)
    .load(conn)
    .await
    .map_err(db_error)?;
    Ok(rows.into_iter().map(Into::into).collect())
}
