#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Graceful shutdown of a real process, and a database outage and recovery.

use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use stowage_tests::*;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};

pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub(crate) async fn wait_ready(client: &reqwest::Client, url: &str) {
    for _ in 0..200 {
        if client
            .get(url)
            .send()
            .await
            .is_ok_and(|r| r.status().is_success())
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{url} never became ready");
}

/// `cdn-api` as a real process on `app`'s database and store (with `env` added), ready; the
/// child and its base URL.
pub(crate) async fn start_process(
    app: &TestApp,
    env: &[(&str, &str)],
) -> (tokio::process::Child, String) {
    let port = free_port();
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_cdn_api_test_shim"));
    command
        .env("DATABASE_URL", &app.db_url)
        .env("CDN_API_ADDR", format!("127.0.0.1:{port}"))
        .env("CONSOLE_ADDR", "off")
        // the app's own store: its directory, or its S3 bucket and prefix under scripts/s3-tests.sh
        // (the AWS_* variables are inherited)
        .env(
            "OBJECT_STORE_URL",
            app.config
                .object_store_url
                .clone()
                .unwrap_or_else(|| format!("file://{}", app.objects_dir.display())),
        )
        .env("RUST_LOG", "warn")
        .envs(env.iter().copied())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    let child = command.spawn().unwrap();
    let base = format!("http://127.0.0.1:{port}");
    wait_ready(&app.client, &format!("{base}/healthz")).await;
    (child, base)
}

/// A multipart body whose file part is sent in `chunks` pieces, `gap` apart, then (if `finish`)
/// closed properly.
fn slow_body(chunks: usize, gap: Duration, finish: bool) -> reqwest::Body {
    let head: &'static [u8] = b"--b0undary\r\nContent-Disposition: form-data; name=\"file\"; filename=\"slow.bin\"\r\nContent-Type: application/octet-stream\r\n\r\n";
    let stream = futures::stream::unfold(0usize, move |i| async move {
        if i == 0 {
            return Some((Ok::<_, std::io::Error>(head.to_vec()), 1));
        }
        if i <= chunks {
            tokio::time::sleep(gap).await;
            return Some((Ok(vec![b'x'; 64 * 1024]), i + 1));
        }
        if i == chunks + 1 && finish {
            return Some((Ok(b"\r\n--b0undary--\r\n".to_vec()), i + 1));
        }
        if !finish {
            // never finish: hold the connection open
            tokio::time::sleep(Duration::from_secs(3600)).await;
        }
        None
    });
    reqwest::Body::wrap_stream(stream)
}

#[tokio::test]
async fn sigterm_finishes_in_flight_uploads_and_drops_cut_ones() {
    let app = spawn().await;
    let (mut child, base) = start_process(&app, &[("SHUTDOWN_TIMEOUT_SECONDS", "3")]).await;

    let send = |body: reqwest::Body| {
        app.client
            .post(format!("{base}/v1/objects?"))
            .bearer_auth(&app.dev_key)
            .header("Content-Type", "multipart/form-data; boundary=b0undary")
            .body(body)
            .send()
    };
    // finishes about 1 s after SIGTERM, inside the 3 s window
    let finishing = tokio::spawn(send(slow_body(10, Duration::from_millis(150), true)));
    // never finishes: cut off when the window closes
    let cut = tokio::spawn(send(slow_body(4, Duration::from_millis(100), false)));
    tokio::time::sleep(Duration::from_millis(500)).await;
    let pid = child.id().unwrap() as i32;
    assert_eq!(unsafe_free_kill(pid), 0);

    let finished = finishing
        .await
        .unwrap()
        .expect("the in-flight upload got an answer");
    assert_eq!(
        finished.status(),
        200,
        "an in-flight upload completes during shutdown"
    );
    let status = tokio::time::timeout(Duration::from_secs(15), child.wait())
        .await
        .expect("the process exits")
        .unwrap();
    assert!(status.success(), "{status:?}");
    let cut = cut.await.unwrap();
    assert!(
        cut.is_err() || !cut.unwrap().status().is_success(),
        "the cut-off upload did not succeed"
    );
    // exactly the finished upload exists: one row, one stored object
    assert_eq!(app.list_keys(&app.dev_key, None).await, vec!["slow.bin"]);
    let locations = app.stored_locations().await;
    assert_eq!(locations.len(), 1, "{locations:?}");
}

/// SIGTERM without `unsafe`: through the `kill` command.
fn unsafe_free_kill(pid: i32) -> i32 {
    std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap()
        .code()
        .unwrap_or(-1)
}

/// A TCP proxy in front of Postgres that the test can cut and restore, or freeze (connections
/// stay open and nothing moves, as with a `SIGSTOP`ped server) and thaw.
pub(crate) struct Proxy {
    port: u16,
    up: Arc<AtomicBool>,
    generation: Arc<tokio::sync::watch::Sender<u64>>,
    frozen: Arc<tokio::sync::watch::Sender<bool>>,
}

/// Copies `from` to `to`, holding every read and write while `frozen` says so.
async fn pump(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    mut frozen: tokio::sync::watch::Receiver<bool>,
) {
    use tokio::io::AsyncReadExt;
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        if frozen.wait_for(|f| !*f).await.is_err() {
            return;
        }
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        if frozen.wait_for(|f| !*f).await.is_err() || to.write_all(&buf[..n]).await.is_err() {
            return;
        }
    }
}

