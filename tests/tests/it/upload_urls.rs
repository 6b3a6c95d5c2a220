#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Scoped upload URLs.
//!
//! Kept as one module (over 400 lines): each test is one scenario of the same route pair.

use auth_core::{AccountStore, Permission};
use reqwest::multipart::{Form, Part};
use stowage_tests::*;

async fn create(app: &TestApp, key: &str, query: &str) -> reqwest::Response {
    app.get(&format!("/v1/presigned-url{query}"), key)
        .send()
        .await
        .unwrap()
}

async fn make(app: &TestApp, query: &str) -> Value {
    let res = create(app, &app.dev_key, query).await;
    assert_eq!(res.status(), 201);
    assert_eq!(res.headers()["cache-control"], "no-store");
    res.json().await.unwrap()
}

fn one_file(bytes: Vec<u8>, name: &str) -> Form {
    Form::new().part("file", Part::bytes(bytes).file_name(name.to_owned()))
}

async fn send(app: &TestApp, url: &Value, form: Form) -> reqwest::Response {
    let local = url["uploadUrl"].as_str().unwrap().to_owned();
    app.client.post(local).multipart(form).send().await.unwrap()
}

#[tokio::test]
async fn create_returns_the_record() {
    let app = spawn().await;
    let u = make(&app, "?path=uploads&maxFiles=3&maxFileSize=5000&allowedMimeTypes=image/png,image/webp&allowCustomMetadata=true&expiresIn=60").await;
    assert_eq!(u["success"], true);
    assert_eq!(u["method"], "POST");
    let token = u["token"].as_str().unwrap();
    assert!(
        token.len() >= 32
            && token
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    );
    let url = u["uploadUrl"].as_str().unwrap();
    assert!(
        url.starts_with(&app.cdn),
        "absolute URL on the API host: {url}"
    );
    assert_eq!(url.rsplit('/').next().unwrap(), token);
    assert_eq!(u["maxFiles"], 3);
    assert_eq!(u["maxFileSize"], 5000);
    assert_eq!(u["allowedMimeTypes"], json!(["image/png", "image/webp"]));
    assert_eq!(u["allowCustomMetadata"], true);
    assert_eq!(u["path"], "uploads");
    assert!(u["requestId"].is_string());
    let exp = chrono::DateTime::parse_from_rfc3339(u["expiresAt"].as_str().unwrap()).unwrap();
    let secs = (exp.with_timezone(&chrono::Utc) - chrono::Utc::now()).num_seconds();
    assert!((55..=60).contains(&secs), "{secs}");
    // defaults and clamping
    let d = make(&app, "").await;
    assert_eq!(d["maxFiles"], 1);
    assert_eq!(d["maxFileSize"], 100 * 1024 * 1024);
    assert_eq!(d["allowCustomMetadata"], false);
    let exp = chrono::DateTime::parse_from_rfc3339(d["expiresAt"].as_str().unwrap()).unwrap();
    let secs = (exp.with_timezone(&chrono::Utc) - chrono::Utc::now()).num_seconds();
    assert!((895..=900).contains(&secs), "default 900: {secs}");
    let c = make(
        &app,
        "?expiresIn=999999&allowedMimeTypes=image/png&allowedMimeTypes=image/jpeg",
    )
    .await;
    let exp = chrono::DateTime::parse_from_rfc3339(c["expiresAt"].as_str().unwrap()).unwrap();
    assert!(
        (exp.with_timezone(&chrono::Utc) - chrono::Utc::now()).num_seconds() <= 3600,
        "clamped"
    );
    assert_eq!(
        c["allowedMimeTypes"],
        json!(["image/png", "image/jpeg"]),
        "repeated parameter"
    );
    // the token is stored only as a hash
    let token = u["token"].as_str().unwrap();
    let mut conn = app.db.conn().await.unwrap();
    use diesel_async::RunQueryDsl;
    #[derive(diesel::QueryableByName)]
    struct N {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        n: i64,
    }
    let found: N = diesel::sql_query("SELECT count(*) AS n FROM upload_urls WHERE encode(token_hash, 'escape') LIKE '%' || $1 || '%'")
        .bind::<diesel::sql_types::Text, _>(token)
        .get_result(&mut conn)
        .await
        .unwrap();
    assert_eq!(found.n, 0);
}

