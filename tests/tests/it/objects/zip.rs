#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `POST /v1/objects/zip`: the archive holds the files, byte for byte, under their keys (named
//! files) or their paths below the folder; the key's paths and bad requests are refused before
//! anything is sent.

use super::*;

/// The archive's files: name → bytes, in archive order (its checksums checked).
async fn unzip(bytes: Vec<u8>) -> Vec<(String, Vec<u8>)> {
    let reader = async_zip::base::read::mem::ZipFileReader::new(bytes)
        .await
        .expect("a whole archive");
    let mut out = Vec::new();
    for i in 0..reader.file().entries().len() {
        let name = reader.file().entries()[i]
            .filename()
            .as_str()
            .unwrap()
            .to_owned();
        let mut entry = reader.reader_with_entry(i).await.unwrap();
        let mut data = Vec::new();
        entry.read_to_end_checked(&mut data).await.unwrap();
        out.push((name, data));
    }
    out
}

async fn zip(app: &TestApp, key: &str, body: Value) -> reqwest::Response {
    app.post("/v1/objects/zip", key)
        .json(&body)
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn an_archive_holds_the_files_byte_for_byte() {
    let app = spawn().await;
    let big: Vec<u8> = (0..3_000_000u32).map(|i| (i * 7 % 251) as u8).collect();
    app.put_file("shots", "a.png", b"png bytes".to_vec(), "image/png", "{}")
        .await;
    app.put_file(
        "shots/2026",
        "b.bin",
        big.clone(),
        "application/octet-stream",
        "{}",
    )
    .await;
    app.put_file("shots", "empty.txt", Vec::new(), "text/plain", "{}")
        .await;
    app.put_file("other", "c.txt", b"other".to_vec(), "text/plain", "{}")
        .await;
    // a folder: every file under it, named below it
    let res = zip(&app, &app.dev_key, json!({ "path": "shots" })).await;
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["content-type"], "application/zip");
    assert_eq!(
        res.headers()["content-disposition"],
        "attachment; filename*=UTF-8''shots%2Ezip"
    );
    let files = unzip(res.bytes().await.unwrap().to_vec()).await;
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["2026/b.bin", "a.png", "empty.txt"]);
    assert_eq!(files[0].1, big, "3 MB streamed whole");
    assert_eq!(files[1].1, b"png bytes");
    assert!(files[2].1.is_empty());
    // named files: under their keys, each once
    let res = zip(
        &app,
        &app.dev_key,
        json!({ "paths": ["other/c.txt", "shots/a.png", "other/c.txt"] }),
    )
    .await;
    assert_eq!(res.status(), 200);
    let files = unzip(res.bytes().await.unwrap().to_vec()).await;
    assert_eq!(
        files,
        [
            ("other/c.txt".to_owned(), b"other".to_vec()),
            ("shots/a.png".to_owned(), b"png bytes".to_vec())
        ]
    );
}

#[tokio::test]
async fn the_keys_paths_and_bad_requests_are_refused_before_anything_is_sent() {
    let app = spawn().await;
    app.put_file("pub", "a.txt", b"a".to_vec(), "text/plain", "{}")
        .await;
    app.put_file("pub/secret", "s.txt", b"s".to_vec(), "text/plain", "{}")
        .await;
    app.put_file("private", "p.txt", b"p".to_vec(), "text/plain", "{}")
        .await;
    let key = app
        .key(KeySpec {
            allow: vec!["pub".into()],
            deny: vec!["pub/secret".into()],
            ..KeySpec::perms(&[Permission::CdnRead])
        })
        .await;
    // the denied sub-folder is left out of a folder's archive
    let res = zip(&app, &key, json!({ "path": "pub" })).await;
    assert_eq!(res.status(), 200);
    let files = unzip(res.bytes().await.unwrap().to_vec()).await;
    assert_eq!(files, [("a.txt".to_owned(), b"a".to_vec())]);
    for body in [
        json!({ "path": "private" }),
        json!({ "paths": ["pub/a.txt", "private/p.txt"] }),
        json!({ "paths": ["pub/secret/s.txt"] }),
    ] {
        expect_error(zip(&app, &key, body).await, 403, "PATH_NOT_ALLOWED").await;
    }
    for (body, status, code, says) in [
        (
            json!({}),
            400,
            "INVALID_REQUEST",
            "send `paths` (the files) or `path` (a folder)",
        ),
        (
            json!({ "path": "pub", "paths": ["pub/a.txt"] }),
            400,
            "INVALID_REQUEST",
            "one of them",
        ),
        (
            json!({ "paths": [] }),
            400,
            "INVALID_REQUEST",
            "`paths` must name 1 to 1000 files",
        ),
        (
            json!({ "paths": ["../x"] }),
            400,
            "INVALID_PATH",
            "`paths[0]`",
        ),
        (
            json!({ "paths": ["pub/missing.txt"] }),
            404,
            "NOT_FOUND",
            "pub/missing.txt",
        ),
    ] {
        expect_error_mentioning(
            zip(&app, &app.dev_key, body.clone()).await,
            status,
            code,
            says,
        )
        .await;
    }
    let writer = app.key(KeySpec::perms(&[Permission::CdnWrite])).await;
    expect_error(
        zip(&app, &writer, json!({ "path": "pub" })).await,
        403,
        "FORBIDDEN",
    )
    .await;
}