impl Proxy {
    pub(crate) async fn start(target: String) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let up = Arc::new(AtomicBool::new(true));
        let (tx, _) = tokio::sync::watch::channel(0u64);
        let generation = Arc::new(tx);
        let frozen = Arc::new(tokio::sync::watch::channel(false).0);
        let (up2, gen2, frozen2) = (up.clone(), generation.clone(), frozen.clone());
        tokio::spawn(async move {
            loop {
                let Ok((mut inbound, _)) = listener.accept().await else {
                    continue;
                };
                if !up2.load(Ordering::SeqCst) {
                    let _ = inbound.shutdown().await;
                    continue;
                }
                let target = target.clone();
                let mut cut = gen2.subscribe();
                let frozen = frozen2.subscribe();
                tokio::spawn(async move {
                    let Ok(outbound) = TcpStream::connect(&target).await else {
                        return;
                    };
                    let (in_read, in_write) = inbound.into_split();
                    let (out_read, out_write) = outbound.into_split();
                    tokio::select! {
                        _ = pump(in_read, out_write, frozen.clone()) => {}
                        _ = pump(out_read, in_write, frozen) => {}
                        _ = cut.changed() => {}
                    }
                });
            }
        });
        Self {
            port,
            up,
            generation,
            frozen,
        }
    }

    /// `app`'s configuration with its database reached through this proxy.
    pub(crate) fn config_for(&self, app: &TestApp) -> stow_http::Config {
        let mut config = app.config.clone();
        config.database_url = self.database_url_for(app).into();
        config
    }

    /// `app`'s database URL through this proxy.
    pub(crate) fn database_url_for(&self, app: &TestApp) -> String {
        app.db_url
            .replace("127.0.0.1:5432", &format!("127.0.0.1:{}", self.port))
    }

    pub(crate) fn freeze(&self) {
        self.frozen.send_replace(true);
    }

    pub(crate) fn thaw(&self) {
        self.frozen.send_replace(false);
    }

    pub(crate) fn cut(&self) {
        self.up.store(false, Ordering::SeqCst);
        self.generation.send_modify(|g| *g += 1);
    }

    pub(crate) fn restore(&self) {
        self.up.store(true, Ordering::SeqCst);
    }
}