#[tokio::test]
async fn create_validates_parameters_and_never_widens_the_key() {
    let app = spawn().await;
    for (q, name) in [
        ("?expiresIn=abc", "expiresIn"),
        ("?expiresIn=0", "expiresIn"),
        ("?maxFiles=-1", "maxFiles"),
        ("?maxFileSize=x", "maxFileSize"),
        ("?allowCustomMetadata=maybe", "allowCustomMetadata"),
        ("?randomizeName=2", "randomizeName"),
        ("?bogus=1", "bogus"),
        // a repeated lock or limit is refused, never last-wins
        ("?path=a&path=b", "`path` appears more than once"),
        (
            "?maxFiles=1&maxFiles=50",
            "`maxFiles` appears more than once",
        ),
    ] {
        expect_error_mentioning(
            create(&app, &app.dev_key, q).await,
            400,
            "INVALID_REQUEST",
            name,
        )
        .await;
    }
    expect_error(
        create(&app, &app.dev_key, "?path=../x").await,
        400,
        "INVALID_PATH",
    )
    .await;
    let scoped = app
        .key(KeySpec {
            allow: vec!["images".into()],
            mime: Some(vec!["image/*".into()]),
            ..KeySpec::perms(&[Permission::CdnWrite])
        })
        .await;
    expect_error(create(&app, &scoped, "").await, 403, "PATH_NOT_ALLOWED").await;
    expect_error(
        create(&app, &scoped, "?path=images2").await,
        403,
        "PATH_NOT_ALLOWED",
    )
    .await;
    expect_error(
        create(&app, &scoped, "?path=images&allowedMimeTypes=text/html").await,
        415,
        "CONTENT_TYPE_NOT_ALLOWED",
    )
    .await;
    let res = create(&app, &scoped, "?path=images/sub").await;
    assert_eq!(res.status(), 201);
    let body: Value = res.json().await.unwrap();
    assert_eq!(
        body["allowedMimeTypes"],
        json!(["image/*"]),
        "the key's list is passed on"
    );
    let read_only = app.key(KeySpec::perms(&[Permission::CdnRead])).await;
    expect_error(create(&app, &read_only, "").await, 403, "FORBIDDEN").await;
}

#[tokio::test]
async fn upload_through_a_token() {
    let app = spawn().await;
    let u = make(&app, "?path=uploads&maxFiles=2").await;
    // a wrong method names the route, never echoes the token (a secret) back
    let token = u["token"].as_str().unwrap();
    let res = app
        .client
        .get(u["uploadUrl"].as_str().unwrap())
        .send()
        .await
        .unwrap();
    let body = expect_error(res, 405, "METHOD_NOT_ALLOWED").await;
    assert!(!body.to_string().contains(token), "{body}");
    assert!(
        body.to_string().contains("/v1/presigned-url/{token}"),
        "{body}"
    );
    // a compressed form is refused by name and does not use up one of the URL's files
    let res = app
        .client
        .post(u["uploadUrl"].as_str().unwrap())
        .header("Content-Encoding", "gzip")
        .multipart(one_file(png_bytes(), "z.png"))
        .send()
        .await
        .unwrap();
    expect_error_mentioning(res, 415, "UNSUPPORTED_MEDIA_TYPE", "`gzip`").await;
    let res = send(&app, &u, one_file(png_bytes(), "a.png")).await;
    assert_eq!(res.status(), 200);
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["object"]["key"], "uploads/a.png");
    // into a subfolder of the lock, with a filename
    let form = one_file(png_bytes(), "b.png")
        .text("path", "uploads/sub")
        .text("filename", "named.png");
    let body: Value = send(&app, &u, form).await.json().await.unwrap();
    assert_eq!(body["object"]["key"], "uploads/sub/named.png");
    // used up
    expect_error(
        send(&app, &u, one_file(png_bytes(), "c.png")).await,
        410,
        "TOKEN_EXPIRED",
    )
    .await;
    assert_eq!(
        app.list_keys(&app.dev_key, None).await,
        vec!["uploads/a.png", "uploads/sub/named.png"]
    );
}

