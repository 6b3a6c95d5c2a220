#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Faults: responses idempotency cannot store, a fresh database's partitions, stray rows in the
//! default partition, a full disk, an abandoned idempotent upload.

use std::time::{Duration, Instant};

use stowage_tests::*;

use crate::hardening::{multipart, raw_form, BOUNDARY, DISPOSITION};

#[tokio::test]
async fn a_response_echoing_a_nul_is_stored_and_replayed() {
    let app = spawn().await;
    let send = || {
        app.post("/v1/objects/bulk-delete", &app.dev_key)
            .header("Idempotency-Key", "nul-1")
            .json(&json!({ "paths": ["a\u{0}b", "fine.png"] }))
            .send()
    };
    let first = send().await.unwrap();
    assert_eq!(first.status(), 200);
    assert!(first.headers().get("idempotent-replayed").is_none());
    let first_body = first.bytes().await.unwrap();
    let parsed: Value = serde_json::from_slice(&first_body).unwrap();
    assert_eq!(parsed["results"][0]["path"], "a\u{0}b");
    let retry = send().await.unwrap();
    assert_eq!(
        retry.status(),
        200,
        "replayed, not 409 for a key stuck in flight"
    );
    assert_eq!(retry.headers()["idempotent-replayed"], "true");
    assert_eq!(retry.bytes().await.unwrap(), first_body, "the same bytes");
}

/// Rows in a table (`ONLY` for the default partition itself).
async fn count(app: &TestApp, from: &str) -> i64 {
    app.count(&format!("SELECT count(*) AS n FROM {from}"))
        .await
}

async fn sql(app: &TestApp, statement: &str) {
    use diesel_async::SimpleAsyncConnection;
    let mut conn = app.db.conn().await.unwrap();
    conn.batch_execute(statement).await.unwrap();
}

fn todays_partition() -> String {
    format!("log_events_p{}", chrono::Utc::now().format("%Y%m%d"))
}

fn batch(id: &str) -> Value {
    json!({"batch_id": id, "events": [{"level": "info", "message": "player joined"}]})
}

#[tokio::test]
async fn no_batch_lands_in_the_default_partition_of_a_fresh_database() {
    let app = spawn().await;
    sql(&app, &format!("DROP TABLE {}", todays_partition())).await;
    // hold off partition creation, as a slow first maintenance would
    let mut blocker = app.db.conn().await.unwrap();
    {
        use diesel_async::SimpleAsyncConnection;
        blocker
            .batch_execute("BEGIN; LOCK TABLE log_events_default IN SHARE MODE")
            .await
            .unwrap();
    }
    let base = spawn_logs(app.config.clone());
    let ready = app
        .client
        .get(format!("{base}/readyz"))
        .send()
        .await
        .unwrap();
    assert_eq!(ready.status(), 503);
    let body: Value = ready.json().await.unwrap();
    assert_eq!(body["checks"]["logPartitions"], "pending", "{body}");
    let sent = tokio::spawn(
        app.client
            .post(format!("{base}/v1/servers/abc123/logs"))
            .bearer_auth(&app.server_key)
            .json(&batch("fresh-batch-1"))
            .send(),
    );
    tokio::time::sleep(Duration::from_millis(300)).await; // let the batch reach the server
    {
        use diesel_async::SimpleAsyncConnection;
        blocker.batch_execute("COMMIT").await.unwrap();
    }
    let res = sent.await.unwrap().unwrap();
    assert_eq!(res.status(), 202, "{}", res.text().await.unwrap());
    assert_eq!(count(&app, "ONLY log_events_default").await, 0);
    assert_eq!(count(&app, &todays_partition()).await, 1);
    let ready = app
        .client
        .get(format!("{base}/readyz"))
        .send()
        .await
        .unwrap();
    assert_eq!(ready.status(), 200);
}

#[tokio::test]
async fn maintenance_moves_stray_events_out_of_the_default_partition() {
    let app = spawn().await;
    sql(&app, &format!("DROP TABLE {}", todays_partition())).await;
    // this instance's partitions were ready before the drop: the batch lands in the default
    // partition, as batches did on a fresh database before partitions were waited for
    for id in ["stray-batch-1", "stray-batch-2"] {
        let res = app
            .client
            .post(format!("{}/v1/servers/abc123/logs", app.logs))
            .bearer_auth(&app.server_key)
            .json(&batch(id))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 202);
    }
    assert_eq!(count(&app, "ONLY log_events_default").await, 2);
    let report = stow_db::logs::maintain_partitions(&app.db).await.unwrap();
    assert!(report.failed.is_empty(), "{report:?}");
    assert!(report.created.contains(&todays_partition()), "{report:?}");
    assert_eq!(report.moved_from_default, 2);
    assert_eq!(count(&app, "ONLY log_events_default").await, 0);
    assert_eq!(count(&app, &todays_partition()).await, 2);
    let found: Value = app
        .post("/v1/logs/query", &app.dev_key)
        .json(&json!({
            "serverId": "abc123",
            "from": (chrono::Utc::now() - chrono::Duration::hours(1)).to_rfc3339(),
            "to": (chrono::Utc::now() + chrono::Duration::minutes(5)).to_rfc3339(),
        }))
        .json_body()
        .await;
    assert_eq!(found["events"].as_array().unwrap().len(), 2, "{found}");
}

