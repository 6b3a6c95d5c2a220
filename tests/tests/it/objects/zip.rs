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

/// A file deleted while its archive is being written aborts the download (the connection is cut,
/// as for a cut log export) instead of ending it cleanly with a broken archive inside.
#[tokio::test]
async fn a_file_deleted_mid_download_aborts_the_archive() {
    let app = spawn().await;
    // larger than every buffer between the writer and this client, so the writer is still on
    // it when the next file is deleted
    let big: Vec<u8> = (0..24_000_000u32).map(|i| (i % 251) as u8).collect();
    app.put_file("f", "a.bin", big, "application/octet-stream", "{}")
        .await;
    app.put_file("f", "b.txt", b"second".to_vec(), "text/plain", "{}")
        .await;
    let res = zip(&app, &app.dev_key, json!({ "path": "f" })).await;
    assert_eq!(res.status(), 200);
    let gone = app
        .delete("/v1/objects?path=f/b.txt", &app.dev_key)
        .send()
        .await
        .unwrap();
    assert_eq!(gone.status(), 200);
    assert!(
        res.bytes().await.is_err(),
        "the download ends with an error, not as a whole archive"
    );
}

/// Downloads at once are bounded per instance (429 past that), and one whose client stops
/// reading is cut off after the stall time, which frees its place.
#[tokio::test]
async fn zip_downloads_at_once_are_bounded_and_a_stalled_one_is_cut_off() {
    let app = spawn_with(Options {
        tweak: |c| {
            c.zip_concurrency = 1;
            c.stream_stall = std::time::Duration::from_secs(1);
        },
        ..Options::default()
    })
    .await;
    let big: Vec<u8> = (0..24_000_000u32).map(|i| (i % 251) as u8).collect();
    app.put_file("f", "a.bin", big, "application/octet-stream", "{}")
        .await;
    let stalled = zip(&app, &app.dev_key, json!({ "path": "f" })).await;
    assert_eq!(stalled.status(), 200);
    let refused = zip(&app, &app.dev_key, json!({ "paths": ["f/a.bin"] })).await;
    assert_eq!(refused.headers()["retry-after"], "5");
    expect_error(refused, 429, "RATE_LIMITED").await;
    // the stalled download is cut off after a second without reading, and its place is free
    let mut freed = false;
    for _ in 0..100 {
        let again = app
            .post("/v1/objects/zip", &app.dev_key)
            .json(&json!({ "paths": ["f/a.bin"] }))
            .send()
            .await
            .unwrap();
        if again.status() == 200 {
            freed = true;
            assert!(again.bytes().await.unwrap().len() > 24_000_000);
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(
        freed,
        "the stalled download still holds its place after 10 s"
    );
    assert!(
        stalled.bytes().await.is_err(),
        "the stalled one was aborted"
    );
}

/// A key that looks like a Windows path does not become an entry that extracts outside its
/// folder.
#[tokio::test]
async fn entry_names_stay_inside_the_folder_they_are_extracted_to() {
    let app = spawn().await;
    app.put_file("C:/Windows", "win.ini", b"x".to_vec(), "text/plain", "{}")
        .await;
    let res = zip(
        &app,
        &app.dev_key,
        json!({ "paths": ["C:/Windows/win.ini"] }),
    )
    .await;
    assert_eq!(res.status(), 200);
    let files = unzip(res.bytes().await.unwrap().to_vec()).await;
    assert_eq!(files[0].0, "C_/Windows/win.ini");
}
