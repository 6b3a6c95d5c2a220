#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Uploads: the multipart route end to end, keys (Unicode, traversal, scope), content types and the inline policy.

use super::*;

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