/// A small tmpfs, unmounted on drop; `None` when this user may not mount (not root).
struct Tmpfs(std::path::PathBuf);

impl Tmpfs {
    fn mount(size: &str) -> Option<Self> {
        let uid = std::process::Command::new("id").arg("-u").output().unwrap();
        if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
            return None;
        }
        let dir = std::env::temp_dir().join(format!("stowage-full-{}", ulid::Ulid::new()));
        std::fs::create_dir_all(&dir).unwrap();
        let status = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&dir)
            .status()
            .unwrap();
        assert!(
            status.success(),
            "root could not mount a tmpfs at {}",
            dir.display()
        );
        Some(Self(dir))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
        let _ = std::fs::remove_dir(&self.0);
    }
}

#[tokio::test]
async fn a_full_disk_answers_507_and_readiness_says_degraded() {
    let app = spawn().await;
    let Some(disk) = Tmpfs::mount("256k") else {
        eprintln!("skipped: mounting a tmpfs needs root");
        return;
    };
    let mut config = app.config.clone();
    config.object_store_url = Some(format!("file://{}", disk.0.display()));
    let base = spawn_cdn(config);
    let upload = |name: &str, size: usize| {
        let form = reqwest::multipart::Form::new().part(
            "file",
            reqwest::multipart::Part::bytes(vec![7u8; size]).file_name(name.to_owned()),
        );
        app.client
            .post(format!("{base}/v1/objects"))
            .bearer_auth(&app.dev_key)
            .multipart(form)
            .send()
    };
    let readyz = || app.client.get(format!("{base}/readyz")).send();

    // another tenant of the disk fills it up
    let filler = disk.0.join("filler");
    {
        use std::io::Write;
        let mut f = std::fs::File::create(&filler).unwrap();
        while f.write_all(&[0u8; 4096]).is_ok() {}
    }
    for size in [2_000_000, 10_000] {
        // streamed in batches first (readiness must notice a streamed write failing), then whole
        let res = upload("big.bin", size).await.unwrap();
        assert_eq!(
            res.headers()
                .get("retry-after")
                .map(|v| v.to_str().unwrap().to_owned()),
            Some("60".to_owned()),
            "{size}: {}",
            res.status()
        );
        expect_error_mentioning(res, 507, "INSUFFICIENT_STORAGE", "out of space").await;
        let res = readyz().await.unwrap();
        assert_eq!(
            res.status(),
            200,
            "reads still work: the instance stays in rotation"
        );
        let body: Value = res.json().await.unwrap();
        assert_eq!(body["status"], "degraded", "{body}");
        assert_eq!(body["checks"]["objectStore"], "out_of_space", "{body}");
    }
    // nothing half-written: no row for the refused uploads
    assert!(app.list_keys(&app.dev_key, None).await.is_empty());
    // space is freed: readiness sees it before any upload does
    std::fs::remove_file(&filler).unwrap();
    let body: Value = readyz().await.unwrap().json().await.unwrap();
    assert_eq!(body["status"], "ready", "{body}");
    let res = upload("small.bin", 10_000).await.unwrap();
    assert_eq!(res.status(), 200, "{}", res.text().await.unwrap());
    assert_eq!(app.list_keys(&app.dev_key, None).await, vec!["small.bin"]);
}

/// A client that gives up on an idempotent upload (its connection closes mid-body) frees the key
/// at once: the retry does not wait for the lease to run out.
#[tokio::test]
async fn an_abandoned_idempotent_upload_frees_its_key_at_once() {
    let app = spawn().await;
    let never_ends = futures::stream::unfold(0, |i| async move {
        if i == 0 {
            let head = format!("--{BOUNDARY}\r\n{DISPOSITION}\r\n\r\nsome bytes");
            return Some((Ok::<_, std::io::Error>(head.into_bytes()), 1));
        }
        futures::future::pending::<()>().await;
        None
    });
    let abandoned = tokio::spawn(
        app.post("/v1/objects", &app.dev_key)
            .header("Idempotency-Key", "abandoned-1")
            .header(
                "content-type",
                format!("multipart/form-data; boundary={BOUNDARY}"),
            )
            .body(reqwest::Body::wrap_stream(never_ends))
            .send(),
    );
    app.wait_in_flight("abandoned-1").await;
    abandoned.abort(); // the client goes away
    let gave_up = Instant::now();
    let retry = || {
        multipart(
            app.post("/v1/objects", &app.dev_key)
                .header("Idempotency-Key", "abandoned-1"),
            raw_form(&[DISPOSITION.to_owned()], b"some bytes"),
        )
        .send()
    };
    loop {
        let res = retry().await.unwrap();
        if res.status() == 200 {
            break;
        }
        assert_eq!(res.status(), 409);
        assert!(
            gave_up.elapsed() < Duration::from_secs(3),
            "the key waited for its lease (5 s) instead of being released"
        );
        tokio::task::yield_now().await;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(app.list_keys(&app.dev_key, None).await, vec!["a.bin"]);
}
