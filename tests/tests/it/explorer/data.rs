#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `data` filters: containment on the event's own JSON, bound into cursors, and bounded by
//! `LOGS_DATA_SCAN_LIMIT`.

use super::*;

fn inventory(i: i64, item: &str) -> Value {
    json!({ "level": "info", "event_type": "inventory", "message": format!("{item} #{i}"),
            "occurred_at": ago(60 - i),
            "data": { "item": item, "count": i, "shop": { "name": "ammunation", "zone": "Sandy" } } })
}

#[tokio::test]
async fn data_filters_page_with_cursors_bound_to_them() {
    let app = spawn().await;
    let mut events: Vec<Value> = (0..5).map(|i| inventory(i, "WEAPON_PISTOL")).collect();
    events.extend((5..8).map(|i| inventory(i, "WATER")));
    app.ingest_logs("batch-inventory", events).await;
    let w = window();
    let pistols = with(
        w.clone(),
        json!({ "data": { "item": "WEAPON_PISTOL", "shop": { "zone": "Sandy" } }, "limit": 2 }),
    );
    let pages = app.query_pages(&pistols).await;
    let seen = event_messages(&pages);
    let cursors: Vec<&str> = pages
        .iter()
        .filter_map(|p| p["pagination"]["nextCursor"].as_str())
        .collect();
    let first_cursor = &cursors[0];
    assert_eq!(
        seen,
        [
            "WEAPON_PISTOL #4",
            "WEAPON_PISTOL #3",
            "WEAPON_PISTOL #2",
            "WEAPON_PISTOL #1",
            "WEAPON_PISTOL #0"
        ]
    );
    // the same filter with its keys in another order is the same search
    let reordered = with(
        w.clone(),
        json!({ "data": { "shop": { "zone": "Sandy" }, "item": "WEAPON_PISTOL" }, "limit": 2, "cursor": first_cursor }),
    );
    let page = ok(post(&app, "/v1/logs/query", &reordered).await).await;
    assert_eq!(page["events"][0]["message"], "WEAPON_PISTOL #2");
    // another data filter is another search
    let other = with(
        w.clone(),
        json!({ "data": { "item": "WATER" }, "limit": 2, "cursor": first_cursor }),
    );
    expect_error(
        post(&app, "/v1/logs/query", &other).await,
        400,
        "INVALID_CURSOR",
    )
    .await;
    // numbers by value, nested objects, arrays as containment
    for (data, n) in [
        (json!({ "count": 3.0 }), 1),
        (json!({ "count": "3" }), 0),
        (json!({ "shop": { "name": "ammunation" } }), 8),
        (json!({ "item": "weapon_pistol" }), 0),
    ] {
        let page = ok(post(
            &app,
            "/v1/logs/query",
            &with(w.clone(), json!({ "data": data })),
        )
        .await)
        .await;
        assert_eq!(page["events"].as_array().unwrap().len(), n, "{data}");
    }
    // refusals name the field
    for (data, says) in [
        (json!("WEAPON_PISTOL"), "`data` must be a JSON object"),
        (json!({}), "`data` must name at least one key"),
        (
            json!({ "a": "x".repeat(1100) }),
            "`data` must be at most 1024 bytes",
        ),
        (json!({ "a": "\u{0}" }), "`data` must not contain NUL"),
    ] {
        let err = expect_error(
            post(
                &app,
                "/v1/logs/query",
                &with(w.clone(), json!({ "data": data })),
            )
            .await,
            400,
            "INVALID_REQUEST",
        )
        .await;
        let message = err["error"]["message"].as_str().unwrap();
        assert!(message.contains(says), "{message}");
    }
}

/// The limit counts events matching the other filters from the page's start; a page that is not
/// full within it is refused with the limit named, N - 1, N and N + 1 candidates.
#[tokio::test]
async fn a_data_filter_past_the_scan_limit_is_refused_naming_it() {
    let app = spawn_with(Options {
        tweak: |c| c.data_scan_limit = 4,
        ..Options::default()
    })
    .await;
    // six events a minute apart; only e0 (50 minutes ago) is a hit, one older event is not
    let mut events: Vec<Value> = (0..5)
        .map(|i| {
            json!({ "level": "info", "message": format!("e{i}"), "occurred_at": ago(50 - i),
                         "data": { "hit": i == 0 } })
        })
        .collect();
    events.push(json!({ "level": "info", "message": "older", "occurred_at": ago(51), "data": { "hit": false } }));
    app.ingest_logs("batch-scan", events).await;
    let search = |to_mins_ago: f64| {
        json!({ "serverId": "abc123", "from": ago(55),
                "to": at(Utc::now() - Duration::seconds((to_mins_ago * 60.0) as i64)),
                "data": { "hit": true }, "limit": 1 })
    };
    // newest first the hit is candidate 5 of 6 (window to now): one past the limit
    let err = expect_error(
        post(&app, "/v1/logs/query", &search(0.0)).await,
        400,
        "SEARCH_TOO_BROAD",
    )
    .await;
    let message = err["error"]["message"].as_str().unwrap();
    assert!(message.contains("at most 4 events"), "{message}");
    // the hit as candidate 4 of 5 (the last one the limit allows, more beyond), and of 4
    for to in [46.5, 47.5] {
        let page = ok(post(&app, "/v1/logs/query", &search(to)).await).await;
        assert_eq!(page["events"][0]["message"], "e0", "to {to} minutes ago");
    }
    // another filter narrows what is examined
    let narrowed = with(search(0.0), json!({ "message": "e0" }));
    let page = ok(post(&app, "/v1/logs/query", &narrowed).await).await;
    assert_eq!(page["events"][0]["message"], "e0");
    // counts need every candidate: refused past the limit (5 here), exact within it (4)
    let mut counts = search(0.0);
    counts.as_object_mut().unwrap().remove("limit");
    expect_error(
        post(&app, "/v1/logs/counts", &counts).await,
        400,
        "SEARCH_TOO_BROAD",
    )
    .await;
    let mut within = search(47.5);
    within.as_object_mut().unwrap().remove("limit");
    assert_eq!(
        ok(post(&app, "/v1/logs/counts", &within).await).await["total"],
        1
    );
}
