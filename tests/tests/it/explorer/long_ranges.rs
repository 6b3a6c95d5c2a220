#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Windows longer than the query's seven days, within the plan's retention (`pro`: 90 days):
//! counts in longer buckets that add up to the events, `POST /v1/logs/search` paging through
//! them, facets and patterns; the pinned query still refuses them and names the route that
//! takes them.

use diesel::sql_types::{BigInt, Text, Timestamptz};
use diesel_async::RunQueryDsl;

use super::*;

/// Events of past days cannot be ingested (at most seven days old), so the fixture writes them
/// into the table as a long-lived server would have: `n` events on `abc123`, one every 17
/// minutes 17 seconds back from `newest` (5,000 reach back 60 days), with types, levels and
/// messages in turn, and what ingestion keeps beside them rebuilt.
async fn insert_history(app: &TestApp, n: i64, newest: DateTime<Utc>) {
    insert_generated(
        app,
        "INSERT INTO log_events (org_id, server_id, cfx_id, batch_id, ingested_at, event_id, level, \
         event_type, occurred_at, resource, message) \
         SELECT $1, $2, 'abc123', 'history', now(), 'history-' || i, \
         (ARRAY['debug','info','warn','error','fatal'])[1 + i % 5], \
         (ARRAY['admin.kick','admin.ban','administrator.login','tick'])[1 + i % 4], \
         $3 - i * interval '17 minutes 17 seconds', (ARRAY['core','phone','bank'])[1 + i % 3], \
         'ECONNRESET after ' || (i * 7 % 5000) || ' ms' \
         FROM generate_series(0, $4 - 1) AS i",
        n,
        newest,
    )
    .await;
    app.rebuild_log_summaries().await;
}

#[derive(diesel::QueryableByName)]
struct DayCount {
    #[diesel(sql_type = Timestamptz)]
    day: DateTime<Utc>,
    #[diesel(sql_type = BigInt)]
    n: i64,
}

/// The events of `abc123` in `[from, to)` whose type is like `type_like`, per UTC day: what
/// the answers must add up to.
async fn per_day(
    app: &TestApp,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    type_like: &str,
) -> Vec<(String, i64)> {
    let mut conn = app.db.conn().await.unwrap();
    let rows: Vec<DayCount> = diesel::sql_query(
        "SELECT date_trunc('day', occurred_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS day, \
         count(*) AS n FROM log_events WHERE server_id = $1 AND occurred_at >= $2 \
         AND occurred_at < $3 AND event_type LIKE $4 GROUP BY 1 ORDER BY 1",
    )
    .bind::<Text, _>(app.server.id.as_str())
    .bind::<Timestamptz, _>(from)
    .bind::<Timestamptz, _>(to)
    .bind::<Text, _>(type_like)
    .load(&mut conn)
    .await
    .unwrap();
    rows.into_iter().map(|r| (at(r.day), r.n)).collect()
}

