//! [`PgLogs`] as the `LogStore`: batch ingestion (one transaction per batch) and event search,
//! with the SQL the search builds and its tests. Longer than most files here, and kept whole: the
//! ingestion's columns and the search's keyset and day windows are one schema read two ways.

use async_trait::async_trait;
use auth_core::StoreError;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{Array, Integer, Jsonb, Nullable, Text, Timestamptz};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, RunQueryDsl, SimpleAsyncConnection};
use logs_core::event::Batch;
use logs_core::store::{
    new_event_id, EventQuery, EventRow, IngestOutcome, IngestTarget, LogStore, Owner,
};
use serde_json::Value;

use super::PgLogs;
use crate::schema::{log_batches, log_events, usage_counters};
use crate::{db_error, Conn};

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

#[derive(Queryable, Selectable)]
#[diesel(table_name = log_events)]
struct Row {
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
                        ))
                        .on_conflict_do_nothing()
                        .execute(conn)
                        .await?;
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
            Err(TxError::Db(e)) if is_lock_timeout(&e) => Ok(IngestOutcome::InProgress),
            Err(TxError::Db(e)) => Err(db_error(e)),
        }
    }

    async fn query(&self, q: &EventQuery) -> Result<Vec<EventRow>, StoreError> {
        let mut conn = self.db.conn().await?;
        if q.message.is_none() {
            return select_page(&mut conn, q).await;
        }
        // A message search is a trigram bitmap scan: its matches come unordered, so one
        // statement over the whole window fetches and sorts every match of every day. Day
        // by day, newest first, stops as soon as the page is full (usually after a day).
        let mut rows = Vec::with_capacity(q.limit);
        for (from, to) in day_windows(q) {
            let window = EventQuery {
                from,
                to,
                limit: q.limit - rows.len(),
                ..q.clone()
            };
            rows.extend(select_page(&mut conn, &window).await?);
            if rows.len() >= q.limit {
                break;
            }
        }
        Ok(rows)
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

type PageQuery<'a> = log_events::BoxedQuery<
    'a,
    diesel::pg::Pg,
    diesel::dsl::SqlTypeOf<diesel::dsl::AsSelect<Row, diesel::pg::Pg>>,
>;

/// The statement for one page of `q`.
fn page_query(q: &EventQuery) -> PageQuery<'_> {
    let mut query = log_events::table
        .filter(log_events::server_id.eq(&q.server_id.0))
        .filter(log_events::occurred_at.ge(q.from))
        .filter(log_events::occurred_at.lt(q.to))
        .select(Row::as_select())
        .order((log_events::occurred_at.desc(), log_events::id.desc()))
        .limit(q.limit as i64)
        .into_boxed();
    match q.levels.as_deref() {
        None => {}
        // one level: an equality the `server_level` index serves in order
        Some([one]) => query = query.filter(log_events::level.eq(one.as_str())),
        Some(many) => {
            query = query.filter(log_events::level.eq_any(many.iter().map(|l| l.as_str())))
        }
    }
    if let Some(t) = &q.event_type {
        query = query.filter(log_events::event_type.eq(t.clone()));
    }
    if let Some(r) = &q.resource {
        query = query.filter(log_events::resource.eq(r.clone()));
    }
    if let Some(m) = &q.message {
        query = query.filter(log_events::message.ilike(format!("%{}%", like_escape(m))));
    }
    if let Some(p) = &q.player_id {
        query = query.filter(
            log_events::player_id
                .eq(p.clone())
                .or(log_events::target_player_id.eq(p.clone())),
        );
    }
    if let Some(i) = &q.identifier {
        // matches the `log_identity` indexes (migration 5): keyed by server and identifier
        let needle =
            serde_json::json!({ q.server_id.0.clone(): { i.key.clone(): i.value.clone() } });
        let column = match i.owner {
            Owner::Player => "log_identity(server_id, player_identifiers) @> ",
            Owner::Target => "log_identity(server_id, target_player_identifiers) @> ",
        };
        query = query
            .filter(diesel::dsl::sql::<diesel::sql_types::Bool>(column).bind::<Jsonb, _>(needle));
    }
    if let Some((t, id)) = q.after {
        // `occurred_at <= t` is implied by the next condition but, unlike that `OR`, it is an
        // index condition: the scan starts at the cursor instead of at the newest event and
        // filtering its way down (discarding every row of the earlier pages), and partitions
        // newer than the cursor are pruned.
        query = query.filter(log_events::occurred_at.le(t)).filter(
            log_events::occurred_at
                .lt(t)
                .or(log_events::occurred_at.eq(t).and(log_events::id.lt(id))),
        );
    }
    query
}

/// One page of `q` in one statement.
async fn select_page(conn: &mut Conn, q: &EventQuery) -> Result<Vec<EventRow>, StoreError> {
    let rows: Vec<Row> = page_query(q).load(conn).await.map_err(db_error)?;
    Ok(rows
        .into_iter()
        .map(|r| EventRow {
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
        })
        .collect())
}

