#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `GET /v1/logs/tail`: events from any ingestion instance on any API instance, resumed with
//! `Last-Event-ID` without loss or duplicates, filters, heartbeats, the per-organization limit
//! across instances, and the end of a tail whose key is disabled.

use super::*;
use auth_core::AccountStore;
use futures::StreamExt;

/// One Server-Sent Events frame.
#[derive(Debug, Default)]
struct Frame {
    id: Option<String>,
    event: Option<String>,
    data: String,
    comment: bool,
}

struct Sse {
    body: futures::stream::BoxStream<'static, reqwest::Result<bytes::Bytes>>,
    buf: String,
}

impl Sse {
    fn new(res: reqwest::Response) -> Self {
        assert_eq!(res.status(), 200);
        assert_eq!(res.headers()["content-type"], "text/event-stream");
        assert_eq!(res.headers()["cache-control"], "no-store");
        Self {
            body: res.bytes_stream().boxed(),
            buf: String::new(),
        }
    }

    /// The next frame (a `retry:`-only frame is skipped); `None` when the stream ended. Waits at
    /// most 10 s: a deadline for a broken tail, not a synchronization.
    async fn next(&mut self) -> Option<Frame> {
        let deadline = std::time::Duration::from_secs(10);
        loop {
            if let Some(end) = self.buf.find("\n\n") {
                let raw: String = self.buf.drain(..end + 2).collect();
                let mut f = Frame::default();
                for line in raw.lines() {
                    if let Some(v) = line.strip_prefix("id: ") {
                        f.id = Some(v.to_owned());
                    } else if let Some(v) = line.strip_prefix("event: ") {
                        f.event = Some(v.to_owned());
                    } else if let Some(v) = line.strip_prefix("data: ") {
                        f.data.push_str(v);
                    } else if line.starts_with(':') {
                        f.comment = true;
                    }
                }
                if f.event.is_none() && !f.comment {
                    continue;
                }
                return Some(f);
            }
            match tokio::time::timeout(deadline, self.body.next())
                .await
                .expect("a frame within 10 s")
            {
                Some(chunk) => self
                    .buf
                    .push_str(std::str::from_utf8(&chunk.unwrap()).unwrap()),
                None => return None,
            }
        }
    }

    /// The next `log` event (skipping heartbeats): its id and message.
    async fn log(&mut self) -> (String, String) {
        loop {
            let f = self.next().await.expect("an event");
            if f.event.as_deref() == Some("log") {
                let e: Value = serde_json::from_str(&f.data).unwrap();
                return (f.id.unwrap(), e["message"].as_str().unwrap().to_owned());
            }
            assert!(f.comment, "unexpected frame {f:?}");
        }
    }
}

fn tail_url(base: &str, query: &[(&str, &str)]) -> String {
    let mut url = url::Url::parse(&format!("{base}/v1/logs/tail")).unwrap();
    url.query_pairs_mut()
        .append_pair("serverId", "abc123")
        .extend_pairs(query);
    url.to_string()
}

async fn open(app: &TestApp, url: &str, last_event_id: Option<&str>) -> reqwest::Response {
    let mut req = app.client.get(url).bearer_auth(&app.dev_key);
    if let Some(id) = last_event_id {
        req = req.header("Last-Event-ID", id);
    }
    req.send().await.unwrap()
}

async fn ingest_on(app: &TestApp, logs: &str, batch_id: &str, messages: &[&str]) {
    let events = messages
        .iter()
        .map(|m| json!({ "level": "info", "message": m }))
        .collect();
    app.ingest_logs_at(logs, batch_id, events).await;
}

#[tokio::test]
async fn a_tail_follows_every_ingestion_instance_and_resumes_on_another_api_instance() {
    let app = spawn().await;
    let (logs_b, cdn_b) = (
        spawn_logs(app.config.clone()),
        spawn_cdn(app.config.clone()),
    );
    let mut tail = Sse::new(open(&app, &tail_url(&app.cdn, &[]), None).await);
    ingest_on(&app, &app.logs, "batch-tail-0001", &["a1", "a2"]).await;
    ingest_on(&app, &logs_b, "batch-tail-0002", &["b1"]).await;
    let (id_a1, m) = tail.log().await;
    assert_eq!(m, "a1");
    let (id_a2, m) = tail.log().await;
    assert_eq!(m, "a2");
    // the connection drops after a2; b1 was sent but never read, c1 arrives meanwhile
    drop(tail);
    ingest_on(&app, &logs_b, "batch-tail-0003", &["c1", "c2"]).await;
    let mut resumed = Sse::new(open(&app, &tail_url(&cdn_b, &[]), Some(&id_a2)).await);
    for want in ["b1", "c1", "c2"] {
        assert_eq!(resumed.log().await.1, want);
    }
    ingest_on(&app, &app.logs, "batch-tail-0004", &["d1"]).await;
    assert_eq!(
        resumed.log().await.1,
        "d1",
        "nothing twice, nothing skipped"
    );
    // from the middle of a batch, as a query parameter for clients that cannot set headers
    let mut mid = Sse::new(open(&app, &tail_url(&app.cdn, &[("lastEventId", &id_a1)]), None).await);
    for want in ["a2", "b1", "c1", "c2", "d1"] {
        assert_eq!(mid.log().await.1, want);
    }
}

