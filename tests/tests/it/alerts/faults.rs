//! The outbox under faults: the process running the delivery worker killed with `SIGKILL` in
//! the middle of a send, and the database going away and coming back, during a burst of
//! firings.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Stdio;
use std::time::{Duration as StdDuration, Instant};

use base64::Engine as _;

use super::*;
use crate::resilience::{free_port, wait_ready, Proxy};

/// `logs-api` as a real process whose database is reached through `proxy`: its delivery
/// worker looks every 50 ms. The child and its base URL, ready.
async fn start_worker(app: &TestApp, proxy: &Proxy) -> (tokio::process::Child, String) {
    let port = free_port();
    let child = tokio::process::Command::new(env!("CARGO_BIN_EXE_logs_api_test_shim"))
        .env("DATABASE_URL", proxy.database_url_for(app))
        .env("LOGS_API_ADDR", format!("127.0.0.1:{port}"))
        // the key `Config::for_tests` seals destinations' secrets with
        .env(
            "SECOND_FACTOR_KEY",
            base64::engine::general_purpose::STANDARD
                .encode(stow_http::config::TEST_SECOND_FACTOR_KEY),
        )
        .env("ALERTS_ALLOW_INSECURE", "true")
        .env("ALERTS_POLL_MS", "50")
        .env("DATABASE_ACQUIRE_TIMEOUT_MS", "1000")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let base = format!("http://127.0.0.1:{port}");
    wait_ready(&app.client, &format!("{base}/readyz")).await;
    (child, base)
}

async fn ban_batches(app: &TestApp, range: std::ops::Range<usize>) {
    for i in range {
        app.ingest_logs(
            &format!("alert-burst-{i:02}"),
            vec![event("admin.ban", "txadmin", &format!("ban {i}"))],
        )
        .await;
    }
}

/// A burst of 40 firings (one per batch) on a generic webhook: the worker's process is killed
/// with a request in flight (the receiver holds it), more firings are committed while no worker
/// runs, a second process takes over, and its database connection is cut (every connection
/// closed and new ones refused, as clients see a Postgres restart; a real restart would take
/// every other test's database with it) and restored while firings go on. After recovery every
/// firing has been delivered, and each under one `webhook-id` only: a request that may have
/// gone out is sent again with the same id, never as a new delivery.
#[tokio::test]
async fn a_burst_of_firings_survives_kill_9_of_the_worker_and_a_database_restart() {
    // the in-process host commits the batches; its own worker stays idle
    let app = spawn_with_idle_worker().await;
    let mut hook = Receiver::start();
    let search = saved_search(&app, "Bans", json!({ "eventType": "admin.ban" })).await;
    let (dst, _) = destination(&app, "SIEM", "webhook", &hook.url).await;
    rule(
        &app,
        json!({ "name": "Bans", "savedSearchId": search, "kind": "every", "destinationIds": [dst] }),
    )
    .await;
    // a 500 on the way (retried after its backoff), then a request that is never answered
    hook.script([
        Reply::Ok,
        Reply::Ok,
        Reply::Status(500),
        Reply::Ok,
        Reply::Ok,
        Reply::Hang,
    ]);
    let proxy = Proxy::start("127.0.0.1:5432".into()).await;
    let (mut first, _) = start_worker(&app, &proxy).await;
    let mut seen: Vec<stowage_tests::receiver::Received> = Vec::new();

    ban_batches(&app, 0..10).await;
    let hung = loop {
        let got = hook.next().await;
        let hangs = matches!(got.reply, Reply::Hang);
        seen.push(got);
        if hangs {
            break seen.last().unwrap().header("webhook-id");
        }
    };
    first.start_kill().unwrap(); // SIGKILL, with the hanging request in flight
    first.wait().await.unwrap();

    // firings committed while no worker runs wait in the outbox
    ban_batches(&app, 10..20).await;
    let (_second, second_base) = start_worker(&app, &proxy).await;
    // the killed worker's lease runs out; the new one sends that delivery again, same id
    let again = hook.next_within(StdDuration::from_secs(90)).await;
    assert_eq!(
        again.header("webhook-id"),
        hung,
        "the request in flight at the kill comes first again, under its id"
    );
    seen.push(again);

    ban_batches(&app, 20..30).await;
    proxy.cut();
    until_status(&app, &format!("{second_base}/readyz"), 503).await;
    ban_batches(&app, 30..40).await;
    proxy.restore();
    until_status(&app, &format!("{second_base}/readyz"), 200).await;

    // every firing delivered (a send whose answer could not be recorded in the outage is sent
    // again once its lease runs out)
    let deadline = Instant::now() + StdDuration::from_secs(150);
    loop {
        let delivered = app
            .count("SELECT count(*) AS n FROM alert_deliveries WHERE status = 'delivered'")
            .await;
        if delivered == 40 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{delivered} of 40 deliveries delivered"
        );
        match tokio::time::timeout(StdDuration::from_millis(200), hook.next()).await {
            Ok(got) => seen.push(got),
            Err(_) => continue,
        }
    }
    seen.extend(hook.drain());
    assert_eq!(
        app.count("SELECT count(*) AS n FROM alert_firings").await,
        40,
        "one firing per batch, none lost or doubled by the faults"
    );

    // which ids each event went out under: one each, and every event sent
    let mut ids_of: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for got in &seen {
        for e in got.body["events"].as_array().into_iter().flatten() {
            ids_of
                .entry(e["message"].as_str().unwrap().to_owned())
                .or_default()
                .insert(got.header("webhook-id"));
        }
    }
    let sent: BTreeSet<String> = ids_of.keys().cloned().collect();
    let all: BTreeSet<String> = (0..40).map(|i| format!("ban {i}")).collect();
    assert_eq!(sent, all, "every firing sent");
    for (message, ids) in &ids_of {
        assert_eq!(ids.len(), 1, "{message} went out under {ids:?}");
    }
    let unique: BTreeSet<String> = seen.iter().map(|g| g.header("webhook-id")).collect();
    assert_eq!(unique.len(), 40);
    let stored = app
        .count(&format!(
            "SELECT count(*) AS n FROM alert_deliveries WHERE id IN ({})",
            unique
                .iter()
                .map(|id| format!("'{id}'"))
                .collect::<Vec<_>>()
                .join(",")
        ))
        .await;
    assert_eq!(stored, 40, "the ids sent are the outbox's delivery ids");
}

/// Polls `url` until it answers `status` (30 s at most).
async fn until_status(app: &TestApp, url: &str, status: u16) {
    let deadline = Instant::now() + StdDuration::from_secs(30);
    loop {
        if let Ok(res) = app.client.get(url).send().await {
            if res.status() == status {
                return;
            }
        }
        assert!(Instant::now() < deadline, "{url} never answered {status}");
        tokio::time::sleep(StdDuration::from_millis(50)).await;
    }
}