#[tokio::test]
async fn database_outage_gives_503_then_recovers() {
    let direct = spawn().await;
    let proxy = Proxy::start("127.0.0.1:5432".into()).await;
    let mut config = proxy.config_for(&direct);
    config.db_acquire_timeout = Duration::from_millis(1500);
    let cdn = spawn_cdn(config.clone());
    let logs_base = spawn_logs(config);
    let client = &direct.client;
    let whoami = |base: String| {
        client
            .get(format!("{base}/v1/whoami"))
            .bearer_auth(&direct.dev_key)
            .send()
    };

    assert_eq!(whoami(cdn.clone()).await.unwrap().status(), 200);
    assert_eq!(whoami(logs_base.clone()).await.unwrap().status(), 200);

    proxy.cut();
    for base in [&cdn, &logs_base] {
        let started = std::time::Instant::now();
        let res = whoami(base.clone()).await.unwrap();
        assert_eq!(res.status(), 503, "{base}");
        assert!(res.headers().contains_key("retry-after"));
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "bounded, no hang"
        );
        let ready = client.get(format!("{base}/readyz")).send().await.unwrap();
        assert_eq!(ready.status(), 503);
    }
    let res = whoami(cdn.clone()).await.unwrap();
    expect_error(res, 503, "SERVICE_UNAVAILABLE").await;
    let res = whoami(logs_base.clone()).await.unwrap();
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["error"], "unavailable");

    proxy.restore();
    let mut recovered = false;
    for _ in 0..50 {
        if whoami(cdn.clone()).await.unwrap().status() == 200
            && whoami(logs_base.clone()).await.unwrap().status() == 200
        {
            recovered = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(recovered, "both services recover without a restart");
    assert_eq!(client.get(format!("{cdn}/readyz")).sent_status().await, 200);
}

/// kill -9 during an idempotent upload: the key's claim dies with the process (its lease is no
/// longer renewed), so the client's retry goes through within the lease, not after minutes.
#[tokio::test]
async fn a_retry_after_a_crash_takes_over_the_idempotency_key_within_seconds() {
    let app = spawn().await;
    let (mut child, base) = start_process(&app, &[]).await;
    let upload = |base: String, body: reqwest::Body| {
        app.client
            .post(format!("{base}/v1/objects"))
            .bearer_auth(&app.dev_key)
            .header("Idempotency-Key", "crash-1")
            .header("Content-Type", "multipart/form-data; boundary=b0undary")
            .body(body)
            .send()
    };
    let stuck = tokio::spawn(upload(
        base.clone(),
        slow_body(2, Duration::from_millis(50), false),
    ));
    app.wait_in_flight("crash-1").await;
    let res = upload(app.cdn.clone(), slow_body(1, Duration::ZERO, true))
        .await
        .unwrap();
    assert_eq!(res.status(), 409, "held while its request runs");
    child.start_kill().unwrap(); // SIGKILL
    child.wait().await.unwrap();
    let _ = stuck.await;
    let crashed_at = Instant::now();
    let waited = loop {
        let res = upload(app.cdn.clone(), slow_body(1, Duration::ZERO, true))
            .await
            .unwrap();
        match res.status().as_u16() {
            200 => break crashed_at.elapsed(),
            409 => assert!(
                crashed_at.elapsed()
                    < Duration::from_secs(cdn_core::idempotency::LEASE_SECS as u64 + 5),
                "the key is still held {:?} after the crash",
                crashed_at.elapsed()
            ),
            other => panic!("unexpected {other}: {}", res.text().await.unwrap()),
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    eprintln!("the retry went through {waited:?} after the crash");
    assert_eq!(app.list_keys(&app.dev_key, None).await, vec!["slow.bin"]);
    // what is served is the retry's whole file, nothing of the upload the crash cut
    let served = app
        .client
        .get(format!("{}/cdn/test-org/slow.bin", app.cdn))
        .send()
        .await
        .unwrap();
    assert_eq!(served.status(), 200);
    let bytes = served.bytes().await.unwrap();
    assert_eq!(bytes.len(), 64 * 1024);
    assert!(bytes.iter().all(|b| *b == b'x'));
}

/// Stale-if-error: during a database outage, delivery serves what its caches hold (a short
/// outage does not take every cached image off every in-game screen); what it never saw is 503.
#[tokio::test]
async fn cached_objects_are_delivered_through_a_database_outage() {
    let direct = spawn().await;
    let proxy = Proxy::start("127.0.0.1:5432".into()).await;
    let mut config = proxy.config_for(&direct);
    config.db_acquire_timeout = Duration::from_millis(1500);
    let cdn = spawn_cdn(config);
    let png = png_bytes();
    for name in ["hot.png", "cold.png"] {
        assert_eq!(
            direct
                .upload(&direct.dev_key, name, png.clone(), Some("icons"))
                .await
                .status(),
            200
        );
    }
    let get = |name: &str| {
        direct
            .client
            .get(format!("{cdn}/cdn/test-org/icons/{name}"))
            .send()
    };
    let hot = get("hot.png").await.unwrap();
    assert_eq!(hot.status(), 200);
    assert_eq!(hot.bytes().await.unwrap().to_vec(), png);
    // past the row cache's freshness, so every request below must ask the database first
    tokio::time::sleep(api_http::state::DELIVERY_ROW_TTL + Duration::from_millis(100)).await;

    proxy.cut();
    for _ in 0..3 {
        let res = get("hot.png").await.unwrap();
        assert_eq!(res.status(), 200, "served from the caches");
        assert_eq!(
            res.headers()["etag"],
            hot_etag(&direct, "icons/hot.png").await
        );
        assert_eq!(res.bytes().await.unwrap().to_vec(), png);
    }
    let res = get("cold.png").await.unwrap();
    assert_eq!(res.status(), 503, "never cached: nothing to serve");
    proxy.restore();
}

async fn hot_etag(app: &TestApp, key: &str) -> String {
    let body: Value = app
        .get(&format!("/v1/objects?path={key}"), &app.dev_key)
        .json_body()
        .await;
    format!("\"{}\"", body["objects"][0]["etag"].as_str().unwrap())
}

/// A database that accepts connections but never answers (a `SIGSTOP`ped Postgres) holds a
/// cached delivery only for the short stale-lookup deadline, and each stale delivery is counted
/// once. Before, each such delivery waited for the database as long as it stayed frozen.
#[tokio::test]
async fn cached_objects_are_delivered_promptly_while_the_database_is_frozen() {
    let direct = spawn().await;
    let proxy = Proxy::start("127.0.0.1:5432".into()).await;
    let config = proxy.config_for(&direct);
    let cdn = spawn_cdn(config);
    let png = png_bytes();
    assert_eq!(
        direct
            .upload(&direct.dev_key, "hot.png", png.clone(), Some("icons"))
            .await
            .status(),
        200
    );
    let get = || {
        direct
            .client
            .get(format!("{cdn}/cdn/test-org/icons/hot.png"))
            .timeout(Duration::from_secs(20))
            .send()
    };
    assert_eq!(get().await.unwrap().status(), 200);
    let stale_count = || async {
        let text = direct
            .client
            .get(format!("{cdn}/metrics"))
            .text_body()
            .await;
        text.lines()
            .find(|l| l.starts_with("delivery_stale_if_error_total"))
            .and_then(|l| l.rsplit(' ').next())
            .map_or(0, |n| n.parse::<u64>().unwrap())
    };
    let before = stale_count().await;
    // past the row cache's freshness, so every request below must ask the database first
    tokio::time::sleep(api_http::state::DELIVERY_ROW_TTL + Duration::from_millis(100)).await;

    proxy.freeze();
    let deliveries = 12;
    for _ in 0..deliveries {
        let started = Instant::now();
        let res = get().await.unwrap();
        assert_eq!(res.status(), 200, "served from the caches");
        assert_eq!(res.bytes().await.unwrap().to_vec(), png);
        assert!(
            started.elapsed() < api_http::state::STALE_LOOKUP_DEADLINE + Duration::from_secs(1),
            "a stale delivery took {:?}",
            started.elapsed()
        );
    }
    proxy.thaw();
    assert_eq!(
        stale_count().await - before,
        deliveries,
        "every stale delivery is counted, once"
    );
}

/// Sends a request head announcing a chunked body and one chunk, never the end of the body, and
/// reads the answer to the end of the connection (bounded); the answer's status line.
async fn never_ending_body(base: &str, head: &str) -> Result<String, String> {
    use tokio::io::AsyncReadExt;
    let mut conn = TcpStream::connect(base.trim_start_matches("http://"))
        .await
        .unwrap();
    conn.write_all(head.as_bytes()).await.unwrap();
    conn.write_all(b"5\r\nhello\r\n").await.unwrap();
    let mut answer = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(10), conn.read_to_end(&mut answer)).await;
    let text = String::from_utf8_lossy(&answer).into_owned();
    match read {
        Ok(Ok(_)) => Ok(text.lines().next().unwrap_or_default().to_owned()),
        _ => Err(format!("the connection stayed open after {text:?}")),
    }
}

/// A request answered before its body was read (401, 404, 405) closes its connection: a client
/// whose chunked body never ends cannot keep a socket, and a file descriptor, open. Before, 200
/// such requests left 200 open files in the API host, minutes later.
#[tokio::test]
async fn requests_answered_before_their_body_is_read_close_their_connections() {
    let app = spawn().await;
    let (child, base) = start_process(&app, &[]).await;
    let pid = child.id().unwrap();
    let open_files = || {
        std::fs::read_dir(format!("/proc/{pid}/fd"))
            .unwrap()
            .count()
    };
    let before = open_files();
    let key = app.dev_key.clone();
    let heads = [
        // no credentials: 401 before the upload reads anything
        "POST /v1/objects HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\nContent-Type: multipart/form-data; boundary=b\r\n\r\n".to_owned(),
        // no such route: 404
        format!("POST /v1/nothing-here HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer {key}\r\nTransfer-Encoding: chunked\r\n\r\n"),
        // a route without that method: 405
        format!("PUT /v1/whoami HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer {key}\r\nTransfer-Encoding: chunked\r\n\r\n"),
    ];
    let answers = futures::future::join_all(
        (0..200).map(|i| never_ending_body(&base, &heads[i % heads.len()])),
    )
    .await;
    for (i, answer) in answers.iter().enumerate() {
        let status = answer
            .as_ref()
            .unwrap_or_else(|e| panic!("request {i}: {e}"));
        let want = ["401", "404", "405"][i % 3];
        assert!(status.contains(want), "request {i}: {status}");
    }
    // the server closed every one; its descriptors go with them (closing is not instant)
    let mut now = open_files();
    for _ in 0..100 {
        if now <= before + 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        now = open_files();
    }
    assert!(now <= before + 2, "{before} open files before, {now} after");
    // the ingestion host's listener does the same
    let head = "POST /v1/servers/abc123/logs HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n";
    let status = never_ending_body(&app.logs, head).await.unwrap();
    assert!(status.contains("401"), "{status}");
    drop(child);
}