#[tokio::test]
async fn token_scope_cannot_be_escaped() {
    let app = spawn().await;
    let u = make(&app, "?path=uploads&maxFiles=10").await;
    for form in [
        one_file(png_bytes(), "a.png").text("path", "elsewhere"),
        one_file(png_bytes(), "a.png").text("path", "uploads2"),
    ] {
        expect_error(send(&app, &u, form).await, 403, "PATH_NOT_ALLOWED").await;
    }
    for form in [
        one_file(png_bytes(), "a.png").text("path", "uploads/../x"),
        one_file(png_bytes(), "a.png").text("filename", "../escape.png"),
        one_file(png_bytes(), "a.png").text("filename", "/abs.png"),
        one_file(png_bytes(), "a.png").text("filename", "a\\..\\b.png"),
    ] {
        expect_error(send(&app, &u, form).await, 400, "INVALID_PATH").await;
    }
    // a filename with `/` stays under the lock
    let body: Value = send(
        &app,
        &u,
        one_file(png_bytes(), "a.png").text("filename", "deeper/x.png"),
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(body["object"]["key"], "uploads/deeper/x.png");
    assert_eq!(app.settle_locations(1).await.len(), 1);
}

#[tokio::test]
async fn token_rules_size_type_metadata_randomize() {
    let app = spawn().await;
    let u = make(
        &app,
        "?maxFiles=10&maxFileSize=100&allowedMimeTypes=image/png",
    )
    .await;
    expect_error(
        send(&app, &u, one_file(vec![0; 101], "a.png")).await,
        413,
        "FILE_TOO_LARGE",
    )
    .await;
    expect_error(
        send(&app, &u, one_file(webp_bytes(), "a.png")).await,
        415,
        "CONTENT_TYPE_NOT_ALLOWED",
    )
    .await;
    expect_error(
        send(
            &app,
            &u,
            one_file(png_bytes(), "a.png").text("metadata", "{\"a\":\"b\"}"),
        )
        .await,
        403,
        "FORBIDDEN",
    )
    .await;
    assert_eq!(
        send(&app, &u, one_file(png_bytes(), "ok.png"))
            .await
            .status(),
        200
    );
    let m = make(
        &app,
        "?maxFiles=2&allowCustomMetadata=true&randomizeName=true",
    )
    .await;
    let body: Value = send(
        &app,
        &m,
        one_file(png_bytes(), "mine.png").text("metadata", "{\"a\":\"b\"}"),
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(body["object"]["metadata"], json!({"a": "b"}));
    let key = body["object"]["key"].as_str().unwrap();
    assert!(key.ends_with(".png") && !key.contains("mine"), "{key}");
    // failed files gave their slots back: the first URL still has 9 left
    let form = (0..9).fold(Form::new(), |f, i| {
        f.part(
            "files",
            Part::bytes(png_bytes()).file_name(format!("{i}.png")),
        )
    });
    let res = send(&app, &u, form).await;
    assert_eq!(res.status(), 200);
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["results"].as_array().unwrap().len(), 9);
    assert!(body["results"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["success"] == true));
}

#[tokio::test]
async fn tokens_invalid_expired_and_too_many() {
    let app = spawn().await;
    let res = app
        .client
        .post(format!("{}/v1/presigned-url/{}", app.cdn, "x".repeat(43)))
        .multipart(one_file(png_bytes(), "a.png"))
        .send()
        .await
        .unwrap();
    expect_error(res, 401, "TOKEN_INVALID").await;
    let res = app
        .client
        .post(format!("{}/v1/presigned-url/short", app.cdn))
        .multipart(one_file(png_bytes(), "a.png"))
        .send()
        .await
        .unwrap();
    expect_error(res, 401, "TOKEN_INVALID").await;
    let u = make(&app, "?maxFiles=2").await;
    let form = (0..3).fold(Form::new(), |f, i| {
        f.part(
            "files",
            Part::bytes(png_bytes()).file_name(format!("{i}.png")),
        )
    });
    expect_error(send(&app, &u, form).await, 400, "TOO_MANY_FILES").await;
    let left = app.settle_locations(0).await;
    assert!(left.is_empty(), "nothing stored: {left:?}");
    // expiry with a short lifetime: make one, then move its expiry into the past
    let e = make(&app, "?expiresIn=1").await;
    let mut conn = app.db.conn().await.unwrap();
    use diesel_async::RunQueryDsl;
    diesel::sql_query("UPDATE upload_urls SET expires_at = now() - interval '1 second'")
        .execute(&mut conn)
        .await
        .unwrap();
    expect_error(
        send(&app, &e, one_file(png_bytes(), "a.png")).await,
        410,
        "TOKEN_EXPIRED",
    )
    .await;
}

#[tokio::test]
async fn a_disabled_creating_key_invalidates_its_urls() {
    let app = spawn().await;
    let key = app.key(KeySpec::perms(&[Permission::CdnWrite])).await;
    let res = create(&app, &key, "?maxFiles=5").await;
    let u: Value = res.json().await.unwrap();
    assert_eq!(
        send(&app, &u, one_file(png_bytes(), "a.png"))
            .await
            .status(),
        200
    );
    let id = app
        .accounts
        .list_keys(&app.org.id)
        .await
        .unwrap()
        .into_iter()
        .find(|k| k.permissions.names() == vec!["cdn:write"])
        .unwrap()
        .id;
    app.accounts
        .disable_key(
            &id,
            chrono::Utc::now(),
            &auth_core::audit::Audit::operator("test"),
        )
        .await
        .unwrap();
    expect_error(
        send(&app, &u, one_file(png_bytes(), "b.png")).await,
        401,
        "TOKEN_INVALID",
    )
    .await;
}

#[tokio::test]
async fn idempotent_token_uploads() {
    let app = spawn().await;
    let u = make(&app, "?maxFiles=1").await;
    let url = u["uploadUrl"].as_str().unwrap().to_owned();
    let first = app
        .client
        .post(&url)
        .header("Idempotency-Key", "t-1")
        .multipart(one_file(png_bytes(), "a.png"))
        .send()
        .await
        .unwrap();
    assert_eq!(first.status(), 200);
    let first: Value = first.json().await.unwrap();
    let again = app
        .client
        .post(&url)
        .header("Idempotency-Key", "t-1")
        .multipart(one_file(png_bytes(), "a.png"))
        .send()
        .await
        .unwrap();
    assert_eq!(
        again.status(),
        200,
        "a retry is replayed, not refused as used up"
    );
    assert_eq!(again.headers()["idempotent-replayed"], "true");
    assert_eq!(again.json::<Value>().await.unwrap(), first);
}

#[tokio::test]
async fn cors_preflight_and_headers() {
    let app = spawn().await;
    let u = make(&app, "").await;
    let url = u["uploadUrl"].as_str().unwrap();
    let res = app
        .client
        .request(reqwest::Method::OPTIONS, url)
        .header("Origin", "http://game.example")
        .header("Access-Control-Request-Method", "POST")
        .header(
            "Access-Control-Request-Headers",
            "content-type,idempotency-key",
        )
        .send()
        .await
        .unwrap();
    assert!(res.status().is_success(), "{}", res.status());
    assert_eq!(res.headers()["access-control-allow-origin"], "*");
    let methods = res.headers()["access-control-allow-methods"]
        .to_str()
        .unwrap()
        .to_ascii_uppercase();
    assert!(methods.contains("POST"));
    let allowed = res.headers()["access-control-allow-headers"]
        .to_str()
        .unwrap()
        .to_ascii_lowercase();
    assert!(
        allowed.contains("idempotency-key") && allowed.contains("content-type"),
        "{allowed}"
    );
    assert!(res
        .headers()
        .get("access-control-allow-credentials")
        .is_none());
    let res = app
        .client
        .post(url)
        .header("Origin", "http://game.example")
        .multipart(one_file(png_bytes(), "a.png"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["access-control-allow-origin"], "*");
    let exposed = res.headers()["access-control-expose-headers"]
        .to_str()
        .unwrap()
        .to_ascii_lowercase();
    for h in ["x-request-id", "retry-after", "idempotent-replayed"] {
        assert!(exposed.contains(h), "{exposed}");
    }
}

#[tokio::test]
async fn file_limit_holds_across_two_instances() {
    let app = spawn().await;
    let second_base = app.second_cdn();

    let u = make(&app, "?maxFiles=3&path=race").await;
    let token = u["token"].as_str().unwrap().to_owned();
    let mut tasks = Vec::new();
    for i in 0..20 {
        let base = if i % 2 == 0 {
            app.cdn.clone()
        } else {
            second_base.clone()
        };
        let client = app.client.clone();
        let token = token.clone();
        tasks.push(tokio::spawn(async move {
            let form = Form::new().part(
                "file",
                Part::bytes(png_bytes()).file_name(format!("{i}.png")),
            );
            client
                .post(format!("{base}/v1/presigned-url/{token}"))
                .multipart(form)
                .sent_status()
                .await
        }));
    }
    let mut statuses = Vec::new();
    for t in tasks {
        statuses.push(t.await.unwrap());
    }
    assert_eq!(
        statuses.iter().filter(|s| **s == 200).count(),
        3,
        "{statuses:?}"
    );
    assert!(
        statuses.iter().all(|s| *s == 200 || *s == 410),
        "{statuses:?}"
    );
    assert_eq!(app.list_keys(&app.dev_key, Some("race")).await.len(), 3);
    assert_eq!(
        app.settle_locations(3).await.len(),
        3,
        "refused uploads left no bytes"
    );
}
