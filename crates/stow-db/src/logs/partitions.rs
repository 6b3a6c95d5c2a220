//! Daily partitions of `log_events`: created ahead, dropped past retention, vacuumed once closed;
//! stray rows moved out of the default partition.

use chrono::{DateTime, Duration, NaiveDate, Utc};
use diesel::sql_types::{BigInt, Text};
use diesel::QueryableByName;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};

use auth_core::StoreError;

use crate::{db_error, Db};

/// Days of partitions kept ahead of today, and behind it for late events (7 days + slack).
pub const PARTITIONS_AHEAD_DAYS: i64 = 3;
pub const PARTITIONS_BEHIND_DAYS: i64 = 8;

/// Storage settings of every day partition (migration 23 sets them on the ones made before):
/// no autovacuum for inserts. An insert-triggered vacuum of the open day, every 20% of growth,
/// rereads each new heap page (setting hint and visibility bits, which dirties and writes it
/// again) and every page of the partition's GIN indexes, on the cores ingestion is using
/// (docs/benchmarks.md, "Sustained ingestion"). What it does for a partition that only receives
/// inserts is done once, when the day has closed, by the maintenance's `VACUUM (ANALYZE)`
/// below; the GIN pending lists stay bounded (their inserts merge them past
/// `gin_pending_list_limit`). Autovacuum still runs for dead rows, for analyze and against
/// wraparound.
pub const PARTITION_SETTINGS: &str = "autovacuum_vacuum_insert_threshold = -1";

fn partition_name(day: NaiveDate) -> String {
    format!("log_events_p{}", day.format("%Y%m%d"))
}

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct MaintenanceReport {
    pub created: Vec<String>,
    pub dropped: Vec<String>,
    pub failed: Vec<String>,
    /// Closed (past-day) partitions vacuumed and analyzed because they had new events.
    pub vacuumed: Vec<String>,
    /// Events moved out of the default partition into the day partitions created for them.
    pub moved_from_default: u64,
    /// Batch rows (`log_batches`) deleted because they were accepted before the cutoff.
    pub batches_pruned: u64,
    /// Audit entries deleted because they outlived their organization's retention.
    pub audit_pruned: u64,
}

/// Batch rows deleted per statement, so a day of batches never makes one long statement.
const PRUNE_CHUNK: i64 = 5000;

