#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Alerts (issue 41): destinations, rules on saved searches, and deliveries to local receivers
//! that behave like Discord and like a Standard Webhooks consumer.

mod delivery;
mod faults;
mod rules;
mod scope;

use auth_core::Permission;
use chrono::{Duration, SecondsFormat, Utc};
use stowage_tests::receiver::{Receiver, Reply};
use stowage_tests::*;

fn ago(secs: i64) -> String {
    (Utc::now() - Duration::seconds(secs)).to_rfc3339_opts(SecondsFormat::Millis, true)
}

fn event(kind: &str, resource: &str, message: &str) -> Value {
    json!({ "level": "warn", "message": message, "event_type": kind, "occurred_at": ago(5),
            "resource": resource, "player_id": "7" })
}

async fn created(res: reqwest::Response) -> Value {
    let status = res.status().as_u16();
    let body: Value = res.json().await.unwrap();
    assert!(status == 201 || status == 200, "{status}: {body}");
    body
}

/// POSTs `body` to `path` with `key` (201 or 200 asserted); the string at `pointer` of the answer.
async fn made_by(app: &TestApp, key: &str, path: &str, body: Value, pointer: &str) -> String {
    let answer = created(app.post(path, key).json(&body).send().await.unwrap()).await;
    answer
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("no {pointer} in {answer}"))
        .to_owned()
}

/// A saved search of `filters` on every server; its id.
async fn saved_search(app: &TestApp, name: &str, filters: Value) -> String {
    let body = json!({ "name": name, "search": filters });
    made_by(
        app,
        &app.dev_key,
        "/v1/logs/saved-searches",
        body,
        "/savedSearch/id",
    )
    .await
}

/// A destination of `kind` at `url`; its id and (generic webhooks) signing secret.
async fn destination(app: &TestApp, name: &str, kind: &str, url: &str) -> (String, Option<String>) {
    let body = created(
        app.post("/v1/logs/destinations", &app.dev_key)
            .json(&json!({ "name": name, "kind": kind, "url": url }))
            .send()
            .await
            .unwrap(),
    )
    .await;
    (
        body["destination"]["id"].as_str().unwrap().to_owned(),
        body["signingSecret"].as_str().map(str::to_owned),
    )
}

/// An `every` rule "Bans" on a saved search of `admin.ban` events, sending to a generic webhook
/// at `url`; the rule's id.
async fn bans_to_webhook(app: &TestApp, url: &str) -> String {
    let search = saved_search(app, "Bans", json!({ "eventType": "admin.ban" })).await;
    let (dst, _) = destination(app, "Hook", "webhook", url).await;
    rule(
        app,
        json!({ "name": "Bans", "savedSearchId": search, "kind": "every", "destinationIds": [dst] }),
    )
    .await
}

/// A rule; its id.
async fn rule(app: &TestApp, body: Value) -> String {
    made_by(
        app,
        &app.dev_key,
        "/v1/logs/alert-rules",
        body,
        "/alertRule/id",
    )
    .await
}

/// An app whose own delivery worker looks once, at its start, then sleeps past the test: the
/// deliveries are left to whatever other worker the test starts.
async fn spawn_with_idle_worker() -> TestApp {
    spawn_with(Options {
        tweak: |c| c.alerts_poll = std::time::Duration::from_secs(3600),
        ..Options::default()
    })
    .await
}

/// The delivery log (newest first), every rule's or one's.
async fn deliveries(app: &TestApp, rule: Option<&str>) -> Vec<Value> {
    let path = match rule {
        Some(r) => format!("/v1/logs/alert-deliveries?ruleId={r}"),
        None => "/v1/logs/alert-deliveries".to_owned(),
    };
    let body = app.get_json(&path, &app.dev_key).await;
    body["deliveries"].as_array().unwrap().clone()
}
