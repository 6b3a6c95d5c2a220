#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Log queries on the API host.
//!
//! Kept as one module (over 400 lines): each test is one scenario of the same route.

use auth_core::{AccountStore, Permission};
use chrono::{Duration, Utc};
use stowage_tests::*;

fn ago(mins: i64) -> String {
    (Utc::now() - Duration::minutes(mins)).to_rfc3339()
}

fn window() -> Value {
    json!({ "serverId": "abc123", "from": ago(120), "to": (Utc::now() + Duration::minutes(10)).to_rfc3339() })
}

fn with(mut base: Value, extra: Value) -> Value {
    for (k, v) in extra.as_object().unwrap() {
        base[k] = v.clone();
    }
    base
}

async fn query(app: &TestApp, key: &str, body: &Value) -> reqwest::Response {
    app.post("/v1/logs/query", key)
        .json(body)
        .send()
        .await
        .unwrap()
}

async fn messages(app: &TestApp, body: &Value) -> Vec<String> {
    let res = query(app, &app.dev_key, body).await;
    assert_eq!(res.status(), 200);
    let v: Value = res.json().await.unwrap();
    v["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["message"].as_str().unwrap().to_owned())
        .collect()
}

async fn seed(app: &TestApp) {
    app.ingest_logs("seed-batch-1", vec![
        json!({"level": "info", "message": "Player joined", "event_type": "player.join", "occurred_at": ago(50), "player_id": "p1", "player_identifiers": {"license": "license:aaa", "discord": "discord:1"}, "resource": "core"}),
        json!({"level": "error", "message": "Script ERROR in es_extended", "occurred_at": ago(40), "resource": "es_extended"}),
        json!({"level": "info", "message": "chat: gg wp", "event_type": "chat", "occurred_at": ago(30), "player_id": "p2", "target_player_id": "p1", "target_player_identifiers": {"license": "license:aaa"}}),
        json!({"level": "warn", "message": "50% off_sale", "occurred_at": ago(20), "resource": "shop"}),
        json!({"level": "fatal", "message": "server crash", "occurred_at": ago(10), "event_type": "server.crash"}),
    ]).await;
}

#[tokio::test]
async fn events_come_newest_first_with_all_fields() {
    let app = spawn().await;
    seed(&app).await;
    let res = query(&app, &app.dev_key, &window()).await;
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["cache-control"], "private, no-store");
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["success"], true);
    assert!(body["requestId"].is_string());
    let events = body["events"].as_array().unwrap();
    assert_eq!(events.len(), 5);
    assert_eq!(events[0]["message"], "server crash");
    assert_eq!(events[4]["message"], "Player joined");
    for e in events {
        for f in [
            "event_id",
            "server_id",
            "level",
            "event_type",
            "occurred_at",
            "ingested_at",
            "player_id",
            "target_player_id",
            "player_identifiers",
            "target_player_identifiers",
            "resource",
            "trace_id",
            "environment",
            "message",
            "data",
        ] {
            assert!(e.get(f).is_some(), "field {f} missing in {e}");
        }
    }
    assert_eq!(events[0]["player_id"], Value::Null);
    assert_eq!(events[4]["player_identifiers"]["license"], "license:aaa");
    assert_eq!(
        body["pagination"],
        json!({"hasMore": false, "nextCursor": null})
    );
    assert!(body["range"]["from"].is_string() && body["range"]["to"].is_string());
}

