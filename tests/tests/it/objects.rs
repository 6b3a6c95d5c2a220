#![allow(clippy::unwrap_used, clippy::expect_used)]
//! CDN objects: upload (multipart, Base64, bulk), list, delete, idempotency, delivery, storage.

use auth_core::{AccountStore, Permission};
use reqwest::multipart::{Form, Part};
use stowage_tests::*;

fn file_part(bytes: Vec<u8>, name: &str) -> Part {
    Part::bytes(bytes).file_name(name.to_owned())
}

#[tokio::test]
async fn upload_list_and_deliver() {
    let app = spawn().await;
    // metadata and filename after the file part; filename also as the part's file name
    let form = Form::new()
        .part(
            "file",
            file_part(png_bytes(), "shot.png")
                .mime_str("image/png")
                .unwrap(),
        )
        .text("filename", "renamed.png")
        .text("path", "screens/2026")
        .text(
            "metadata",
            r#"{"player":"steam:1","score":12,"nested":{"a":1}}"#,
        );
    let res = app
        .post("/v1/objects", &app.dev_key)
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let id = res.headers()["x-request-id"].to_str().unwrap().to_owned();
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["success"], true);
    assert_eq!(body["requestId"], id);
    let obj = &body["object"];
    assert_eq!(obj["key"], "screens/2026/renamed.png");
    assert_eq!(obj["size"], png_bytes().len());
    assert_eq!(obj["contentType"], "image/png");
    assert_eq!(obj["metadata"], json!({"player": "steam:1"}));
    assert!(obj.get("lastModified").is_none());
    let etag = obj["etag"].as_str().unwrap().to_owned();
    let url = obj["publicUrl"].as_str().unwrap().to_owned();
    assert_eq!(url, "http://cdn.test/cdn/test-org/screens/2026/renamed.png");

    let list: Value = app
        .get("/v1/objects?path=screens", &app.dev_key)
        .json_body()
        .await;
    let o = &list["objects"][0];
    assert_eq!(o["key"], "screens/2026/renamed.png");
    assert_eq!(o["etag"], etag.as_str());
    assert_eq!(o["publicUrl"], url.as_str());
    let lm = o["lastModified"].as_str().unwrap();
    assert_eq!(lm.len(), 24, "{lm}");
    assert!(
        lm.ends_with('Z') && lm.chars().nth(19) == Some('.'),
        "ISO 8601 UTC with milliseconds: {lm}"
    );
    assert_eq!(list["continuationToken"], Value::Null);

    let res = app
        .client
        .get(format!("{}/cdn/test-org/screens/2026/renamed.png", app.cdn))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["content-type"], "image/png");
    assert_eq!(res.headers()["etag"], format!("\"{etag}\"").as_str());
    assert_eq!(res.headers()["x-content-type-options"], "nosniff");
    assert!(res.headers()["cache-control"]
        .to_str()
        .unwrap()
        .starts_with("public"));
    assert!(res.headers().contains_key("last-modified"));
    assert_eq!(res.bytes().await.unwrap().to_vec(), png_bytes());
}

#[tokio::test]
async fn unicode_keys_work_end_to_end() {
    let app = spawn().await;
    let form = Form::new()
        .part("file", file_part(b"hello".to_vec(), "x.txt"))
        .text("path", "照片/😀")
        .text("filename", "猫 cat.txt");
    let body: Value = app
        .post("/v1/objects", &app.dev_key)
        .multipart(form)
        .json_body()
        .await;
    assert_eq!(body["object"]["key"], "照片/😀/猫 cat.txt");
    let url = body["object"]["publicUrl"].as_str().unwrap();
    assert_eq!(
        url,
        "http://cdn.test/cdn/test-org/%E7%85%A7%E7%89%87/%F0%9F%98%80/%E7%8C%AB%20cat.txt"
    );
    let local = app.local_url(url);
    let res = app.client.get(local).send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.text().await.unwrap(), "hello");
    // NFD input is stored as NFC
    let form = Form::new().part("file", file_part(b"x".to_vec(), "e\u{301}.txt"));
    let body: Value = app
        .post("/v1/objects", &app.dev_key)
        .multipart(form)
        .json_body()
        .await;
    assert_eq!(body["object"]["key"], "\u{e9}.txt");
}

