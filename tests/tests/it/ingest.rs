#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Log ingestion on the ingestion host.
//!
//! Kept as one module (over 400 lines): each test is one scenario of the same route.

use auth_core::{AccountStore, Permission};
use stowage_tests::*;

fn event(msg: &str) -> Value {
    json!({ "level": "info", "message": msg })
}

fn batch(id: &str, events: Vec<Value>) -> Value {
    json!({ "batch_id": id, "events": events })
}

async fn post(app: &TestApp, path: &str, key: &str, body: &Value) -> reqwest::Response {
    app.client
        .post(format!("{}{path}", app.logs))
        .bearer_auth(key)
        .json(body)
        .send()
        .await
        .unwrap()
}

async fn expect_ingest_error(res: reqwest::Response, status: u16, code: &str) -> Value {
    assert_eq!(res.status().as_u16(), status);
    let id = res.headers()["x-request-id"].to_str().unwrap().to_owned();
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["error"], code, "{body}");
    assert!(body["message"].as_str().is_some_and(|m| !m.is_empty()));
    assert_eq!(body["request_id"], id);
    body
}

async fn event_count(app: &TestApp) -> i64 {
    use diesel_async::RunQueryDsl;
    #[derive(diesel::QueryableByName)]
    struct N {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        n: i64,
    }
    let mut conn = app.db.conn().await.unwrap();
    let n: N = diesel::sql_query("SELECT count(*) AS n FROM log_events")
        .get_result(&mut conn)
        .await
        .unwrap();
    n.n
}

#[tokio::test]
async fn accepts_retries_and_conflicts() {
    let app = spawn().await;
    let b = batch("batch-0001", vec![event("a"), event("b")]);
    let res = post(&app, "/v1/servers/abc123/logs", &app.dev_key, &b).await;
    assert_eq!(res.status(), 202);
    assert!(res.headers().contains_key("x-request-id"));
    let first: Value = res.json().await.unwrap();
    assert_eq!(first["accepted"], true);
    assert_eq!(first["batch_id"], "batch-0001");
    assert_eq!(first["accepted_events"], 2);
    assert_eq!(first["replayed"], false);
    chrono::DateTime::parse_from_rfc3339(first["ingested_at"].as_str().unwrap()).unwrap();

    // same batch, different formatting and key order: replayed, no new events or usage
    let reordered = r#"{ "events": [ {"message":"a","level":"info"}, {"level":"info","message":"b"} ], "batch_id": "batch-0001" }"#;
    let res = app
        .client
        .post(format!("{}/v1/servers/ABC123/logs", app.logs))
        .bearer_auth(&app.dev_key)
        .header("Content-Type", "application/json; charset=utf-8")
        .body(reordered)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 202);
    let again: Value = res.json().await.unwrap();
    assert_eq!(again["replayed"], true);
    assert_eq!(again["ingested_at"], first["ingested_at"]);
    assert_eq!(again["accepted_events"], 2);
    assert_eq!(event_count(&app).await, 2);

    let changed = batch("batch-0001", vec![event("a"), event("changed")]);
    expect_ingest_error(
        post(&app, "/v1/servers/abc123/logs", &app.dev_key, &changed).await,
        409,
        "batch_id_conflict",
    )
    .await;
    // a server-bound key on its own route
    let res = post(
        &app,
        "/v1/logs",
        &app.server_key,
        &batch("batch-0002", vec![event("c")]),
    )
    .await;
    assert_eq!(res.status(), 202);
    assert_eq!(event_count(&app).await, 3);
    let usage = logs_core::LogStore::monthly_usage(
        &stow_db::logs::PgLogs::new(app.db.clone()),
        &app.org.id,
        chrono::Utc::now(),
    )
    .await
    .unwrap();
    assert_eq!(usage, 3, "rejected batches and retries add no usage");
}