#[tokio::test]
async fn every_filter() {
    let app = spawn().await;
    seed(&app).await;
    let w = window;
    assert_eq!(
        messages(&app, &with(w(), json!({"level": "error"}))).await,
        vec!["Script ERROR in es_extended"]
    );
    assert_eq!(
        messages(&app, &with(w(), json!({"eventType": "chat"}))).await,
        vec!["chat: gg wp"]
    );
    assert_eq!(
        messages(&app, &with(w(), json!({"eventType": "log"})))
            .await
            .len(),
        2
    );
    assert_eq!(
        messages(&app, &with(w(), json!({"resource": "shop"}))).await,
        vec!["50% off_sale"]
    );
    assert_eq!(
        messages(&app, &with(w(), json!({"message": "error IN"}))).await,
        vec!["Script ERROR in es_extended"]
    );
    assert_eq!(
        messages(&app, &with(w(), json!({"message": "50%"}))).await,
        vec!["50% off_sale"]
    );
    assert!(
        messages(&app, &with(w(), json!({"message": "5_%"})))
            .await
            .is_empty(),
        "% and _ are literal"
    );
    assert_eq!(
        messages(&app, &with(w(), json!({"playerId": "p1"}))).await,
        vec!["chat: gg wp", "Player joined"]
    );
    assert_eq!(
        messages(
            &app,
            &with(
                w(),
                json!({"identifier": {"owner": "player", "key": "license", "value": "license:aaa"}})
            )
        )
        .await,
        vec!["Player joined"]
    );
    assert_eq!(
        messages(
            &app,
            &with(
                w(),
                json!({"identifier": {"owner": "target", "key": "license", "value": "license:aaa"}})
            )
        )
        .await,
        vec!["chat: gg wp"]
    );
    assert!(messages(
        &app,
        &with(
            w(),
            json!({"identifier": {"owner": "player", "key": "license", "value": "license:bbb"}})
        )
    )
    .await
    .is_empty());
    assert_eq!(
        messages(&app, &with(w(), json!({"level": "info", "playerId": "p2"}))).await,
        vec!["chat: gg wp"]
    );
}

#[tokio::test]
async fn invalid_requests() {
    let app = spawn().await;
    let cases = [
        json!({"serverId": "abc123", "to": ago(0)}),
        json!({"serverId": "abc123", "from": ago(10), "to": ago(20)}),
        json!({"serverId": "abc123", "from": (Utc::now() - Duration::days(8)).to_rfc3339(), "to": ago(0)}),
        with(window(), json!({"limit": 0})),
        with(window(), json!({"limit": 101})),
        with(window(), json!({"level": "verbose"})),
        with(
            window(),
            json!({"identifier": {"owner": "someone", "key": "a", "value": "b"}}),
        ),
        with(window(), json!({"unknownField": 1})),
        with(window(), json!({"from": "yesterday"})),
        // Postgres text cannot hold U+0000: refused by name, never a database error
        with(window(), json!({"eventType": "a\0b"})),
        with(
            window(),
            json!({"identifier": {"owner": "player", "key": "license", "value": "\0"}}),
        ),
    ];
    for c in cases {
        expect_error(query(&app, &app.dev_key, &c).await, 400, "INVALID_REQUEST").await;
    }
    expect_error_mentioning(
        query(
            &app,
            &app.dev_key,
            &with(window(), json!({"levels": "info"})),
        )
        .await,
        400,
        "INVALID_REQUEST",
        "levels",
    )
    .await;
    // messages speak JSON, not the service's Rust type names
    for wrong in [
        json!([]),
        with(window(), json!({"identifier": "license:1"})),
    ] {
        let res = query(&app, &app.dev_key, &wrong).await;
        let body =
            expect_error_mentioning(res, 400, "INVALID_REQUEST", "expected a JSON object").await;
        assert!(
            !body["error"]["message"].to_string().contains("struct"),
            "{body}"
        );
    }
    assert_eq!(
        query(&app, &app.dev_key, &with(window(), json!({"limit": 100})))
            .await
            .status(),
        200
    );
}

