//! An organization's usage for the current month.

use diesel::sql_types::{BigInt, Text};
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;

use auth_core::StoreError;

use crate::{db_error, Db};

/// Usage figures of an organization for the current month.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Usage {
    pub month: String,
    pub log_events: i64,
    pub objects: i64,
    pub storage_bytes: i64,
}

pub async fn org_usage(db: &Db, org_id: &str) -> Result<Usage, StoreError> {
    let mut conn = db.conn().await?;
    #[derive(QueryableByName)]
    struct Row {
        #[diesel(sql_type = Text)]
        month: String,
        #[diesel(sql_type = BigInt)]
        log_events: i64,
        #[diesel(sql_type = BigInt)]
        objects: i64,
        #[diesel(sql_type = BigInt)]
        storage_bytes: i64,
    }
    let row: Row = diesel::sql_query(
        "SELECT to_char(date_trunc('month', now() AT TIME ZONE 'UTC'), 'YYYY-MM') AS month, \
         COALESCE((SELECT log_events FROM usage_counters WHERE org_id = $1 \
                   AND month = date_trunc('month', now() AT TIME ZONE 'UTC')::date), 0)::bigint AS log_events, \
         (SELECT count(*) FROM objects WHERE org_id = $1)::bigint AS objects, \
         COALESCE((SELECT sum(size) FROM objects WHERE org_id = $1), 0)::bigint AS storage_bytes",
    )
    .bind::<Text, _>(org_id)
    .get_result(&mut conn)
    .await
    .map_err(db_error)?;
    Ok(Usage {
        month: row.month,
        log_events: row.log_events,
        objects: row.objects,
        storage_bytes: row.storage_bytes,
    })
}

/// When each of `server_ids` last had a batch of events accepted (servers without one are absent):
/// the newest batch by commit order, one index probe per server.
pub async fn last_batches(
    db: &Db,
    server_ids: &[String],
) -> Result<std::collections::HashMap<String, chrono::DateTime<chrono::Utc>>, StoreError> {
    use diesel::sql_types::{Array, Timestamptz};
    #[derive(QueryableByName)]
    struct Row {
        #[diesel(sql_type = Text)]
        server_id: String,
        #[diesel(sql_type = Timestamptz)]
        ingested_at: chrono::DateTime<chrono::Utc>,
    }
    if server_ids.is_empty() {
        return Ok(Default::default());
    }
    let mut conn = db.conn().await?;
    let rows: Vec<Row> = diesel::sql_query(
        "SELECT s.id AS server_id, b.ingested_at FROM unnest($1::text[]) AS s(id) \
         CROSS JOIN LATERAL (SELECT ingested_at FROM log_batches WHERE server_id = s.id \
                             ORDER BY commit_xid DESC LIMIT 1) b",
    )
    .bind::<Array<Text>, _>(server_ids)
    .load(&mut conn)
    .await
    .map_err(db_error)?;
    Ok(rows
        .into_iter()
        .map(|r| (r.server_id, r.ingested_at))
        .collect())
}
