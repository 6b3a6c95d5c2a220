#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `GET /v1/logs/export`: every page of a search as NDJSON or CSV, a download name that says
//! server and window, one export at a time per organization (across instances), and an export
//! dropped mid-stream frees its slot.

use super::*;

fn export_url(base: &str, query: &[(&str, String)]) -> String {
    let mut url = url::Url::parse(&format!("{base}/v1/logs/export")).unwrap();
    url.query_pairs_mut().extend_pairs(query);
    url.to_string()
}

async fn get(app: &TestApp, url: &str) -> reqwest::Response {
    app.client
        .get(url)
        .bearer_auth(&app.dev_key)
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn an_export_streams_every_page_as_ndjson_or_csv() {
    let app = spawn().await;
    let newest = Utc::now() - Duration::minutes(1);
    insert_events(&app, 2_500, newest).await;
    app.ingest_logs(
        "batch-csv",
        vec![
            json!({ "level": "warn", "message": "=HYPERLINK(\"http://x\")", "occurred_at": ago(90),
        "event_type": "chat", "data": { "text": "a,\"b\"\nc" } }),
        ],
    )
    .await;
    // 20 days back: past the query's 7-day limit, inside the plan's retention
    let from = Utc::now() - Duration::days(20);
    let to = Utc::now() + Duration::minutes(1);
    let params = vec![
        ("serverId", "abc123".to_owned()),
        ("from", at(from)),
        ("to", at(to)),
    ];
    let res = get(&app, &export_url(&app.cdn, &params)).await;
    assert_eq!(res.status(), 200);
    assert_eq!(
        res.headers()["content-type"],
        "application/x-ndjson; charset=utf-8"
    );
    assert_eq!(res.headers()["cache-control"], "private, no-store");
    let disposition = res.headers()["content-disposition"]
        .to_str()
        .unwrap()
        .to_owned();
    let name = format!(
        "stowage-logs_abc123_{}_{}.ndjson",
        from.format("%Y%m%dT%H%M%SZ"),
        to.format("%Y%m%dT%H%M%SZ")
    );
    assert_eq!(disposition, format!("attachment; filename=\"{name}\""));
    let text = res.text().await.unwrap();
    let events: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(events.len(), 2_501, "three pages of 1000 and the rest");
    let mut ids: Vec<&str> = events
        .iter()
        .map(|e| e["event_id"].as_str().unwrap())
        .collect();
    assert!(
        events
            .windows(2)
            .all(|w| w[0]["occurred_at"].as_str() >= w[1]["occurred_at"].as_str()),
        "newest first"
    );
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 2_501, "each event once");
    assert_eq!(events[0]["message"], "event 0");
    assert_eq!(events[0]["server_id"], "abc123");
    // filtered, as CSV
    let mut csv_query = params.clone();
    csv_query.extend([
        ("format", "csv".to_owned()),
        ("levels", "warn,error".to_owned()),
    ]);
    let res = get(&app, &export_url(&app.cdn, &csv_query)).await;
    assert_eq!(res.headers()["content-type"], "text/csv; charset=utf-8");
    assert!(res.headers()["content-disposition"]
        .to_str()
        .unwrap()
        .ends_with(".csv\""));
    let body = res.text().await.unwrap();
    let mut reader = csv::Reader::from_reader(body.as_bytes());
    let header: Vec<String> = reader
        .headers()
        .unwrap()
        .iter()
        .map(str::to_owned)
        .collect();
    assert_eq!(
        &header[..4],
        ["occurred_at", "level", "event_type", "message"]
    );
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(
        rows.len(),
        1_001,
        "500 warn and 500 error fixtures, and the chat warning"
    );
    assert!(rows.iter().all(|r| &r[1] == "warn" || &r[1] == "error"));
    let chat = rows.iter().find(|r| &r[2] == "chat").unwrap();
    assert_eq!(
        &chat[3], "'=HYPERLINK(\"http://x\")",
        "a formula is defused"
    );
    let data: Value = serde_json::from_str(&chat[9]).unwrap();
    assert_eq!(
        data["text"], "a,\"b\"\nc",
        "JSON cells keep quotes, commas and newlines"
    );
    // a data filter and an empty result
    let mut one = params.clone();
    one.push(("data", "{\"n\":42}".to_owned()));
    let text = get(&app, &export_url(&app.cdn, &one))
        .await
        .text()
        .await
        .unwrap();
    assert_eq!(text.lines().count(), 1);
    let mut none = params.clone();
    none.push(("message", "no such thing".to_owned()));
    let res = get(&app, &export_url(&app.cdn, &none)).await;
    assert_eq!(res.status(), 200);
    assert_eq!(res.text().await.unwrap(), "");
    // refusals name the parameter
    for (extra, says) in [
        (("format", "xlsx"), "`format` must be ndjson or csv"),
        (("data", "{oops"), "`data` must be a JSON object"),
        (
            ("identifier", "player"),
            "`identifier` must be owner:key:value",
        ),
        (("levels", "warn,loud"), "`levels[1]` must be one of"),
        (("columns", "all"), "columns"),
    ] {
        let mut q = params.clone();
        q.push((extra.0, extra.1.to_owned()));
        let err = expect_error(
            get(&app, &export_url(&app.cdn, &q)).await,
            400,
            "INVALID_REQUEST",
        )
        .await;
        let message = err["error"]["message"].as_str().unwrap();
        assert!(message.contains(says), "{message}");
    }
}