#[tokio::test]
async fn traversal_and_bad_paths_are_rejected_and_nothing_is_stored() {
    let app = spawn().await;
    let cases: &[(Option<&str>, Option<&str>)] = &[
        (Some("../etc"), None),
        (Some("a/../../b"), None),
        (Some("%2e%2e/x"), None),
        (Some("a%2fb"), None),
        (Some("a\\b"), None),
        (Some("/abs"), None),
        (Some(".hidden"), None),
        (Some("a/.git"), None),
        (None, Some("../escape.png")),
        (None, Some("..")),
        (None, Some(".env")),
        (None, Some("a\\..\\b.png")),
        (None, Some("/etc/passwd")),
        (Some("ok"), Some("sub/../../x.png")),
    ];
    for (path, filename) in cases {
        let mut form = Form::new().part("file", file_part(png_bytes(), "a.png"));
        if let Some(p) = path {
            form = form.text("path", p.to_string());
        }
        if let Some(f) = filename {
            form = form.text("filename", f.to_string());
        }
        let res = app
            .post("/v1/objects", &app.dev_key)
            .multipart(form)
            .send()
            .await
            .unwrap();
        expect_error(res, 400, "INVALID_PATH").await;
    }
    let form = Form::new()
        .part("file", file_part(png_bytes(), "a.png"))
        .text("path", format!("{}/", "a".repeat(1100)));
    app.post("/v1/objects", &app.dev_key)
        .multipart(form)
        .refused(400, "INVALID_PATH")
        .await;
    assert!(app.list_keys(&app.dev_key, None).await.is_empty());
    let left = app.settle_locations(0).await;
    assert!(left.is_empty(), "no bytes left behind: {left:?}");
}

#[tokio::test]
async fn scope_is_enforced_on_whole_segments() {
    let app = spawn().await;
    let key = app
        .key(KeySpec {
            allow: vec!["images".into()],
            deny: vec!["images/private".into()],
            ..KeySpec::perms(&[
                Permission::CdnRead,
                Permission::CdnWrite,
                Permission::CdnDelete,
            ])
        })
        .await;
    assert_eq!(
        app.upload(&key, "a.png", png_bytes(), Some("images"))
            .await
            .status(),
        200
    );
    assert_eq!(
        app.upload(&key, "b.png", png_bytes(), Some("images/sub"))
            .await
            .status(),
        200
    );
    for bad in ["images2", "other", "images/private", "images/private/deep"] {
        expect_error(
            app.upload(&key, "a.png", png_bytes(), Some(bad)).await,
            403,
            "PATH_NOT_ALLOWED",
        )
        .await;
    }
    expect_error(
        app.upload(&key, "a.png", png_bytes(), None).await,
        403,
        "PATH_NOT_ALLOWED",
    )
    .await;
    // listing: restricted key needs a path inside its scope
    app.get("/v1/objects", &key)
        .refused(403, "PATH_NOT_ALLOWED")
        .await;
    app.get("/v1/objects?path=images2", &key)
        .refused(403, "PATH_NOT_ALLOWED")
        .await;
    // denied prefixes are filtered out of listings
    app.upload(
        &app.dev_key,
        "secret.png",
        png_bytes(),
        Some("images/private"),
    )
    .await;
    assert_eq!(
        app.list_keys(&key, Some("images")).await,
        vec!["images/a.png", "images/sub/b.png"]
    );
    assert_eq!(app.list_keys(&app.dev_key, Some("images")).await.len(), 3);
    // deleting outside the scope
    app.delete("/v1/objects?path=images/private/secret.png", &key)
        .refused(403, "PATH_NOT_ALLOWED")
        .await;
    assert_eq!(app.settle_locations(3).await.len(), 3);
}

#[tokio::test]
async fn content_type_comes_from_the_bytes() {
    let app = spawn().await;
    let images_only = app
        .key(KeySpec {
            mime: Some(vec!["image/*".into()]),
            ..KeySpec::perms(&[Permission::CdnWrite, Permission::CdnRead])
        })
        .await;
    let png_only = app
        .key(KeySpec {
            mime: Some(vec!["image/png".into()]),
            ..KeySpec::perms(&[Permission::CdnWrite])
        })
        .await;
    // a WebP named .png and declared image/png is stored as image/webp and passes image/*
    let form = Form::new().part(
        "file",
        file_part(webp_bytes(), "image.png")
            .mime_str("image/png")
            .unwrap(),
    );
    let body: Value = app
        .post("/v1/objects", &images_only)
        .multipart(form)
        .json_body()
        .await;
    assert_eq!(body["object"]["contentType"], "image/webp");
    // ... and fails image/png
    let form = Form::new().part(
        "file",
        file_part(webp_bytes(), "image2.png")
            .mime_str("image/png")
            .unwrap(),
    );
    app.post("/v1/objects", &png_only)
        .multipart(form)
        .refused(415, "CONTENT_TYPE_NOT_ALLOWED")
        .await;
    // HTML declared image/png does not pass image/png
    let form = Form::new().part(
        "file",
        file_part(
            b"<!DOCTYPE html><script>alert(1)</script>".to_vec(),
            "x.png",
        )
        .mime_str("image/png")
        .unwrap(),
    );
    app.post("/v1/objects", &png_only)
        .multipart(form)
        .refused(415, "CONTENT_TYPE_NOT_ALLOWED")
        .await;
    // declared type, then extension, then octet-stream
    let form = Form::new().part(
        "file",
        file_part(b"plain words".to_vec(), "notes.bin")
            .mime_str("text/plain")
            .unwrap(),
    );
    let body: Value = app
        .post("/v1/objects", &app.dev_key)
        .multipart(form)
        .json_body()
        .await;
    assert_eq!(body["object"]["contentType"], "text/plain");
    let form = Form::new().part("file", file_part(b"{}".to_vec(), "data.json"));
    let body: Value = app
        .post("/v1/objects", &app.dev_key)
        .multipart(form)
        .json_body()
        .await;
    assert_eq!(body["object"]["contentType"], "application/json");
    let form = Form::new().part("file", file_part(b"\x00\x01".to_vec(), "blob"));
    let body: Value = app
        .post("/v1/objects", &app.dev_key)
        .multipart(form)
        .json_body()
        .await;
    assert_eq!(body["object"]["contentType"], "application/octet-stream");
    assert_eq!(
        app.settle_locations(4).await.len(),
        4,
        "refused uploads left nothing"
    );
}