#[tokio::test]
async fn a_tail_filters_sends_heartbeats_and_ends_when_its_key_is_disabled() {
    let app = spawn_with(Options {
        tweak: |c| c.tail_heartbeat = std::time::Duration::from_millis(200),
        ..Options::default()
    })
    .await;
    let key = app
        .key(KeySpec::perms(&[auth_core::Permission::LogsRead]))
        .await;
    let url = tail_url(&app.cdn, &[("minLevel", "error"), ("data", r#"{"k":1}"#)]);
    let res = app.client.get(&url).bearer_auth(&key).send().await.unwrap();
    let mut tail = Sse::new(res);
    app.ingest_logs(
        "batch-filters",
        vec![
            json!({ "level": "info", "message": "info k1", "data": { "k": 1 } }),
            json!({ "level": "error", "message": "error k2", "data": { "k": 2 } }),
            json!({ "level": "error", "message": "error k1", "data": { "k": 1, "more": true } }),
        ],
    )
    .await;
    assert_eq!(tail.log().await.1, "error k1");
    // idle: heartbeat comments keep proxies from closing it
    let f = tail.next().await.unwrap();
    assert!(f.comment, "{f:?}");
    // the key is disabled: the tail says so and ends
    let whoami: Value = app
        .get("/v1/whoami", &key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = whoami["keyId"].as_str().unwrap();
    app.accounts
        .disable_key(
            &auth_core::KeyId::new(id),
            Utc::now(),
            &auth_core::audit::Audit::operator("test"),
        )
        .await
        .unwrap();
    let end = loop {
        let f = tail
            .next()
            .await
            .expect("an end event before the stream closes");
        if !f.comment {
            break f;
        }
    };
    assert_eq!(end.event.as_deref(), Some("end"));
    assert_eq!(
        serde_json::from_str::<Value>(&end.data).unwrap(),
        json!({ "reason": "key_disabled" })
    );
    assert!(tail.next().await.is_none(), "the stream ends after it");
}

#[tokio::test]
async fn open_tails_are_limited_per_organization_across_instances() {
    // a tail whose client went away is noticed at its next write: a heartbeat at the latest
    let app = spawn_with(Options {
        tweak: |c| {
            c.tail_limit = 2;
            c.tail_heartbeat = std::time::Duration::from_millis(200);
        },
        ..Options::default()
    })
    .await;
    let other = spawn_cdn(app.config.clone());
    let first = Sse::new(open(&app, &tail_url(&app.cdn, &[]), None).await);
    let _second = Sse::new(open(&app, &tail_url(&other, &[]), None).await);
    let res = open(&app, &tail_url(&app.cdn, &[]), None).await;
    assert_eq!(res.headers()["retry-after"], "5");
    let err = expect_error(res, 429, "RATE_LIMITED").await;
    assert!(err["error"]["message"]
        .as_str()
        .unwrap()
        .contains("at most 2 live tails"));
    // a closed tail frees its place
    drop(first);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let res = open(&app, &tail_url(&other, &[]), None).await;
        if res.status() == 200 {
            break;
        }
        assert_eq!(res.status(), 429);
        assert!(
            std::time::Instant::now() < deadline,
            "the closed tail still holds its place"
        );
        tokio::task::yield_now().await;
    }
}

#[tokio::test]
async fn a_resume_point_that_is_unknown_is_a_gap_and_a_malformed_one_is_refused() {
    let app = spawn().await;
    let mut tail = Sse::new(open(&app, &tail_url(&app.cdn, &[]), Some("1.1")).await);
    let gap = tail.next().await.unwrap();
    assert_eq!(gap.event.as_deref(), Some("gap"), "{gap:?}");
    assert!(gap.data.contains("older than 15 minutes"), "{}", gap.data);
    app.ingest_logs(
        "batch-after-gap",
        vec![json!({ "level": "info", "message": "now" })],
    )
    .await;
    assert_eq!(tail.log().await.1, "now");
    for bad in ["abc", "1", "-1.2"] {
        let err = expect_error(
            open(&app, &tail_url(&app.cdn, &[]), Some(bad)).await,
            400,
            "INVALID_REQUEST",
        )
        .await;
        assert!(err["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Last-Event-ID"));
    }
    let err = expect_error(
        open(
            &app,
            &tail_url(&app.cdn, &[("from", "2026-01-01T00:00:00Z")]),
            None,
        )
        .await,
        400,
        "INVALID_REQUEST",
    )
    .await;
    assert!(
        err["error"]["message"].as_str().unwrap().contains("from"),
        "{err}"
    );
}
