#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `POST /v1/objects/move`: rows move, bytes stay; atomic per object; folders in batches.

use super::*;

fn mv(app: &TestApp, key: &str, body: Value) -> reqwest::RequestBuilder {
    app.post("/v1/objects/move", key).json(&body)
}

#[tokio::test]
async fn an_object_is_renamed_without_copying_and_every_instance_sees_it() {
    let app = spawn().await;
    let second = app.second_cdn();
    let on_second = |key: &str| format!("{second}/cdn/test-org/{key}");
    assert_eq!(
        app.upload(&app.dev_key, "a.txt", b"hello".to_vec(), Some("old"))
            .await
            .status(),
        200
    );
    let before = app
        .get("/v1/objects/details?path=old/a.txt", &app.dev_key)
        .json_body()
        .await;
    // the second instance has the old key's row and the new key's absence cached
    assert_eq!(
        app.client.get(on_second("old/a.txt")).sent_status().await,
        200
    );
    assert_eq!(
        app.client.get(on_second("new/b.txt")).sent_status().await,
        404
    );
    let locations = app.stored_locations().await;

    let body = mv(
        &app,
        &app.dev_key,
        json!({ "from": "old/a.txt", "to": "new/b.txt" }),
    )
    .json_body()
    .await;
    assert_eq!(body["success"], true, "{body}");
    assert_eq!(
        (body["moved"].as_u64(), body["done"].as_bool()),
        (Some(1), Some(true))
    );
    assert_eq!(
        app.stored_locations().await,
        locations,
        "no byte was copied or removed"
    );
    let res = app.client.get(on_second("new/b.txt")).send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.text().await.unwrap(), "hello");
    assert_eq!(
        app.client.get(on_second("old/a.txt")).sent_status().await,
        404
    );
    let after = app
        .get("/v1/objects/details?path=new/b.txt", &app.dev_key)
        .json_body()
        .await;
    for field in ["etag", "size", "contentType", "createdAt", "metadata"] {
        assert_eq!(after["object"][field], before["object"][field], "{field}");
    }
    mv(
        &app,
        &app.dev_key,
        json!({ "from": "old/a.txt", "to": "x.txt" }),
    )
    .refused(404, "NOT_FOUND")
    .await;
}

#[tokio::test]
async fn a_taken_destination_is_a_conflict_unless_replace_is_sent() {
    let app = spawn().await;
    assert_eq!(
        app.upload(&app.dev_key, "a.txt", b"a".to_vec(), None)
            .await
            .status(),
        200
    );
    assert_eq!(
        app.upload(&app.dev_key, "b.txt", b"b".to_vec(), None)
            .await
            .status(),
        200
    );
    let err = mv(
        &app,
        &app.dev_key,
        json!({ "from": "a.txt", "to": "b.txt" }),
    )
    .refused(409, "CONFLICT")
    .await;
    assert!(
        err["error"]["message"]
            .as_str()
            .unwrap()
            .contains("replace"),
        "{err}"
    );
    assert_eq!(app.list_keys(&app.dev_key, None).await, ["a.txt", "b.txt"]);
    let body = mv(
        &app,
        &app.dev_key,
        json!({ "from": "a.txt", "to": "b.txt", "replace": true }),
    )
    .json_body()
    .await;
    assert_eq!(body["moved"], 1);
    assert_eq!(app.list_keys(&app.dev_key, None).await, ["b.txt"]);
    let res = app
        .client
        .get(format!("{}/cdn/test-org/b.txt", app.cdn))
        .send()
        .await
        .unwrap();
    assert_eq!(res.text().await.unwrap(), "a");
    assert_eq!(
        app.settle_locations(1).await.len(),
        1,
        "the replaced bytes are removed"
    );
}

