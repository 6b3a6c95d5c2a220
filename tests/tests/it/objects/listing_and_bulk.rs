#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Listing pages, Base64 and compressed JSON uploads, bulk uploads.

use super::*;

#[tokio::test]
async fn listing_pages_never_repeat_or_skip() {
    let app = spawn().await;
    for i in 0..25 {
        app.upload(
            &app.dev_key,
            &format!("f{i:02}.txt"),
            vec![b'x'],
            Some("docs"),
        )
        .await;
    }
    app.upload(&app.dev_key, "elsewhere.txt", vec![b'x'], Some("docs2"))
        .await;
    let mut seen = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let mut url = "/v1/objects?path=docs&limit=10".to_owned();
        if let Some(t) = &token {
            url.push_str(&format!("&continuationToken={}", urlencode(t)));
        }
        let body: Value = app.get(&url, &app.dev_key).json_body().await;
        let page: Vec<String> = body["objects"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["key"].as_str().unwrap().to_owned())
            .collect();
        assert!(page.len() <= 10);
        // an object added mid-listing before the cursor must not disturb the walk
        if seen.is_empty() {
            app.upload(&app.dev_key, "a-first.txt", vec![b'x'], Some("docs"))
                .await;
        }
        seen.extend(page);
        match body["continuationToken"].as_str() {
            Some(t) => token = Some(t.to_owned()),
            None => break,
        }
    }
    let expected: Vec<String> = (0..25).map(|i| format!("docs/f{i:02}.txt")).collect();
    assert_eq!(seen, expected);

    // limits and tokens
    for bad in ["0", "1001", "abc", "-1"] {
        app.get(&format!("/v1/objects?limit={bad}"), &app.dev_key)
            .refused(400, "INVALID_REQUEST")
            .await;
    }
    assert_eq!(
        app.get("/v1/objects?limit=1000", &app.dev_key)
            .sent_status()
            .await,
        200
    );
    let body: Value = app
        .get("/v1/objects?path=docs&limit=1", &app.dev_key)
        .json_body()
        .await;
    let t = body["continuationToken"].as_str().unwrap().to_owned();
    app.get(
        "/v1/objects?path=docs&continuationToken=forged",
        &app.dev_key,
    )
    .refused(400, "INVALID_REQUEST")
    .await;
    let tampered = format!("A{t}");
    app.get(
        &format!(
            "/v1/objects?path=docs&continuationToken={}",
            urlencode(&tampered)
        ),
        &app.dev_key,
    )
    .refused(400, "INVALID_REQUEST")
    .await;
    app.get(
        &format!("/v1/objects?path=docs2&continuationToken={}", urlencode(&t)),
        &app.dev_key,
    )
    .refused(400, "INVALID_REQUEST")
    .await;
}

#[tokio::test]
async fn base64_uploads() {
    use base64::Engine;
    let app = spawn().await;
    let b64 = base64::engine::general_purpose::STANDARD.encode(png_bytes());
    let res = app.post("/v1/objects/base64", &app.dev_key).json(&json!({ "data": b64, "filename": "a.png", "path": "b64", "metadata": {"k": "v", "n": 1} })).send().await.unwrap();
    assert_eq!(res.status(), 200);
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["object"]["key"], "b64/a.png");
    assert_eq!(body["object"]["contentType"], "image/png");
    assert_eq!(body["object"]["metadata"], json!({"k": "v"}));
    // data URL, unpadded, generated name with the detected extension, metadata as a JSON string
    let unpadded = base64::engine::general_purpose::STANDARD_NO_PAD.encode(b"hello world");
    let res = app.post("/v1/objects/base64", &app.dev_key)
        .json(&json!({ "data": format!("data:text/plain;base64,{unpadded}"), "metadata": "{\"a\":\"b\"}" }))
        .send().await.unwrap();
    let body: Value = res.json().await.unwrap();
    let key = body["object"]["key"].as_str().unwrap();
    assert!(key.ends_with(".txt"), "{key}");
    assert_eq!(body["object"]["contentType"], "text/plain");
    assert_eq!(body["object"]["metadata"], json!({"a": "b"}));
    for bad in [
        json!({"data": "!!!not base64!!!"}),
        json!({"data": "data:image/png,abc"}),
        json!({}),
        json!({"data": "aGk=", "unknown": 1}),
        json!({"data": "aGk=", "metadata": [1]}),
    ] {
        app.post("/v1/objects/base64", &app.dev_key)
            .json(&bad)
            .refused(400, "INVALID_REQUEST")
            .await;
    }
    app.post("/v1/objects/base64", &app.dev_key)
        .json(&json!({"data": b64, "path": "../x"}))
        .refused(400, "INVALID_PATH")
        .await;
    assert_eq!(app.settle_locations(2).await.len(), 2);
}

