//! The reads of [`super::PgLogs`]: pages of a search, counts over time and facets, each built
//! from the one search condition of [`super::search_sql`] and carried out as the plan of
//! [`logs_core::plan`] says.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Integer, Text, Timestamptz};
use diesel_async::RunQueryDsl;
use logs_core::criteria::TypeMatch;
use logs_core::plan::{
    plan_counts, plan_page, prefix_types, Bounds, CountReads, KeptCounts, PagePlan, Position, Span,
    TypePlan, MAX_LISTED_TYPES,
};
use logs_core::store::{
    BucketCount, CountQuery, EventQuery, EventRow, FacetQuery, Facets, Filters, SearchError,
    ServerId,
};
use logs_core::Level;

use super::event_row::{Row, COLUMNS};
use super::message_runs::{self, Within};
use super::search_sql::Sql;
use crate::{db_error, Conn};

const NEWEST_FIRST: &str = " ORDER BY occurred_at DESC, id DESC";

pub async fn query(conn: &mut Conn, q: &EventQuery) -> Result<Vec<EventRow>, SearchError> {
    let bounds = Bounds::window(&q.server_id, (q.from, q.to)).after(q.after);
    // a prefix walks the type index of each of its types when the window has few
    let mut exact;
    let mut q = q;
    if let Some(TypeMatch::Prefix(prefix)) = &q.filters.event_type {
        let listed = types_in_window(conn, &q.server_id, q.from, q.to).await?;
        match prefix_types(prefix, listed) {
            TypePlan::Empty => return Ok(Vec::new()),
            TypePlan::Types(types) if types.len() == 1 => {
                exact = q.clone();
                exact.filters.event_type = types.into_iter().next().map(TypeMatch::Exact);
                q = &exact;
            }
            TypePlan::Types(types) if plan_page(q) == PagePlan::Window => {
                return merged_types_page(conn, q, bounds, &types).await;
            }
            TypePlan::Types(_) | TypePlan::Scan => {}
        }
    }
    match plan_page(q) {
        PagePlan::Window => select_page(conn, q, bounds, &Within::Window).await,
        PagePlan::Scanned { limit } => {
            let within = message_runs::within(conn, &q.server_id, q.from, q.to, &q.filters).await?;
            if within.is_empty() {
                return Ok(Vec::new());
            }
            let floor = nth_candidate(conn, bounds, &within, &q.filters, limit).await?;
            let rows = select_page(conn, q, bounds.floor(floor), &within).await?;
            if floor.is_some() && rows.len() < q.enough {
                return Err(SearchError::TooBroad { limit });
            }
            Ok(rows)
        }
        PagePlan::Days(days) => {
            // each day reads the spans of the runs whose words can match (fetched unordered
            // and sorted), or a frequent term's whole day in order (`message_runs::Days`: one
            // candidate lookup for the window, per day only when the term is frequent over it)
            let mut rows = Vec::with_capacity(q.limit);
            let spans = message_runs::Days::new(conn, &q.server_id, &days, &q.filters).await?;
            for day in days {
                let within = spans.day(conn, &q.server_id, day, &q.filters).await?;
                if within.is_empty() {
                    continue;
                }
                let rest = EventQuery {
                    limit: q.limit - rows.len(),
                    ..q.clone()
                };
                let bounds = Bounds::window(&q.server_id, day).after(q.after);
                rows.extend(select_page(conn, &rest, bounds, &within).await?);
                if rows.len() >= q.limit {
                    break;
                }
            }
            Ok(rows)
        }
    }
}

/// One page of `q` (`limit` rows in `bounds`, `within` its message spans) in one statement.
async fn select_page(
    conn: &mut Conn,
    q: &EventQuery,
    bounds: Bounds<'_>,
    within: &Within,
) -> Result<Vec<EventRow>, SearchError> {
    let mut sql = Sql::new(&format!("SELECT {COLUMNS} FROM log_events WHERE "));
    sql.search(bounds, &q.filters)
        .within(within)
        .push(NEWEST_FIRST)
        .push(" LIMIT ")
        .bigint(q.limit as i64);
    let rows: Vec<Row> = sql.into_query().load(conn).await.map_err(db_error)?;
    Ok(rows.into_iter().map(EventRow::from).collect())
}

