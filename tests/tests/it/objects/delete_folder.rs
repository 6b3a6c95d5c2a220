#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `POST /v1/objects/delete-folder`: bounded batches, nothing outside the folder, no orphan bytes.

use super::*;

fn delete_folder(app: &TestApp, key: &str, path: &str) -> reqwest::RequestBuilder {
    app.post("/v1/objects/delete-folder", key)
        .json(&json!({ "path": path }))
}

#[tokio::test]
async fn a_folder_is_deleted_with_its_bytes_and_nothing_beside_it() {
    let app = spawn().await;
    for (folder, name) in [
        ("trash", "a.png"),
        ("trash", "b.png"),
        ("trash/2026/deep", "c.png"),
        ("trash-x", "d.png"),
        ("", "trash"),
    ] {
        let folder = (!folder.is_empty()).then_some(folder);
        assert_eq!(
            app.upload(&app.dev_key, name, png_bytes(), folder)
                .await
                .status(),
            200
        );
    }
    assert_eq!(app.stored_locations().await.len(), 5);
    let body = delete_folder(&app, &app.dev_key, "trash/")
        .json_body()
        .await;
    assert_eq!(body["success"], true, "{body}");
    assert_eq!(body["path"], "trash");
    assert_eq!(body["deleted"], 3);
    assert_eq!(body["done"], true);
    assert_eq!(
        app.list_keys(&app.dev_key, None).await,
        ["trash", "trash-x/d.png"],
        "a sibling with the same prefix and the object named like the folder stay"
    );
    assert_eq!(app.stored_locations().await.len(), 2, "no orphan bytes");
    let again = delete_folder(&app, &app.dev_key, "trash").json_body().await;
    assert_eq!(
        (again["deleted"].as_u64(), again["done"].as_bool()),
        (Some(0), Some(true))
    );
}

#[tokio::test]
async fn a_large_folder_goes_in_batches_and_a_cut_off_delete_is_finished_by_a_retry() {
    use diesel_async::SimpleAsyncConnection;
    let app = spawn().await;
    // 1001 rows inside and one named like the folder; their bytes were never stored (removing
    // them is a logged no-op)
    let mut conn = app.db.conn().await.unwrap();
    conn.batch_execute(&format!(
        "INSERT INTO objects (org_id, key, size, etag, storage_path) \
         SELECT '{0}', 'big/' || i || '.png', 1, 'e', 'o/none/' || i FROM generate_series(1, 1001) i; \
         INSERT INTO objects (org_id, key, size, etag, storage_path) \
         VALUES ('{0}', 'big', 1, 'e', 'o/none/big')",
        app.org.id
    ))
    .await
    .unwrap();
    let first = delete_folder(&app, &app.dev_key, "big")
        .header("Idempotency-Key", "batch-1")
        .json_body()
        .await;
    assert_eq!(
        (first["deleted"].as_u64(), first["done"].as_bool()),
        (Some(1000), Some(false))
    );
    // the same request again is the same answer, nothing more deleted
    let replay = delete_folder(&app, &app.dev_key, "big")
        .header("Idempotency-Key", "batch-1")
        .json_body()
        .await;
    assert_eq!(replay, first);
    assert_eq!(
        app.count(&format!(
            "SELECT count(*) AS n FROM objects WHERE org_id = '{}'",
            app.org.id
        ))
        .await,
        2,
        "one left inside, and the object named like the folder"
    );
    let rest = delete_folder(&app, &app.dev_key, "big").json_body().await;
    assert_eq!(
        (rest["deleted"].as_u64(), rest["done"].as_bool()),
        (Some(1), Some(true))
    );
}

#[tokio::test]
async fn a_folder_delete_needs_the_whole_folder_in_scope() {
    let app = spawn().await;
    for folder in ["pub", "pub/secret", "pub/2026", "priv"] {
        assert_eq!(
            app.upload(&app.dev_key, "a.png", png_bytes(), Some(folder))
                .await
                .status(),
            200
        );
    }
    let key = app
        .key(KeySpec {
            allow: vec!["pub".into()],
            deny: vec!["pub/secret".into()],
            ..KeySpec::perms(&[Permission::CdnDelete, Permission::CdnRead])
        })
        .await;
    let err = delete_folder(&app, &key, "pub")
        .refused(403, "PATH_NOT_ALLOWED")
        .await;
    assert!(
        err["error"]["message"]
            .as_str()
            .unwrap()
            .contains("pub/secret"),
        "{err}"
    );
    delete_folder(&app, &key, "priv")
        .refused(403, "PATH_NOT_ALLOWED")
        .await;
    delete_folder(&app, &key, "pub/secret")
        .refused(403, "PATH_NOT_ALLOWED")
        .await;
    assert_eq!(
        app.list_keys(&app.dev_key, None).await.len(),
        4,
        "nothing was deleted"
    );
    let ok = delete_folder(&app, &key, "pub/2026").json_body().await;
    assert_eq!(ok["deleted"], 1);
    delete_folder(&app, &app.dev_key, "")
        .refused(400, "INVALID_PATH")
        .await;
    delete_folder(&app, &app.dev_key, "../x")
        .refused(400, "INVALID_PATH")
        .await;
    let reader = app.key(KeySpec::perms(&[Permission::CdnRead])).await;
    delete_folder(&app, &reader, "pub")
        .refused(403, "FORBIDDEN")
        .await;
}