#[tokio::test]
async fn access_rules() {
    let app = spawn().await;
    let mut no_server = window();
    no_server.as_object_mut().unwrap().remove("serverId");
    expect_error(
        query(&app, &app.dev_key, &no_server).await,
        400,
        "INVALID_REQUEST",
    )
    .await;
    assert_eq!(
        query(&app, &app.server_key, &no_server).await.status(),
        200,
        "a bound key defaults to its server"
    );
    assert_eq!(
        query(
            &app,
            &app.server_key,
            &with(window(), json!({"serverId": "ABC123"}))
        )
        .await
        .status(),
        200
    );
    app.second_server("other1").await;
    expect_error(
        query(
            &app,
            &app.server_key,
            &with(window(), json!({"serverId": "other1"})),
        )
        .await,
        403,
        "FORBIDDEN",
    )
    .await;
    let no_read = app.key(KeySpec::perms(&[Permission::LogsWrite])).await;
    expect_error(query(&app, &no_read, &window()).await, 403, "FORBIDDEN").await;
    let org2 = app
        .accounts
        .create_org("Other", "other", "pro")
        .await
        .unwrap();
    app.accounts
        .register_server(
            &org2.id,
            "theirs1",
            None,
            &auth_core::audit::Audit::operator("test"),
        )
        .await
        .unwrap();
    let unknown = expect_error(
        query(
            &app,
            &app.dev_key,
            &with(window(), json!({"serverId": "nosuch"})),
        )
        .await,
        404,
        "NOT_FOUND",
    )
    .await;
    // a name no server can have (found by the contract fuzzer: it was a 500)
    expect_error(
        query(
            &app,
            &app.dev_key,
            &with(window(), json!({"serverId": "abc\0xyz"})),
        )
        .await,
        404,
        "NOT_FOUND",
    )
    .await;
    let theirs = expect_error(
        query(
            &app,
            &app.dev_key,
            &with(window(), json!({"serverId": "theirs1"})),
        )
        .await,
        404,
        "NOT_FOUND",
    )
    .await;
    assert_eq!(
        unknown["error"]["message"]
            .as_str()
            .unwrap()
            .replace("nosuch", "X"),
        theirs["error"]["message"]
            .as_str()
            .unwrap()
            .replace("theirs1", "X"),
        "another organization's server is indistinguishable from an unknown one"
    );
    app.accounts
        .set_logs_active("abc123", false, &auth_core::audit::Audit::operator("test"))
        .await
        .unwrap();
    expect_error(query(&app, &app.dev_key, &window()).await, 403, "FORBIDDEN").await;
    app.accounts
        .set_logs_active("abc123", true, &auth_core::audit::Audit::operator("test"))
        .await
        .unwrap();
    app.accounts
        .set_org_plan(
            &app.org.id,
            "free",
            &auth_core::audit::Audit::operator("test"),
        )
        .await
        .unwrap();
    expect_error(query(&app, &app.dev_key, &window()).await, 403, "FORBIDDEN").await;
    expect_error(
        query(&app, "stw_dev_nope", &window()).await,
        401,
        "UNAUTHORIZED",
    )
    .await;
}

#[tokio::test]
async fn pagination_survives_concurrent_inserts() {
    let app = spawn().await;
    let events: Vec<Value> = (0..25)
        .map(
            |i| json!({"level": "info", "message": format!("m{i:02}"), "occurred_at": ago(60 - i)}),
        )
        .collect();
    app.ingest_logs("page-batch-1", events).await;
    // several events share one timestamp: ties must be stable
    let same = ago(5);
    app.ingest_logs(
        "page-batch-2",
        (0..5)
            .map(|i| json!({"level": "info", "message": format!("tie{i}"), "occurred_at": same}))
            .collect(),
    )
    .await;
    let w = window();
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    let mut page_no = 0;
    loop {
        let mut body = with(w.clone(), json!({"limit": 7}));
        if let Some(c) = &cursor {
            body["cursor"] = json!(c);
        }
        let v: Value = query(&app, &app.dev_key, &body).await.json().await.unwrap();
        seen.extend(
            v["events"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e["message"].as_str().unwrap().to_owned()),
        );
        page_no += 1;
        if page_no == 1 {
            // new events arrive mid-walk, newer and older than the cursor
            app.ingest_logs(
                "page-batch-3",
                vec![json!({"level": "info", "message": "late-new", "occurred_at": ago(0)})],
            )
            .await;
        }
        if v["pagination"]["hasMore"] == true {
            cursor = Some(v["pagination"]["nextCursor"].as_str().unwrap().to_owned());
        } else {
            assert_eq!(v["pagination"]["nextCursor"], Value::Null);
            break;
        }
    }
    let mut unique = seen.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), seen.len(), "no event repeated: {seen:?}");
    for i in 0..25 {
        assert!(seen.contains(&format!("m{i:02}")), "m{i:02} skipped");
    }
    for i in 0..5 {
        assert!(seen.contains(&format!("tie{i}")));
    }
}

