#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Keys, auth, whoami, common HTTP behaviour, health.
//!
//! Kept as one module (over 400 lines): each test is one scenario of the same area.

use auth_core::{Permission, PermissionSet};
use stowage_tests::*;

#[tokio::test]
async fn whoami_reports_the_key_without_its_secret() {
    let app = spawn().await;
    let res = app.get("/v1/whoami", &app.dev_key).send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["cache-control"], "private, no-store");
    let id = res.headers()["x-request-id"].to_str().unwrap().to_owned();
    let text = res.text().await.unwrap();
    assert!(!text.contains(&app.dev_key[8..]), "no part of the secret");
    let body: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(body["success"], true);
    assert_eq!(body["requestId"], id);
    assert_eq!(body["credentialType"], "developer");
    assert!(body["keyId"].as_str().unwrap().starts_with("key_"));
    assert_eq!(body["organization"]["id"], app.org.id.as_str());
    assert_eq!(body["server"], Value::Null);
    assert_eq!(
        body["permissions"],
        json!({"cdn": ["read", "write", "delete", "purge"], "logs": ["read", "write", "alerts"]}),
        "a key with every permission, cdn:purge and logs:alerts included"
    );
    assert_eq!(
        body["restrictions"],
        json!({"allowedPrefixes": [], "deniedPrefixes": []})
    );
    assert_eq!(body["allowedMimeTypes"], Value::Null);

    let body: Value = app.get("/v1/whoami", &app.server_key).json_body().await;
    assert_eq!(body["credentialType"], "server");
    assert_eq!(body["server"]["cfxId"], "abc123");
    assert_eq!(body["server"]["id"], app.server.id.as_str());
    assert_eq!(body["permissions"]["logs"], json!(["read", "write"]));
    assert!(body["permissions"]["cdn"]
        .as_array()
        .unwrap()
        .contains(&json!("write")));
}

#[tokio::test]
async fn whoami_on_the_ingestion_host() {
    let app = spawn().await;
    let res = app
        .client
        .get(format!("{}/v1/whoami", app.logs))
        .bearer_auth(&app.server_key)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let id = res.headers()["x-request-id"].to_str().unwrap().to_owned();
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["request_id"], id);
    assert_eq!(body["credentialType"], "server");
}

#[tokio::test]
async fn restricted_key_shows_its_restrictions() {
    let app = spawn().await;
    let key = app
        .key(KeySpec {
            allow: vec!["images".into()],
            deny: vec!["images/private".into()],
            mime: Some(vec!["image/*".into()]),
            ..KeySpec::perms(&[Permission::CdnRead])
        })
        .await;
    let body: Value = app.get("/v1/whoami", &key).json_body().await;
    assert_eq!(body["permissions"], json!({"cdn": ["read"], "logs": []}));
    assert_eq!(body["restrictions"]["allowedPrefixes"], json!(["images"]));
    assert_eq!(
        body["restrictions"]["deniedPrefixes"],
        json!(["images/private"])
    );
    assert_eq!(body["allowedMimeTypes"], json!(["image/*"]));
}

