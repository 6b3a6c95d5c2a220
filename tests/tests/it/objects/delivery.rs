#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Public delivery: streaming, ranges, conditionals, HEAD, resumed downloads; gc.

use super::*;

/// Objects above the in-process cache's size are streamed from the store in chunks; whole
/// bodies, ranges across a chunk boundary and HEAD must match the bytes exactly.
#[tokio::test]
async fn large_objects_stream_whole_and_in_ranges() {
    let app = spawn().await;
    let chunk = stow_objects::READ_CHUNK_BYTES;
    let size = api_http::state::SMALL_OBJECT_BYTES as usize + 2 * chunk + 3;
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
