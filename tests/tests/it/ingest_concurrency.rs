#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Ingestion's limit of batches being stored at once per instance (`LOGS_INGEST_CONCURRENCY`):
//! a batch beyond it waits for a slot without touching the database, runs when one frees, and
//! is answered 503 `unavailable` if no slot frees within the acquire timeout; what a batch
//! blocked inside its transaction is told; and a `logs-api` killed with a batch mid-transaction.

use std::time::{Duration, Instant};

use diesel_async::SimpleAsyncConnection;
use stowage_tests::*;

use crate::resilience::{free_port, wait_ready};

fn batch(id: &str) -> Value {
    json!({"batch_id": id, "events": [{"level": "info", "message": "player joined"}]})
}

fn send(
    app: &TestApp,
    base: &str,
    id: &str,
) -> tokio::task::JoinHandle<reqwest::Result<reqwest::Response>> {
    tokio::spawn(
        app.client
            .post(format!("{base}/v1/servers/abc123/logs"))
            .bearer_auth(&app.server_key)
            .json(&batch(id))
            .send(),
    )
}

/// Polls `cond` until it holds; fails the test after 10 s.
async fn until<F: std::future::Future<Output = bool>>(what: &str, mut cond: impl FnMut() -> F) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !cond().await {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Batch transactions of this test's database blocked on the hourly counts' table.
async fn blocked_batches(app: &TestApp) -> i64 {
    app.count(
        "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() \
         AND wait_event_type = 'Lock' AND query LIKE 'INSERT INTO log_counts_hourly%'",
    )
    .await
}

async fn waiting_for_a_slot(app: &TestApp, base: &str) -> f64 {
    let text = app.client.get(format!("{base}/metrics")).text_body().await;
    text.lines()
        .find_map(|l| l.strip_prefix("logs_ingest_waiting "))
        .map_or(0.0, |v| v.trim().parse().unwrap())
}

/// Another ingestion host with at most one batch transaction at a time, once it is ready (its
/// first partition maintenance also writes the hourly counts, which the tests then lock).
async fn one_slot_host(app: &TestApp, acquire_timeout: Duration) -> String {
    let mut config = app.config.clone();
    config.ingest_concurrency = 1;
    config.db_acquire_timeout = acquire_timeout;
    let base = spawn_logs(config);
    wait_ready(&app.client, &format!("{base}/readyz")).await;
    base
}

/// Locks the hourly counts: every batch transaction then stops there until the returned
/// connection commits.
async fn hold_hourly_counts(app: &TestApp) -> stow_db::Conn {
    let mut blocker = app.db.conn().await.unwrap();
    blocker
        .batch_execute("BEGIN; LOCK TABLE log_counts_hourly IN SHARE MODE")
        .await
        .unwrap();
    blocker
}

/// Holds the hourly counts and sends `id` to `base`; returns once that batch is blocked inside
/// its transaction.
async fn first_batch_blocked(
    app: &TestApp,
    base: &str,
    id: &str,
) -> (
    stow_db::Conn,
    tokio::task::JoinHandle<reqwest::Result<reqwest::Response>>,
) {
    let blocker = hold_hourly_counts(app).await;
    let first = send(app, base, id);
    until(
        "the first batch holds the slot, blocked in its transaction",
        || async { blocked_batches(app).await == 1 },
    )
    .await;
    (blocker, first)
}

async fn stored(app: &TestApp, id: &str) -> i64 {
    app.count(&format!(
        "SELECT count(*) AS n FROM log_batches WHERE batch_id = '{id}'"
    ))
    .await
}

#[tokio::test]
async fn a_batch_beyond_the_limit_waits_for_a_slot_then_runs() {
    let app = spawn().await;
    let base = one_slot_host(&app, app.config.db_acquire_timeout).await;
    let (mut blocker, first) = first_batch_blocked(&app, &base, "slot-batch-1").await;
    let second = send(&app, &base, "slot-batch-2");
    until("the second batch waits for a slot", || async {
        waiting_for_a_slot(&app, &base).await == 1.0
    })
    .await;
    assert_eq!(
        blocked_batches(&app).await,
        1,
        "the waiting batch has not started a transaction"
    );

    blocker.batch_execute("COMMIT").await.unwrap();
    for (res, id) in [(first, "slot-batch-1"), (second, "slot-batch-2")] {
        let res = res.await.unwrap().unwrap();
        assert_eq!(res.status(), 202, "{}", res.text().await.unwrap());
        assert_eq!(stored(&app, id).await, 1);
    }
    assert_eq!(waiting_for_a_slot(&app, &base).await, 0.0);
}

#[tokio::test]
async fn a_batch_that_gets_no_slot_in_time_is_answered_unavailable_and_can_be_retried() {
    let app = spawn().await;
    let base = one_slot_host(&app, Duration::from_millis(300)).await;
    let (mut blocker, first) = first_batch_blocked(&app, &base, "slot-batch-1").await;
    let refused = send(&app, &base, "slot-batch-2").await.unwrap().unwrap();
    assert_eq!(refused.status(), 503);
    assert!(refused.headers().contains_key("retry-after"));
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["error"], "unavailable", "{body}");

    blocker.batch_execute("COMMIT").await.unwrap();
    let res = first.await.unwrap().unwrap();
    assert_eq!(res.status(), 202);
    assert_eq!(
        stored(&app, "slot-batch-2").await,
        0,
        "nothing of it was stored"
    );
    let retried = send(&app, &base, "slot-batch-2").await.unwrap().unwrap();
    assert_eq!(retried.status(), 202);
    let body: Value = retried.json().await.unwrap();
    assert_eq!(body["replayed"], false, "{body}");
}

