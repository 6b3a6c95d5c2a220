#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `POST /v1/objects/purge`, as the FiveMesh SDK sends it (pinned in the decisions).

use super::*;

fn purge(app: &TestApp, key: &str, paths: Value) -> reqwest::RequestBuilder {
    app.post("/v1/objects/purge", key)
        .json(&json!({ "paths": paths }))
}

#[tokio::test]
async fn purge_answers_with_the_normalized_keys_and_the_existing_count() {
    let app = spawn().await;
    assert_eq!(
        app.upload(&app.dev_key, "a.png", png_bytes(), Some("shots"))
            .await
            .status(),
        200
    );
    let body = purge(
        &app,
        &app.dev_key,
        json!(["shots/a.png", "shots/e\u{301}.png", "shots/a.png"]),
    )
    .json_body()
    .await;
    assert_eq!(body["success"], true, "{body}");
    assert_eq!(
        body["paths"],
        json!(["shots/a.png", "shots/\u{e9}.png", "shots/a.png"])
    );
    assert_eq!(body["purged"], 1, "distinct keys that name an object");
    assert!(body["requestId"].as_str().unwrap().starts_with("req_"));
}

#[tokio::test]
async fn purge_needs_its_permission_and_every_path_in_scope() {
    let app = spawn().await;
    let no_purge = app
        .key(KeySpec::perms(&[
            Permission::CdnRead,
            Permission::CdnWrite,
            Permission::CdnDelete,
        ]))
        .await;
    purge(&app, &no_purge, json!(["a.png"]))
        .refused(403, "FORBIDDEN")
        .await;
    let scoped = app
        .key(KeySpec {
            allow: vec!["pub".into()],
            deny: vec!["pub/secret".into()],
            ..KeySpec::perms(&[Permission::CdnPurge])
        })
        .await;
    assert_eq!(
        purge(&app, &scoped, json!(["pub/a.png"]))
            .sent_status()
            .await,
        200
    );
    for outside in [
        json!(["pub/a.png", "priv/b.png"]),
        json!(["pub/secret/c.png"]),
    ] {
        let err = purge(&app, &scoped, outside)
            .refused(403, "PATH_NOT_ALLOWED")
            .await;
        assert!(
            err["error"]["message"]
                .as_str()
                .unwrap()
                .contains("nothing was purged"),
            "{err}"
        );
    }
    purge(&app, &app.dev_key, json!(["a.png"]))
        .header("Authorization", "Bearer nope")
        .refused(401, "UNAUTHORIZED")
        .await;
}

#[tokio::test]
async fn purge_refuses_what_is_not_a_list_of_keys() {
    let app = spawn().await;
    purge(&app, &app.dev_key, json!([]))
        .refused(400, "INVALID_REQUEST")
        .await;
    app.post("/v1/objects/purge", &app.dev_key)
        .json(&json!({}))
        .refused(400, "INVALID_REQUEST")
        .await;
    purge(&app, &app.dev_key, json!(["ok.png", "../up.png"]))
        .refused(400, "INVALID_PATH")
        .await;
    let max = app.config.max_bulk_delete_paths;
    let many = |n: usize| json!((0..n).map(|i| format!("k/{i}.png")).collect::<Vec<_>>());
    assert_eq!(
        purge(&app, &app.dev_key, many(max - 1)).sent_status().await,
        200
    );
    assert_eq!(
        purge(&app, &app.dev_key, many(max)).sent_status().await,
        200
    );
    purge(&app, &app.dev_key, many(max + 1))
        .refused(400, "TOO_MANY_FILES")
        .await;
}

#[tokio::test]
async fn purge_is_idempotent_by_key() {
    let app = spawn().await;
    let first = purge(&app, &app.dev_key, json!(["a.png"]))
        .header("Idempotency-Key", "purge-1")
        .send()
        .await
        .unwrap();
    assert_eq!(first.status(), 200);
    let first: Value = first.json().await.unwrap();
    let again = purge(&app, &app.dev_key, json!(["a.png"]))
        .header("Idempotency-Key", "purge-1")
        .send()
        .await
        .unwrap();
    assert_eq!(again.headers()["idempotent-replayed"], "true");
    assert_eq!(again.json::<Value>().await.unwrap(), first);
    purge(&app, &app.dev_key, json!(["b.png"]))
        .header("Idempotency-Key", "purge-1")
        .refused(409, "CONFLICT")
        .await;
}

/// Another instance has the key's old row (or its absence) cached when the object changes; once
/// the purge has answered, that instance serves the new state.
#[tokio::test]
async fn after_a_purge_no_instance_serves_a_cached_older_state() {
    let app = spawn().await;
    let second = app.second_cdn();
    let on_second = |key: &str| format!("{second}/cdn/test-org/{key}");

    let v1 = app
        .upload(&app.dev_key, "p.txt", b"version 1".to_vec(), None)
        .await;
    assert_eq!(v1.status(), 200);
    let cached = app.client.get(on_second("p.txt")).send().await.unwrap();
    assert_eq!(cached.text().await.unwrap(), "version 1");
    let missing = app.client.get(on_second("late.txt")).sent_status().await;
    assert_eq!(missing, 404);

    let v2 = app
        .upload(&app.dev_key, "p.txt", b"version 2".to_vec(), None)
        .await;
    assert_eq!(v2.status(), 200);
    assert_eq!(
        app.upload(&app.dev_key, "late.txt", b"here".to_vec(), None)
            .await
            .status(),
        200
    );
    let body = purge(&app, &app.dev_key, json!(["p.txt", "late.txt"]))
        .json_body()
        .await;
    assert_eq!(body["purged"], 2, "{body}");

    let res = app.client.get(on_second("p.txt")).send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.text().await.unwrap(), "version 2");
    let res = app.client.get(on_second("late.txt")).send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.text().await.unwrap(), "here");
}
