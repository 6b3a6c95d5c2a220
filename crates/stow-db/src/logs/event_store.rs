//! [`PgLogs`] as the `LogStore`: batch ingestion (one transaction per batch); the reads are in
//! [`super::reads`].

use async_trait::async_trait;
use auth_core::StoreError;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{Array, BigInt, Integer, Nullable, Text, Timestamptz};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, RunQueryDsl, SimpleAsyncConnection};
use logs_core::event::Batch;
use logs_core::store::{
    bucket_start, new_event_id, BucketCount, CountQuery, EventQuery, EventRow, FacetQuery, Facets,
    IngestOutcome, IngestTarget, LogStore, SearchError, ServerId, TailPage, TailPosition,
    TailQuery,
};

use super::{reads, tail, PgLogs};
use crate::db_error;
use crate::schema::{log_batches, usage_counters};

/// How long a request waits for a concurrent request committing the same batch id.
const SAME_BATCH_WAIT: &str = "SET LOCAL lock_timeout = '3s'";

enum TxError {
    Db(diesel::result::Error),
    Outcome(IngestOutcome),
}

impl From<diesel::result::Error> for TxError {
    fn from(e: diesel::result::Error) -> Self {
        TxError::Db(e)
    }
}

/// JSON text for a jsonb column, serialized straight from the parsed map (Postgres parses
/// it into jsonb; building a `serde_json::Value` first would copy every key and value).
fn json_text<T: serde::Serialize>(v: Option<&T>) -> Option<String> {
    v.and_then(|v| serde_json::to_string(v).ok())
}

fn is_lock_timeout(e: &diesel::result::Error) -> bool {
    matches!(e, diesel::result::Error::DatabaseError(_, info) if info.message().contains("lock timeout"))
}