#[tokio::test]
async fn bad_credentials_are_401_never_500() {
    let app = spawn().await;
    let long = format!("Bearer {}", "a".repeat(10_000));
    let cases: Vec<Option<Vec<u8>>> = vec![
        None,
        Some(b"".to_vec()),
        Some(b"Bearer".to_vec()),
        Some(b"Bearer ".to_vec()),
        Some(b"Basic dXNlcjpwYXNz".to_vec()),
        Some(b"Bearer sk_live_unknownprefix".to_vec()),
        Some(b"Bearer stw_dev_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA".to_vec()),
        Some(long.into_bytes()),
        Some(b"Bearer \xff\xfe\xfd".to_vec()),
    ];
    for header in cases {
        let mut req = app.client.get(format!("{}/v1/whoami", app.cdn));
        if let Some(h) = &header {
            req = req.header(
                "Authorization",
                reqwest::header::HeaderValue::from_bytes(h).unwrap(),
            );
        }
        req.refused(401, "UNAUTHORIZED").await;
        let mut req = app.client.get(format!("{}/v1/whoami", app.logs));
        if let Some(h) = &header {
            req = req.header(
                "Authorization",
                reqwest::header::HeaderValue::from_bytes(h).unwrap(),
            );
        }
        let res = req.send().await.unwrap();
        assert_eq!(res.status(), 401);
        let body: Value = res.json().await.unwrap();
        assert_eq!(body["error"], "unauthorized");
        assert!(body["request_id"].is_string());
    }
    // the scheme is case-insensitive
    let res = app
        .client
        .get(format!("{}/v1/whoami", app.cdn))
        .header("Authorization", format!("bEaReR {}", app.dev_key))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    // two Authorization fields, even both valid: refused, never one picked
    for second in [app.dev_key.clone(), app.server_key.clone()] {
        for base in [&app.cdn, &app.logs] {
            let res = app
                .client
                .get(format!("{base}/v1/whoami"))
                .header("Authorization", format!("Bearer {}", app.dev_key))
                .header("Authorization", format!("Bearer {second}"))
                .send()
                .await
                .unwrap();
            assert_eq!(res.status(), 401, "{base}");
            let body = res.text().await.unwrap();
            assert!(
                body.contains("more than one Authorization header"),
                "{body}"
            );
        }
    }
}

#[tokio::test]
async fn disabled_expired_and_deleted_keys_are_refused() {
    use auth_core::AccountStore;
    let app = spawn().await;
    let key = app.key(KeySpec::developer(PermissionSet::all())).await;
    assert_eq!(app.get("/v1/whoami", &key).sent_status().await, 200);
    let id = app
        .get("/v1/whoami", &key)
        .send()
        .await
        .unwrap()
        .json::<Value>()
        .await
        .unwrap()["keyId"]
        .as_str()
        .unwrap()
        .to_owned();
    app.accounts
        .disable_key(
            &auth_core::KeyId::new(id),
            chrono::Utc::now(),
            &auth_core::audit::Audit::operator("test"),
        )
        .await
        .unwrap();
    // the test config caches keys for 0 s; production caches up to KEY_CACHE_SECONDS
    expect_error_mentioning(
        app.get("/v1/whoami", &key).send().await.unwrap(),
        401,
        "UNAUTHORIZED",
        "disabled",
    )
    .await;

    let expired = app
        .key(KeySpec {
            expires_at: Some(chrono::Utc::now() - chrono::Duration::seconds(1)),
            ..KeySpec::developer(PermissionSet::all())
        })
        .await;
    expect_error_mentioning(
        app.get("/v1/whoami", &expired).send().await.unwrap(),
        401,
        "UNAUTHORIZED",
        "expired",
    )
    .await;
}

#[tokio::test]
async fn missing_permission_is_403() {
    let app = spawn().await;
    let read_only = app.key(KeySpec::perms(&[Permission::CdnRead])).await;
    let res = app.upload(&read_only, "a.png", png_bytes(), None).await;
    expect_error_mentioning(res, 403, "FORBIDDEN", "cdn:write").await;
    let res = app
        .delete("/v1/objects?path=a.png", &read_only)
        .send()
        .await
        .unwrap();
    expect_error(res, 403, "FORBIDDEN").await;
    let write_only = app.key(KeySpec::perms(&[Permission::CdnWrite])).await;
    app.get("/v1/objects", &write_only)
        .refused(403, "FORBIDDEN")
        .await;
}

#[tokio::test]
async fn auth_runs_before_the_body_is_read() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let app = spawn().await;
    // Announce a 100 MiB upload and send none of it: the answer must come without the body.
    let addr = app.cdn.trim_start_matches("http://").to_owned();
    let mut stream = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let head = format!(
        "POST /v1/objects HTTP/1.1\r\nHost: {addr}\r\nContent-Type: multipart/form-data; boundary=x\r\nContent-Length: {}\r\n\r\n",
        100 * 1024 * 1024
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut buf = vec![0u8; 4096];
    let n = tokio::time::timeout(std::time::Duration::from_secs(10), stream.read(&mut buf))
        .await
        .expect("an answer before any body byte was sent")
        .unwrap();
    let text = String::from_utf8_lossy(&buf[..n]);
    assert!(text.starts_with("HTTP/1.1 401"), "{text}");
    assert!(text.contains("UNAUTHORIZED"), "{text}");
}