/// Deletes the batch rows accepted before `expired`, the day the events kept longest start at:
/// a batch's events occurred at most 5 minutes after it was accepted, so none of them is left,
/// and its `batch_id` is no longer remembered for replay (docs/api.md). In chunks, each its own
/// statement; a failure is logged and left to the next run.
async fn prune_batches(conn: &mut AsyncPgConnection, expired: DateTime<Utc>) -> u64 {
    let mut pruned = 0;
    loop {
        let deleted = diesel::sql_query(
            "DELETE FROM log_batches WHERE ctid = ANY (ARRAY(SELECT ctid FROM log_batches \
             WHERE ingested_at < $1 LIMIT $2))",
        )
        .bind::<diesel::sql_types::Timestamptz, _>(expired)
        .bind::<BigInt, _>(PRUNE_CHUNK)
        .execute(conn)
        .await;
        match deleted {
            Ok(n) => {
                pruned += n as u64;
                if (n as i64) < PRUNE_CHUNK {
                    return pruned;
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "deleting expired log batches failed");
                return pruned;
            }
        }
    }
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

/// Creates the daily partitions around today, drops those older than the longest plan
/// retention (plus one day), and vacuums every closed (past-day) partition that received events
/// since its last vacuum. Safe to run repeatedly and concurrently.
///
/// The vacuum matters for search latency, not space: a partition stops receiving (most) events
/// when its day ends, so autovacuum's insert threshold may never fire again, leaving GIN pending
/// lists (read in full by every search) and an unset visibility map behind for good. Late events
/// (up to 7 days back) make a closed partition eligible again; vacuuming an all-visible
/// partition only touches its new pages.
pub async fn maintain_partitions(db: &Db) -> Result<MaintenanceReport, StoreError> {
    let mut conn = db.conn().await?;
    let mut report = MaintenanceReport::default();
    let today = Utc::now().date_naive();
    create_coming(&mut conn, today, &mut report).await?;
    let expired = drop_expired(&mut conn, today, &mut report).await?;
    delete_expired_counts(&mut conn, expired).await;
    report.batches_pruned = prune_batches(&mut conn, expired).await;
    report.audit_pruned = crate::audit::prune_expired(db).await;
    // rate buckets untouched for a day are full again: a new one is the same (auth_core::rate)
    if let Err(e) =
        diesel::sql_query("DELETE FROM rate_buckets WHERE updated_at < now() - interval '1 day'")
            .execute(&mut conn)
            .await
    {
        tracing::warn!(error = %e, "deleting idle rate buckets failed");
    }
    vacuum_closed(&mut conn, today, &mut report).await?;
    Ok(report)
}

/// Creates the partitions of the days around `today` that do not exist yet.
async fn create_coming(
    conn: &mut AsyncPgConnection,
    today: NaiveDate,
    report: &mut MaintenanceReport,
) -> Result<(), StoreError> {
    for offset in -PARTITIONS_BEHIND_DAYS..=PARTITIONS_AHEAD_DAYS {
        let day = today + Duration::days(offset);
        let name = partition_name(day);
        let next = day + Duration::days(1);
        let exists: Vec<NameRow> =
            diesel::sql_query("SELECT relname AS name FROM pg_class WHERE relname = $1")
                .bind::<Text, _>(&name)
                .load(conn)
                .await
                .map_err(db_error)?;
        if !exists.is_empty() {
            continue;
        }
        match create_partition(conn, &name, day, next).await {
            Ok(moved) => {
                report.moved_from_default += moved;
                report.created.push(name);
            }
            Err(e) => {
                tracing::warn!(partition = %name, error = %e, "creating log partition failed");
                report.failed.push(name);
            }
        }
    }
    Ok(())
}

/// Drops the partitions past the longest plan retention (at least the days kept behind);
/// returns the first instant still kept.
async fn drop_expired(
    conn: &mut AsyncPgConnection,
    today: NaiveDate,
    report: &mut MaintenanceReport,
) -> Result<DateTime<Utc>, StoreError> {
    let max_retention: Vec<CountRow> =
        diesel::sql_query("SELECT COALESCE(MAX(retention_days), 0)::bigint AS n FROM plans")
            .load(conn)
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
    .load(conn)
    .await
    .map_err(db_error)?;
    for row in old {
        // like a creation, a drop that fails (e.g. services on a role that may not drop tables;
        // `stowctl logs maintain` as the owner does it) does not stop the rest
        match conn
            .batch_execute(&format!("DROP TABLE IF EXISTS {}", row.name))
            .await
        {
            Ok(()) => report.dropped.push(row.name),
            Err(e) => {
                tracing::warn!(partition = %row.name, error = %e, "dropping expired log partition failed");
                report.failed.push(row.name);
            }
        }
    }
    Ok((today - Duration::days(keep_days))
        .and_hms_opt(0, 0, 0)
        .map(|t| t.and_utc())
        .unwrap_or_default())
}

/// Deletes the hourly counts and the message-search runs of the days dropped (or that would be,
/// on a role that may not drop).
async fn delete_expired_counts(conn: &mut AsyncPgConnection, expired: DateTime<Utc>) {
    for (what, sql) in [
        (
            "hourly log counts",
            "DELETE FROM log_counts_hourly WHERE hour < $1",
        ),
        (
            "15-minute log counts by level",
            "DELETE FROM log_level_counts_15m WHERE slot < $1",
        ),
        ("log runs", "DELETE FROM log_runs WHERE occurred_from < $1"),
    ] {
        if let Err(e) = diesel::sql_query(sql)
            .bind::<diesel::sql_types::Timestamptz, _>(expired)
            .execute(conn)
            .await
        {
            tracing::warn!(error = %e, "deleting expired {what} failed");
        }
    }
}

/// Vacuums closed partitions with inserts since their last vacuum (names sort by day; today's
/// excluded).
async fn vacuum_closed(
    conn: &mut AsyncPgConnection,
    today: NaiveDate,
    report: &mut MaintenanceReport,
) -> Result<(), StoreError> {
    let unvacuumed: Vec<NameRow> = diesel::sql_query(
        "SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid \
         JOIN pg_class p ON p.oid = i.inhparent \
         JOIN pg_stat_user_tables s ON s.relid = c.oid \
         WHERE p.relname = 'log_events' AND c.relname LIKE 'log\\_events\\_p%' AND c.relname < $1 \
         AND s.n_ins_since_vacuum > 0 \
         ORDER BY c.relname",
    )
    .bind::<Text, _>(partition_name(today))
    .load(conn)
    .await
    .map_err(db_error)?;
    for row in unvacuumed {
        // VACUUM cannot run in a transaction; batch_execute sends it as a plain statement
        match conn
            .batch_execute(&format!("VACUUM (ANALYZE) {}", row.name))
            .await
        {
            Ok(()) => report.vacuumed.push(row.name),
            Err(e) => {
                tracing::warn!(partition = %row.name, error = %e, "vacuuming log partition failed");
                report.failed.push(row.name);
            }
        }
    }
    Ok(())
}

/// Creates the partition `name` for `day`, moving the day's events out of the default partition
/// into it in the same transaction (Postgres refuses to create a partition whose rows sit in the
/// default one). The default partition is locked against inserts meanwhile, so no event of that
/// day can land there between the move and the creation. Returns how many events moved.
async fn create_partition(
    conn: &mut AsyncPgConnection,
    name: &str,
    day: NaiveDate,
    next: NaiveDate,
) -> Result<u64, diesel::result::Error> {
    let (from, to) = (format!("{day} 00:00:00+00"), format!("{next} 00:00:00+00"));
    conn.transaction::<_, diesel::result::Error, _>(|conn| {
        async move {
            conn.batch_execute(
                "LOCK TABLE log_events_default IN SHARE ROW EXCLUSIVE MODE; \
                 CREATE TEMP TABLE log_events_stray (LIKE log_events) ON COMMIT DROP",
            )
            .await?;
            let moved = diesel::sql_query(
                "WITH moved AS (DELETE FROM log_events_default \
                     WHERE occurred_at >= $1::timestamptz AND occurred_at < $2::timestamptz RETURNING *) \
                 INSERT INTO log_events_stray SELECT * FROM moved",
            )
            .bind::<Text, _>(&from)
            .bind::<Text, _>(&to)
            .execute(conn)
            .await?;
            conn.batch_execute(&format!(
                "CREATE TABLE IF NOT EXISTS {name} PARTITION OF log_events \
                 FOR VALUES FROM ('{from}') TO ('{to}') WITH ({PARTITION_SETTINGS}); \
                 INSERT INTO log_events SELECT * FROM log_events_stray"
            ))
            .await?;
            Ok(moved as u64)
        }
        .scope_boxed()
    })
    .await
}