#[tokio::test]
async fn only_passive_types_render_inline() {
    let app = spawn().await;
    // (file name, declared part type, bytes, rendered inline?)
    let cases: [(&str, Option<&str>, Vec<u8>, bool); 9] = [
        (
            "page.html",
            None,
            b"<html><body>hi</body></html>".to_vec(),
            false,
        ),
        (
            "pic.svg",
            None,
            b"<svg xmlns='http://www.w3.org/2000/svg'/>".to_vec(),
            false,
        ),
        (
            "a.js",
            Some("text/x-javascript"),
            b"alert(1)".to_vec(),
            false,
        ),
        (
            "b.es",
            Some("application/x-ecmascript"),
            b"alert(1)".to_vec(),
            false,
        ),
        ("page.mht", None, b"From: <saved by X>".to_vec(), false),
        (
            "f.swf",
            Some("application/x-shockwave-flash"),
            b"FWS\x01".to_vec(),
            false,
        ),
        ("shot.png", None, png_bytes(), true),
        ("note.txt", None, b"plain words".to_vec(), true),
        (
            "clip.ogg",
            Some("audio/ogg"),
            b"not really ogg".to_vec(),
            true,
        ),
    ];
    for (name, declared, bytes, inline) in cases {
        let mut part = reqwest::multipart::Part::bytes(bytes).file_name(name.to_owned());
        if let Some(d) = declared {
            part = part.mime_str(d).unwrap();
        }
        let form = reqwest::multipart::Form::new().part("file", part);
        let res = app
            .post("/v1/objects", &app.dev_key)
            .multipart(form)
            .send()
            .await
            .unwrap();
        let body: Value = res.json().await.unwrap();
        let url = app.local_url(body["object"]["publicUrl"].as_str().unwrap());
        let res = app.client.get(url).send().await.unwrap();
        assert_eq!(res.status(), 200, "{name}");
        let header = |h: &str| res.headers().get(h).map(|v| v.to_str().unwrap().to_owned());
        let disposition = header("content-disposition");
        let csp = header("content-security-policy");
        if inline {
            assert_eq!(disposition, None, "{name} renders inline");
            assert_eq!(csp, None, "{name}");
        } else {
            assert!(
                disposition
                    .as_deref()
                    .is_some_and(|d| d.starts_with("attachment")),
                "{name} ({:?}) is an attachment: {disposition:?}",
                header("content-type")
            );
            assert!(
                csp.as_deref().is_some_and(|c| c.contains("sandbox")),
                "{name}"
            );
        }
        assert_eq!(res.headers()["x-content-type-options"], "nosniff");
    }
}

#[tokio::test]
async fn oversize_files_are_refused_while_streaming() {
    let app = spawn().await;
    let mut plan = app.accounts.get_plan("pro").await.unwrap().unwrap();
    plan.max_file_size = 1000;
    app.accounts.upsert_plan(&plan).await.unwrap();
    assert_eq!(
        app.upload(&app.dev_key, "ok.bin", vec![1; 999], None)
            .await
            .status(),
        200
    );
    assert_eq!(
        app.upload(&app.dev_key, "ok2.bin", vec![1; 1000], None)
            .await
            .status(),
        200
    );
    expect_error_mentioning(
        app.upload(&app.dev_key, "big.bin", vec![1; 1001], None)
            .await,
        413,
        "FILE_TOO_LARGE",
        "1000",
    )
    .await;
    let big = app
        .upload(&app.dev_key, "huge.bin", vec![1; 20 * 1024 * 1024], None)
        .await;
    expect_error(big, 413, "FILE_TOO_LARGE").await;
    assert_eq!(
        app.list_keys(&app.dev_key, None).await,
        vec!["ok.bin", "ok2.bin"]
    );
    assert_eq!(app.settle_locations(2).await.len(), 2);
}