/// Escapes `\`, `%` and `_` so user text matches literally inside LIKE.
pub fn like_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    for c in s.chars() {
        if matches!(c, '\\' | '%' | '_') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[async_trait]
impl LogStore for PgLogs {
    async fn ingest(
        &self,
        t: &IngestTarget,
        batch: &Batch,
        now: DateTime<Utc>,
    ) -> Result<IngestOutcome, StoreError> {
        let mut conn = self.db.conn().await?;
        let n = batch.events.len() as i32;
        let mut cols = Columns::default();
        for e in &batch.events {
            cols.event_id
                .push(e.event_id.clone().unwrap_or_else(new_event_id));
            cols.level.push(e.level.as_str());
            cols.event_type.push(&e.event_type);
            cols.occurred_at.push(e.occurred_at.unwrap_or(now));
            cols.player_id.push(e.player_id.as_deref());
            cols.target_player_id.push(e.target_player_id.as_deref());
            cols.player_identifiers
                .push(json_text(e.player_identifiers.as_ref()));
            cols.target_player_identifiers
                .push(json_text(e.target_player_identifiers.as_ref()));
            cols.resource.push(e.resource.as_deref());
            cols.trace_id.push(e.trace_id.as_deref());
            cols.environment.push(e.environment.as_deref());
            cols.message.push(&e.message);
            cols.data.push(json_text(e.data.as_ref()));
        }
        // the batch's events per hour, level, type and resource (log_counts_hourly), in key order
        // so that concurrent batches lock the rows they share in one order
        let mut hourly: std::collections::BTreeMap<(DateTime<Utc>, &str, &str, &str), i64> =
            std::collections::BTreeMap::new();
        for (i, e) in batch.events.iter().enumerate() {
            let hour = bucket_start(cols.occurred_at[i], chrono::Duration::hours(1));
            *hourly
                .entry((
                    hour,
                    cols.level[i],
                    &e.event_type,
                    e.resource.as_deref().unwrap_or(""),
                ))
                .or_default() += 1;
        }
        let mut counts = HourlyCounts::default();
        for ((hour, level, event_type, resource), n) in hourly {
            counts.hour.push(hour);
            counts.level.push(level);
            counts.event_type.push(event_type);
            counts.resource.push(resource);
            counts.n.push(n);
        }
        // where the batch's events lie in time, for the live tail to find them by index
        let occurred_from = cols.occurred_at.iter().min().copied();
        let occurred_to = cols.occurred_at.iter().max().copied();
        let result = conn
            .transaction::<_, TxError, _>(|conn| {
                async move {
                    conn.batch_execute(SAME_BATCH_WAIT).await?;
                    let inserted = diesel::insert_into(log_batches::table)
                        .values((
                            log_batches::server_id.eq(&t.server_id.0),
                            log_batches::batch_id.eq(&batch.batch_id),
                            log_batches::org_id.eq(&t.org_id),
                            log_batches::digest.eq(batch.digest.as_slice()),
                            log_batches::accepted_events.eq(n),
                            log_batches::ingested_at.eq(now),
                            log_batches::occurred_from.eq(occurred_from),
                            log_batches::occurred_to.eq(occurred_to),
                        ))
                        .on_conflict_do_nothing()
                        .execute(conn)
                        .await
                        // only here does a lock wait mean the same batch id is still committing;
                        // one elsewhere (the hourly counts, the usage row) is plain contention,
                        // answered as the database being unavailable
                        .map_err(|e| {
                            if is_lock_timeout(&e) {
                                TxError::Outcome(IngestOutcome::InProgress)
                            } else {
                                TxError::Db(e)
                            }
                        })?;
                    if inserted == 0 {
                        let (digest, accepted, at): (Vec<u8>, i32, DateTime<Utc>) = log_batches::table
                            .find((&t.server_id.0, &batch.batch_id))
                            .select((log_batches::digest, log_batches::accepted_events, log_batches::ingested_at))
                            .first(conn)
                            .await?;
                        let outcome = if digest == batch.digest {
                            IngestOutcome::Replayed { accepted_events: accepted, ingested_at: at }
                        } else {
                            IngestOutcome::Conflict
                        };
                        return Err(TxError::Outcome(outcome));
                    }
                    diesel::sql_query(
                        "INSERT INTO log_events (org_id, server_id, cfx_id, batch_id, ingested_at, event_id, level, \
                         event_type, occurred_at, player_id, target_player_id, player_identifiers, \
                         target_player_identifiers, resource, trace_id, environment, message, data) \
                         SELECT $1, $2, $3, $4, $5, u.event_id, u.level, u.event_type, u.occurred_at, \
                         u.player_id, u.target_player_id, u.pi::jsonb, u.tpi::jsonb, u.resource, u.trace_id, \
                         u.environment, u.message, u.data::jsonb FROM unnest($6::text[], $7::text[], $8::text[], \
                         $9::timestamptz[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[], \
                         $15::text[], $16::text[], $17::text[], $18::text[]) AS u(event_id, level, event_type, \
                         occurred_at, player_id, target_player_id, pi, tpi, resource, trace_id, environment, \
                         message, data)",
                    )
                    .bind::<Text, _>(&t.org_id)
                    .bind::<Text, _>(&t.server_id.0)
                    .bind::<Text, _>(&t.cfx_id)
                    .bind::<Text, _>(&batch.batch_id)
                    .bind::<Timestamptz, _>(now)
                    .bind::<Array<Text>, _>(&cols.event_id)
                    .bind::<Array<Text>, _>(&cols.level)
                    .bind::<Array<Text>, _>(&cols.event_type)
                    .bind::<Array<Timestamptz>, _>(&cols.occurred_at)
                    .bind::<Array<Nullable<Text>>, _>(&cols.player_id)
                    .bind::<Array<Nullable<Text>>, _>(&cols.target_player_id)
                    .bind::<Array<Nullable<Text>>, _>(&cols.player_identifiers)
                    .bind::<Array<Nullable<Text>>, _>(&cols.target_player_identifiers)
                    .bind::<Array<Nullable<Text>>, _>(&cols.resource)
                    .bind::<Array<Nullable<Text>>, _>(&cols.trace_id)
                    .bind::<Array<Nullable<Text>>, _>(&cols.environment)
                    .bind::<Array<Text>, _>(&cols.message)
                    .bind::<Array<Nullable<Text>>, _>(&cols.data)
                    .execute(conn)
                    .await?;
                    diesel::sql_query(
                        "INSERT INTO log_counts_hourly (server_id, hour, level, event_type, resource, n) \
                         SELECT $1, u.hour, u.level, u.event_type, u.resource, u.n FROM unnest($2::timestamptz[], \
                         $3::text[], $4::text[], $5::text[], $6::int8[]) AS u(hour, level, event_type, resource, n) \
                         ON CONFLICT (server_id, hour, level, event_type, resource) \
                         DO UPDATE SET n = log_counts_hourly.n + EXCLUDED.n",
                    )
                    .bind::<Text, _>(&t.server_id.0)
                    .bind::<Array<Timestamptz>, _>(&counts.hour)
                    .bind::<Array<Text>, _>(&counts.level)
                    .bind::<Array<Text>, _>(&counts.event_type)
                    .bind::<Array<Text>, _>(&counts.resource)
                    .bind::<Array<BigInt>, _>(&counts.n)
                    .execute(conn)
                    .await?;
                    diesel::sql_query(
                        "INSERT INTO usage_counters (org_id, month, log_events) \
                         VALUES ($1, date_trunc('month', $2 AT TIME ZONE 'UTC')::date, $3) \
                         ON CONFLICT (org_id, month) DO UPDATE SET log_events = usage_counters.log_events + EXCLUDED.log_events",
                    )
                    .bind::<Text, _>(&t.org_id)
                    .bind::<Timestamptz, _>(now)
                    .bind::<Integer, _>(n)
                    .execute(conn)
                    .await?;
                    Ok(IngestOutcome::Accepted { accepted_events: n, ingested_at: now })
                }
                .scope_boxed()
            })
            .await;
        match result {
            Ok(o) => Ok(o),
            Err(TxError::Outcome(o)) => Ok(o),
            Err(TxError::Db(e)) => Err(db_error(e)),
        }
    }

    async fn query(&self, q: &EventQuery) -> Result<Vec<EventRow>, SearchError> {
        reads::query(&mut self.db.conn().await?, q).await
    }

    async fn counts(&self, q: &CountQuery) -> Result<Vec<BucketCount>, SearchError> {
        reads::counts(&mut self.db.conn().await?, q).await
    }

    async fn facets(&self, q: &FacetQuery) -> Result<Facets, SearchError> {
        reads::facets(&mut self.db.conn().await?, q).await
    }

    async fn tail_start(&self, _server: &ServerId) -> Result<TailPosition, StoreError> {
        tail::tail_start(&mut self.db.conn().await?).await
    }

    async fn tail(&self, q: &TailQuery) -> Result<TailPage, StoreError> {
        tail::tail(&mut self.db.conn().await?, q).await
    }

    async fn tail_batch_time(
        &self,
        server: &ServerId,
        seq: i64,
    ) -> Result<Option<DateTime<Utc>>, StoreError> {
        tail::tail_batch_time(&mut self.db.conn().await?, server, seq).await
    }

    async fn monthly_usage(&self, org_id: &str, now: DateTime<Utc>) -> Result<i64, StoreError> {
        let mut conn = self.db.conn().await?;
        let month = chrono::NaiveDate::from_ymd_opt(
            chrono::Datelike::year(&now),
            chrono::Datelike::month(&now),
            1,
        )
        .ok_or_else(|| StoreError::Internal("bad month".into()))?;
        usage_counters::table
            .find((org_id, month))
            .select(usage_counters::log_events)
            .first(&mut conn)
            .await
            .optional()
            .map(|v| v.unwrap_or(0))
            .map_err(db_error)
    }
}

/// The batch's rows of `log_counts_hourly`, one array per column.
#[derive(Default)]
struct HourlyCounts<'a> {
    hour: Vec<DateTime<Utc>>,
    level: Vec<&'static str>,
    event_type: Vec<&'a str>,
    resource: Vec<&'a str>,
    n: Vec<i64>,
}

/// The batch as one array per column, borrowing from the parsed events (no copies but the
/// generated event ids and the JSON text of the jsonb columns).
#[derive(Default)]
struct Columns<'a> {
    event_id: Vec<String>,
    level: Vec<&'static str>,
    event_type: Vec<&'a str>,
    occurred_at: Vec<DateTime<Utc>>,
    player_id: Vec<Option<&'a str>>,
    target_player_id: Vec<Option<&'a str>>,
    player_identifiers: Vec<Option<String>>,
    target_player_identifiers: Vec<Option<String>>,
    resource: Vec<Option<&'a str>>,
    trace_id: Vec<Option<&'a str>>,
    environment: Vec<Option<&'a str>>,
    message: Vec<&'a str>,
    data: Vec<Option<String>>,
}
