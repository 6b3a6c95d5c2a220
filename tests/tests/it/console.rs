#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The console's listener (docs/console.md): sign-in sessions, CSRF and origin checks, security
//! headers, and the public routes under `/api` acting as the session's key. The pages themselves
//! are driven in a real browser by `e2e_browser`.

use auth_core::{AccountStore, Permission, PermissionSet};
use reqwest::header::{CONTENT_SECURITY_POLICY, SET_COOKIE};
use reqwest::Method;
use stowage_tests::*;

/// Signs in with `key`; the session cookie (`name=value`) and the CSRF token.
async fn sign_in(app: &TestApp, key: &str) -> (String, String) {
    let res = at(app, Method::POST, "/session")
        .json(&json!({ "key": key }))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let set = res.headers()[SET_COOKIE].to_str().unwrap().to_owned();
    let body: Value = res.json().await.unwrap();
    (
        set.split(';').next().unwrap().to_owned(),
        body["csrfToken"].as_str().unwrap().to_owned(),
    )
}

/// A request to the console's origin.
fn at(app: &TestApp, method: Method, path: &str) -> reqwest::RequestBuilder {
    app.client.request(method, format!("{}{path}", app.console))
}

fn get(app: &TestApp, path: &str, cookie: &str) -> reqwest::RequestBuilder {
    at(app, Method::GET, path).header("Cookie", cookie)
}

/// Moves every console session back in time (`set` is the SQL assignment) instead of waiting.
async fn age_sessions(app: &TestApp, set: &str) {
    let mut conn = app.db.conn().await.unwrap();
    diesel_async::RunQueryDsl::execute(
        diesel::sql_query(format!("UPDATE console_sessions SET {set}")),
        &mut conn,
    )
    .await
    .unwrap();
}

#[tokio::test]
async fn a_key_is_exchanged_for_an_http_only_strict_session_that_acts_as_that_key() {
    let app = spawn().await;
    let res = at(&app, Method::POST, "/session")
        .json(&json!({ "key": app.dev_key }))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let set = res.headers()[SET_COOKIE].to_str().unwrap().to_owned();
    assert!(set.starts_with("stowage_console="), "{set}");
    assert!(set.contains("HttpOnly"), "{set}");
    assert!(set.contains("SameSite=Strict"), "{set}");
    assert!(set.contains("Path=/"), "{set}");
    assert!(
        !set.contains(&app.dev_key),
        "the key never goes to the browser"
    );
    let body = res.text().await.unwrap();
    assert!(!body.contains(&app.dev_key));
    let cookie = set.split(';').next().unwrap().to_owned();

    let missing = get(&app, "/api/v1/nope", &cookie).send().await.unwrap();
    assert_eq!(missing.status(), 404, "the API's 404, not the console page");
    let body: Value = missing.json().await.unwrap();
    assert_eq!(body["error"]["code"], "NOT_FOUND");
    let who: Value = get(&app, "/api/v1/whoami", &cookie).json_body().await;
    assert_eq!(who["organization"]["name"], "Test Org");
    // nothing in the database holds the key: only its hash, as api_keys does
    let stored = stow_db::PgConsoleSessions::new(app.db.clone());
    let token = cookie.split_once('=').unwrap().1;
    let session = auth_core::console_session::ConsoleSessionStore::get(
        &stored,
        &auth_core::console_session::token_hash(token),
    )
    .await
    .unwrap()
    .unwrap();
    assert!(
        matches!(session.subject, auth_core::console_session::Subject::Key { key_hash, .. }
            if key_hash == auth_core::secret::hash(&app.dev_key))
    );

    // signing in again from the same browser replaces its session
    let again = at(&app, Method::POST, "/session")
        .header("Cookie", &cookie)
        .json(&json!({ "key": app.dev_key }))
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 200);
    assert_eq!(
        get(&app, "/api/v1/whoami", &cookie).sent_status().await,
        401
    );

    // without a session: 401, with the API's envelope
    let res = at(&app, Method::GET, "/api/v1/whoami")
        .header("Authorization", format!("Bearer {}", app.dev_key))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 401, "the console's /api takes sessions only");
    let bad = at(&app, Method::POST, "/session")
        .json(&json!({ "key": "sk_not-a-key" }))
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 401);
    assert!(bad.headers().get(SET_COOKIE).is_none());
}