/// The page of `q` (a window plan) whose prefix stands for `types`: each type's newest page
/// through the `(server_id, event_type, occurred_at, id)` index, merged newest first.
async fn merged_types_page(
    conn: &mut Conn,
    q: &EventQuery,
    bounds: Bounds<'_>,
    types: &[String],
) -> Result<Vec<EventRow>, SearchError> {
    let mut sql = Sql::new(&format!("SELECT {COLUMNS} FROM ("));
    for (i, t) in types.iter().enumerate() {
        if i > 0 {
            sql.push(" UNION ALL ");
        }
        let filters = Filters {
            event_type: Some(TypeMatch::Exact(t.clone())),
            ..q.filters.clone()
        };
        sql.push(&format!("(SELECT {COLUMNS} FROM log_events WHERE "))
            .search(bounds, &filters)
            .push(NEWEST_FIRST)
            .push(" LIMIT ")
            .bigint(q.limit as i64)
            .push(")");
    }
    sql.push(") AS by_type")
        .push(NEWEST_FIRST)
        .push(" LIMIT ")
        .bigint(q.limit as i64);
    let rows: Vec<Row> = sql.into_query().load(conn).await.map_err(db_error)?;
    Ok(rows.into_iter().map(EventRow::from).collect())
}

#[derive(QueryableByName)]
struct TypeRow {
    #[diesel(sql_type = Text)]
    event_type: String,
}