#[tokio::test]
async fn access_rules() {
    let app = spawn().await;
    let b = batch("batch-0001", vec![event("a")]);
    expect_ingest_error(
        post(&app, "/v1/logs", &app.dev_key, &b).await,
        403,
        "forbidden",
    )
    .await;
    let other = app
        .accounts
        .register_server(
            &app.org.id,
            "zzz999",
            None,
            &auth_core::audit::Audit::operator("test"),
        )
        .await
        .unwrap();
    app.accounts
        .set_logs_active(
            &other.cfx_id,
            true,
            &auth_core::audit::Audit::operator("test"),
        )
        .await
        .unwrap();
    expect_ingest_error(
        post(&app, "/v1/servers/zzz999/logs", &app.server_key, &b).await,
        403,
        "forbidden",
    )
    .await;
    assert_eq!(
        post(&app, "/v1/servers/ABC123/logs", &app.server_key, &b)
            .await
            .status(),
        202,
        "own server, any case"
    );
    expect_ingest_error(
        post(&app, "/v1/servers/nosuch/logs", &app.dev_key, &b).await,
        404,
        "server_not_found",
    )
    .await;
    expect_ingest_error(
        post(&app, "/v1/servers/abc%00123/logs", &app.dev_key, &b).await,
        404,
        "server_not_found",
    )
    .await;
    // another organization's server looks unknown
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
    app.accounts
        .set_logs_active("theirs1", true, &auth_core::audit::Audit::operator("test"))
        .await
        .unwrap();
    expect_ingest_error(
        post(&app, "/v1/servers/theirs1/logs", &app.dev_key, &b).await,
        404,
        "server_not_found",
    )
    .await;
    let no_write = app.key(KeySpec::perms(&[Permission::LogsRead])).await;
    expect_ingest_error(
        post(&app, "/v1/servers/abc123/logs", &no_write, &b).await,
        403,
        "forbidden",
    )
    .await;
    expect_ingest_error(
        post(&app, "/v1/servers/abc123/logs", "stw_dev_nope", &b).await,
        401,
        "unauthorized",
    )
    .await;
    // Logs source inactive, then plan without logs
    app.accounts
        .set_logs_active("abc123", false, &auth_core::audit::Audit::operator("test"))
        .await
        .unwrap();
    expect_ingest_error(
        post(
            &app,
            "/v1/servers/abc123/logs",
            &app.dev_key,
            &batch("batch-0009", vec![event("x")]),
        )
        .await,
        403,
        "logs_not_enabled",
    )
    .await;
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
    expect_ingest_error(
        post(
            &app,
            "/v1/servers/abc123/logs",
            &app.dev_key,
            &batch("batch-0010", vec![event("x")]),
        )
        .await,
        403,
        "logs_not_enabled",
    )
    .await;
}