#[tokio::test]
async fn state_changes_need_the_csrf_token_and_the_console_origin() {
    let app = spawn().await;
    let (cookie, csrf) = sign_in(&app, &app.dev_key).await;
    let purge = |token: Option<&str>, origin: Option<&str>| {
        let mut req = at(&app, Method::POST, "/api/v1/objects/purge")
            .header("Cookie", &cookie)
            .json(&json!({ "paths": ["a.png"] }));
        if let Some(t) = token {
            req = req.header("X-CSRF-Token", t);
        }
        if let Some(o) = origin {
            req = req.header("Origin", o);
        }
        req.send()
    };
    let res = purge(None, None).await.unwrap();
    assert_eq!(res.status(), 403);
    let body: Value = res.json().await.unwrap();
    assert!(body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("X-CSRF-Token"));
    assert_eq!(purge(Some("wrong"), None).await.unwrap().status(), 403);
    let evil = purge(Some(&csrf), Some("http://evil.example"))
        .await
        .unwrap();
    assert_eq!(evil.status(), 403, "another origin, even with the token");
    let own = app.console.clone();
    assert_eq!(purge(Some(&csrf), Some(&own)).await.unwrap().status(), 200);
    assert_eq!(purge(Some(&csrf), None).await.unwrap().status(), 200);

    // a cross-site sign-in (login CSRF) is refused too
    let res = at(&app, Method::POST, "/session")
        .header("Origin", "http://evil.example")
        .json(&json!({ "key": app.dev_key }))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
    // sign-out is a state change
    let res = at(&app, Method::DELETE, "/session")
        .header("Cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
}

#[tokio::test]
async fn sign_out_a_disabled_key_and_idleness_end_the_session_server_side() {
    let app = spawn().await;
    let (cookie, csrf) = sign_in(&app, &app.dev_key).await;
    let res = at(&app, Method::DELETE, "/session")
        .header("Cookie", &cookie)
        .header("X-CSRF-Token", &csrf)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 204);
    assert!(res.headers()[SET_COOKIE]
        .to_str()
        .unwrap()
        .contains("Max-Age=0"));
    // the old cookie, replayed, is worth nothing
    let res = get(&app, "/api/v1/whoami", &cookie).send().await.unwrap();
    assert_eq!(res.status(), 401);
    assert_eq!(get(&app, "/session", &cookie).sent_status().await, 401);

    // a disabled key ends its sessions (KEY_CACHE_SECONDS is 0 in tests)
    let key = app.key(KeySpec::developer(PermissionSet::all())).await;
    let (cookie, _) = sign_in(&app, &key).await;
    assert_eq!(
        get(&app, "/api/v1/whoami", &cookie).sent_status().await,
        200
    );
    let key_id = app
        .accounts
        .find_auth_context(&auth_core::secret::hash(&key))
        .await
        .unwrap()
        .unwrap()
        .key
        .id;
    app.accounts
        .disable_key(
            &key_id,
            chrono::Utc::now(),
            &auth_core::audit::Audit::operator("test"),
        )
        .await
        .unwrap();
    assert_eq!(
        get(&app, "/api/v1/whoami", &cookie).sent_status().await,
        401
    );
    app.accounts
        .enable_key(&key_id, &auth_core::audit::Audit::operator("test"))
        .await
        .unwrap();
    assert_eq!(
        get(&app, "/api/v1/whoami", &cookie).sent_status().await,
        401,
        "the session was ended, not just refused once"
    );

    // idle past CONSOLE_SESSION_IDLE_MINUTES (30): the last use is moved back instead of waiting
    let (cookie, _) = sign_in(&app, &app.dev_key).await;
    age_sessions(&app, "last_seen_at = now() - interval '31 minutes'").await;
    let res = get(&app, "/api/v1/whoami", &cookie).send().await.unwrap();
    assert_eq!(res.status(), 401);
    let body: Value = res.json().await.unwrap();
    assert!(body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("expired"));
    // and past the absolute limit (12 h) whatever the use
    let (cookie, _) = sign_in(&app, &app.dev_key).await;
    age_sessions(&app, "created_at = now() - interval '12 hours 1 minute'").await;
    assert_eq!(
        get(&app, "/api/v1/whoami", &cookie).sent_status().await,
        401
    );
}