#[tokio::test]
async fn compressed_json_bodies_are_decoded_within_the_limit() {
    use base64::Engine;
    let app = spawn().await;
    let send = |path: &str, encoding: &str, body: Vec<u8>| {
        app.post(path, &app.dev_key)
            .header("Content-Type", "application/json")
            .header("Content-Encoding", encoding)
            .body(body)
            .send()
    };
    // gzip and deflate bodies are the JSON they inflate to
    for (i, encoding) in ["gzip", "deflate"].into_iter().enumerate() {
        let json = json!({ "data": base64::engine::general_purpose::STANDARD.encode(png_bytes()),
            "path": "z", "filename": format!("{i}.png") });
        let res = send(
            "/v1/objects/base64",
            encoding,
            compress(encoding, json.to_string().as_bytes()),
        )
        .await
        .unwrap();
        assert_eq!(res.status(), 200, "{encoding}");
        let body: Value = res.json().await.unwrap();
        assert_eq!(body["object"]["key"], format!("z/{i}.png"));
    }
    let keys = json!({ "paths": ["z/0.png", "z/1.png"] }).to_string();
    let res = send(
        "/v1/objects/bulk-delete",
        "gzip",
        compress("gzip", keys.as_bytes()),
    )
    .await
    .unwrap();
    assert_eq!(res.status(), 200);
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["results"][1]["status"], "deleted", "{body}");
    // the limit counts the inflated JSON: 1 MiB + 1 of it on a 1 MiB route is 413, sent as ~1 KiB
    let mut big = json!({ "paths": ["z/0.png"] }).to_string();
    big.push_str(&" ".repeat(1024 * 1024 + 1 - big.len()));
    let bomb = compress("gzip", big.as_bytes());
    assert!(bomb.len() < 8 * 1024);
    expect_error_mentioning(
        send("/v1/objects/bulk-delete", "gzip", bomb).await.unwrap(),
        413,
        "PAYLOAD_TOO_LARGE",
        "1048576",
    )
    .await;
    // an encoding we do not speak is named, not parsed as JSON; a body that is not what it says
    expect_error_mentioning(
        send("/v1/objects/bulk-delete", "br", keys.clone().into_bytes())
            .await
            .unwrap(),
        415,
        "UNSUPPORTED_MEDIA_TYPE",
        "`br`",
    )
    .await;
    expect_error_mentioning(
        send("/v1/objects/bulk-delete", "gzip", keys.into_bytes())
            .await
            .unwrap(),
        400,
        "INVALID_REQUEST",
        "not valid gzip",
    )
    .await;
    // uploads are never decoded: a compressed form is a 415 before anything is stored
    for route in ["/v1/objects", "/v1/objects/bulk"] {
        let form = Form::new().part("file", file_part(png_bytes(), "g.png"));
        let res = app
            .post(route, &app.dev_key)
            .header("Content-Encoding", "gzip")
            .multipart(form)
            .send()
            .await
            .unwrap();
        expect_error_mentioning(res, 415, "UNSUPPORTED_MEDIA_TYPE", "`gzip`").await;
    }
    assert_eq!(app.settle_locations(0).await.len(), 0);
}