#[tokio::test]
async fn moves_check_both_ends_against_the_keys_paths() {
    let app = spawn().await;
    assert_eq!(
        app.upload(&app.dev_key, "a.txt", b"a".to_vec(), Some("pub"))
            .await
            .status(),
        200
    );
    let scoped = app
        .key(KeySpec {
            allow: vec!["pub".into()],
            deny: vec!["pub/secret".into()],
            ..KeySpec::perms(&[Permission::CdnWrite, Permission::CdnDelete])
        })
        .await;
    for to in ["priv/a.txt", "pub/secret/a.txt"] {
        mv(&app, &scoped, json!({ "from": "pub/a.txt", "to": to }))
            .refused(403, "PATH_NOT_ALLOWED")
            .await;
    }
    mv(
        &app,
        &scoped,
        json!({ "from": "pub", "to": "elsewhere", "folder": true }),
    )
    .refused(403, "PATH_NOT_ALLOWED")
    .await;
    let writer = app.key(KeySpec::perms(&[Permission::CdnWrite])).await;
    mv(
        &app,
        &writer,
        json!({ "from": "pub/a.txt", "to": "pub/b.txt" }),
    )
    .refused(403, "FORBIDDEN")
    .await;
    assert_eq!(
        app.list_keys(&app.dev_key, None).await,
        ["pub/a.txt"],
        "nothing moved"
    );
    let ok = mv(
        &app,
        &scoped,
        json!({ "from": "pub/a.txt", "to": "pub/b.txt" }),
    )
    .json_body()
    .await;
    assert_eq!(ok["to"], "pub/b.txt");
    mv(
        &app,
        &app.dev_key,
        json!({ "from": "pub", "to": "pub/inner", "folder": true }),
    )
    .refused(400, "INVALID_PATH")
    .await;
    mv(
        &app,
        &app.dev_key,
        json!({ "from": "", "to": "x", "folder": true }),
    )
    .refused(400, "INVALID_PATH")
    .await;
    mv(&app, &app.dev_key, json!({ "from": "../a", "to": "x" }))
        .refused(400, "INVALID_PATH")
        .await;
}

#[tokio::test]
async fn a_folder_moves_whole_and_reports_what_it_could_not_move() {
    let app = spawn().await;
    for (folder, name) in [
        ("old", "a.txt"),
        ("old/deep/er", "b.txt"),
        ("", "old"),
        ("new", "a.txt"),
    ] {
        let folder = (!folder.is_empty()).then_some(folder);
        assert_eq!(
            app.upload(&app.dev_key, name, b"x".to_vec(), folder)
                .await
                .status(),
            200
        );
    }
    let first = mv(
        &app,
        &app.dev_key,
        json!({ "from": "old", "to": "new", "folder": true }),
    )
    .json_body()
    .await;
    assert_eq!(first["moved"], 1, "{first}");
    assert_eq!(
        first["conflicts"],
        json!([{ "from": "old/a.txt", "to": "new/a.txt" }])
    );
    assert_eq!(first["done"], true, "only a conflict is left: {first}");
    assert_eq!(
        app.list_keys(&app.dev_key, None).await,
        ["new/a.txt", "new/deep/er/b.txt", "old", "old/a.txt"],
        "the object named like the folder is not inside it"
    );
    let second = mv(
        &app,
        &app.dev_key,
        json!({ "from": "old", "to": "new", "folder": true, "replace": true }),
    )
    .json_body()
    .await;
    assert_eq!(
        (second["moved"].as_u64(), second["done"].as_bool()),
        (Some(1), Some(true))
    );
    assert_eq!(
        app.list_keys(&app.dev_key, None).await,
        ["new/a.txt", "new/deep/er/b.txt", "old"]
    );
    assert_eq!(app.settle_locations(3).await.len(), 3, "no orphan bytes");
}