#[tokio::test]
async fn every_console_answer_carries_a_strict_policy_and_the_page_has_no_inline_script() {
    let app = spawn().await;
    for path in [
        "/",
        "/logs?server=abc123&range=1h",
        "/assets/app.js",
        "/session",
    ] {
        let res = at(&app, Method::GET, path).send().await.unwrap();
        let csp = res.headers()[CONTENT_SECURITY_POLICY].to_str().unwrap();
        assert!(csp.contains("script-src 'self';"), "{path}: {csp}");
        assert!(csp.contains("frame-ancestors 'none'"), "{path}: {csp}");
        assert!(!csp.contains("unsafe-inline"), "{path}: {csp}");
        assert!(
            csp.contains("img-src 'self' data: blob: http://cdn.test"),
            "{csp}"
        );
        // frames: only the delivery origin's (a text preview), nothing else
        assert!(csp.contains("frame-src http://cdn.test;"), "{csp}");
        assert_eq!(res.headers()["x-frame-options"], "DENY");
        assert_eq!(res.headers()["x-content-type-options"], "nosniff");
    }
    let page = at(&app, Method::GET, "/objects?path=a").text_body().await;
    assert!(page.contains(r#"<script type="module" src="/assets/app.js">"#));
    assert_eq!(page.matches("<script").count(), 1, "no inline script");
    assert!(!page.contains(" on"), "no inline event handlers");
    // assets are compressed for browsers that accept it
    let res = at(&app, Method::GET, "/assets/logs.js")
        .header("Accept-Encoding", "gzip")
        .send()
        .await
        .unwrap();
    assert_eq!(res.headers()["content-encoding"], "gzip");
    // each carries a tag of its content: a reload revalidates with a 304 and no body
    let etag = res.headers()["etag"].to_str().unwrap().to_owned();
    let again = at(&app, Method::GET, "/assets/logs.js")
        .header("If-None-Match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 304);
    assert_eq!(again.headers()["etag"].to_str().unwrap(), etag);
    assert!(again.bytes().await.unwrap().is_empty());
    let other = at(&app, Method::GET, "/assets/app.js")
        .send()
        .await
        .unwrap();
    assert_ne!(other.headers()["etag"].to_str().unwrap(), etag);
    assert_eq!(
        at(&app, Method::GET, "/assets/types.js")
            .send()
            .await
            .unwrap()
            .status(),
        404,
        "the checker's types are not served"
    );
    assert_eq!(
        at(&app, Method::GET, "/assets/nope.js")
            .send()
            .await
            .unwrap()
            .status(),
        404
    );
    // delivery is not on the console's origin
    let res = at(&app, Method::GET, "/cdn/test-org/a.png")
        .send()
        .await
        .unwrap();
    assert_eq!(
        res.headers()["content-type"],
        "text/html; charset=utf-8",
        "the console page, never user bytes"
    );
}

#[tokio::test]
async fn a_path_restricted_key_sees_and_changes_only_its_prefixes_through_the_console() {
    let app = spawn().await;
    for (name, folder) in [("a.png", "shots"), ("b.png", "private")] {
        let res = app
            .upload(&app.dev_key, name, b"x".to_vec(), Some(folder))
            .await;
        assert_eq!(res.status(), 200);
    }
    let restricted = app
        .key(KeySpec {
            allow: vec!["shots".into()],
            ..KeySpec::developer(
                [
                    Permission::CdnRead,
                    Permission::CdnWrite,
                    Permission::CdnDelete,
                ]
                .into_iter()
                .collect(),
            )
        })
        .await;
    let (cookie, csrf) = sign_in(&app, &restricted).await;
    let listed: Value = get(&app, "/api/v1/objects?path=shots&delimiter=/", &cookie)
        .json_body()
        .await;
    assert_eq!(listed["objects"][0]["key"], "shots/a.png");
    let res = get(&app, "/api/v1/objects?path=private&delimiter=/", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
    let res = at(&app, Method::DELETE, "/api/v1/objects?path=private/b.png")
        .header("Cookie", &cookie)
        .header("X-CSRF-Token", &csrf)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
    let res = get(&app, "/api/v1/logs/query", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 405, "the same route table as the API host");
}

#[tokio::test]
async fn an_upload_url_made_through_the_console_names_the_api_host() {
    let app = spawn().await;
    let (cookie, _) = sign_in(&app, &app.dev_key).await;
    let res = get(&app, "/api/v1/presigned-url?path=drop", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 201);
    let body: Value = res.json().await.unwrap();
    let url = body["uploadUrl"].as_str().unwrap();
    assert!(
        url.starts_with(&format!("{}/v1/presigned-url/", app.cdn)),
        "{url}"
    );
    let form = reqwest::multipart::Form::new().part(
        "file",
        reqwest::multipart::Part::bytes(b"hello".to_vec()).file_name("a.txt"),
    );
    let res = app.client.post(url).multipart(form).send().await.unwrap();
    assert_eq!(res.status(), 200);
}

#[tokio::test]
async fn the_overview_shows_plan_usage_and_servers_within_the_keys_reach() {
    let app = spawn().await;
    let res = app
        .upload(&app.dev_key, "a.png", b"12345".to_vec(), None)
        .await;
    assert_eq!(res.status(), 200);
    let before: Value = app.get("/v1/overview", &app.dev_key).json_body().await;
    assert_eq!(before["organization"]["name"], "Test Org");
    assert_eq!(before["plan"]["name"], "pro");
    assert_eq!(before["usage"]["objects"], 1);
    assert_eq!(before["usage"]["storageBytes"], 5);
    assert_eq!(before["servers"][0]["cfxId"], "abc123");
    assert_eq!(before["servers"][0]["logsActive"], true);
    assert_eq!(before["servers"][0]["lastEventAt"], Value::Null);
    assert_eq!(before["servers"][0]["errorsLast24h"], 0);
    let ago = |h: i64| (chrono::Utc::now() - chrono::Duration::hours(h)).to_rfc3339();
    app.ingest_logs(
        "overview-batch-1",
        vec![
            json!({ "level": "info", "message": "hi", "occurred_at": ago(0) }),
            json!({ "level": "error", "message": "one", "occurred_at": ago(1) }),
            json!({ "level": "fatal", "message": "two", "occurred_at": ago(23) }),
            json!({ "level": "warn", "message": "not an error", "occurred_at": ago(2) }),
            json!({ "level": "error", "message": "too old", "occurred_at": ago(25) }),
        ],
    )
    .await;
    let after: Value = app.get("/v1/overview", &app.server_key).json_body().await;
    assert!(after["servers"][0]["lastEventAt"].is_string(), "{after}");
    assert_eq!(after["servers"][0]["errorsLast24h"], 2, "{after}");
    assert_eq!(after["usage"]["logEvents"], 5);
    assert_eq!(after["servers"].as_array().unwrap().len(), 1);
}

/// Sign-in is throttled per address: ten attempts at once, then one every six seconds, counted
/// in the database so every instance shares the count. Before, 300 wrong keys in 0.6 s were all
/// tried.
#[tokio::test]
async fn sign_in_attempts_are_throttled_per_address() {
    let app = spawn().await;
    let wrong = "stw_dev_0000000000000000000000000000000000000000000";
    for attempt in 0..10 {
        let res = at(&app, Method::POST, "/session")
            .json(&json!({ "key": wrong }))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 401, "attempt {attempt}");
    }
    for key in [wrong, app.dev_key.as_str()] {
        let res = at(&app, Method::POST, "/session")
            .json(&json!({ "key": key }))
            .send()
            .await
            .unwrap();
        let retry: u64 = res.headers()["retry-after"]
            .to_str()
            .unwrap()
            .parse()
            .unwrap();
        assert!((1..=6).contains(&retry), "{retry}");
        let body = expect_error(res, 429, "RATE_LIMITED").await;
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("too many sign-in attempts from this address"),
            "{body}"
        );
    }
    // the API itself is not throttled by it
    assert_eq!(app.get("/v1/whoami", &app.dev_key).sent_status().await, 200);
}
