//! The live tail's reads of [`super::PgLogs`]: batches in the order they became visible.
//!
//! A batch's place is the id of the transaction that inserted it (`log_batches.commit_xid`,
//! migration 10). Transaction ids are handed out in start order, not commit order, so a reader
//! takes only batches below the xmin of a snapshot it took first: every transaction older than
//! that has ended, so no batch can appear later below it. Ingestion transactions last
//! milliseconds; a long-running writing transaction anywhere in the database holds the tail
//! back until it ends (docs/operations.md).

use chrono::{DateTime, Duration, Utc};
use diesel::sql_types::{BigInt, Nullable, Text, Timestamptz};
use diesel::OptionalExtension;
use diesel_async::RunQueryDsl;
use logs_core::event::{MAX_FUTURE_MINUTES, MAX_PAST_DAYS};
use logs_core::plan::Bounds;
use logs_core::store::{EventRow, ServerId, TailPage, TailPosition, TailQuery};
use std::collections::HashMap;

use super::event_row::{Row, COLUMNS};
use super::search_sql::Sql;
use crate::{db_error, Conn};
use auth_core::StoreError;

#[derive(diesel::QueryableByName)]
struct Horizon {
    #[diesel(sql_type = BigInt)]
    xmin: i64,
}

/// Every transaction below this has ended.
async fn horizon(conn: &mut Conn) -> Result<i64, StoreError> {
    let h: Horizon =
        diesel::sql_query("SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint AS xmin")
            .get_result(conn)
            .await
            .map_err(db_error)?;
    Ok(h.xmin)
}

pub async fn tail_start(conn: &mut Conn) -> Result<TailPosition, StoreError> {
    Ok(TailPosition::after_batch(horizon(conn).await? - 1))
}

#[derive(diesel::QueryableByName)]
struct BatchRow {
    #[diesel(sql_type = Text)]
    batch_id: String,
    #[diesel(sql_type = BigInt)]
    commit_xid: i64,
    #[diesel(sql_type = Timestamptz)]
    ingested_at: DateTime<Utc>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    occurred_from: Option<DateTime<Utc>>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    occurred_to: Option<DateTime<Utc>>,
}

impl BatchRow {
    /// Where its events lie in time (batches from before migration 10: the ingestion window).
    fn span(&self) -> (DateTime<Utc>, DateTime<Utc>) {
        (
            self.occurred_from
                .unwrap_or(self.ingested_at - Duration::days(MAX_PAST_DAYS)),
            self.occurred_to
                .unwrap_or(self.ingested_at + Duration::minutes(MAX_FUTURE_MINUTES)),
        )
    }
}

pub async fn tail(conn: &mut Conn, q: &TailQuery) -> Result<TailPage, StoreError> {
    let horizon = horizon(conn).await?;
    let whole = q.after.id == TailPosition::WHOLE_BATCH;
    // the batches of the first `max_batches` transactions: one transaction may hold several
    // batches of the server (group commit), and a page never ends inside one
    let mut sql = Sql::new(
        "SELECT batch_id, commit_xid, ingested_at, occurred_from, occurred_to FROM log_batches \
         WHERE server_id = ",
    );
    sql.text(q.server_id.to_string())
        .push(" AND commit_xid IN (SELECT DISTINCT commit_xid FROM log_batches WHERE server_id = ")
        .text(q.server_id.to_string())
        .push(if whole {
            " AND commit_xid > "
        } else {
            " AND commit_xid >= "
        })
        .bigint(q.after.seq)
        .push(" AND commit_xid < ")
        .bigint(horizon)
        .push(" ORDER BY commit_xid LIMIT ")
        .bigint(q.max_batches as i64)
        .push(") ORDER BY commit_xid");
    let batches: Vec<BatchRow> = sql.into_query().load(conn).await.map_err(db_error)?;
    let transactions = batches
        .windows(2)
        .filter(|w| w[0].commit_xid != w[1].commit_xid)
        .count()
        + usize::from(!batches.is_empty());
    // past every batch read; when fewer than asked came, past everything below the horizon
    let next = match batches.last() {
        Some(last) if transactions == q.max_batches => TailPosition::after_batch(last.commit_xid),
        _ => TailPosition::after_batch(horizon - 1),
    }
    .max(q.after);
    let (Some(from), Some(to)) = (
        batches.iter().map(|b| b.span().0).min(),
        batches.iter().map(|b| b.span().1).max(),
    ) else {
        return Ok(TailPage {
            events: Vec::new(),
            next,
        });
    };
    let seq: HashMap<&str, i64> = batches
        .iter()
        .map(|b| (b.batch_id.as_str(), b.commit_xid))
        .collect();
    let mut sql = Sql::new(&format!("SELECT {COLUMNS} FROM log_events WHERE "));
    let bounds = Bounds::window(&q.server_id, (from, to + Duration::microseconds(1)));
    sql.search(bounds, &q.filters)
        .push(" AND batch_id = ANY(")
        .texts(batches.iter().map(|b| b.batch_id.clone()).collect())
        .push(")");
    let rows: Vec<Row> = sql.into_query().load(conn).await.map_err(db_error)?;
    let mut events: Vec<(TailPosition, EventRow)> = rows
        .into_iter()
        .filter_map(|r| {
            let r = EventRow::from(r);
            let pos = TailPosition {
                seq: *seq.get(r.batch_id.as_str())?,
                id: r.id,
            };
            (pos > q.after).then_some((pos, r))
        })
        .collect();
    events.sort_by_key(|(p, _)| *p);
    Ok(TailPage { events, next })
}

#[derive(diesel::QueryableByName)]
struct At {
    #[diesel(sql_type = Timestamptz)]
    ingested_at: DateTime<Utc>,
}

pub async fn tail_batch_time(
    conn: &mut Conn,
    server: &ServerId,
    seq: i64,
) -> Result<Option<DateTime<Utc>>, StoreError> {
    let at: Option<At> = diesel::sql_query(
        "SELECT ingested_at FROM log_batches WHERE server_id = $1 AND commit_xid = $2 \
         ORDER BY ingested_at LIMIT 1",
    )
    .bind::<Text, _>(server.as_str())
    .bind::<BigInt, _>(seq)
    .get_result(conn)
    .await
    .optional()
    .map_err(db_error)?;
    Ok(at.map(|a| a.ingested_at))
}