/// The part of `q`'s window a page can still come from (below its cursor), cut at UTC
/// midnights (the partition bounds), newest first.
pub fn day_windows(q: &EventQuery) -> Vec<(DateTime<Utc>, DateTime<Utc>)> {
    let mut to = match q.after {
        // the cursor's own instant stays in: ties continue below its id
        Some((t, _)) => q.to.min(t + chrono::Duration::microseconds(1)),
        None => q.to,
    };
    let mut windows = Vec::new();
    while to > q.from {
        let last = to - chrono::Duration::microseconds(1);
        let midnight = last.date_naive().and_time(chrono::NaiveTime::MIN).and_utc();
        let from = q.from.max(midnight);
        windows.push((from, to));
        to = from;
    }
    windows
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

#[cfg(test)]
mod tests {
    use chrono::{DateTime, Duration, Utc};
    use logs_core::store::EventQuery;

    use super::{day_windows, page_query};

    fn at(s: &str) -> DateTime<Utc> {
        s.parse().unwrap()
    }

    fn query(from: &str, to: &str, after: Option<&str>) -> EventQuery {
        EventQuery {
            server_id: logs_core::ServerId("s".into()),
            from: at(from),
            to: at(to),
            levels: None,
            event_type: None,
            resource: None,
            message: Some("x".into()),
            player_id: None,
            identifier: None,
            after: after.map(|t| (at(t), 7)),
            limit: 100,
        }
    }

    /// A page after a cursor bounds `occurred_at` by a plain comparison, which Postgres uses
    /// as an index condition (and to prune partitions); the tie-breaking `OR` alone is only a
    /// filter, so every page scanned from the newest event down to its cursor.
    #[test]
    fn pages_after_a_cursor_bound_the_scan_by_an_index_condition() {
        let sql =
            |q: &EventQuery| diesel::debug_query::<diesel::pg::Pg, _>(&page_query(q)).to_string();
        let mut q = query("2026-11-01T00:00:00Z", "2026-11-08T00:00:00Z", None);
        q.message = None;
        assert!(!sql(&q).contains("\"occurred_at\" <= $"), "{}", sql(&q));
        q.after = Some((at("2026-11-05T12:00:00Z"), 7));
        let paged = sql(&q);
        assert!(
            paged.contains("AND (\"log_events\".\"occurred_at\" <= $"),
            "{paged}"
        );
        assert!(paged.contains("\"log_events\".\"id\" < $"), "{paged}");
    }

    fn pairs(v: &[(&str, &str)]) -> Vec<(DateTime<Utc>, DateTime<Utc>)> {
        v.iter().map(|(f, t)| (at(f), at(t))).collect()
    }

    #[test]
    fn a_window_inside_one_day_is_one_statement() {
        let q = query("2026-11-20T01:00:00Z", "2026-11-20T23:00:00Z", None);
        assert_eq!(
            day_windows(&q),
            pairs(&[("2026-11-20T01:00:00Z", "2026-11-20T23:00:00Z")])
        );
    }

    #[test]
    fn days_are_cut_at_utc_midnight_newest_first_and_cover_the_window_once() {
        let q = query("2026-11-17T12:00:00Z", "2026-11-20T06:30:00Z", None);
        assert_eq!(
            day_windows(&q),
            pairs(&[
                ("2026-11-20T00:00:00Z", "2026-11-20T06:30:00Z"),
                ("2026-11-19T00:00:00Z", "2026-11-20T00:00:00Z"),
                ("2026-11-18T00:00:00Z", "2026-11-19T00:00:00Z"),
                ("2026-11-17T12:00:00Z", "2026-11-18T00:00:00Z"),
            ])
        );
    }

    #[test]
    fn an_end_at_midnight_adds_no_empty_day() {
        let q = query("2026-11-19T00:00:00Z", "2026-11-21T00:00:00Z", None);
        assert_eq!(
            day_windows(&q),
            pairs(&[
                ("2026-11-20T00:00:00Z", "2026-11-21T00:00:00Z"),
                ("2026-11-19T00:00:00Z", "2026-11-20T00:00:00Z"),
            ])
        );
    }

    #[test]
    fn the_cursor_caps_the_window_and_keeps_its_own_instant() {
        let q = query(
            "2026-11-17T12:00:00Z",
            "2026-11-20T06:30:00Z",
            Some("2026-11-19T00:00:00Z"),
        );
        let w = day_windows(&q);
        assert_eq!(
            w[0],
            (
                at("2026-11-19T00:00:00Z"),
                at("2026-11-19T00:00:00Z") + Duration::microseconds(1)
            )
        );
        assert_eq!(
            w[1],
            (at("2026-11-18T00:00:00Z"), at("2026-11-19T00:00:00Z"))
        );
        assert_eq!(w.len(), 3);
        // a cursor after the window's end changes nothing
        let late = query(
            "2026-11-20T01:00:00Z",
            "2026-11-20T02:00:00Z",
            Some("2026-11-21T00:00:00Z"),
        );
        assert_eq!(
            day_windows(&late),
            pairs(&[("2026-11-20T01:00:00Z", "2026-11-20T02:00:00Z")])
        );
    }

    #[test]
    fn an_empty_window_or_a_cursor_below_it_is_no_statement() {
        let q = query("2026-11-20T01:00:00Z", "2026-11-20T01:00:00Z", None);
        assert!(day_windows(&q).is_empty());
        let q = query(
            "2026-11-20T01:00:00Z",
            "2026-11-20T05:00:00Z",
            Some("2026-11-19T23:00:00Z"),
        );
        assert!(day_windows(&q).is_empty());
    }
}
