#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Upload limits and races: sizes, cut-off bodies, replacement, concurrent writers, MIME lists, malformed forms.

use super::*;

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
