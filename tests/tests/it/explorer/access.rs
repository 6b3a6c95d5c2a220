#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Every explorer read asks what the query asks: `logs:read`, a server the key may read, and a
//! named server for a global key.

use super::*;
use auth_core::{AccountStore, Permission, PermissionSet, ServerScope};

/// Every log read of the API host.
const READS: [&str; 7] = [
    "/v1/logs/query",
    "/v1/logs/search",
    "/v1/logs/counts",
    "/v1/logs/facets",
    "/v1/logs/patterns",
    "/v1/logs/export",
    "/v1/logs/tail",
];

/// One log read of the last hour with `key`, on `server` when named. An export is read to its
/// end: one the client abandons holds the organization's one export slot until the server
/// notices, and the next read may export again.
async fn read(app: &TestApp, path: &str, key: &str, server: Option<&str>) -> (u16, Value) {
    let now = Utc::now();
    let (from, to) = (at(now - Duration::hours(1)), at(now));
    let res = if path == "/v1/logs/export" || path == "/v1/logs/tail" {
        let mut url = url::Url::parse(&format!("{}{path}", app.cdn)).unwrap();
        if path == "/v1/logs/export" {
            url.query_pairs_mut()
                .append_pair("from", &from)
                .append_pair("to", &to);
        }
        if let Some(s) = server {
            url.query_pairs_mut().append_pair("serverId", s);
        }
        app.client.get(url).bearer_auth(key).send().await.unwrap()
    } else {
        let mut body = json!({ "from": from, "to": to });
        if let Some(s) = server {
            body["serverId"] = json!(s);
        }
        app.post(path, key).json(&body).send().await.unwrap()
    };
    let status = res.status().as_u16();
    if status == 200 {
        if path != "/v1/logs/tail" {
            res.bytes().await.unwrap();
        }
        return (status, Value::Null);
    }
    (status, res.json().await.unwrap())
}

fn code(body: &Value) -> &str {
    body["error"]["code"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn every_read_checks_permission_and_server_binding() {
    let app = spawn().await;
    app.second_server("other1").await;
    let no_read = app.key(KeySpec::perms(&[Permission::LogsWrite])).await;
    for path in READS {
        let (status, body) = read(&app, path, &no_read, Some("abc123")).await;
        assert_eq!((status, code(&body)), (403, "FORBIDDEN"), "{path}");
        let (status, body) = read(&app, path, &app.server_key, Some("other1")).await;
        assert_eq!((status, code(&body)), (403, "FORBIDDEN"), "{path}");
        let (status, body) = read(&app, path, &app.dev_key, None).await;
        assert_eq!((status, code(&body)), (400, "INVALID_REQUEST"), "{path}");
        let (status, body) = read(&app, path, &app.dev_key, Some("nosuch1")).await;
        assert_eq!((status, code(&body)), (404, "NOT_FOUND"), "{path}");
        let (status, _) = read(&app, path, &app.server_key, None).await;
        assert_eq!(status, 200, "{path}: a bound key defaults to its server");
        let (status, _) = read(&app, path, &app.dev_key, Some("other1")).await;
        assert_eq!(status, 200, "{path}");
    }
}

/// A developer key limited to named servers reads and writes their logs only, through every
/// route, and the overview lists only them.
#[tokio::test]
async fn a_server_scoped_key_reads_and_writes_only_its_servers() {
    let app = spawn().await;
    let other = app
        .accounts
        .register_server(
            &app.org.id,
            "Other1",
            Some("Other"),
            &auth_core::audit::Audit::operator("test"),
        )
        .await
        .unwrap();
    app.accounts
        .set_logs_active("other1", true, &auth_core::audit::Audit::operator("test"))
        .await
        .unwrap();
    let scoped = app
        .key(KeySpec {
            servers: ServerScope::only([other.id.clone()]).unwrap(),
            ..KeySpec::developer(PermissionSet::all())
        })
        .await;
    for path in READS {
        let (status, _) = read(&app, path, &scoped, Some("other1")).await;
        assert_eq!(status, 200, "{path}: the key's own server");
        let (status, body) = read(&app, path, &scoped, Some("abc123")).await;
        assert_eq!((status, code(&body)), (403, "FORBIDDEN"), "{path}");
        let message = body["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("named servers only") && message.contains("`abc123`"),
            "{path}: {message}"
        );
        let (status, body) = read(&app, path, &scoped, Some("nosuch1")).await;
        assert_eq!((status, code(&body)), (404, "NOT_FOUND"), "{path}");
    }

    let ingest = |server: &str| {
        app.client
            .post(format!("{}/v1/servers/{server}/logs", app.logs))
            .bearer_auth(&scoped)
            .json(&json!({ "batch_id": format!("b-{server}"), "events": [{"level": "info", "event_type": "t", "message": "m"}] }))
            .send()
    };
    assert_eq!(ingest("OTHER1").await.unwrap().status(), 202);
    let res = ingest("abc123").await.unwrap();
    assert_eq!(res.status(), 403);
    let body: Value = res.json().await.unwrap();
    assert!(body.to_string().contains("named servers only"), "{body}");
    assert_eq!(
        app.count("SELECT count(*) AS n FROM log_events").await,
        1,
        "nothing written for the server outside the scope"
    );

    let whoami: Value = app.get_json("/v1/whoami", &scoped).await;
    assert_eq!(whoami["logServerIds"], json!([other.id]), "{whoami}");
    let whoami: Value = app.get_json("/v1/whoami", &app.dev_key).await;
    assert!(whoami.get("logServerIds").is_none(), "{whoami}");

    let overview: Value = app.get_json("/v1/overview", &scoped).await;
    let codes: Vec<&str> = overview["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["cfxId"].as_str().unwrap())
        .collect();
    assert_eq!(codes, ["Other1"], "{overview}");
}
