//! The reads of [`super::PgLogs`]: pages of a search, counts over time and facets, each built
//! from the one search condition of [`super::search_sql`].

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Integer, Text, Timestamptz};
use diesel_async::RunQueryDsl;
use logs_core::store::{
    bucket_start, BucketCount, CountQuery, EventQuery, EventRow, FacetQuery, Facets, Filters,
    SearchError, ServerId,
};
use logs_core::Level;
use serde_json::Value;

use super::message_runs::{self, Within};
use super::search_sql::{Position, Sql};
use super::LEVEL_SLOT;
use crate::schema::log_events;
use crate::{db_error, Conn};

pub(super) const COLUMNS: &str = "id, event_id, cfx_id, batch_id, level, event_type, occurred_at, \
     ingested_at, player_id, target_player_id, player_identifiers, target_player_identifiers, \
     resource, trace_id, environment, message, data";

const NEWEST_FIRST: &str = " ORDER BY occurred_at DESC, id DESC";

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

pub async fn query(conn: &mut Conn, q: &EventQuery) -> Result<Vec<EventRow>, SearchError> {
    if let (Some(_), Some(limit)) = (&q.filters.data, q.scan_limit) {
        // `data` has no index: the page reads the events matching the other filters, newest
        // first from the cursor, down to the `limit`-th of them at most
        let within = message_runs::within(conn, &q.server_id, q.from, q.to, &q.filters).await?;
        if within.is_empty() {
            return Ok(Vec::new());
        }
        let floor = nth_candidate(
            conn,
            &q.server_id,
            (q.from, q.to, &within),
            &q.filters,
            q.after,
            limit,
        )
        .await?;
        let rows = select_page(conn, q, floor, &within).await?;
        if floor.is_some() && rows.len() < q.enough {
            return Err(SearchError::TooBroad { limit });
        }
        return Ok(rows);
    }
    if q.filters.message.is_none() {
        return select_page(conn, q, None, &Within::Window).await;
    }
    // A message search reads the spans of the runs whose words can match (fetched unordered
    // and sorted), or a frequent term's day in order (`message_runs::Days`: one candidate
    // lookup for the window, per day only when the term is frequent over it). Day by day,
    // newest first, so that the search stops as soon as the page is full (usually after a day).
    let mut rows = Vec::with_capacity(q.limit);
    let days = day_windows(q);
    let spans = message_runs::Days::new(conn, &q.server_id, &days, &q.filters).await?;
    for (from, to) in days {
        let within = spans
            .day(conn, &q.server_id, (from, to), &q.filters)
            .await?;
        if within.is_empty() {
            continue;
        }
        let window = EventQuery {
            from,
            to,
            limit: q.limit - rows.len(),
            ..q.clone()
        };
        rows.extend(select_page(conn, &window, None, &within).await?);
        if rows.len() >= q.limit {
            break;
        }
    }
    Ok(rows)
}

/// One page of `q` (at or above `floor`, `within` its message spans) in one statement.
async fn select_page(
    conn: &mut Conn,
    q: &EventQuery,
    floor: Option<Position>,
    within: &Within,
) -> Result<Vec<EventRow>, SearchError> {
    let mut sql = Sql::new(&format!("SELECT {COLUMNS} FROM log_events WHERE "));
    sql.search(&q.server_id, q.from, q.to, &q.filters, true, q.after, floor)
        .within(within)
        .push(NEWEST_FIRST)
        .push(" LIMIT ")
        .bigint(q.limit as i64);
    let rows: Vec<Row> = sql.into_query().load(conn).await.map_err(db_error)?;
    Ok(rows.into_iter().map(EventRow::from).collect())
}

#[derive(QueryableByName)]
struct PositionRow {
    #[diesel(sql_type = Timestamptz)]
    occurred_at: DateTime<Utc>,
    #[diesel(sql_type = BigInt)]
    id: i64,
}