#[tokio::test]
async fn every_error_is_json_with_a_request_id() {
    let app = spawn().await;
    let res = app
        .client
        .get(format!("{}/nope", app.cdn))
        .send()
        .await
        .unwrap();
    expect_error(res, 404, "NOT_FOUND").await;
    let res = app
        .client
        .put(format!("{}/v1/objects", app.cdn))
        .send()
        .await
        .unwrap();
    expect_error(res, 405, "METHOD_NOT_ALLOWED").await;
    // malformed JSON
    let res = app
        .post("/v1/objects/bulk-delete", &app.dev_key)
        .header("Content-Type", "application/json")
        .body("{nope")
        .send()
        .await
        .unwrap();
    expect_error(res, 400, "INVALID_REQUEST").await;
    // wrong content type for a JSON route
    let res = app
        .post("/v1/objects/bulk-delete", &app.dev_key)
        .header("Content-Type", "text/plain")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 415);
    // oversized JSON
    let big = format!("{{\"paths\":[\"{}\"]}}", "a".repeat(2 * 1024 * 1024));
    let res = app
        .post("/v1/objects/bulk-delete", &app.dev_key)
        .header("Content-Type", "application/json")
        .body(big)
        .send()
        .await
        .unwrap();
    expect_error(res, 413, "PAYLOAD_TOO_LARGE").await;
    // ingestion host
    let res = app
        .client
        .get(format!("{}/nope", app.logs))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 404);
    let id = res.headers()["x-request-id"].to_str().unwrap().to_owned();
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["error"], "not_found");
    assert_eq!(body["request_id"], id);
    let res = app
        .client
        .get(format!("{}/v1/logs", app.logs))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 405);
}

#[tokio::test]
async fn rate_limits_are_per_key() {
    let app = spawn_with(Options {
        tweak: |c| {
            c.rate_limit_per_second = 1;
            c.rate_limit_burst = 3;
        },
        ..Options::default()
    })
    .await;
    let noisy = app.key(KeySpec::developer(PermissionSet::all())).await;
    let mut limited = None;
    for _ in 0..10 {
        let res = app.get("/v1/whoami", &noisy).send().await.unwrap();
        if res.status() == 429 {
            limited = Some(res);
            break;
        }
    }
    let res = limited.expect("a noisy key is limited");
    let retry: u64 = res.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(retry >= 1);
    expect_error(res, 429, "RATE_LIMITED").await;
    // another key is unaffected
    assert_eq!(app.get("/v1/whoami", &app.dev_key).sent_status().await, 200);
}

#[tokio::test]
async fn health_and_readiness() {
    let app = spawn().await;
    for base in [&app.cdn, &app.logs] {
        let res = app
            .client
            .get(format!("{base}/healthz"))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 200);
        let res = app
            .client
            .get(format!("{base}/readyz"))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 200);
        let body: Value = res.json().await.unwrap();
        assert_eq!(body["checks"]["database"], "ok");
    }
}

#[tokio::test]
async fn openapi_documents_cover_every_route() {
    let app = spawn().await;
    let doc: Value = app
        .client
        .get(format!("{}/v1/openapi.json", app.cdn))
        .json_body()
        .await;
    assert!(doc["openapi"].as_str().unwrap().starts_with("3.1"));
    for p in [
        "/v1/objects",
        "/v1/objects/base64",
        "/v1/objects/bulk",
        "/v1/objects/bulk-delete",
        "/v1/presigned-url",
        "/v1/presigned-url/{token}",
        "/v1/whoami",
        "/v1/logs/query",
        "/cdn/{workspace}/{key}",
    ] {
        assert!(doc["paths"][p].is_object(), "missing {p}");
    }
    assert!(doc["components"]["securitySchemes"]["bearer"].is_object());
    let doc: Value = app
        .client
        .get(format!("{}/v1/openapi.json", app.logs))
        .json_body()
        .await;
    for p in ["/v1/servers/{cfxServerId}/logs", "/v1/logs", "/v1/whoami"] {
        assert!(doc["paths"][p].is_object(), "missing {p}");
    }
}