#[tokio::test]
async fn one_export_runs_at_a_time_and_one_dropped_mid_stream_frees_the_slot() {
    let app = spawn().await;
    // far more than the socket buffers hold, so an export the client stops reading stays open
    insert_events(&app, 60_000, Utc::now() - Duration::minutes(1)).await;
    let params = vec![
        ("serverId", "abc123".to_owned()),
        ("from", ago(60)),
        ("to", ago(0)),
    ];
    let mut first = get(&app, &export_url(&app.cdn, &params)).await;
    assert_eq!(first.status(), 200);
    let chunk = first.chunk().await.unwrap().unwrap();
    assert!(!chunk.is_empty());
    // another export of the organization, here or on another instance, waits its turn
    let other_instance = spawn_cdn(app.config.clone());
    for base in [&app.cdn, &other_instance] {
        let res = get(&app, &export_url(base, &params)).await;
        assert!(res.headers().contains_key("retry-after"));
        let err = expect_error(res, 429, "RATE_LIMITED").await;
        assert!(err["error"]["message"]
            .as_str()
            .unwrap()
            .contains("one runs at a time"));
    }
    // queries are not held up by it
    assert_eq!(post(&app, "/v1/logs/query", &window()).await.status(), 200);
    // the client goes away mid-stream: the slot is freed (the server notices on its next write)
    drop(first);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let full = loop {
        let res = get(&app, &export_url(&other_instance, &params)).await;
        if res.status() == 200 {
            break res.text().await.unwrap();
        }
        assert_eq!(res.status(), 429);
        assert!(
            std::time::Instant::now() < deadline,
            "the dropped export still holds the slot"
        );
        tokio::task::yield_now().await;
    };
    assert_eq!(
        full.lines().count(),
        60_000,
        "a whole export after the dropped one"
    );
}

#[tokio::test]
async fn an_export_read_to_its_end_has_freed_the_slot_for_the_next() {
    let app = spawn().await;
    insert_events(&app, 10, Utc::now() - Duration::minutes(1)).await;
    let params = vec![
        ("serverId", "abc123".to_owned()),
        ("from", ago(60)),
        ("to", ago(0)),
    ];
    // a person clicking "Export" again once the download is complete is never told to wait
    for round in 0..30 {
        let res = get(&app, &export_url(&app.cdn, &params)).await;
        assert_eq!(res.status(), 200, "export {round} after a complete one");
        assert_eq!(res.text().await.unwrap().lines().count(), 10);
    }
    // an empty search too
    let empty = vec![
        ("serverId", "abc123".to_owned()),
        ("from", ago(600)),
        ("to", ago(300)),
    ];
    for round in 0..30 {
        let res = get(&app, &export_url(&app.cdn, &empty)).await;
        assert_eq!(res.status(), 200, "empty export {round}");
        assert_eq!(res.text().await.unwrap(), "");
    }
}

/// A client that keeps its connection open but stops reading (the socket's buffers fill, and
/// the server stops writing) holds the organization's only export slot for the stall deadline
/// (`LOGS_STREAM_STALL_SECONDS`), not for as long as it keeps the connection. Before, the next
/// export was refused for minutes.
#[tokio::test]
async fn an_export_the_client_stops_reading_frees_the_slot_after_the_stall_deadline() {
    use tokio::io::AsyncWriteExt;
    let app = spawn_with(Options {
        tweak: |c| c.stream_stall = std::time::Duration::from_secs(2),
        ..Options::default()
    })
    .await;
    // far more than the socket buffers hold
    insert_events(&app, 60_000, Utc::now() - Duration::minutes(1)).await;
    let params = vec![
        ("serverId", "abc123".to_owned()),
        ("from", ago(60)),
        ("to", ago(0)),
    ];
    let url = url::Url::parse(&export_url(&app.cdn, &params)).unwrap();
    let mut stalled = tokio::net::TcpStream::connect(app.cdn.trim_start_matches("http://"))
        .await
        .unwrap();
    let head = format!(
        "GET {}?{} HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer {}\r\n\r\n",
        url.path(),
        url.query().unwrap(),
        app.dev_key
    );
    stalled.write_all(head.as_bytes()).await.unwrap();
    // its answer has begun (it holds the slot); after its first bytes it is never read again
    let mut first = [0u8; 12];
    tokio::io::AsyncReadExt::read_exact(&mut stalled, &mut first)
        .await
        .unwrap();
    assert_eq!(&first, b"HTTP/1.1 200");
    let started = std::time::Instant::now();
    let res = get(&app, &export_url(&app.cdn, &params)).await;
    expect_error(res, 429, "RATE_LIMITED").await;
    let full = loop {
        let res = get(&app, &export_url(&app.cdn, &params)).await;
        if res.status() == 200 {
            break res.text().await.unwrap();
        }
        assert_eq!(res.status(), 429);
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "the stalled export still holds the slot after {:?}",
            started.elapsed()
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    assert!(
        started.elapsed() >= std::time::Duration::from_secs(2),
        "not before the deadline"
    );
    assert_eq!(full.lines().count(), 60_000);
    drop(stalled);
}