/// The position of the `n`-th event (from 1) of the window `[from, to)` (`within` its message
/// spans) matching every filter but `data`, newest first below `after`, when there are more
/// than `n` of them; `None` when there are `n` or fewer.
async fn nth_candidate(
    conn: &mut Conn,
    server: &ServerId,
    (from, to, within): (DateTime<Utc>, DateTime<Utc>, &Within),
    filters: &Filters,
    after: Option<Position>,
    n: usize,
) -> Result<Option<Position>, SearchError> {
    let mut sql = Sql::new("SELECT occurred_at, id FROM log_events WHERE ");
    sql.search(server, from, to, filters, false, after, None)
        .within(within)
        .push(NEWEST_FIRST)
        .push(" OFFSET ")
        .bigint(n.max(1) as i64 - 1)
        .push(" LIMIT 2");
    let rows: Vec<PositionRow> = sql.into_query().load(conn).await.map_err(db_error)?;
    Ok(match rows.as_slice() {
        [nth, _] => Some((nth.occurred_at, nth.id)),
        _ => None,
    })
}

#[derive(QueryableByName)]
struct CountRow {
    #[diesel(sql_type = Timestamptz)]
    start: DateTime<Utc>,
    #[diesel(sql_type = Text)]
    level: String,
    #[diesel(sql_type = BigInt)]
    n: i64,
}

pub async fn counts(conn: &mut Conn, q: &CountQuery) -> Result<Vec<BucketCount>, SearchError> {
    // the message spans of the whole window (no statement without a message term), for the
    // `data` check and for the day-by-day counts below
    let whole = message_runs::within(conn, &q.server_id, q.from, q.to, &q.filters).await?;
    if q.filters.data.is_some()
        && nth_candidate(
            conn,
            &q.server_id,
            (q.from, q.to, &whole),
            &q.filters,
            None,
            q.scan_limit,
        )
        .await?
        .is_some()
    {
        return Err(SearchError::TooBroad {
            limit: q.scan_limit,
        });
    }
    let f = &q.filters;
    let mut rows = Vec::new();
    if let Some(kept) = kept_counts(q) {
        // the whole units of the window from the kept counts, the partial ones at its ends
        // from the events
        let unit = kept.unit;
        let first = bucket_start(q.from + unit - chrono::Duration::microseconds(1), unit);
        let end = bucket_start(q.to, unit);
        if q.from < first {
            rows.extend(raw_counts(conn, q, (q.from, first, &Within::Window)).await?);
        }
        rows.extend(table_counts(conn, q, kept, first, end).await?);
        if end < q.to {
            rows.extend(raw_counts(conn, q, (end, q.to, &Within::Window)).await?);
        }
    } else if f.message.is_some() {
        // day by day, as pages are read: each day reads its own candidate spans, or the
        // whole day when the term is frequent in it
        let spans = message_runs::Days::from(whole);
        for (from, to) in days(q.from, q.to) {
            let within = spans.day(conn, &q.server_id, (from, to), f).await?;
            if !within.is_empty() {
                rows.extend(raw_counts(conn, q, (from, to, &within)).await?);
            }
        }
    } else {
        rows.extend(raw_counts(conn, q, (q.from, q.to, &Within::Window)).await?);
    }
    let mut sums: std::collections::BTreeMap<(DateTime<Utc>, Level), i64> = Default::default();
    for r in rows {
        if let Some(level) = Level::parse(&r.level) {
            *sums.entry((r.start, level)).or_default() += r.n;
        }
    }
    Ok(sums
        .into_iter()
        .map(|((start, level), count)| BucketCount {
            start,
            level,
            count,
        })
        .collect())
}

/// `date_bin` of `column` into the query's buckets, aligned to the Unix epoch.
fn bucket_of(sql: &mut Sql, q: &CountQuery, column: &str) {
    let micros = q.bucket.num_microseconds().unwrap_or(i64::MAX).max(1);
    sql.push("SELECT date_bin(").bigint(micros).push(&format!(
        " * interval '1 microsecond', {column}, timestamptz '1970-01-01 00:00:00+00') AS start, "
    ));
}