#[tokio::test]
async fn cursors_are_bound_and_expire() {
    let app = spawn().await;
    seed(&app).await;
    let base = with(window(), json!({"limit": 2}));
    let v: Value = query(&app, &app.dev_key, &base).await.json().await.unwrap();
    let cursor = v["pagination"]["nextCursor"].as_str().unwrap().to_owned();
    let next = query(
        &app,
        &app.dev_key,
        &with(base.clone(), json!({"cursor": cursor})),
    )
    .await;
    assert_eq!(next.status(), 200, "the unchanged search continues");
    expect_error(
        query(
            &app,
            &app.dev_key,
            &with(base.clone(), json!({"cursor": "garbage"})),
        )
        .await,
        400,
        "INVALID_CURSOR",
    )
    .await;
    let mut tampered = cursor.clone();
    tampered.insert(5, 'x');
    expect_error(
        query(
            &app,
            &app.dev_key,
            &with(base.clone(), json!({"cursor": tampered})),
        )
        .await,
        400,
        "INVALID_CURSOR",
    )
    .await;
    expect_error(
        query(
            &app,
            &app.dev_key,
            &with(base.clone(), json!({"cursor": cursor, "level": "info"})),
        )
        .await,
        400,
        "INVALID_CURSOR",
    )
    .await;
    expect_error(
        query(
            &app,
            &app.dev_key,
            &with(base.clone(), json!({"cursor": cursor, "from": ago(119)})),
        )
        .await,
        400,
        "INVALID_CURSOR",
    )
    .await;

    let expiring = spawn_with(Options {
        tweak: |c| c.cursor_ttl = std::time::Duration::from_secs(0),
        ..Options::default()
    })
    .await;
    seed(&expiring).await;
    let w = with(window(), json!({"limit": 1}));
    let v: Value = query(&expiring, &expiring.dev_key, &w)
        .await
        .json()
        .await
        .unwrap();
    let c = v["pagination"]["nextCursor"].as_str().unwrap();
    expect_error(
        query(
            &expiring,
            &expiring.dev_key,
            &with(w.clone(), json!({"cursor": c})),
        )
        .await,
        400,
        "CURSOR_EXPIRED",
    )
    .await;
}