/// A move to a key and an upload to that same key race: whichever commits first, the other
/// either replaces it (the upload) or is refused (the move), and nothing is lost or left behind.
#[tokio::test]
async fn a_move_racing_an_upload_to_its_destination_keeps_one_object_and_no_orphans() {
    let app = spawn().await;
    for round in 0..8 {
        let from = format!("race/src-{round}.txt");
        let to = format!("race/dst-{round}.txt");
        let res = app
            .upload(
                &app.dev_key,
                &format!("src-{round}.txt"),
                b"moved".to_vec(),
                Some("race"),
            )
            .await;
        assert_eq!(res.status(), 200);
        let moving = mv(&app, &app.dev_key, json!({ "from": from, "to": to })).send();
        let dst_name = format!("dst-{round}.txt");
        let uploading = app.upload(&app.dev_key, &dst_name, b"uploaded".to_vec(), Some("race"));
        let (moved, uploaded) = tokio::join!(moving, uploading);
        let moved = moved.unwrap().status().as_u16();
        assert_eq!(uploaded.status(), 200);
        assert!(moved == 200 || moved == 409, "round {round}: {moved}");
        let keys = app.list_keys(&app.dev_key, Some("race")).await;
        assert!(keys.contains(&to), "round {round}: {keys:?}");
        assert_eq!(
            keys.contains(&from),
            moved == 409,
            "round {round}: {keys:?}"
        );
    }
    let live = app.list_keys(&app.dev_key, Some("race")).await.len();
    assert_eq!(
        app.settle_locations(live).await.len(),
        live,
        "no orphan bytes"
    );
}

/// More conflicts than a batch holds: before, every call answered `moved: 0`, the same 1,000
/// conflicts and `done: false`, since each batch restarted at the folder's first key.
#[tokio::test]
async fn a_folder_move_gets_past_more_conflicts_than_a_batch_and_ends() {
    let app = spawn().await;
    let row = |key: String| cdn_core::ObjectRecord {
        storage_path: format!("o/{}/{key}", app.org.id),
        key: cdn_core::ObjectKey::from(key),
        size: 1,
        content_type: Some("text/plain".into()),
        etag: "e".into(),
        metadata: Default::default(),
        last_modified: chrono::Utc::now(),
        created_at: chrono::Utc::now(),
        keep: false,
    };
    let records = &app.cdn_state.stores.records;
    for i in 0..1001 {
        for folder in ["r/src", "r/dst"] {
            records
                .upsert(&app.org.id, &row(format!("{folder}/c{i:04}")))
                .await
                .unwrap();
        }
    }
    records
        .upsert(&app.org.id, &row("r/src/z.txt".into()))
        .await
        .unwrap();
    let body = json!({ "from": "r/src", "to": "r/dst", "folder": true });
    let first = mv(&app, &app.dev_key, body.clone()).json_body().await;
    assert_eq!(first["moved"], 1, "{}", first["moved"]);
    assert_eq!(first["done"], true, "only conflicts are left");
    let conflicts = first["conflicts"].as_array().unwrap();
    assert_eq!(conflicts.len(), 1000, "at most 1000 named");
    assert_eq!(
        conflicts[0],
        json!({ "from": "r/src/c0000", "to": "r/dst/c0000" })
    );
    assert!(records
        .get(&app.org.id, &cdn_core::ObjectKey::new("r/dst/z.txt"))
        .await
        .unwrap()
        .is_some());
    // calling again changes nothing and still ends
    let again = mv(&app, &app.dev_key, body).json_body().await;
    assert_eq!(
        (again["moved"].as_u64(), again["done"].as_bool()),
        (Some(0), Some(true))
    );
    // with more movable objects than a batch: not done until they have all moved
    for i in 0..1001 {
        records
            .upsert(&app.org.id, &row(format!("r/more/m{i:04}")))
            .await
            .unwrap();
    }
    let body = json!({ "from": "r/more", "to": "r/dst", "folder": true });
    let first = mv(&app, &app.dev_key, body.clone()).json_body().await;
    assert_eq!(
        (first["moved"].as_u64(), first["done"].as_bool()),
        (Some(1000), Some(false))
    );
    let second = mv(&app, &app.dev_key, body).json_body().await;
    assert_eq!(
        (second["moved"].as_u64(), second["done"].as_bool()),
        (Some(1), Some(true))
    );
}