/// Counts per bucket and level of the events in `[from, to)` (`within` its message spans).
async fn raw_counts(
    conn: &mut Conn,
    q: &CountQuery,
    (from, to, within): (DateTime<Utc>, DateTime<Utc>, &Within),
) -> Result<Vec<CountRow>, SearchError> {
    let mut sql = raw_counts_sql(q, from, to);
    sql.within(within).push(" GROUP BY 1, 2");
    Ok(sql.into_query().load(conn).await.map_err(db_error)?)
}

/// The counts' statement up to its `GROUP BY`.
fn raw_counts_sql(q: &CountQuery, from: DateTime<Utc>, to: DateTime<Utc>) -> Sql {
    // With no level filter, every level is named anyway: the counts are read from the
    // `server_level` index (server, level, time), where time is the third column, so without a
    // level Postgres reads every entry of the server in each partition the window touches, e.g.
    // all of yesterday's for a window of the last 24 hours. With the levels listed it reads only
    // the window under each. Every stored event has one of these levels (ingestion refuses others).
    let every_level;
    let filters = if q.filters.levels.is_none() {
        every_level = Filters {
            levels: Some(Level::ALL.to_vec()),
            ..q.filters.clone()
        };
        &every_level
    } else {
        &q.filters
    };
    let mut sql = Sql::default();
    bucket_of(&mut sql, q, "occurred_at");
    sql.push("level, count(*) AS n FROM log_events WHERE ")
        .search(&q.server_id, from, to, filters, true, None, None);
    sql
}

/// A table of counts kept by ingestion: its time column and the length of its units.
struct KeptCounts {
    table: &'static str,
    column: &'static str,
    unit: chrono::Duration,
}

/// A row per server, 15-minute slot and level (migration 14).
const LEVEL_SLOTS: KeptCounts = KeptCounts {
    table: "log_level_counts_15m",
    column: "slot",
    unit: LEVEL_SLOT,
};

/// A row per server, hour, level, event type and resource (migration 11).
const HOURS: KeptCounts = KeptCounts {
    table: "log_counts_hourly",
    column: "hour",
    unit: chrono::Duration::hours(1),
};

/// The kept counts that answer `q` for the whole units of its window, if any: with no filter
/// but levels and buckets of whole 15-minute slots, [`LEVEL_SLOTS`]; with level, event type and
/// resource filters only and buckets of whole hours, [`HOURS`]. Each unit then lies in one
/// bucket. A window shorter than two units reads the events.
fn kept_counts(q: &CountQuery) -> Option<&'static KeptCounts> {
    let f = &q.filters;
    if f.message.is_some() || f.player_id.is_some() || f.identifier.is_some() || f.data.is_some() {
        return None;
    }
    let kept = if f.event_type.is_none() && f.resource.is_none() {
        &LEVEL_SLOTS
    } else {
        &HOURS
    };
    let micros = |d: chrono::Duration| d.num_microseconds().unwrap_or(1);
    (micros(q.bucket) % micros(kept.unit) == 0 && q.to - q.from >= kept.unit * 2).then_some(kept)
}