#[tokio::test]
async fn retention_clamps_the_window() {
    let app = spawn().await;
    let mut plan = app.accounts.get_plan("pro").await.unwrap().unwrap();
    plan.retention_days = 1;
    app.accounts.upsert_plan(&plan).await.unwrap();
    app.ingest_logs("old-batch-1", vec![
        json!({"level": "info", "message": "two days old", "occurred_at": (Utc::now() - Duration::days(2)).to_rfc3339()}),
        json!({"level": "info", "message": "fresh", "occurred_at": ago(5)}),
    ]).await;
    let body = json!({"serverId": "abc123", "from": (Utc::now() - Duration::days(3)).to_rfc3339(), "to": Utc::now().to_rfc3339()});
    let v: Value = query(&app, &app.dev_key, &body).await.json().await.unwrap();
    let msgs: Vec<&str> = v["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["message"].as_str().unwrap())
        .collect();
    assert_eq!(msgs, vec!["fresh"]);
    let from = chrono::DateTime::parse_from_rfc3339(v["range"]["from"].as_str().unwrap()).unwrap();
    let expected = Utc::now() - Duration::days(1);
    assert!(
        (from.with_timezone(&Utc) - expected).num_seconds().abs() < 60,
        "range.from raised to now - retention: {from}"
    );
}

#[tokio::test]
async fn concurrent_search_limit() {
    let app = spawn().await;
    let mut plan = app.accounts.get_plan("pro").await.unwrap().unwrap();
    plan.concurrent_searches = 1;
    app.accounts.upsert_plan(&plan).await.unwrap();
    // hold the organization's only slot, as a long search on another instance would
    let slots: std::sync::Arc<dyn logs_core::ReadSlotStore> =
        std::sync::Arc::new(stow_db::logs::PgReadSlots::new(app.db.clone()));
    let held = api_http::explorer::slots::SlotLease::acquire(
        &slots,
        logs_core::LeaseKind::Search,
        &app.org.id,
        1,
    )
    .await
    .unwrap()
    .expect("a free slot");
    let second = app.second_cdn();
    for base in [&app.cdn, &second] {
        let res = app
            .client
            .post(format!("{base}/v1/logs/query"))
            .bearer_auth(&app.dev_key)
            .json(&window())
            .send()
            .await
            .unwrap();
        assert!(res.headers().contains_key("retry-after"));
        expect_error(res, 429, "RATE_LIMITED").await;
    }
    drop(held);
    // the release is sent in the background: wait (bounded) for it to land
    let no_lease_left = || async {
        for _ in 0..100 {
            if app.count("SELECT count(*) AS n FROM log_searches").await == 0 {
                return true;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        false
    };
    assert!(no_lease_left().await);
    assert_eq!(query(&app, &app.dev_key, &window()).await.status(), 200);
    assert!(
        no_lease_left().await,
        "a finished search gives its slot back"
    );
}

#[tokio::test]
async fn a_search_past_the_statement_timeout_is_503() {
    use diesel_async::{AsyncConnection, AsyncPgConnection, SimpleAsyncConnection};
    let app = spawn_with(Options {
        tweak: |c| c.db_statement_timeout = std::time::Duration::from_millis(300),
        ..Options::default()
    })
    .await;
    seed(&app).await;
    // another session holds the events table, so the search waits on its lock past the timeout
    let mut other = AsyncPgConnection::establish(&app.db_url).await.unwrap();
    other
        .batch_execute("BEGIN; LOCK TABLE log_events IN ACCESS EXCLUSIVE MODE")
        .await
        .unwrap();
    let started = std::time::Instant::now();
    let res = query(&app, &app.dev_key, &window()).await;
    assert!(res.headers().contains_key("retry-after"));
    let body = expect_error(res, 503, "SERVICE_UNAVAILABLE").await;
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    let text = body.to_string();
    assert!(
        !text.contains("statement") && !text.contains("log_events"),
        "{text}"
    );
    other.batch_execute("ROLLBACK").await.unwrap();
    // the search slot was given back and the pool's connection is usable again
    assert_eq!(messages(&app, &window()).await.len(), 5);
}

#[tokio::test]
async fn min_level_and_level_lists_page_with_cursors_bound_to_them() {
    let app = spawn().await;
    let ev = |level: &str, mins: i64| json!({ "level": level, "message": format!("{level} {mins}"), "occurred_at": ago(mins) });
    app.ingest_logs(
        "batch-levels-1",
        vec![
            ev("debug", 1),
            ev("info", 2),
            ev("warn", 3),
            ev("error", 4),
            ev("fatal", 5),
            ev("warn", 6),
            ev("info", 7),
        ],
    )
    .await;
    // one window for every page (a cursor is bound to it)
    let w = window();
    // minLevel warn, one event per page: warn, error, fatal, warn, then no more
    let pages = app
        .query_pages(&with(w.clone(), json!({ "minLevel": "warn", "limit": 1 })))
        .await;
    let seen = event_messages(&pages);
    assert_eq!(seen, ["warn 3", "error 4", "fatal 5", "warn 6"]);

    // the same filter as a list is the same search: its cursor carries over
    let first: Value = query(
        &app,
        &app.dev_key,
        &with(w.clone(), json!({ "minLevel": "error", "limit": 1 })),
    )
    .await
    .json()
    .await
    .unwrap();
    let c = first["pagination"]["nextCursor"].as_str().unwrap();
    let as_list = with(
        w.clone(),
        json!({ "levels": ["fatal", "error"], "limit": 1, "cursor": c }),
    );
    let next: Value = query(&app, &app.dev_key, &as_list)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(next["events"][0]["message"], "fatal 5", "{next}");
    // a changed level filter is another search: the cursor is refused
    let changed = with(
        w.clone(),
        json!({ "minLevel": "warn", "limit": 1, "cursor": c }),
    );
    expect_error(
        query(&app, &app.dev_key, &changed).await,
        400,
        "INVALID_CURSOR",
    )
    .await;

    // refusals name the field
    for (body, says) in [
        (
            json!({ "levels": [] }),
            "`levels` must name 1 to 5 levels (got 0)",
        ),
        (
            json!({ "levels": ["info", "loud"] }),
            "`levels[1]` must be one of",
        ),
        (json!({ "minLevel": "loud" }), "`minLevel` must be one of"),
        (
            json!({ "level": "warn", "minLevel": "warn" }),
            "are alternatives",
        ),
    ] {
        let err = expect_error(
            query(&app, &app.dev_key, &with(w.clone(), body)).await,
            400,
            "INVALID_REQUEST",
        )
        .await;
        let message = err["error"]["message"].as_str().unwrap();
        assert!(message.contains(says), "{message}");
    }
}