/// `batch_in_progress` means "the same batch id is still committing"; a batch that waits out the
/// lock timeout behind other writers (here, on the hourly counts) is told the database is
/// unavailable instead, and its retry is accepted.
#[tokio::test]
async fn a_batch_blocked_behind_other_writers_is_not_called_in_progress() {
    let app = spawn().await;
    let mut blocker = hold_hourly_counts(&app).await;
    let blocked = send(&app, &app.logs, "blocked-batch-1")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(blocked.status(), 503);
    assert!(blocked.headers().contains_key("retry-after"));
    let body: Value = blocked.json().await.unwrap();
    assert_eq!(body["error"], "unavailable", "{body}");
    blocker.batch_execute("COMMIT").await.unwrap();
    assert_eq!(stored(&app, "blocked-batch-1").await, 0);
    let retried = send(&app, &app.logs, "blocked-batch-1")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(retried.status(), 202);
}

/// kill -9 of a `logs-api` process while a batch is inside its transaction (its batch row and
/// events inserted, blocked before commit): nothing of the batch is ever visible, and the
/// client's retry of the same batch on another instance is accepted once, in full.
#[tokio::test]
async fn a_batch_cut_by_kill_9_mid_transaction_leaves_nothing_and_its_retry_is_accepted() {
    let app = spawn().await;
    let port = free_port();
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_logs_api_test_shim"))
        .env("DATABASE_URL", &app.db_url)
        .env("LOGS_API_ADDR", format!("127.0.0.1:{port}"))
        .env("RUST_LOG", "warn")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let base = format!("http://127.0.0.1:{port}");
    wait_ready(&app.client, &format!("{base}/readyz")).await;
    let mut blocker = hold_hourly_counts(&app).await;
    let events: Vec<Value> = (0..200)
        .map(|i| json!({"level": "info", "message": format!("event {i}")}))
        .collect();
    let body = json!({"batch_id": "killed-batch-1", "events": events});
    let post = |base: String| {
        app.client
            .post(format!("{base}/v1/servers/abc123/logs"))
            .bearer_auth(&app.server_key)
            .json(&body)
            .send()
    };
    let cut = tokio::spawn(post(base.clone()));
    until("the batch is blocked inside its transaction", || async {
        blocked_batches(&app).await == 1
    })
    .await;
    child.start_kill().unwrap(); // SIGKILL
    child.wait().await.unwrap();
    assert!(cut.await.unwrap().is_err(), "the client saw no answer");
    blocker.batch_execute("COMMIT").await.unwrap();
    // the killed process's backend finds its client gone and ends without a commit
    until("the cut batch's backend has gone", || async {
        app.count(
            "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() \
             AND query LIKE 'INSERT INTO log_counts_hourly%'",
        )
        .await
            == 0
    })
    .await;
    assert_eq!(stored(&app, "killed-batch-1").await, 0);
    let events_of = "SELECT count(*) AS n FROM log_events WHERE batch_id = 'killed-batch-1'";
    assert_eq!(app.count(events_of).await, 0, "no partial batch");

    let retried = post(app.logs.clone()).await.unwrap();
    assert_eq!(retried.status(), 202);
    let answer: Value = retried.json().await.unwrap();
    assert_eq!(answer["accepted_events"], 200, "{answer}");
    assert_eq!(answer["replayed"], false, "{answer}");
    assert_eq!(app.count(events_of).await, 200);
    let again = post(app.logs.clone()).await.unwrap();
    let answer: Value = again.json().await.unwrap();
    assert_eq!(answer["replayed"], true, "{answer}");
    assert_eq!(app.count(events_of).await, 200);
}
