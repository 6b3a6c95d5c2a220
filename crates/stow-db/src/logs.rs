//! Postgres storage of log batches and events: ingestion, queries, partition maintenance and
//! usage counters.

use chrono::{Duration, NaiveDate, Utc};
use diesel::sql_types::{BigInt, Text};
use diesel::QueryableByName;
use diesel_async::{RunQueryDsl, SimpleAsyncConnection};

use auth_core::StoreError;

use crate::{db_error, Db};

pub struct PgLogs {
    pub(crate) db: Db,
}

impl PgLogs {
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

/// Days of partitions kept ahead of today, and behind it for late events (7 days + slack).
pub const PARTITIONS_AHEAD_DAYS: i64 = 3;
pub const PARTITIONS_BEHIND_DAYS: i64 = 8;

fn partition_name(day: NaiveDate) -> String {
    format!("log_events_p{}", day.format("%Y%m%d"))
}

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct MaintenanceReport {
    pub created: Vec<String>,
    pub dropped: Vec<String>,
    pub failed: Vec<String>,
}

#[derive(QueryableByName)]
struct NameRow {
    #[diesel(sql_type = Text)]
    name: String,
}

#[derive(QueryableByName)]
struct CountRow {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

/// Creates the daily partitions around today and drops those older than the longest plan
/// retention (plus one day). Safe to run repeatedly and concurrently.
pub async fn maintain_partitions(db: &Db) -> Result<MaintenanceReport, StoreError> {
    let mut conn = db.conn().await?;
    let mut report = MaintenanceReport::default();
    let today = Utc::now().date_naive();
    for offset in -PARTITIONS_BEHIND_DAYS..=PARTITIONS_AHEAD_DAYS {
        let day = today + Duration::days(offset);
        let name = partition_name(day);
        let next = day + Duration::days(1);
        let exists: Vec<NameRow> =
            diesel::sql_query("SELECT relname AS name FROM pg_class WHERE relname = $1")
                .bind::<Text, _>(&name)
                .load(&mut conn)
                .await
                .map_err(db_error)?;
        if !exists.is_empty() {
            continue;
        }
        let sql = format!(
            "CREATE TABLE IF NOT EXISTS {name} PARTITION OF log_events \
             FOR VALUES FROM ('{day} 00:00:00+00') TO ('{next} 00:00:00+00')"
        );
        match conn.batch_execute(&sql).await {
            Ok(()) => report.created.push(name),
            Err(e) => {
                // e.g. rows for that day already sit in the default partition
                tracing::warn!(partition = %name, error = %e, "creating log partition failed");
                report.failed.push(name);
            }
        }
    }
    let max_retention: Vec<CountRow> =
        diesel::sql_query("SELECT COALESCE(MAX(retention_days), 0)::bigint AS n FROM plans")
            .load(&mut conn)
            .await
            .map_err(db_error)?;
    let keep_days = <[CountRow]>::first(&max_retention)
        .map(|r| r.n)
        .unwrap_or(0)
        .max(PARTITIONS_BEHIND_DAYS)
        + 1;
    let cutoff = partition_name(today - Duration::days(keep_days));
    let old: Vec<NameRow> = diesel::sql_query(
        "SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid \
         JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname = 'log_events' \
         AND c.relname LIKE 'log\\_events\\_p%' AND c.relname < $1",
    )
    .bind::<Text, _>(&cutoff)
    .load(&mut conn)
    .await
    .map_err(db_error)?;
    for row in old {
        conn.batch_execute(&format!("DROP TABLE IF EXISTS {}", row.name))
            .await
            .map_err(db_error)?;
        report.dropped.push(row.name);
    }
    Ok(report)
}

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
