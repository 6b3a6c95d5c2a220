#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Deletes and `Idempotency-Key` replays and conflicts.

use super::*;

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