#[tokio::test]
async fn an_upload_cut_off_midway_leaves_nothing() {
    use std::io::Write;
    let app = spawn().await;
    let boundary = "stowage-cut-off";
    let head = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"cut.bin\"\r\n\
         Content-Type: application/octet-stream\r\n\r\n"
    );
    let tail = format!("\r\n--{boundary}--\r\n");
    let (sent, declared) = (3 * 1024 * 1024, 8 * 1024 * 1024);
    let request = format!(
        "POST /v1/objects HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {key}\r\n\
         Content-Type: multipart/form-data; boundary={boundary}\r\nContent-Length: {len}\r\n\r\n{head}",
        host = app.cdn.trim_start_matches("http://"),
        key = app.dev_key,
        len = head.len() + declared + tail.len(),
    );
    let addr = app.cdn.trim_start_matches("http://").to_owned();
    let stream = tokio::task::spawn_blocking(move || {
        let mut stream = std::net::TcpStream::connect(addr).unwrap();
        stream.write_all(request.as_bytes()).unwrap();
        stream.write_all(&vec![7u8; sent]).unwrap();
        stream
    })
    .await
    .unwrap();
    if app.objects.description().starts_with("file://") {
        // the server streams the file to disk as it arrives: its staged file is there
        let mut staged = Vec::new();
        for _ in 0..100 {
            staged = app.stored_locations().await;
            if !staged.is_empty() {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        assert!(
            staged.len() == 1 && staged[0].ends_with(".partial"),
            "{staged:?}"
        );
    }
    drop(stream);
    let left = app.settle_locations(0).await;
    assert!(
        left.is_empty(),
        "a cut-off upload left bytes behind: {left:?}"
    );
    assert!(app.list_keys(&app.dev_key, None).await.is_empty());
}

#[tokio::test]
async fn replacing_an_object_swaps_bytes_and_removes_the_old_ones() {
    let app = spawn().await;
    let a: Value = app
        .upload(&app.dev_key, "a.bin", b"first".to_vec(), None)
        .await
        .json()
        .await
        .unwrap();
    let b: Value = app
        .upload(&app.dev_key, "a.bin", b"second".to_vec(), None)
        .await
        .json()
        .await
        .unwrap();
    assert_ne!(a["object"]["etag"], b["object"]["etag"]);
    let c: Value = app
        .upload(&app.dev_key, "a.bin", b"second".to_vec(), None)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        b["object"]["etag"], c["object"]["etag"],
        "same bytes, same etag"
    );
    let res = app
        .client
        .get(format!("{}/cdn/test-org/a.bin", app.cdn))
        .send()
        .await
        .unwrap();
    assert_eq!(res.text().await.unwrap(), "second");
    assert_eq!(
        app.settle_locations(1).await.len(),
        1,
        "replaced bytes are removed"
    );
}

#[tokio::test]
async fn concurrent_uploads_to_one_key_never_mix() {
    let app = spawn().await;
    let mut tasks = Vec::new();
    for i in 0..8u8 {
        let client = app.client.clone();
        let url = format!("{}/v1/objects", app.cdn);
        let key = app.dev_key.clone();
        tasks.push(tokio::spawn(async move {
            let bytes = vec![i; 64 * 1024 + i as usize];
            let form = Form::new().part("file", file_part(bytes, "same.bin"));
            client
                .post(url)
                .bearer_auth(key)
                .multipart(form)
                .sent_status()
                .await
        }));
    }
    for t in tasks {
        assert_eq!(t.await.unwrap(), 200);
    }
    let list: Value = app.get("/v1/objects", &app.dev_key).json_body().await;
    let o = &list["objects"][0];
    let size = o["size"].as_u64().unwrap() as usize;
    let body = app
        .client
        .get(format!("{}/cdn/test-org/same.bin", app.cdn))
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    assert_eq!(body.len(), size, "row and bytes agree");
    let i = body[0];
    assert!(body.iter().all(|b| *b == i), "one upload won completely");
    assert_eq!(size, 64 * 1024 + i as usize);
    assert_eq!(app.settle_locations(1).await.len(), 1);
}

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

fn compress(encoding: &str, bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let level = flate2::Compression::best();
    match encoding {
        "gzip" => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), level);
            e.write_all(bytes).unwrap();
            e.finish().unwrap()
        }
        "deflate" => {
            let mut e = flate2::write::ZlibEncoder::new(Vec::new(), level);
            e.write_all(bytes).unwrap();
            e.finish().unwrap()
        }
        other => panic!("no encoder for {other}"),
    }
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

