#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Every explorer read asks what the query asks: `logs:read`, a server the key may read, and a
//! named server for a global key.

use super::*;
use auth_core::{AccountStore, Permission};

#[tokio::test]
async fn every_read_checks_permission_and_server_binding() {
    let app = spawn().await;
    app.accounts
        .register_server(&app.org.id, "other1", None)
        .await
        .unwrap();
    app.accounts.set_logs_active("other1", true).await.unwrap();
    let no_read = app.key(KeySpec::perms(&[Permission::LogsWrite])).await;
    let now = Utc::now();
    let (from, to) = (at(now - Duration::hours(1)), at(now));
    // the GET routes: the export has a window, the tail has none
    let get_url = |path: &str, server: Option<&str>| {
        let mut url = url::Url::parse(&format!("{}{path}", app.cdn)).unwrap();
        if path == "/v1/logs/export" {
            url.query_pairs_mut()
                .append_pair("from", &from)
                .append_pair("to", &to);
        }
        if let Some(s) = server {
            url.query_pairs_mut().append_pair("serverId", s);
        }
        url.to_string()
    };
    let body = |server: Option<&str>| {
        let mut b = json!({ "from": from, "to": to });
        if let Some(s) = server {
            b["serverId"] = json!(s);
        }
        b
    };
    let send = |path: &'static str, key: String, server: Option<&'static str>| {
        let req = if path == "/v1/logs/export" || path == "/v1/logs/tail" {
            app.client.get(get_url(path, server)).bearer_auth(key)
        } else {
            app.post(path, &key).json(&body(server))
        };
        async move { req.send().await.unwrap() }
    };
    for path in [
        "/v1/logs/counts",
        "/v1/logs/facets",
        "/v1/logs/export",
        "/v1/logs/tail",
    ] {
        expect_error(
            send(path, no_read.clone(), Some("abc123")).await,
            403,
            "FORBIDDEN",
        )
        .await;
        expect_error(
            send(path, app.server_key.clone(), Some("other1")).await,
            403,
            "FORBIDDEN",
        )
        .await;
        expect_error(
            send(path, app.dev_key.clone(), None).await,
            400,
            "INVALID_REQUEST",
        )
        .await;
        expect_error(
            send(path, app.dev_key.clone(), Some("nosuch1")).await,
            404,
            "NOT_FOUND",
        )
        .await;
        let res = send(path, app.server_key.clone(), None).await;
        assert_eq!(
            res.status(),
            200,
            "{path}: a bound key defaults to its server"
        );
        if path == "/v1/logs/export" {
            // read to its end: an export the client abandons holds the organization's one
            // export slot until the server notices, and the next line exports again
            res.bytes().await.unwrap();
        }
        assert_eq!(
            send(path, app.dev_key.clone(), Some("other1"))
                .await
                .status(),
            200,
            "{path}"
        );
    }
}