#[tokio::test]
async fn validation_is_atomic_and_detailed() {
    let app = spawn().await;
    let b = batch(
        "batch-0001",
        vec![
            event("ok"),
            json!({"level": "loud", "message": "x"}),
            event("ok"),
            json!({"level": "info", "mesage": "typo"}),
        ],
    );
    let body = expect_ingest_error(
        post(&app, "/v1/servers/abc123/logs", &app.dev_key, &b).await,
        400,
        "invalid_request",
    )
    .await;
    let details = body["details"].as_array().unwrap();
    assert!(details
        .iter()
        .any(|d| d["index"] == 1 && d["field"] == "level"));
    assert!(details
        .iter()
        .any(|d| d["index"] == 3 && d["field"] == "mesage"));
    assert!(details
        .iter()
        .any(|d| d["index"] == 3 && d["field"] == "message"));
    assert_eq!(event_count(&app).await, 0, "nothing accepted");
    // the same batch id is still free after a rejection
    assert_eq!(
        post(
            &app,
            "/v1/servers/abc123/logs",
            &app.dev_key,
            &batch("batch-0001", vec![event("ok")])
        )
        .await
        .status(),
        202
    );
    // malformed bodies and ids
    let res = app
        .client
        .post(format!("{}/v1/servers/abc123/logs", app.logs))
        .bearer_auth(&app.dev_key)
        .header("Content-Type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    expect_ingest_error(res, 400, "invalid_request").await;
    expect_ingest_error(
        post(
            &app,
            "/v1/servers/abc123/logs",
            &app.dev_key,
            &batch("short", vec![event("a")]),
        )
        .await,
        400,
        "invalid_request",
    )
    .await;
    expect_ingest_error(
        post(
            &app,
            "/v1/servers/abc123/logs",
            &app.dev_key,
            &batch("batch-0002", vec![]),
        )
        .await,
        400,
        "invalid_request",
    )
    .await;
    let too_many: Vec<Value> = (0..501).map(|i| event(&format!("{i}"))).collect();
    expect_ingest_error(
        post(
            &app,
            "/v1/servers/abc123/logs",
            &app.dev_key,
            &batch("batch-0003", too_many),
        )
        .await,
        400,
        "invalid_request",
    )
    .await;
    let just_right: Vec<Value> = (0..500).map(|i| event(&format!("{i}"))).collect();
    assert_eq!(
        post(
            &app,
            "/v1/servers/abc123/logs",
            &app.dev_key,
            &batch("batch-0004", just_right)
        )
        .await
        .status(),
        202
    );
}

#[tokio::test]
async fn content_type_and_size_limits() {
    let app = spawn().await;
    let url = format!("{}/v1/servers/abc123/logs", app.logs);
    let body = batch("batch-0001", vec![event("a")]).to_string();
    let res = app
        .client
        .post(&url)
        .bearer_auth(&app.dev_key)
        .header("Content-Type", "text/plain")
        .body(body.clone())
        .send()
        .await
        .unwrap();
    expect_ingest_error(res, 415, "unsupported_media_type").await;
    let res = app
        .client
        .post(&url)
        .bearer_auth(&app.dev_key)
        .body(body)
        .send()
        .await
        .unwrap();
    expect_ingest_error(res, 415, "unsupported_media_type").await;
    // just over 1 MiB, declared
    let big = format!(
        "{{\"batch_id\":\"batch-0002\",\"events\":[{{\"level\":\"info\",\"message\":\"{}\"}}]}}",
        "a".repeat(1024 * 1024)
    );
    let res = app
        .client
        .post(&url)
        .bearer_auth(&app.dev_key)
        .header("Content-Type", "application/json")
        .body(big.clone())
        .send()
        .await
        .unwrap();
    expect_ingest_error(res, 413, "payload_too_large").await;
    // ... and streamed without a length
    let stream = futures::stream::iter(
        big.into_bytes()
            .chunks(64 * 1024)
            .map(|c| Ok::<_, std::io::Error>(c.to_vec()))
            .collect::<Vec<_>>(),
    );
    let res = app
        .client
        .post(&url)
        .bearer_auth(&app.dev_key)
        .header("Content-Type", "application/json")
        .body(reqwest::Body::wrap_stream(stream))
        .send()
        .await
        .unwrap();
    expect_ingest_error(res, 413, "payload_too_large").await;
    // an event over 16 KiB names its index
    let fat = json!({"level": "info", "message": "m", "data": {"pad": "x".repeat(17 * 1024)}});
    let body = expect_ingest_error(
        post(
            &app,
            "/v1/servers/abc123/logs",
            &app.dev_key,
            &batch("batch-0003", vec![event("ok"), fat]),
        )
        .await,
        400,
        "invalid_request",
    )
    .await;
    assert_eq!(body["details"][0]["index"], 1);
}

#[tokio::test]
async fn concurrent_identical_batches_ingest_once() {
    let app = spawn().await;
    for round in 0..5 {
        let id = format!("race-batch-{round:04}");
        let events: Vec<Value> = (0..200).map(|i| event(&format!("e{i}"))).collect();
        let b = batch(&id, events);
        let (r1, r2) = tokio::join!(
            post(&app, "/v1/servers/abc123/logs", &app.dev_key, &b),
            post(&app, "/v1/servers/abc123/logs", &app.dev_key, &b)
        );
        let mut replayed = 0;
        for r in [r1, r2] {
            let status = r.status().as_u16();
            // a duplicate still in flight may get 503 batch_in_progress, never a 4xx
            assert!(status == 202 || status == 503, "{status}");
            if status == 202 {
                let body: Value = r.json().await.unwrap();
                if body["replayed"] == true {
                    replayed += 1;
                }
            } else {
                assert!(r.headers().contains_key("retry-after"));
                replayed += 1;
            }
        }
        assert_eq!(replayed, 1, "exactly one request ingested the batch");
    }
    assert_eq!(event_count(&app).await, 1000);
}

#[tokio::test]
async fn events_are_stored_with_defaults() {
    let app = spawn().await;
    let before = chrono::Utc::now();
    let b = batch(
        "batch-0001",
        vec![
            json!({"level": "warn", "message": "m", "event_id": "evt-12345678", "player_identifiers": {"license": "license:1"}}),
        ],
    );
    assert_eq!(
        post(&app, "/v1/logs", &app.server_key, &b).await.status(),
        202
    );
    let body: Value = app
        .post("/v1/logs/query", &app.server_key)
        .json(&json!({"from": (before - chrono::Duration::minutes(1)).to_rfc3339(), "to": (chrono::Utc::now() + chrono::Duration::minutes(1)).to_rfc3339()}))
        .json_body()
        .await;
    let e = &body["events"][0];
    assert_eq!(e["event_id"], "evt-12345678");
    assert_eq!(e["event_type"], "log");
    assert_eq!(e["server_id"], "abc123");
    let occurred =
        chrono::DateTime::parse_from_rfc3339(e["occurred_at"].as_str().unwrap()).unwrap();
    assert!(
        occurred >= before - chrono::Duration::seconds(1),
        "defaults to ingestion time"
    );
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

#[tokio::test]
async fn gzip_bodies_are_read_with_the_limit_on_the_json() {
    let app = spawn().await;
    let url = format!("{}/v1/servers/abc123/logs", app.logs);
    let send = |encoding: &'static str, body: Vec<u8>| {
        app.client
            .post(&url)
            .bearer_auth(&app.dev_key)
            .header("Content-Type", "application/json")
            .header("Content-Encoding", encoding)
            .body(body)
            .send()
    };
    let json = batch("batch-gzip-1", vec![event("a"), event("b")]).to_string();
    let res = send("gzip", gzip(json.as_bytes())).await.unwrap();
    assert_eq!(res.status(), 202);
    let first: Value = res.json().await.unwrap();
    assert_eq!(first["accepted_events"], 2);
    // the same batch uncompressed is the same request: a replay
    let res = post(
        &app,
        "/v1/servers/abc123/logs",
        &app.dev_key,
        &serde_json::from_str(&json).unwrap(),
    )
    .await;
    let replay: Value = res.json().await.unwrap();
    assert_eq!(replay["replayed"], true, "{replay}");
    assert_eq!(replay["ingested_at"], first["ingested_at"]);
    assert_eq!(event_count(&app).await, 2);

    // 1 MiB of JSON once inflated: 413, however small the compressed body (~1 KiB here)
    let inflated = format!(
        "{{\"batch_id\":\"batch-gzip-2\",\"events\":[{{\"level\":\"info\",\"message\":\"{}\"}}]}}",
        " ".repeat(1024 * 1024)
    );
    let bomb = gzip(inflated.as_bytes());
    assert!(bomb.len() < 8 * 1024);
    expect_ingest_error(send("gzip", bomb).await.unwrap(), 413, "payload_too_large").await;
    // the limit counts the inflated bytes: exactly 1 MiB (trailing spaces) passes, one more does not
    let padded = |id: &str, len: usize| {
        let mut body = batch(id, vec![event("x")]).to_string();
        body.push_str(&" ".repeat(len - body.len()));
        gzip(body.as_bytes())
    };
    let res = send("gzip", padded("batch-gzip-3", 1024 * 1024))
        .await
        .unwrap();
    assert_eq!(res.status(), 202);
    let res = send("gzip", padded("batch-gzip-4", 1024 * 1024 + 1))
        .await
        .unwrap();
    expect_ingest_error(res, 413, "payload_too_large").await;
    // not gzip at all, and an encoding we do not speak
    let body = expect_ingest_error(
        send("gzip", json.clone().into_bytes()).await.unwrap(),
        400,
        "invalid_request",
    )
    .await;
    assert!(body["message"].as_str().unwrap().contains("gzip"), "{body}");
    let body = expect_ingest_error(
        send("br", json.into_bytes()).await.unwrap(),
        415,
        "unsupported_media_type",
    )
    .await;
    assert!(body["message"].as_str().unwrap().contains("`br`"), "{body}");
    assert_eq!(event_count(&app).await, 3);
}

/// Text PostgreSQL cannot hold (decisions.md, pinned): a NUL escape, or half an emoji as the
/// FiveMesh SDK's truncation leaves it, is stored as U+FFFD and the batch is accepted; before, the
/// batch was a 400 and the SDK dropped every event in it.
#[tokio::test]
async fn nul_and_unpaired_surrogates_are_stored_as_the_replacement_character() {
    let app = spawn().await;
    let body = r#"{"batch_id":"batch-repair-1","events":[
        {"level":"info","message":"a\u0000b","event_id":"evt-repair-1"},
        {"level":"info","message":"paid 5 \ud83d","event_id":"evt-repair-2","data":{"k\u0000":["\u0000","\ude00"],"ok":"\ud83d\ude00"}},
        {"level":"info","message":"ok","event_id":"evt-repair-3","player_id":"p\u0000","player_identifiers":{"license":"abc\ud83d"}}
    ]}"#;
    let send = || {
        app.client
            .post(format!("{}/v1/servers/abc123/logs", app.logs))
            .bearer_auth(&app.dev_key)
            .header("Content-Type", "application/json")
            .body(body)
            .send()
    };
    let res = send().await.unwrap();
    assert_eq!(res.status(), 202);
    let first: Value = res.json().await.unwrap();
    assert_eq!(first["accepted_events"], 3, "{first}");
    // a retry is the same batch (the repair is part of parsing, so the digest matches)
    let again: Value = send().await.unwrap().json().await.unwrap();
    assert_eq!(again["replayed"], true, "{again}");

    let now = chrono::Utc::now();
    let pages = app
        .query_pages(&json!({
            "serverId": "abc123",
            "from": (now - chrono::Duration::hours(1)).to_rfc3339(),
            "to": (now + chrono::Duration::minutes(1)).to_rfc3339(),
        }))
        .await;
    let events = pages[0]["events"].as_array().unwrap();
    let by_id = |id: &str| {
        events
            .iter()
            .find(|e| e["event_id"] == id)
            .unwrap_or_else(|| panic!("{id} stored: {events:?}"))
    };
    assert_eq!(by_id("evt-repair-1")["message"], "a\u{fffd}b");
    let second = by_id("evt-repair-2");
    assert_eq!(second["message"], "paid 5 \u{fffd}");
    assert_eq!(
        second["data"],
        json!({"k\u{fffd}": ["\u{fffd}", "\u{fffd}"], "ok": "😀"})
    );
    let third = by_id("evt-repair-3");
    assert_eq!(third["player_id"], "p\u{fffd}");
    assert_eq!(
        third["player_identifiers"],
        json!({"license": "abc\u{fffd}"})
    );
    // and it is found by what it holds
    let found = app
        .query_pages(&json!({
            "serverId": "abc123",
            "from": (now - chrono::Duration::hours(1)).to_rfc3339(),
            "to": (now + chrono::Duration::minutes(1)).to_rfc3339(),
            "message": "5 \u{fffd}",
        }))
        .await;
    assert_eq!(event_messages(&found), vec!["paid 5 \u{fffd}"]);
}