#[tokio::test]
async fn bulk_uploads_are_independent_per_file() {
    let app = spawn().await;
    let key = app
        .key(KeySpec {
            allow: vec!["ok".into()],
            ..KeySpec::perms(&[Permission::CdnWrite, Permission::CdnRead])
        })
        .await;
    let payload = json!({ "items": [
        { "fieldName": "files[0]", "path": "ok", "metadata": {"n": "0"} },
        { "fieldName": "files[1]", "path": "forbidden" },
        { "fieldName": "files[2]", "path": "ok", "filename": "third.png" },
    ]});
    let form = Form::new()
        .part("files[0]", file_part(png_bytes(), "zero.png"))
        .part("files[1]", file_part(png_bytes(), "one.png"))
        .part("files[2]", file_part(png_bytes(), "two.png"))
        .text("payload", payload.to_string());
    let res = app
        .post("/v1/objects/bulk", &key)
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["success"], true);
    let r = body["results"].as_array().unwrap();
    assert_eq!(r.len(), 3);
    assert_eq!(r[0]["fieldName"], "files[0]");
    assert_eq!(r[0]["success"], true);
    assert_eq!(r[0]["key"], "ok/zero.png");
    assert!(r[0]["publicUrl"].is_string() && r[0]["size"].is_number());
    assert_eq!(r[1]["success"], false);
    assert_eq!(r[1]["error"], "PATH_NOT_ALLOWED");
    assert!(r[1].get("key").is_none());
    assert_eq!(r[2]["key"], "ok/third.png");
    assert_eq!(
        app.settle_locations(2).await.len(),
        2,
        "the refused file left no bytes"
    );

    // repeated `files` parts, payload first, an item-less file
    let payload = json!({ "items": [ { "fieldName": "files[0]", "path": "ok/rep" } ] });
    let form = Form::new()
        .text("payload", payload.to_string())
        .part("files", file_part(b"a".to_vec(), "a.txt"))
        .part("files", file_part(b"b".to_vec(), "b.txt"));
    let body: Value = app
        .post("/v1/objects/bulk", &key)
        .multipart(form)
        .json_body()
        .await;
    let r = body["results"].as_array().unwrap();
    assert_eq!(r[0]["key"], "ok/rep/a.txt");
    assert_eq!(r[1]["fieldName"], "files[1]");
    assert_eq!(r[1]["error"], "INVALID_REQUEST");

    // an item naming a missing file
    let form = Form::new()
        .part("files[0]", file_part(b"a".to_vec(), "a.txt"))
        .text(
            "payload",
            json!({"items": [{"fieldName": "files[7]"}]}).to_string(),
        );
    app.post("/v1/objects/bulk", &key)
        .multipart(form)
        .refused(400, "INVALID_REQUEST")
        .await;
    // missing payload
    let form = Form::new().part("files[0]", file_part(b"a".to_vec(), "a.txt"));
    app.post("/v1/objects/bulk", &key)
        .multipart(form)
        .refused(400, "INVALID_REQUEST")
        .await;
    // over the per-request file limit: nothing stored
    let before = app.settle_locations(3).await.len();
    let mut form = Form::new().text("payload", json!({"items": []}).to_string());
    for i in 0..21 {
        form = form.part(
            format!("files[{i}]"),
            file_part(vec![b'x'; 10], &format!("{i}.txt")),
        );
    }
    app.post("/v1/objects/bulk", &key)
        .multipart(form)
        .refused(400, "TOO_MANY_FILES")
        .await;
    assert_eq!(app.settle_locations(before).await.len(), before);
}

/// Continuation tokens are signed with the database's secrets: another instance (or this one
/// after a restart) takes them with no configuration; after a rotation tokens of the replaced
/// secret are taken for its grace period, and refused once it is over.
#[tokio::test]
async fn continuation_tokens_survive_restarts_and_rotations() {
    use auth_core::signing_secrets::SigningSecretStore;
    let app = spawn().await;
    assert!(
        app.config.signing_secret.is_none(),
        "the database's secrets"
    );
    for name in ["a.png", "b.png", "c.png", "d.png"] {
        assert_eq!(
            app.upload(&app.dev_key, name, png_bytes(), Some("p"))
                .await
                .status(),
            200
        );
    }
    let second = app.second_cdn();
    let page = |base: String, token: Option<String>| {
        let app = &app;
        async move {
            let mut url = format!("{base}/v1/objects?path=p&limit=1");
            if let Some(t) = token {
                url.push_str(&format!("&continuationToken={}", urlencode(&t)));
            }
            let res = app
                .client
                .get(url)
                .bearer_auth(&app.dev_key)
                .send()
                .await
                .unwrap();
            let status = res.status().as_u16();
            (status, res.json::<Value>().await.unwrap())
        }
    };
    let token = |body: &Value| body["continuationToken"].as_str().unwrap().to_owned();
    let (_, first) = page(app.cdn.clone(), None).await;
    let t1 = token(&first);
    let (status, on_second) = page(second.clone(), Some(t1.clone())).await;
    assert_eq!(status, 200, "{on_second}");
    assert_eq!(on_second["objects"][0]["key"], "p/b.png");

    let secrets = stow_db::PgSigningSecrets::new(app.db.clone());
    let now = chrono::Utc::now();
    // a rotation with a grace period: the old secret's tokens still work on every instance
    secrets
        .rotate(
            b"rotated-secret-0123456789abcdef",
            now,
            now + chrono::Duration::hours(1),
        )
        .await
        .unwrap();
    for base in [app.cdn.clone(), second.clone()] {
        let (status, body) = page(base, Some(t1.clone())).await;
        assert_eq!(status, 200, "{body}");
    }
    let (_, fresh) = page(second.clone(), Some(t1.clone())).await;
    let t2 = token(&fresh);
    assert_ne!(t2.split('.').nth(1), t1.split('.').nth(1));
    // a rotation that ends the replaced secret at once: its tokens are refused
    secrets
        .rotate(b"third-secret-0123456789abcdefghi", now, now)
        .await
        .unwrap();
    let (status, body) = page(app.cdn.clone(), Some(t2)).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["error"]["code"], "INVALID_REQUEST");
    // the first secret's grace period is still running
    let (status, _) = page(second, Some(t1)).await;
    assert_eq!(status, 200);
}
