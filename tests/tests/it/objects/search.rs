#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `POST /v1/objects/search`: a text anywhere in the path, metadata values (a player's
//! screenshots), the three sorts with tokens bound to their search, a key's paths, and errors
//! that name the field.

use super::*;

/// Uploads `size` bytes as `name` under `path` with `metadata` (JSON text).
async fn put(app: &TestApp, path: &str, name: &str, size: usize, metadata: &str) {
    app.put_file(
        path,
        name,
        vec![b'x'; size],
        "application/octet-stream",
        metadata,
    )
    .await;
}

async fn search(app: &TestApp, key: &str, body: Value) -> reqwest::Response {
    app.post("/v1/objects/search", key)
        .json(&body)
        .send()
        .await
        .unwrap()
}

async fn found(app: &TestApp, body: Value) -> (Vec<String>, Option<String>) {
    let res = search(app, &app.dev_key, body).await;
    assert_eq!(res.status(), 200);
    let page: Value = res.json().await.unwrap();
    let keys = page["objects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["key"].as_str().unwrap().to_owned())
        .collect();
    (keys, page["continuationToken"].as_str().map(str::to_owned))
}

async fn seed(app: &TestApp) {
    // uploaded one after another: last modified in this order
    put(
        app,
        "shots/2026",
        "jay_1.png",
        30,
        r#"{"license":"license:abc","discord":"discord:42"}"#,
    )
    .await;
    put(app, "shots", "Mia.png", 10, r#"{"license":"license:def"}"#).await;
    put(app, "shots", "JAY_2.png", 20, r#"{"player":"license:abc"}"#).await;
    put(app, "pub", "jay.txt", 5, "{}").await;
}

#[tokio::test]
async fn objects_are_found_by_text_anywhere_and_by_metadata_values() {
    let app = spawn().await;
    seed(&app).await;
    let (keys, token) = found(&app, json!({ "contains": "jay" })).await;
    assert_eq!(
        keys,
        ["pub/jay.txt", "shots/2026/jay_1.png", "shots/JAY_2.png"]
    );
    assert!(token.is_none());
    let (keys, _) = found(&app, json!({ "contains": "JAY", "path": "shots" })).await;
    assert_eq!(keys, ["shots/2026/jay_1.png", "shots/JAY_2.png"]);
    // a player's screenshots: their identifiers as metadata values, newest first
    let (keys, _) = found(
        &app,
        json!({ "metadataValues": ["license:abc", "discord:42"], "sort": "lastModified" }),
    )
    .await;
    assert_eq!(keys, ["shots/JAY_2.png", "shots/2026/jay_1.png"]);
    // each object as the listing shows it
    let res = search(
        &app,
        &app.dev_key,
        json!({ "metadataValues": ["license:def"] }),
    )
    .await;
    let page: Value = res.json().await.unwrap();
    assert_eq!(
        page["objects"][0]["metadata"],
        json!({ "license": "license:def" })
    );
    assert_eq!(page["objects"][0]["size"], 10);
    assert!(page["objects"][0]["publicUrl"]
        .as_str()
        .unwrap()
        .ends_with("/cdn/test-org/shots/Mia.png"));
}

#[tokio::test]
async fn pages_follow_the_sort_and_tokens_are_bound_to_their_search() {
    let app = spawn().await;
    seed(&app).await;
    for (sort, order, want) in [
        (
            "size",
            "desc",
            [
                "shots/2026/jay_1.png",
                "shots/JAY_2.png",
                "shots/Mia.png",
                "pub/jay.txt",
            ],
        ),
        (
            "size",
            "asc",
            [
                "pub/jay.txt",
                "shots/Mia.png",
                "shots/JAY_2.png",
                "shots/2026/jay_1.png",
            ],
        ),
        (
            "lastModified",
            "desc",
            [
                "pub/jay.txt",
                "shots/JAY_2.png",
                "shots/Mia.png",
                "shots/2026/jay_1.png",
            ],
        ),
        (
            "key",
            "asc",
            [
                "pub/jay.txt",
                "shots/2026/jay_1.png",
                "shots/JAY_2.png",
                "shots/Mia.png",
            ],
        ),
    ] {
        let body = json!({ "sort": sort, "order": order, "limit": 1 });
        let (mut walked, mut token) = found(&app, body.clone()).await;
        let first = token.clone();
        while let Some(t) = token {
            let (keys, next) = found(&app, with(&body, json!({ "continuationToken": t }))).await;
            walked.extend(keys);
            token = next;
        }
        assert_eq!(walked, want, "{sort} {order}");
        // the token of this search is refused by another
        let other = with(
            &body,
            json!({ "order": if order == "asc" { "desc" } else { "asc" }, "continuationToken": first.unwrap() }),
        );
        let res = search(&app, &app.dev_key, other).await;
        let err = expect_error(res, 400, "INVALID_REQUEST").await;
        assert!(err["error"]["message"]
            .as_str()
            .unwrap()
            .contains("different search"));
    }
}

fn with(base: &Value, extra: Value) -> Value {
    let mut v = base.clone();
    for (k, x) in extra.as_object().unwrap() {
        v[k] = x.clone();
    }
    v
}

#[tokio::test]
async fn a_keys_paths_and_bad_fields_are_refused_by_name() {
    let app = spawn().await;
    seed(&app).await;
    let key = app
        .key(KeySpec {
            allow: vec!["shots".into()],
            deny: vec!["shots/2026".into()],
            ..KeySpec::perms(&[Permission::CdnRead])
        })
        .await;
    let res = search(&app, &key, json!({ "path": "shots", "contains": "jay" })).await;
    assert_eq!(res.status(), 200);
    let page: Value = res.json().await.unwrap();
    assert_eq!(
        page["objects"].as_array().unwrap().len(),
        1,
        "the denied folder is left out: {page}"
    );
    assert_eq!(page["objects"][0]["key"], "shots/JAY_2.png");
    for body in [json!({ "contains": "jay" }), json!({ "path": "pub" })] {
        expect_error(search(&app, &key, body).await, 403, "PATH_NOT_ALLOWED").await;
    }
    let writer = app.key(KeySpec::perms(&[Permission::CdnWrite])).await;
    expect_error(search(&app, &writer, json!({})).await, 403, "FORBIDDEN").await;
    for (body, code, says) in [
        (
            json!({ "contains": "" }),
            "INVALID_REQUEST",
            "`contains` must be 1 to 256",
        ),
        (
            json!({ "metadataValues": [] }),
            "INVALID_REQUEST",
            "`metadataValues` must hold 1 to 20",
        ),
        (
            json!({ "sort": "name" }),
            "INVALID_REQUEST",
            "`sort` must be",
        ),
        (
            json!({ "limit": 1001 }),
            "INVALID_REQUEST",
            "`limit` must be 1 to 1000",
        ),
        (json!({ "path": "../x" }), "INVALID_PATH", "`path`"),
        (json!({ "filter": "jay" }), "INVALID_REQUEST", "filter"),
    ] {
        let err = expect_error(search(&app, &app.dev_key, body.clone()).await, 400, code).await;
        assert!(
            err["error"]["message"].as_str().unwrap().contains(says),
            "{body}: {err}"
        );
    }
}