/// The distinct event types of `server`'s events in `[from, to)`, or `None` when there are
/// more than [`MAX_LISTED_TYPES`]: a loose scan of the `(server_id, event_type, …)` index, one
/// descent per type and partition (the next type after the last one found), so a window of
/// millions of events lists its dozen types in a dozen steps.
async fn types_in_window(
    conn: &mut Conn,
    server: &ServerId,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> Result<Option<Vec<String>>, SearchError> {
    let rows: Vec<TypeRow> = diesel::sql_query(
        "WITH RECURSIVE types (event_type, n) AS ( \
           (SELECT event_type, 1 FROM log_events \
            WHERE server_id = $1 AND occurred_at >= $2 AND occurred_at < $3 \
            ORDER BY event_type LIMIT 1) \
           UNION ALL \
           SELECT (SELECT e.event_type FROM log_events e \
                   WHERE e.server_id = $1 AND e.occurred_at >= $2 AND e.occurred_at < $3 \
                     AND e.event_type > types.event_type \
                   ORDER BY e.event_type LIMIT 1), types.n + 1 \
           FROM types WHERE types.event_type IS NOT NULL AND types.n <= $4) \
         SELECT event_type FROM types WHERE event_type IS NOT NULL",
    )
    .bind::<Text, _>(server.as_str())
    .bind::<Timestamptz, _>(from)
    .bind::<Timestamptz, _>(to)
    .bind::<Integer, _>(MAX_LISTED_TYPES as i32)
    .load(conn)
    .await
    .map_err(db_error)?;
    Ok((rows.len() <= MAX_LISTED_TYPES).then(|| rows.into_iter().map(|r| r.event_type).collect()))
}

#[derive(QueryableByName)]
struct PositionRow {
    #[diesel(sql_type = Timestamptz)]
    occurred_at: DateTime<Utc>,
    #[diesel(sql_type = BigInt)]
    id: i64,
}

/// The position of the `n`-th event (from 1) in `bounds` (`within` its message spans) matching
/// every filter but `data`, newest first, when there are more than `n` of them; `None` when
/// there are `n` or fewer.
async fn nth_candidate(
    conn: &mut Conn,
    bounds: Bounds<'_>,
    within: &Within,
    filters: &Filters,
    n: usize,
) -> Result<Option<Position>, SearchError> {
    let mut sql = Sql::new("SELECT occurred_at, id FROM log_events WHERE ");
    sql.search(bounds, &filters.without_data())
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
    let plan = plan_counts(q);
    let window = Bounds::window(&q.server_id, (q.from, q.to));
    // the message spans of the whole window (no statement without a message term), for the
    // `data` check and for the day-by-day counts below
    let whole = message_runs::within(conn, &q.server_id, q.from, q.to, &q.filters).await?;
    if let Some(limit) = plan.scan_check {
        if nth_candidate(conn, window, &whole, &q.filters, limit)
            .await?
            .is_some()
        {
            return Err(SearchError::TooBroad { limit });
        }
    }
    let mut rows = Vec::new();
    match plan.reads {
        CountReads::Window => rows.extend(raw_counts(conn, q, window, &Within::Window).await?),
        CountReads::Kept { table, whole, ends } => {
            for end in ends {
                let bounds = Bounds::window(&q.server_id, end);
                rows.extend(raw_counts(conn, q, bounds, &Within::Window).await?);
            }
            rows.extend(table_counts(conn, q, table, whole).await?);
        }
        CountReads::Days(days) => {
            let spans = message_runs::Days::from(whole);
            for day in days {
                let within = spans.day(conn, &q.server_id, day, &q.filters).await?;
                if !within.is_empty() {
                    let bounds = Bounds::window(&q.server_id, day);
                    rows.extend(raw_counts(conn, q, bounds, &within).await?);
                }
            }
        }
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

/// Counts per bucket and level of the events in `bounds` (`within` its message spans).
async fn raw_counts(
    conn: &mut Conn,
    q: &CountQuery,
    bounds: Bounds<'_>,
    within: &Within,
) -> Result<Vec<CountRow>, SearchError> {
    let mut sql = raw_counts_sql(q, bounds);
    sql.within(within).push(" GROUP BY 1, 2");
    Ok(sql.into_query().load(conn).await.map_err(db_error)?)
}

/// The counts' statement up to its `GROUP BY`.
fn raw_counts_sql(q: &CountQuery, bounds: Bounds<'_>) -> Sql {
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
        .search(bounds, filters);
    sql
}

/// The table of kept counts and its time column.
fn kept_table(kept: KeptCounts) -> (&'static str, &'static str) {
    match kept {
        // a row per server, 15-minute slot and level (migration 14)
        KeptCounts::LevelSlots => ("log_level_counts_15m", "slot"),
        // a row per server, hour, level, event type and resource (migration 11)
        KeptCounts::Hours => ("log_counts_hourly", "hour"),
    }
}

/// Counts per bucket and level from kept counts, for the whole units `[from, to)`.
async fn table_counts(
    conn: &mut Conn,
    q: &CountQuery,
    kept: KeptCounts,
    (from, to): Span,
) -> Result<Vec<CountRow>, SearchError> {
    let (table, column) = kept_table(kept);
    let mut sql = Sql::default();
    bucket_of(&mut sql, q, column);
    sql.push(&format!(
        "level, sum(n)::bigint AS n FROM {table} WHERE server_id = "
    ))
    .text(q.server_id.to_string())
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
    let window = Bounds::window(&q.server_id, (q.from, q.to));
    let floor = nth_candidate(conn, window, &within, &q.filters, q.sample).await?;
    let mut sql = Sql::new(
        "WITH s AS MATERIALIZED (SELECT level, event_type, resource, player_id, target_player_id \
         FROM log_events WHERE ",
    );
    sql.search(window.floor(floor), &q.filters)
        .within(&within)
        .push(
            ") SELECT 0 AS facet, level AS value, count(*) AS n FROM s GROUP BY level \
             UNION ALL SELECT 1, event_type, count(*) FROM s GROUP BY event_type \
             UNION ALL SELECT 2, resource, count(*) FROM s WHERE resource IS NOT NULL GROUP BY resource \
             UNION ALL SELECT 3, p, count(*) FROM s CROSS JOIN LATERAL (VALUES (player_id), \
               (CASE WHEN target_player_id IS DISTINCT FROM player_id THEN target_player_id END)) v(p) \
             WHERE p IS NOT NULL GROUP BY p",
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
        players: facet(3),
    })
}

#[cfg(test)]
mod tests {
    use chrono::{DateTime, Duration, Utc};
    use logs_core::plan::Bounds;
    use logs_core::store::{CountQuery, Filters};
    use logs_core::Level;

    use super::raw_counts_sql;

    fn at(s: &str) -> DateTime<Utc> {
        s.parse().unwrap()
    }

    #[test]
    fn counts_without_a_level_filter_name_every_level() {
        let count = |levels: Option<Vec<Level>>| CountQuery {
            server_id: logs_core::ServerId::new("s"),
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
        let sql = raw_counts_sql(&q, Bounds::window(&q.server_id, (q.from, q.to)));
        assert!(sql.sql().contains(" AND level = ANY($"), "{}", sql.sql());
        // a level filter is kept as it is
        let q = count(Some(vec![Level::Warn]));
        let sql = raw_counts_sql(&q, Bounds::window(&q.server_id, (q.from, q.to)));
        assert!(
            sql.sql().contains(" AND level = $") && !sql.sql().contains("ANY"),
            "{}",
            sql.sql()
        );
    }
}
