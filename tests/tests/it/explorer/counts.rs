#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `POST /v1/logs/counts`: buckets aligned in UTC whatever the window's offsets, partial first
//! and last buckets, zeros, `auto`, and the bucket limit at N - 1, N and N + 1.

use super::*;

/// The start of the `secs`-long bucket (aligned to the epoch) holding `t`.
fn floor(t: DateTime<Utc>, secs: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(t.timestamp() - t.timestamp().rem_euclid(secs), 0).unwrap()
}

#[tokio::test]
async fn counts_fall_in_utc_buckets_inside_a_window_that_is_not_aligned() {
    let app = spawn().await;
    let ten = Duration::minutes(10);
    let b = floor(Utc::now() - Duration::hours(3), 600);
    let us = Duration::microseconds(1);
    let ev = |t: DateTime<Utc>, level: &str| json!({ "level": level, "message": "m", "event_type": "tick", "occurred_at": at(t) });
    app.ingest_logs(
        "batch-buckets",
        vec![
            ev(b - ten - us, "info"), // before the window
            ev(b - Duration::minutes(4), "info"),
            ev(b - us, "warn"),
            ev(b, "info"),
            ev(b, "error"),
            ev(b + ten - us, "info"),
            ev(b + ten, "info"),
            ev(b + ten + Duration::minutes(5), "debug"), // at `to`: outside
        ],
    )
    .await;
    // the window in a +02:00 offset, starting and ending mid-bucket
    let plus2 = chrono::FixedOffset::east_opt(2 * 3600).unwrap();
    let local = |t: DateTime<Utc>| t.with_timezone(&plus2).to_rfc3339();
    let body = json!({ "serverId": "abc123", "from": local(b - Duration::minutes(5)),
                       "to": local(b + ten + Duration::minutes(5)), "interval": "10m" });
    assert!(body["from"].as_str().unwrap().ends_with("+02:00"));
    let res = post(&app, "/v1/logs/counts", &body).await;
    assert_eq!(res.headers()["cache-control"], "private, no-store");
    let page = ok(res).await;
    assert_eq!(
        (page["interval"].clone(), page["intervalSeconds"].clone()),
        (json!("10m"), json!(600))
    );
    assert_eq!(page["range"]["from"], at(b - Duration::minutes(5)));
    let zero = json!({ "debug": 0, "info": 0, "warn": 0, "error": 0, "fatal": 0 });
    let levels = |extra: Value| with(zero.clone(), extra);
    assert_eq!(
        page["buckets"],
        json!([
            { "start": at(b - ten), "total": 2, "levels": levels(json!({ "info": 1, "warn": 1 })) },
            { "start": at(b), "total": 3, "levels": levels(json!({ "info": 2, "error": 1 })) },
            { "start": at(b + ten), "total": 1, "levels": levels(json!({ "info": 1 })) },
        ])
    );
    assert_eq!(page["total"], 6);
    // empty buckets are listed with zeros; the event at the old `to` is now inside
    let longer = with(
        body.clone(),
        json!({ "to": local(b + Duration::minutes(35)) }),
    );
    let page = ok(post(&app, "/v1/logs/counts", &longer).await).await;
    let buckets = page["buckets"].as_array().unwrap();
    assert_eq!(buckets.len(), 5);
    assert_eq!(buckets[2]["levels"]["debug"], 1);
    assert_eq!(
        buckets[3],
        json!({ "start": at(b + Duration::minutes(20)), "total": 0, "levels": zero })
    );
    // the filters apply: error and above
    let severe = with(body.clone(), json!({ "minLevel": "error" }));
    assert_eq!(
        ok(post(&app, "/v1/logs/counts", &severe).await).await["total"],
        1
    );
}

#[tokio::test]
async fn auto_intervals_and_the_bucket_limit() {
    let app = spawn().await;
    let now = Utc::now();
    let day = json!({ "serverId": "abc123", "from": at(now - Duration::days(1)), "to": at(now) });
    let page = ok(post(&app, "/v1/logs/counts", &day).await).await;
    assert_eq!(page["interval"], "15m");
    let n = page["buckets"].as_array().unwrap().len();
    assert!((96..=97).contains(&n), "{n} buckets");
    assert_eq!(page["total"], 0);
    let week = with(
        day.clone(),
        json!({ "from": at(now - Duration::days(7)), "interval": "auto" }),
    );
    assert_eq!(
        ok(post(&app, "/v1/logs/counts", &week).await).await["interval"],
        "2h"
    );
    // 1000 one-minute buckets: N - 1, N, N + 1
    let from = floor(now, 60) - Duration::minutes(1000);
    for (to, ok_) in [
        (from + Duration::minutes(999), true),
        (from + Duration::minutes(1000), true),
        (from + Duration::minutes(1000) + Duration::seconds(1), false),
    ] {
        let body =
            json!({ "serverId": "abc123", "from": at(from), "to": at(to), "interval": "1m" });
        let res = post(&app, "/v1/logs/counts", &body).await;
        if ok_ {
            assert_eq!(res.status(), 200);
        } else {
            let err = expect_error(res, 400, "INVALID_REQUEST").await;
            let message = err["error"]["message"].as_str().unwrap();
            assert!(
                message.contains("gives 1001 buckets") && message.contains("at most 1000"),
                "{message}"
            );
        }
    }
    for bad in ["0s", "8d", "1w", "soon"] {
        let err = expect_error(
            post(
                &app,
                "/v1/logs/counts",
                &with(day.clone(), json!({ "interval": bad })),
            )
            .await,
            400,
            "INVALID_REQUEST",
        )
        .await;
        assert!(err["error"]["message"]
            .as_str()
            .unwrap()
            .contains("`interval` must be"));
    }
    let unknown = with(day.clone(), json!({ "bucket": "1m" }));
    let err = expect_error(
        post(&app, "/v1/logs/counts", &unknown).await,
        400,
        "INVALID_REQUEST",
    )
    .await;
    assert!(err["error"]["message"].as_str().unwrap().contains("bucket"));
}
