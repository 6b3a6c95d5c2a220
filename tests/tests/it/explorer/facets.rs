#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `POST /v1/logs/facets`: the frequent values of a search, for suggestions.

use super::*;

#[tokio::test]
async fn facets_count_the_values_of_the_search() {
    let app = spawn().await;
    let ev = |level: &str, event_type: &str, resource: Option<&str>| json!({ "level": level, "message": "m", "event_type": event_type, "resource": resource, "occurred_at": ago(5) });
    app.ingest_logs(
        "batch-facets",
        vec![
            ev("info", "player.join", Some("core")),
            ev("info", "player.join", Some("core")),
            ev("warn", "chat", Some("chat")),
            ev("error", "script", Some("es_extended")),
            ev("info", "chat", None),
        ],
    )
    .await;
    let page = ok(post(&app, "/v1/logs/facets", &window()).await).await;
    assert_eq!(
        (page["examined"].clone(), page["sampled"].clone()),
        (json!(5), json!(false))
    );
    assert_eq!(page["sampleSize"], 50_000);
    assert_eq!(
        page["levels"],
        json!([{ "value": "info", "count": 3 }, { "value": "error", "count": 1 }, { "value": "warn", "count": 1 }])
    );
    assert_eq!(
        page["eventTypes"],
        json!([{ "value": "chat", "count": 2 }, { "value": "player.join", "count": 2 }, { "value": "script", "count": 1 }])
    );
    assert_eq!(page["resources"][0], json!({ "value": "core", "count": 2 }));
    let top1 = ok(post(
        &app,
        "/v1/logs/facets",
        &with(window(), json!({ "top": 1, "minLevel": "warn" })),
    )
    .await)
    .await;
    assert_eq!(top1["examined"], 2);
    assert_eq!(top1["eventTypes"], json!([{ "value": "chat", "count": 1 }]));
    for top in [0, 51] {
        let err = expect_error(
            post(
                &app,
                "/v1/logs/facets",
                &with(window(), json!({ "top": top })),
            )
            .await,
            400,
            "INVALID_REQUEST",
        )
        .await;
        assert!(err["error"]["message"]
            .as_str()
            .unwrap()
            .contains("`top` must be 1 to 50"));
    }
}

/// Past the sample, facets are over the newest 50,000 events and say so.
#[tokio::test]
async fn facets_past_the_sample_say_they_sampled() {
    let app = spawn().await;
    insert_events(&app, 50_001, Utc::now() - Duration::minutes(1)).await;
    let page = ok(post(&app, "/v1/logs/facets", &window()).await).await;
    assert_eq!(
        (page["examined"].clone(), page["sampled"].clone()),
        (json!(50_000), json!(true))
    );
    // the oldest (number 50,000) is the one left out: 10,000 of each level remain
    let levels: Vec<_> = page["levels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["count"].as_i64().unwrap())
        .collect();
    assert_eq!(levels, [10_000; 5]);
}
