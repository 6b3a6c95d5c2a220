//! Create-only uploads: `If-None-Match: *` (decisions.md, "Create-only uploads").

use super::*;

fn text_form(name: &str, bytes: &[u8]) -> Form {
    Form::new()
        .part("file", file_part(bytes.to_vec(), name))
        .text("path", "shots")
}

async fn etag_of(app: &TestApp, path: &str) -> String {
    let details: Value = app
        .get(&format!("/v1/objects/details?path={path}"), &app.dev_key)
        .json_body()
        .await;
    details["object"]["etag"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn create_only_uploads_keep_an_existing_object_and_store_nothing() {
    let app = spawn().await;
    let first = app
        .upload(&app.dev_key, "a.txt", b"first".to_vec(), Some("shots"))
        .await;
    assert_eq!(first.status(), 200);
    let stored = etag_of(&app, "shots/a.txt").await;
    let refused = app
        .post("/v1/objects", &app.dev_key)
        .header("If-None-Match", "*")
        .multipart(text_form("a.txt", b"second"))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 412);
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["success"], false);
    assert_eq!(body["error"]["code"], "PRECONDITION_FAILED");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("shots/a.txt"),
        "{body}"
    );
    assert_eq!(etag_of(&app, "shots/a.txt").await, stored, "untouched");
    // the refused upload's bytes are not left behind
    assert_eq!(app.settle_locations(1).await.len(), 1);

    // a free key is created as usual
    let created = app
        .post("/v1/objects", &app.dev_key)
        .header("If-None-Match", "*")
        .multipart(text_form("b.txt", b"new"))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 200);

    // Base64 honours it the same way
    use base64::Engine;
    let data = base64::engine::general_purpose::STANDARD.encode(b"third");
    let b64 = |name: &str| {
        app.post("/v1/objects/base64", &app.dev_key)
            .header("If-None-Match", "*")
            .json(&json!({ "data": data, "filename": name, "path": "shots" }))
            .send()
    };
    assert_eq!(b64("a.txt").await.unwrap().status(), 412);
    assert_eq!(b64("c.txt").await.unwrap().status(), 200);
    assert_eq!(etag_of(&app, "shots/a.txt").await, stored);

    // bulk: file by file
    let form = Form::new()
        .part("files[0]", file_part(b"x".to_vec(), "a.txt"))
        .part("files[1]", file_part(b"y".to_vec(), "d.txt"))
        .text(
            "payload",
            json!({ "items": [
                { "fieldName": "files[0]", "path": "shots" },
                { "fieldName": "files[1]", "path": "shots" },
            ]})
            .to_string(),
        );
    let bulk: Value = app
        .post("/v1/objects/bulk", &app.dev_key)
        .header("If-None-Match", "*")
        .multipart(form)
        .json_body()
        .await;
    assert_eq!(bulk["results"][0]["success"], false, "{bulk}");
    assert_eq!(bulk["results"][0]["error"], "PRECONDITION_FAILED");
    assert_eq!(bulk["results"][1]["success"], true, "{bulk}");

    // an upload URL
    let url = app.upload_url("?path=shots&maxFiles=2").await;
    let through = |name: &'static str| {
        app.client
            .post(url["uploadUrl"].as_str().unwrap())
            .header("If-None-Match", "*")
            .multipart(Form::new().part("file", file_part(b"z".to_vec(), name)))
            .send()
    };
    assert_eq!(through("a.txt").await.unwrap().status(), 412);
    assert_eq!(through("e.txt").await.unwrap().status(), 200);

    assert_eq!(etag_of(&app, "shots/a.txt").await, stored);
    assert_eq!(
        app.list_keys(&app.dev_key, Some("shots")).await,
        vec![
            "shots/a.txt",
            "shots/b.txt",
            "shots/c.txt",
            "shots/d.txt",
            "shots/e.txt"
        ]
    );
    assert_eq!(app.settle_locations(5).await.len(), 5, "no stray bytes");
}

#[tokio::test]
async fn only_a_star_is_taken_and_the_header_is_part_of_an_idempotent_request() {
    let app = spawn().await;
    for value in ["\"abc\"", "W/\"abc\"", "*, \"abc\"", ""] {
        let res = app
            .post("/v1/objects", &app.dev_key)
            .header("If-None-Match", value)
            .multipart(text_form("x.txt", b"x"))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 400, "{value:?}");
        let body: Value = res.json().await.unwrap();
        assert_eq!(body["error"]["code"], "INVALID_REQUEST");
        assert!(body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("If-None-Match"));
    }
    // a retry of a create-only upload that succeeded is replayed, not refused by its own object
    let send = |create_only: bool| {
        let mut req = app
            .post("/v1/objects", &app.dev_key)
            .header("Idempotency-Key", "create-once");
        if create_only {
            req = req.header("If-None-Match", "*");
        }
        req.multipart(text_form("once.txt", b"once")).send()
    };
    assert_eq!(send(true).await.unwrap().status(), 200);
    let retry = send(true).await.unwrap();
    assert_eq!(retry.status(), 200);
    assert_eq!(retry.headers()["idempotent-replayed"], "true");
    // the same key without the precondition is another request
    assert_eq!(send(false).await.unwrap().status(), 409);
}

#[tokio::test]
async fn of_racing_create_only_uploads_of_one_key_exactly_one_is_stored() {
    let app = spawn().await;
    let uploads = (0..8).map(|i| {
        app.post("/v1/objects", &app.dev_key)
            .header("If-None-Match", "*")
            .multipart(text_form("race.txt", format!("writer {i}").as_bytes()))
            .send()
    });
    let answers = futures::future::join_all(uploads).await;
    let mut winners = Vec::new();
    for res in answers {
        let res = res.unwrap();
        match res.status().as_u16() {
            200 => winners.push(res.json::<Value>().await.unwrap()),
            412 => {}
            other => panic!("unexpected {other}"),
        }
    }
    assert_eq!(winners.len(), 1, "{winners:?}");
    assert_eq!(
        etag_of(&app, "shots/race.txt").await,
        winners[0]["object"]["etag"].as_str().unwrap(),
        "the stored object is the winner's"
    );
    assert_eq!(
        app.settle_locations(1).await.len(),
        1,
        "the others' bytes are gone"
    );
}