/// The non-empty buckets of a counts answer, `(start, total)`.
fn filled(page: &Value) -> Vec<(String, i64)> {
    page["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["total"].as_i64().unwrap() > 0)
        .map(|b| {
            let start = DateTime::parse_from_rfc3339(b["start"].as_str().unwrap()).unwrap();
            (at(start.with_timezone(&Utc)), b["total"].as_i64().unwrap())
        })
        .collect()
}

#[tokio::test]
async fn a_sixty_day_count_equals_the_sum_of_its_events() {
    let app = spawn().await;
    let newest = Utc::now() - Duration::minutes(1);
    insert_history(&app, 5_000, newest).await;
    // not aligned to anything: the ends read events, the whole days and hours the kept counts.
    // 7 minutes past 60 days, so the window touches at least 121 half-days whatever the clock
    // says (7 minutes short of it touched only 120 when the clock stood in the last 7 minutes
    // before 00:00 or 12:00 UTC, and 12 h buckets were rightly chosen)
    let (from, to) = (
        Utc::now() - Duration::days(60) - Duration::minutes(7),
        Utc::now(),
    );
    let window = json!({ "serverId": "abc123", "from": at(from), "to": at(to) });
    let all = ok(post(&app, "/v1/logs/counts", &window).await).await;
    assert_eq!(all["interval"], "1d", "60 days in at most 120 buckets");
    let days = per_day(&app, from, to, "%").await;
    let sum: i64 = days.iter().map(|d| d.1).sum();
    assert!(sum > 4_900, "{sum} events in the window");
    assert_eq!(all["total"], sum);
    assert_eq!(
        filled(&all),
        days,
        "every day's bucket is that day's events"
    );
    // an event-type prefix (hourly kept counts) is not `administrator.login`
    let admin = ok(post(
        &app,
        "/v1/logs/counts",
        &with(window.clone(), json!({ "eventType": "admin." })),
    )
    .await)
    .await;
    let admin_days = per_day(&app, from, to, "admin.%").await;
    assert_eq!(filled(&admin), admin_days);
    assert_eq!(admin["total"], admin_days.iter().map(|d| d.1).sum::<i64>());
    // a message term reads the events, a day at a time
    let message = ok(post(
        &app,
        "/v1/logs/counts",
        &with(
            window.clone(),
            json!({ "message": "ECONNRESET", "interval": "1d" }),
        ),
    )
    .await)
    .await;
    assert_eq!(message["total"], sum);
    // an explicit interval is bounded over the window searched: 60 days of 1h is 1,440 or
    // 1,441 epoch-aligned buckets, by where the window's ends fall in their hours
    let hour = 3_600_000_000i64;
    let (f, t) = (from.timestamp_micros(), to.timestamp_micros());
    let buckets = (t + hour - 1).div_euclid(hour) - f.div_euclid(hour);
    let err = expect_error(
        post(
            &app,
            "/v1/logs/counts",
            &with(window.clone(), json!({ "interval": "1h" })),
        )
        .await,
        400,
        "INVALID_REQUEST",
    )
    .await;
    assert!(
        err["error"]["message"]
            .as_str()
            .unwrap()
            .contains(&format!("`interval` 1h gives {buckets} buckets")),
        "{err}"
    );
}

#[tokio::test]
async fn retention_bounds_a_long_window_and_picks_its_buckets() {
    let app = spawn().await;
    insert_history(&app, 10_000, Utc::now() - Duration::minutes(1)).await;
    // a year asked, 90 days (the `pro` plan's retention) searched and counted
    let now = Utc::now();
    let year =
        json!({ "serverId": "abc123", "from": at(now - Duration::days(365)), "to": at(now) });
    let page = ok(post(&app, "/v1/logs/counts", &year).await).await;
    let from = DateTime::parse_from_rfc3339(page["range"]["from"].as_str().unwrap()).unwrap();
    let kept = now - from.with_timezone(&Utc);
    assert!(
        (kept - Duration::days(90)).num_seconds().abs() < 60,
        "{kept}"
    );
    assert_eq!(page["interval"], "1d");
    let buckets = page["buckets"].as_array().unwrap().len();
    assert!((90..=91).contains(&buckets), "{buckets} buckets");
    // 10,000 events reach back 120 days: those within the 90 days are counted
    let within = per_day(&app, from.with_timezone(&Utc), now, "%").await;
    assert_eq!(page["total"], within.iter().map(|d| d.1).sum::<i64>());
    // and a day as the interval over the year is fine: 90 buckets once retention applies
    ok(post(
        &app,
        "/v1/logs/counts",
        &with(year, json!({ "interval": "1d" })),
    )
    .await)
    .await;
}

#[tokio::test]
async fn search_pages_through_sixty_days_where_the_query_stops_at_seven() {
    let app = spawn().await;
    insert_history(&app, 5_000, Utc::now() - Duration::minutes(1)).await;
    let (from, to) = (Utc::now() - Duration::days(60), Utc::now());
    let body = json!({ "serverId": "abc123", "from": at(from), "to": at(to),
                       "eventType": "admin.ban", "limit": 100 });
    // the pinned query: seven days at most, and it says where longer ones go
    let err = expect_error(
        post(&app, "/v1/logs/query", &body).await,
        400,
        "INVALID_REQUEST",
    )
    .await;
    let message = err["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("at most 7 days") && message.contains("POST /v1/logs/search"),
        "{message}"
    );
    // the search walks the whole window by cursor, newest first, each event once
    let want = per_day(&app, from, to, "admin.ban").await;
    let want: i64 = want.iter().map(|d| d.1).sum();
    let (mut seen, mut ids, mut last) = (0, std::collections::HashSet::new(), None);
    let (mut cursor, mut first_cursor) = (None::<String>, None::<String>);
    loop {
        let mut page_body = body.clone();
        if let Some(c) = &cursor {
            page_body["cursor"] = json!(c);
        }
        let page = ok(post(&app, "/v1/logs/search", &page_body).await).await;
        for e in page["events"].as_array().unwrap() {
            assert_eq!(e["event_type"], "admin.ban");
            let t = e["occurred_at"].as_str().unwrap().to_owned();
            assert!(
                last.as_ref().is_none_or(|l: &String| *l >= t),
                "newest first"
            );
            last = Some(t);
            assert!(ids.insert(e["event_id"].as_str().unwrap().to_owned()));
            seen += 1;
        }
        if page["pagination"]["hasMore"] == false {
            break;
        }
        cursor = page["pagination"]["nextCursor"].as_str().map(str::to_owned);
        first_cursor = first_cursor.or(cursor.clone());
    }
    assert_eq!(seen, want);
    assert!(seen > 1_200, "{seen}");
    // the oldest is near 60 days back
    let oldest = DateTime::parse_from_rfc3339(&last.unwrap()).unwrap();
    assert!(Utc::now() - oldest.with_timezone(&Utc) > Duration::days(59));
    // a cursor is bound to the search: another window is refused
    let changed = with(
        body.clone(),
        json!({ "from": at(from + Duration::days(1)), "cursor": first_cursor.unwrap() }),
    );
    expect_error(
        post(&app, "/v1/logs/search", &changed).await,
        400,
        "INVALID_CURSOR",
    )
    .await;
}

#[tokio::test]
async fn facets_and_patterns_answer_sixty_days() {
    let app = spawn().await;
    insert_history(&app, 5_000, Utc::now() - Duration::minutes(1)).await;
    let window = json!({ "serverId": "abc123", "from": at(Utc::now() - Duration::days(60)), "to": at(Utc::now()) });
    let facets = ok(post(&app, "/v1/logs/facets", &window).await).await;
    let all: i64 = per_day(&app, Utc::now() - Duration::days(60), Utc::now(), "%")
        .await
        .iter()
        .map(|d| d.1)
        .sum();
    assert_eq!(facets["examined"], all);
    assert_eq!(facets["sampled"], false);
    let patterns = ok(post(&app, "/v1/logs/patterns", &window).await).await;
    // 5,000 messages `ECONNRESET after <n> ms`: one pattern per resource
    let templates: Vec<&str> = patterns["patterns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["template"].as_str().unwrap())
        .collect();
    assert_eq!(templates, ["ECONNRESET after <*> ms"; 3]);
}
