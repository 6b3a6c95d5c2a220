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
