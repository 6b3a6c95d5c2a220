#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The folder view of `GET /v1/objects` (`delimiter=/`).

use super::*;

async fn seed(app: &TestApp) {
    for (folder, name) in [
        ("", "top.png"),
        ("pub", "a.png"),
        ("pub", "b.png"),
        ("pub/2026", "c.png"),
        ("pub/2026/deep", "d.png"),
        ("pub/secret", "e.png"),
        ("pub-x", "f.png"),
    ] {
        let folder = (!folder.is_empty()).then_some(folder);
        let res = app.upload(&app.dev_key, name, png_bytes(), folder).await;
        assert_eq!(res.status(), 200, "{folder:?}/{name}");
    }
}

fn names(body: &Value) -> (Vec<String>, Vec<String>) {
    let objects = body["objects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["key"].as_str().unwrap().to_owned())
        .collect();
    let folders = body["folders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_owned())
        .collect();
    (objects, folders)
}

#[tokio::test]
async fn a_folder_view_lists_direct_objects_and_each_subfolder_once() {
    let app = spawn().await;
    seed(&app).await;
    let root = app
        .get("/v1/objects?delimiter=/", &app.dev_key)
        .json_body()
        .await;
    assert_eq!(
        names(&root),
        (vec!["top.png".into()], vec!["pub-x".into(), "pub".into()]),
        "byte order of sort keys: a folder sorts as its path and a `/` (`pub-x/` < `pub/`)"
    );
    let public = app
        .get("/v1/objects?path=pub&delimiter=/", &app.dev_key)
        .json_body()
        .await;
    assert_eq!(
        names(&public),
        (
            vec!["pub/a.png".into(), "pub/b.png".into()],
            vec!["pub/2026".into(), "pub/secret".into()]
        )
    );
    assert_eq!(
        public["folders"][0],
        json!({ "path": "pub/2026", "name": "2026" })
    );
    assert_eq!(public["objects"][0]["contentType"], "image/png");
    // without a delimiter nothing changes: every object below, no `folders`
    let recursive = app
        .get("/v1/objects?path=pub", &app.dev_key)
        .json_body()
        .await;
    assert_eq!(recursive["objects"].as_array().unwrap().len(), 5);
    assert!(recursive.get("folders").is_none(), "{recursive}");
    app.get("/v1/objects?delimiter=%2C", &app.dev_key)
        .refused(400, "INVALID_REQUEST")
        .await;
}

#[tokio::test]
async fn folder_pages_cross_folder_boundaries_with_their_own_tokens() {
    let app = spawn().await;
    seed(&app).await;
    let mut seen = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let mut url = "/v1/objects?path=pub&delimiter=/&limit=1".to_owned();
        if let Some(t) = &token {
            url.push_str(&format!("&continuationToken={}", urlencode(t)));
        }
        let page = app.get(&url, &app.dev_key).json_body().await;
        let (objects, folders) = names(&page);
        assert_eq!(objects.len() + folders.len(), 1, "{page}");
        seen.extend(objects.into_iter().chain(folders));
        match page["continuationToken"].as_str() {
            Some(t) => token = Some(t.to_owned()),
            None => break,
        }
    }
    assert_eq!(seen, ["pub/2026", "pub/a.png", "pub/b.png", "pub/secret"]);
    // a recursive listing's token does not continue a folder view, nor the other way round
    let recursive = app
        .get("/v1/objects?path=pub&limit=1", &app.dev_key)
        .json_body()
        .await;
    let t = urlencode(recursive["continuationToken"].as_str().unwrap());
    app.get(
        &format!("/v1/objects?path=pub&delimiter=/&continuationToken={t}"),
        &app.dev_key,
    )
    .refused(400, "INVALID_REQUEST")
    .await;
}

#[tokio::test]
async fn a_keys_paths_apply_to_folders() {
    let app = spawn().await;
    seed(&app).await;
    let key = app
        .key(KeySpec {
            allow: vec!["pub".into()],
            deny: vec!["pub/secret".into()],
            ..KeySpec::perms(&[Permission::CdnRead])
        })
        .await;
    let public = app
        .get("/v1/objects?path=pub&delimiter=/", &key)
        .json_body()
        .await;
    assert_eq!(
        names(&public),
        (
            vec!["pub/a.png".into(), "pub/b.png".into()],
            vec!["pub/2026".into()]
        ),
        "the denied sub-folder inside the allowed folder is not shown"
    );
    app.get("/v1/objects?delimiter=/", &key)
        .refused(403, "PATH_NOT_ALLOWED")
        .await;
    app.get("/v1/objects?path=pub/secret&delimiter=/", &key)
        .refused(403, "PATH_NOT_ALLOWED")
        .await;
    app.get("/v1/objects?path=pub-x&delimiter=/", &key)
        .refused(403, "PATH_NOT_ALLOWED")
        .await;
}
