//! When each server last had a batch accepted (the overview's "last event").

use std::collections::HashMap;

use auth_core::StoreError;
use chrono::{DateTime, Utc};
use diesel::sql_types::Text;
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;
use logs_core::ServerId;

use crate::{db_error, Db};

/// When each of `server_ids` last had a batch of events accepted (servers without one are absent):
/// the newest batch by commit order, one index probe per server.
pub(super) async fn last_batches(
    db: &Db,
    servers: &[ServerId],
) -> Result<HashMap<ServerId, DateTime<Utc>>, StoreError> {
    use diesel::sql_types::{Array, Timestamptz};
    #[derive(QueryableByName)]
    struct Row {
        #[diesel(sql_type = Text)]
        server_id: String,
        #[diesel(sql_type = Timestamptz)]
        ingested_at: DateTime<Utc>,
    }
    if servers.is_empty() {
        return Ok(Default::default());
    }
    let server_ids: Vec<&str> = servers.iter().map(ServerId::as_str).collect();
    let mut conn = db.conn().await?;
    let rows: Vec<Row> = diesel::sql_query(
        "SELECT s.id AS server_id, b.ingested_at FROM unnest($1::text[]) AS s(id) \
         CROSS JOIN LATERAL (SELECT ingested_at FROM log_batches WHERE server_id = s.id \
                             ORDER BY commit_xid DESC LIMIT 1) b",
    )
    .bind::<Array<Text>, _>(&server_ids)
    .load(&mut conn)
    .await
    .map_err(db_error)?;
    Ok(rows
        .into_iter()
        .map(|r| (ServerId::new(r.server_id), r.ingested_at))
        .collect())
}