#[tokio::test]
async fn deletes_are_idempotent() {
    let app = spawn().await;
    app.upload(&app.dev_key, "a.txt", b"a".to_vec(), Some("d"))
        .await;
    app.upload(&app.dev_key, "b.txt", b"b".to_vec(), Some("d"))
        .await;
    let res = app
        .delete("/v1/objects?path=d/a.txt", &app.dev_key)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["key"], "d/a.txt");
    assert_eq!(body["status"], "deleted");
    assert_eq!(body["success"], true);
    let body: Value = app
        .delete("/v1/objects?path=d/a.txt", &app.dev_key)
        .json_body()
        .await;
    assert_eq!(body["status"], "not_found");
    assert_eq!(
        app.client
            .get(format!("{}/cdn/test-org/d/a.txt", app.cdn))
            .sent_status()
            .await,
        404
    );
    app.delete("/v1/objects?path=../x", &app.dev_key)
        .refused(400, "INVALID_PATH")
        .await;
    app.delete("/v1/objects", &app.dev_key)
        .refused(400, "INVALID_REQUEST")
        .await;

    let res = app
        .post("/v1/objects/bulk-delete", &app.dev_key)
        .json(&json!({"paths": ["d/b.txt", "d/missing.txt", "../bad", "d//b.txt"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let body: Value = res.json().await.unwrap();
    let r = body["results"].as_array().unwrap();
    assert_eq!(
        r[0],
        json!({"path": "d/b.txt", "key": "d/b.txt", "success": true, "status": "deleted"})
    );
    assert_eq!(r[1]["status"], "not_found");
    assert_eq!(r[2]["success"], false);
    assert_eq!(r[2]["error"], "INVALID_PATH");
    assert_eq!(r[3]["key"], "d/b.txt");
    assert_eq!(r[3]["status"], "not_found");
    let many: Vec<String> = (0..1001).map(|i| format!("x{i}")).collect();
    app.post("/v1/objects/bulk-delete", &app.dev_key)
        .json(&json!({"paths": many}))
        .refused(400, "TOO_MANY_FILES")
        .await;
    let ok: Vec<String> = (0..1000).map(|i| format!("x{i}")).collect();
    assert_eq!(
        app.post("/v1/objects/bulk-delete", &app.dev_key)
            .json(&json!({"paths": ok}))
            .sent_status()
            .await,
        200
    );
    app.post("/v1/objects/bulk-delete", &app.dev_key)
        .json(&json!({"paths": []}))
        .refused(400, "INVALID_REQUEST")
        .await;
    let left = app.settle_locations(0).await;
    assert!(left.is_empty(), "deleted bytes are removed: {left:?}");
}

#[tokio::test]
async fn idempotency_keys_replay_and_conflict() {
    let app = spawn().await;
    let send = |bytes: Vec<u8>, key: &'static str| {
        let form = Form::new()
            .part("file", file_part(bytes, "i.bin"))
            .text("path", "idem");
        app.post("/v1/objects", &app.dev_key)
            .header("Idempotency-Key", key)
            .multipart(form)
            .send()
    };
    let first = send(b"one".to_vec(), "k-1").await.unwrap();
    assert_eq!(first.status(), 200);
    let first_id = first.headers()["x-request-id"].to_str().unwrap().to_owned();
    let first_body: Value = first.json().await.unwrap();
    // a retry with a new multipart boundary is the same request
    let again = send(b"one".to_vec(), "k-1").await.unwrap();
    assert_eq!(again.status(), 200);
    assert_eq!(again.headers()["idempotent-replayed"], "true");
    assert_eq!(again.headers()["x-request-id"].to_str().unwrap(), first_id);
    let again_body: Value = again.json().await.unwrap();
    assert_eq!(again_body, first_body);
    assert_eq!(
        app.settle_locations(1).await.len(),
        1,
        "nothing written again"
    );
    // different content under the same key
    expect_conflict(send(b"two".to_vec(), "k-1").await.unwrap()).await;
    // the same key on another route is another scope
    let res = app
        .delete("/v1/objects?path=idem/i.bin", &app.dev_key)
        .header("Idempotency-Key", "k-1")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let replay = app
        .delete("/v1/objects?path=idem/i.bin", &app.dev_key)
        .header("Idempotency-Key", "k-1")
        .send()
        .await
        .unwrap();
    assert_eq!(replay.headers()["idempotent-replayed"], "true");
    assert_eq!(
        replay.json::<Value>().await.unwrap()["status"],
        "deleted",
        "the original answer, not not_found"
    );
    // failures are not stored: a retry runs again
    let res = app
        .post("/v1/objects/base64", &app.dev_key)
        .header("Idempotency-Key", "k-2")
        .json(&json!({"data": "aGk=", "path": "../x"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 400);
    let res = app
        .post("/v1/objects/base64", &app.dev_key)
        .header("Idempotency-Key", "k-2")
        .json(&json!({"data": "aGk=", "path": "ok", "filename": "hi.txt"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert!(res.headers().get("idempotent-replayed").is_none());
    // JSON key order does not change the fingerprint
    let res = app
        .post("/v1/objects/base64", &app.dev_key)
        .header("Idempotency-Key", "k-2")
        .header("Content-Type", "application/json")
        .body(r#"{"filename":"hi.txt","path":"ok","data":"aGk="}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(res.headers()["idempotent-replayed"], "true");
    // another key's Idempotency-Key space is separate
    let other = app
        .key(KeySpec::developer(auth_core::PermissionSet::all()))
        .await;
    let form = Form::new()
        .part("file", file_part(b"two".to_vec(), "i.bin"))
        .text("path", "idem");
    let res = app
        .post("/v1/objects", &other)
        .header("Idempotency-Key", "k-1")
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert!(res.headers().get("idempotent-replayed").is_none());
}

async fn expect_conflict(res: reqwest::Response) {
    expect_error(res, 409, "CONFLICT").await;
}

/// Objects above the in-process cache's size are streamed from the store in chunks; whole
/// bodies, ranges across a chunk boundary and HEAD must match the bytes exactly.
#[tokio::test]
async fn large_objects_stream_whole_and_in_ranges() {
    let app = spawn().await;
    let chunk = stow_objects::READ_CHUNK_BYTES;
    let size = cdn_http::state::SMALL_OBJECT_BYTES as usize + 2 * chunk + 3;
    let data: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
    let res = app
        .upload(&app.dev_key, "big.bin", data.clone(), None)
        .await;
    assert_eq!(res.status(), 200);
    let url = format!("{}/cdn/test-org/big.bin", app.cdn);
    let get = |range: Option<String>| {
        let mut req = app.client.get(&url);
        if let Some(r) = range {
            req = req.header("Range", r);
        }
        req.send()
    };
    let res = get(None).await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["content-length"], size.to_string());
    assert!(res.bytes().await.unwrap() == data, "whole body differs");
    for (start, end) in [(chunk - 2, chunk + 2), (0, 2 * chunk), (size - 1, size - 1)] {
        let res = get(Some(format!("bytes={start}-{end}"))).await.unwrap();
        assert_eq!(res.status(), 206);
        assert_eq!(
            res.headers()["content-range"],
            format!("bytes {start}-{end}/{size}")
        );
        assert!(
            res.bytes().await.unwrap() == data[start..=end],
            "bytes {start}-{end} differ"
        );
    }
    let res = get(Some("bytes=-7".into())).await.unwrap();
    assert!(res.bytes().await.unwrap() == data[size - 7..]);
    let res = app.client.head(&url).send().await.unwrap();
    assert_eq!(res.headers()["content-length"], size.to_string());
    assert!(res.bytes().await.unwrap().is_empty());
}

#[tokio::test]
async fn delivery_ranges_conditionals_and_head() {
    let app = spawn().await;
    let data: Vec<u8> = (0..100u8).collect();
    let body: Value = app
        .upload(&app.dev_key, "r.bin", data.clone(), None)
        .await
        .json()
        .await
        .unwrap();
    let etag = body["object"]["etag"].as_str().unwrap().to_owned();
    let url = format!("{}/cdn/test-org/r.bin", app.cdn);
    let res = app
        .client
        .get(&url)
        .header("Range", "bytes=10-19")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 206);
    assert_eq!(res.headers()["content-range"], "bytes 10-19/100");
    assert_eq!(res.bytes().await.unwrap().to_vec(), data[10..20].to_vec());
    let res = app
        .client
        .get(&url)
        .header("Range", "bytes=-5")
        .send()
        .await
        .unwrap();
    assert_eq!(res.bytes().await.unwrap().to_vec(), data[95..].to_vec());
    let res = app
        .client
        .get(&url)
        .header("Range", "bytes=200-")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 416);
    assert_eq!(res.headers()["content-range"], "bytes */100");
    let res = app
        .client
        .get(&url)
        .header("If-None-Match", format!("\"{etag}\""))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 304);
    let res = app
        .client
        .get(&url)
        .header("If-None-Match", "\"other\"")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let res = app.client.head(&url).send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["content-length"], "100");
    assert!(res.bytes().await.unwrap().is_empty());
    assert_eq!(
        app.client
            .get(format!("{}/cdn/nobody/r.bin", app.cdn))
            .sent_status()
            .await,
        404
    );
    assert_eq!(
        app.client
            .get(format!("{}/cdn/test-org/.env", app.cdn))
            .sent_status()
            .await,
        404
    );
    assert_eq!(
        app.client
            .get(format!("{}/cdn/test-org/missing", app.cdn))
            .sent_status()
            .await,
        404
    );
    // empty files
    app.upload(&app.dev_key, "empty.txt", vec![], None).await;
    let res = app
        .client
        .get(format!("{}/cdn/test-org/empty.txt", app.cdn))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert!(res.bytes().await.unwrap().is_empty());
}

#[tokio::test]
async fn gc_removes_only_unreferenced_bytes() {
    let app = spawn().await;
    app.upload(&app.dev_key, "keep.txt", b"keep".to_vec(), None)
        .await;
    let orphan = stow_objects::Objects::fresh_location(&app.org.id);
    app.objects
        .put(&orphan, bytes::Bytes::from_static(b"orphan"), None)
        .await
        .unwrap();
    assert_eq!(app.stored_locations().await.len(), 2);
    let (scanned, removed) = stow_admin::gc(&app.db, &app.objects, chrono::Duration::seconds(0))
        .await
        .unwrap();
    assert_eq!((scanned, removed), (2, 1));
    assert!(!app.objects.exists(&orphan).await.unwrap());
    let res = app
        .client
        .get(format!("{}/cdn/test-org/keep.txt", app.cdn))
        .send()
        .await
        .unwrap();
    assert_eq!(res.text().await.unwrap(), "keep");
    // young orphans (uploads in flight) are left alone
    app.objects
        .put(&orphan, bytes::Bytes::from_static(b"young"), None)
        .await
        .unwrap();
    let (_, removed) = stow_admin::gc(&app.db, &app.objects, chrono::Duration::seconds(3600))
        .await
        .unwrap();
    assert_eq!(removed, 0);
}

#[tokio::test]
async fn idempotency_key_in_flight_is_a_conflict() {
    let app = spawn().await;
    // the first request streams its file slowly and holds the key while it runs
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let head: &'static [u8] = b"--b0undary\r\nContent-Disposition: form-data; name=\"file\"; filename=\"slow.bin\"\r\n\r\n";
    let body = futures::stream::unfold((0u8, Some(rx)), move |(step, rx)| async move {
        match step {
            0 => Some((Ok::<_, std::io::Error>(head.to_vec()), (1, rx))),
            1 => {
                // wait until the test has sent the competing request
                if let Some(rx) = rx {
                    let _ = rx.await;
                }
                Some((Ok(b"payload\r\n--b0undary--\r\n".to_vec()), (2, None)))
            }
            _ => None,
        }
    });
    let first = tokio::spawn(
        app.post("/v1/objects", &app.dev_key)
            .header("Idempotency-Key", "held-1")
            .header("Content-Type", "multipart/form-data; boundary=b0undary")
            .body(reqwest::Body::wrap_stream(body))
            .send(),
    );
    // wait (bounded) until the slow request's claim is committed, then compete with it
    app.wait_in_flight("held-1").await;
    let form = Form::new().part("file", file_part(b"payload".to_vec(), "slow.bin"));
    let conflict = app
        .post("/v1/objects", &app.dev_key)
        .header("Idempotency-Key", "held-1")
        .multipart(form)
        .send()
        .await
        .unwrap();
    expect_error_mentioning(conflict, 409, "CONFLICT", "in progress").await;
    tx.send(()).unwrap();
    let first = first.await.unwrap().unwrap();
    assert_eq!(first.status(), 200);
    assert_eq!(app.list_keys(&app.dev_key, None).await, vec!["slow.bin"]);
}

#[tokio::test]
async fn key_mime_restrictions_hold_on_every_upload_route() {
    use base64::Engine;
    let app = spawn().await;
    let png_only = app
        .key(KeySpec {
            mime: Some(vec!["image/png".into()]),
            ..KeySpec::perms(&[Permission::CdnWrite, Permission::CdnRead])
        })
        .await;
    let html = b"<!doctype html><script>alert(1)</script>".to_vec();
    // Base64: the effective type wins over the declared one
    let b64 = base64::engine::general_purpose::STANDARD.encode(&html);
    let res = app
        .post("/v1/objects/base64", &png_only)
        .json(&json!({ "data": format!("data:image/png;base64,{b64}"), "filename": "x.png" }))
        .send()
        .await
        .unwrap();
    expect_error(res, 415, "CONTENT_TYPE_NOT_ALLOWED").await;
    let ok = base64::engine::general_purpose::STANDARD.encode(png_bytes());
    let res = app
        .post("/v1/objects/base64", &png_only)
        .json(&json!({ "data": ok, "filename": "ok.png" }))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    // bulk: per item
    let form = Form::new()
        .part("files[0]", file_part(png_bytes(), "a.png"))
        .part(
            "files[1]",
            file_part(html, "b.png").mime_str("image/png").unwrap(),
        )
        .text(
            "payload",
            json!({"items": [{"fieldName": "files[0]"}, {"fieldName": "files[1]"}]}).to_string(),
        );
    let body: Value = app
        .post("/v1/objects/bulk", &png_only)
        .multipart(form)
        .json_body()
        .await;
    assert_eq!(body["results"][0]["success"], true);
    assert_eq!(body["results"][1]["error"], "CONTENT_TYPE_NOT_ALLOWED");
    // upload URLs made by this key inherit its list (tested in upload_urls.rs); nothing else stored
    assert_eq!(
        app.list_keys(&png_only, None).await,
        vec!["a.png", "ok.png"]
    );
    assert_eq!(app.settle_locations(2).await.len(), 2);
}

#[tokio::test]
async fn a_form_part_sent_twice_is_refused_and_nothing_is_stored() {
    let app = spawn().await;
    let send =
        |route: &'static str, form: Form| app.post(route, &app.dev_key).multipart(form).send();
    let file = || file_part(png_bytes(), "a.png");
    let item = json!({ "items": [{ "fieldName": "files[0]" }] }).to_string();
    let two_items = json!({ "items": [
        { "fieldName": "files[0]", "path": "one" },
        { "fieldName": "files[0]", "path": "two" },
    ]});
    let mut cases: Vec<(&str, Form, String)> = ["path", "filename", "metadata"]
        .into_iter()
        .map(|field| {
            let form = Form::new()
                .part("file", file())
                .text(field, "{}")
                .text(field, "{}");
            (
                "/v1/objects",
                form,
                format!("`{field}` appears more than once"),
            )
        })
        .collect();
    cases.extend([
        (
            "/v1/objects/bulk",
            Form::new()
                .part("files[0]", file())
                .text("payload", item.clone())
                .text("payload", item.clone()),
            "`payload` appears more than once".into(),
        ),
        // two file parts with the name an item points at
        (
            "/v1/objects/bulk",
            Form::new()
                .part("files[0]", file())
                .part("files[0]", file())
                .text("payload", item.clone()),
            "`files[0]` appears more than once".into(),
        ),
        (
            "/v1/objects/bulk",
            Form::new()
                .part("files[0]", file())
                .text("payload", two_items.to_string()),
            "payload items 0 and 1 both describe `files[0]`".into(),
        ),
    ]);
    for (route, form, expected) in cases {
        let res = send(route, form).await.unwrap();
        expect_error_mentioning(res, 400, "INVALID_REQUEST", &expected).await;
    }
    let left = app.settle_locations(0).await;
    assert!(left.is_empty(), "nothing stored: {left:?}");
    assert!(app.list_keys(&app.dev_key, None).await.is_empty());

    // the same holds for the listing's and delete's query parameters
    for url in [
        "/v1/objects?path=a&path=b",
        "/v1/objects?limit=1&limit=1000",
    ] {
        let res = app.get(url, &app.dev_key).send().await.unwrap();
        expect_error_mentioning(res, 400, "INVALID_REQUEST", "duplicate field").await;
    }
    let res = app
        .delete("/v1/objects?path=a&path=b", &app.dev_key)
        .send()
        .await
        .unwrap();
    expect_error(res, 400, "INVALID_REQUEST").await;

    // `file` may repeat where several files are accepted (upload URLs); one upload takes one
    let form = Form::new().part("file", file()).part("file", file());
    expect_error(
        send("/v1/objects", form).await.unwrap(),
        400,
        "TOO_MANY_FILES",
    )
    .await;
}

#[tokio::test]
async fn a_file_part_without_a_name_gets_a_generated_one() {
    let app = spawn().await;
    let upload = |bytes: Vec<u8>| {
        app.post("/v1/objects", &app.dev_key)
            .multipart(Form::new().part("file", Part::bytes(bytes)))
            .send()
    };
    for (bytes, ext) in [
        (vec![0x13, 0x37, 0x00, 0xfe], ".bin"),
        (png_bytes(), ".png"),
    ] {
        let res = upload(bytes).await.unwrap();
        assert_eq!(res.status(), 200);
        let body: Value = res.json().await.unwrap();
        let key = body["object"]["key"].as_str().unwrap();
        assert!(key.ends_with(ext) && key.len() == 26 + ext.len(), "{key}");
    }
}

#[tokio::test]
async fn a_resumed_download_never_splices_two_versions() {
    let app = spawn().await;
    // one object served from memory, one streamed from the store
    for (name, size) in [("small.bin", 1000usize), ("large.bin", 300 * 1024)] {
        let v1: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
        let v2: Vec<u8> = (0..size).map(|i| (i % 241) as u8 ^ 0x5a).collect();
        let url = format!("{}/cdn/test-org/{name}", app.cdn);
        let up: Value = app
            .upload(&app.dev_key, name, v1.clone(), None)
            .await
            .json()
            .await
            .unwrap();
        let etag = format!("\"{}\"", up["object"]["etag"].as_str().unwrap());
        let get = |headers: Vec<(&'static str, String)>| {
            let mut req = app.client.get(&url);
            for (name, value) in headers {
                req = req.header(name, value);
            }
            req.send()
        };
        let resume =
            |if_range: String| get(vec![("Range", "bytes=100-".into()), ("If-Range", if_range)]);
        let res = resume(etag.clone()).await.unwrap();
        assert_eq!(res.status(), 206, "{name}");
        assert_eq!(res.bytes().await.unwrap().to_vec(), v1[100..].to_vec());
        let last_modified = app.client.head(&url).send().await.unwrap().headers()["last-modified"]
            .to_str()
            .unwrap()
            .to_owned();

        app.upload(&app.dev_key, name, v2.clone(), None).await;
        // the client resumes with the old version's validators: it gets the new one whole
        for stale in [etag.clone(), last_modified.clone(), format!("W/{etag}")] {
            let res = resume(stale).await.unwrap();
            assert_eq!(res.status(), 200, "{name}");
            assert!(res.headers().get("content-range").is_none());
            assert_eq!(res.bytes().await.unwrap().to_vec(), v2, "{name}");
        }
        // If-Modified-Since counts only without If-None-Match
        let (future, past) = (
            "Fri, 01 Jan 2100 00:00:00 GMT",
            "Thu, 01 Jan 2015 00:00:00 GMT",
        );
        for (headers, status) in [
            (vec![("If-Modified-Since", future.to_owned())], 304),
            (vec![("If-Modified-Since", past.to_owned())], 200),
            // a changed ETag wins over the date
            (
                vec![
                    ("If-Modified-Since", future.to_owned()),
                    ("If-None-Match", etag.clone()),
                ],
                200,
            ),
        ] {
            let shown = format!("{name}: {headers:?}");
            assert_eq!(get(headers).await.unwrap().status(), status, "{shown}");
        }
    }
}
