#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `POST /v1/logs/patterns`: a search's messages grouped into templates.

use super::*;

#[tokio::test]
async fn messages_group_into_templates_by_resource_with_counts_and_trends() {
    let app = spawn().await;
    let mut events: Vec<Value> = (0..5)
        .map(|i| {
            json!({ "level": "error", "message": format!("read ECONNRESET at 10.0.0.{i}:30120"),
                    "resource": "phone", "occurred_at": ago(50 - i) })
        })
        .collect();
    events.push(json!({ "level": "info", "message": "Player 7 joined", "resource": "core", "occurred_at": ago(30) }));
    events.push(json!({ "level": "info", "message": "Player 12 joined", "resource": "core", "occurred_at": ago(20) }));
    events.push(json!({ "level": "error", "message": "SCRIPT ERROR: @bank/server.lua:42: nil\nstack 1\nstack 2",
                        "resource": "bank", "occurred_at": ago(10) }));
    app.ingest_logs("patterns-1", events).await;

    let body = ok(post(&app, "/v1/logs/patterns", &window()).await).await;
    assert_eq!(body["success"], true);
    assert_eq!(body["examined"], 8);
    assert_eq!(body["sampled"], false);
    assert_eq!(body["sampleSize"], 10_000);
    assert_eq!(body["trendBuckets"], 12);
    let patterns = body["patterns"].as_array().unwrap();
    assert_eq!(patterns.len(), 3, "{body}");
    assert_eq!(patterns[0]["template"], "read ECONNRESET at <*>");
    assert_eq!(patterns[0]["resource"], "phone");
    assert_eq!(patterns[0]["count"], 5);
    assert_eq!(patterns[0]["example"], "read ECONNRESET at 10.0.0.4:30120");
    let trend: i64 = patterns[0]["trend"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_i64().unwrap())
        .sum();
    assert_eq!(trend, 5);
    assert_eq!(patterns[1]["template"], "Player <*> joined");
    assert_eq!(patterns[1]["count"], 2);
    assert_eq!(patterns[2]["template"], "SCRIPT ERROR: <*>: nil");
    assert_eq!(
        patterns[2]["example"],
        "SCRIPT ERROR: @bank/server.lua:42: nil\nstack 1\nstack 2"
    );
    assert!(patterns[0]["firstSeen"].as_str().unwrap() < patterns[0]["lastSeen"].as_str().unwrap());

    // the search's filters apply; `top` bounds the answer
    let only = ok(post(
        &app,
        "/v1/logs/patterns",
        &with(
            window(),
            json!({ "exclude": { "resources": ["phone"] }, "top": 1 }),
        ),
    )
    .await)
    .await;
    assert_eq!(only["examined"], 3);
    assert_eq!(only["patterns"].as_array().unwrap().len(), 1);
    assert_eq!(only["patterns"][0]["template"], "Player <*> joined");
    // a data filter reads within the scan limit, so the answer says it sampled
    let data = ok(post(
        &app,
        "/v1/logs/patterns",
        &with(window(), json!({ "data": { "x": 1 } })),
    )
    .await)
    .await;
    assert_eq!(data["sampled"], true);
    assert_eq!(data["examined"], 0);

    let res = post(
        &app,
        "/v1/logs/patterns",
        &with(window(), json!({ "top": 201 })),
    )
    .await;
    expect_error_mentioning(res, 400, "INVALID_REQUEST", "`top` must be 1 to 200").await;
}