#[tokio::test]
async fn prometheus_metrics() {
    let app = spawn().await;
    let object: Value = app
        .upload(&app.dev_key, "m.png", png_bytes(), None)
        .await
        .json()
        .await
        .unwrap();
    let url = app.local_url(object["object"]["publicUrl"].as_str().unwrap());
    assert_eq!(app.client.get(&url).sent_status().await, 200);
    app.client
        .post(format!("{}/v1/servers/abc123/logs", app.logs))
        .bearer_auth(&app.dev_key)
        .json(&json!({"batch_id": "metrics-0001", "events": [{"level": "info", "message": "m"}]}))
        .send()
        .await
        .unwrap();
    for base in [&app.cdn, &app.logs] {
        let res = app
            .client
            .get(format!("{base}/metrics"))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 200);
        assert!(res.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/plain"));
        let text = res.text().await.unwrap();
        for name in [
            "http_requests_total",
            "http_request_duration_seconds_bucket",
            "db_pool_connections",
            "cdn_uploaded_bytes_total",
            "db_pool_acquire_seconds",
            "logs_batches_total",
            "logs_ingest_group_batches",
            "object_store_operation_duration_seconds",
        ] {
            assert!(text.contains(name), "{name} missing from {base}/metrics");
        }
        assert!(text.contains("route=\"/v1/objects\""), "route label");
        assert!(
            text.contains("route=\"/cdn/{workspace}/{key}\",method=\"GET\",status=\"200\""),
            "delivery route label"
        );
    }
}

/// Extension methods are counted under `method="other"`: a client choosing method names must not
/// create label sets without bound. Each request is counted once, including those answered from
/// the per-thread handle cache (only this test sends extension methods, so the count is exact).
#[tokio::test]
async fn extension_methods_share_one_metrics_label() {
    let app = spawn().await;
    for name in ["PURGE", "BREW", "PURGE"] {
        let method = reqwest::Method::from_bytes(name.as_bytes()).unwrap();
        let res = app
            .client
            .request(method, format!("{}/v1/objects", app.cdn))
            .send()
            .await
            .unwrap();
        assert!(res.status().is_client_error(), "{name}: {}", res.status());
    }
    let text = app
        .client
        .get(format!("{}/metrics", app.cdn))
        .text_body()
        .await;
    assert!(!text.contains("PURGE") && !text.contains("BREW"), "{text}");
    let counted: f64 = text
        .lines()
        .filter(|l| l.starts_with("http_requests_total{") && l.contains("method=\"other\""))
        .map(|l| l.rsplit(' ').next().unwrap().parse::<f64>().unwrap())
        .sum();
    assert_eq!(counted, 3.0, "{text}");
}

/// The FiveMesh SDK appends `/v1/servers/{id}/logs` to `FIVEMESH_LOGS_API_URL` and `/objects`
/// (and the rest) to `FIVEMESH_API_URL`: either set wrong, the 404 says which setting to change
/// (the SDK prints the message in the server console).
#[tokio::test]
async fn a_base_url_set_wrong_is_answered_with_the_fix() {
    let app = spawn().await;
    let res = app
        .client
        .post(format!(
            "{}/v1/v1/servers/{}/logs",
            app.logs, app.server.cfx_id
        ))
        .bearer_auth(&app.server_key)
        .json(&json!({ "batch_id": "batch-0001", "events": [] }))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 404);
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["error"], "not_found");
    let message = body["message"].as_str().unwrap();
    assert!(
        message.contains("FIVEMESH_LOGS_API_URL") && message.contains("without /v1"),
        "{message}"
    );
    let res = app
        .client
        .get(format!("{}/objects?path=shots", app.cdn))
        .bearer_auth(&app.dev_key)
        .send()
        .await
        .unwrap();
    let body = expect_error(res, 404, "NOT_FOUND").await;
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("FIVEMESH_API_URL") && message.contains("with /v1"),
        "{message}"
    );
    // any other unknown path is a plain 404
    let res = app
        .client
        .get(format!("{}/nope", app.cdn))
        .send()
        .await
        .unwrap();
    let body = expect_error(res, 404, "NOT_FOUND").await;
    assert_eq!(body["error"]["message"], "no route for GET /nope");
}