/// `log_batches` (and idle rate buckets) are pruned: a batch row with the events it describes: a batch accepted before the longest
/// retention (plus the day partitions keep) is forgotten by maintenance, one inside it is kept
/// and still replays (docs/api.md: how long a `batch_id` is remembered).
#[tokio::test]
async fn maintenance_forgets_batches_past_the_replay_window_and_keeps_the_rest() {
    let app = spawn().await;
    let event = |m: &str| json!({"level": "info", "message": m});
    app.ingest_logs("batch-old-0001", vec![event("old")]).await;
    app.ingest_logs("batch-edge-001", vec![event("edge")]).await;
    app.ingest_logs("batch-new-0001", vec![event("new")]).await;
    let longest = app
        .count("SELECT max(retention_days)::bigint AS n FROM plans")
        .await;
    // the window is the longest retention plus one day, from the day it ends on (UTC)
    let mut conn = app.db.conn().await.unwrap();
    diesel_async::RunQueryDsl::execute(
        diesel::sql_query(format!(
            "UPDATE log_batches SET ingested_at = CASE batch_id \
               WHEN 'batch-old-0001' THEN date_trunc('day', now()) - interval '{} days' - interval '1 second' \
               WHEN 'batch-edge-001' THEN date_trunc('day', now()) - interval '{} days' \
               ELSE ingested_at END",
            longest + 1,
            longest + 1
        )),
        &mut conn,
    )
    .await
    .unwrap();
    diesel_async::RunQueryDsl::execute(
        diesel::sql_query(
            "INSERT INTO rate_buckets (bucket, tokens, updated_at) VALUES \
             ('key:idle', 1, now() - interval '25 hours'), ('key:busy', 1, now())",
        ),
        &mut conn,
    )
    .await
    .unwrap();
    let report = stow_db::logs::maintain_partitions(&app.db).await.unwrap();
    assert_eq!(report.batches_pruned, 1, "{report:?}");
    assert_eq!(
        app.count(
            "SELECT count(*) AS n FROM rate_buckets WHERE bucket IN ('key:idle', 'key:busy')"
        )
        .await,
        1,
        "a bucket idle for a day is full again, and dropped"
    );
    assert_eq!(
        app.count("SELECT count(*) AS n FROM log_batches WHERE batch_id IN ('batch-edge-001', 'batch-new-0001')")
            .await,
        2
    );
    assert_eq!(
        app.count("SELECT count(*) AS n FROM log_batches WHERE batch_id = 'batch-old-0001'")
            .await,
        0
    );
    let send = |id: &'static str, m: &'static str| {
        app.client
            .post(format!("{}/v1/servers/abc123/logs", app.logs))
            .bearer_auth(&app.dev_key)
            .json(&json!({"batch_id": id, "events": [event(m)]}))
            .json_body()
    };
    assert_eq!(send("batch-new-0001", "new").await["replayed"], true);
    assert_eq!(send("batch-edge-001", "edge").await["replayed"], true);
    assert_eq!(
        send("batch-old-0001", "old").await["replayed"],
        false,
        "forgotten: a new batch"
    );
}