/// Counts per bucket and level from kept counts, for the whole units `[from, to)`.
async fn table_counts(
    conn: &mut Conn,
    q: &CountQuery,
    kept: &KeptCounts,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> Result<Vec<CountRow>, SearchError> {
    let KeptCounts { table, column, .. } = kept;
    let mut sql = Sql::default();
    bucket_of(&mut sql, q, column);
    sql.push(&format!(
        "level, sum(n)::bigint AS n FROM {table} WHERE server_id = "
    ))
    .text(q.server_id.0.clone())
    .push(&format!(" AND {column} >= "))
    .time(from)
    .push(&format!(" AND {column} < "))
    .time(to)
    .facet_filters(&q.filters)
    .push(" GROUP BY 1, 2");
    Ok(sql.into_query().load(conn).await.map_err(db_error)?)
}

#[derive(QueryableByName)]
struct FacetRow {
    #[diesel(sql_type = Integer)]
    facet: i32,
    #[diesel(sql_type = Text)]
    value: String,
    #[diesel(sql_type = BigInt)]
    n: i64,
}

pub async fn facets(conn: &mut Conn, q: &FacetQuery) -> Result<Facets, SearchError> {
    let within = message_runs::within(conn, &q.server_id, q.from, q.to, &q.filters).await?;
    let floor = nth_candidate(
        conn,
        &q.server_id,
        (q.from, q.to, &within),
        &q.filters,
        None,
        q.sample,
    )
    .await?;
    let mut sql = Sql::new(
        "WITH s AS MATERIALIZED (SELECT level, event_type, resource FROM log_events WHERE ",
    );
    sql.search(&q.server_id, q.from, q.to, &q.filters, true, None, floor)
        .within(&within)
        .push(
            ") SELECT 0 AS facet, level AS value, count(*) AS n FROM s GROUP BY level \
             UNION ALL SELECT 1, event_type, count(*) FROM s GROUP BY event_type \
             UNION ALL SELECT 2, resource, count(*) FROM s WHERE resource IS NOT NULL GROUP BY resource",
        );
    let rows: Vec<FacetRow> = sql.into_query().load(conn).await.map_err(db_error)?;
    let facet = |i: i32| {
        Facets::top(
            rows.iter()
                .filter(|r| r.facet == i)
                .map(|r| (r.value.clone(), r.n)),
            q.top,
        )
    };
    Ok(Facets {
        examined: rows.iter().filter(|r| r.facet == 0).map(|r| r.n).sum(),
        sampled: floor.is_some(),
        levels: facet(0),
        event_types: facet(1),
        resources: facet(2),
    })
}

/// The part of `q`'s window a page can still come from (below its cursor), cut at UTC
/// midnights (the partition bounds), newest first.
pub fn day_windows(q: &EventQuery) -> Vec<(DateTime<Utc>, DateTime<Utc>)> {
    let to = match q.after {
        // the cursor's own instant stays in: ties continue below its id
        Some((t, _)) => q.to.min(t + chrono::Duration::microseconds(1)),
        None => q.to,
    };
    days(q.from, to)
}

/// `[from, to)` cut at UTC midnights, newest first.
fn days(from: DateTime<Utc>, mut to: DateTime<Utc>) -> Vec<(DateTime<Utc>, DateTime<Utc>)> {
    let mut windows = Vec::new();
    while to > from {
        let last = to - chrono::Duration::microseconds(1);
        let midnight = last.date_naive().and_time(chrono::NaiveTime::MIN).and_utc();
        let start = from.max(midnight);
        windows.push((start, to));
        to = start;
    }
    windows
}

#[cfg(test)]
mod tests {
    use chrono::{DateTime, Duration, Utc};
    use logs_core::store::{CountQuery, EventQuery, Filters};
    use logs_core::Level;

    use super::{day_windows, raw_counts_sql};

    fn at(s: &str) -> DateTime<Utc> {
        s.parse().unwrap()
    }

    fn query(from: &str, to: &str, after: Option<&str>) -> EventQuery {
        EventQuery {
            server_id: logs_core::ServerId("s".into()),
            from: at(from),
            to: at(to),
            filters: logs_core::store::Filters {
                message: Some("x".into()),
                ..Default::default()
            },
            after: after.map(|t| (at(t), 7)),
            limit: 100,
            scan_limit: None,
            enough: 100,
        }
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

    #[test]
    fn counts_without_a_level_filter_name_every_level() {
        let count = |levels: Option<Vec<Level>>| CountQuery {
            server_id: logs_core::ServerId("s".into()),
            from: at("2026-11-20T01:00:00Z"),
            to: at("2026-11-21T01:00:00Z"),
            filters: Filters {
                levels,
                ..Default::default()
            },
            bucket: Duration::minutes(15),
            scan_limit: 100_000,
        };
        let q = count(None);
        let sql = raw_counts_sql(&q, q.from, q.to);
        assert!(sql.sql().contains(" AND level = ANY($"), "{}", sql.sql());
        // a level filter is kept as it is
        let q = count(Some(vec![Level::Warn]));
        let sql = raw_counts_sql(&q, q.from, q.to);
        assert!(
            sql.sql().contains(" AND level = $") && !sql.sql().contains("ANY"),
            "{}",
            sql.sql()
        );
    }
}
