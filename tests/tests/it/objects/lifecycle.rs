#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Lifecycle rules (`/v1/lifecycle`), the keep mark (`POST /v1/objects/keep`), the maintenance
//! that deletes expired objects with their bytes, and usage per top-level folder.

use super::*;

fn set(app: &TestApp, key: &str, path: &str, days: i64) -> reqwest::RequestBuilder {
    app.put("/v1/lifecycle", key)
        .json(&json!({ "path": path, "days": days }))
}

fn keep(app: &TestApp, key: &str, paths: &[&str], keep: bool) -> reqwest::RequestBuilder {
    app.post("/v1/objects/keep", key)
        .json(&json!({ "paths": paths, "keep": keep }))
}

/// Makes the objects at `keys` look last modified `days` ago.
async fn age(app: &TestApp, keys: &[&str], days: i64) {
    use diesel_async::SimpleAsyncConnection;
    let list = keys
        .iter()
        .map(|k| format!("'{k}'"))
        .collect::<Vec<_>>()
        .join(", ");
    let mut conn = app.db.conn().await.unwrap();
    conn.batch_execute(&format!(
        "UPDATE objects SET updated_at = now() - interval '{days} days' \
         WHERE org_id = '{}' AND key IN ({list})",
        app.org.id
    ))
    .await
    .unwrap();
    // the API host caches rows it served; the test changed them behind its back
    for k in keys {
        app.cdn_state
            .forget_row(&app.org.id, &cdn_core::ObjectKey::new(*k));
    }
}

async fn expire(app: &TestApp) -> api_http::lifecycle::ExpiryPass {
    api_http::lifecycle::expire_objects(&app.cdn_state, chrono::Utc::now()).await
}

#[tokio::test]
async fn a_rule_deletes_old_objects_with_their_bytes_and_leaves_the_rest() {
    let app = spawn().await;
    for (folder, name) in [
        ("shots", "old.png"),
        ("shots", "new.png"),
        ("shots", "kept.png"),
        ("shots/evidence", "ban.png"),
        ("mugs", "old.png"),
    ] {
        let res = app
            .upload(&app.dev_key, name, png_bytes(), Some(folder))
            .await;
        assert_eq!(res.status(), 200);
    }
    let old = [
        "shots/old.png",
        "shots/kept.png",
        "shots/evidence/ban.png",
        "mugs/old.png",
    ];
    age(&app, &old, 40).await;
    let body = set(&app, &app.dev_key, "shots/", 30).json_body().await;
    assert_eq!(body["success"], true, "{body}");
    assert_eq!(body["created"], true);
    assert_eq!(body["rule"]["path"], "shots");
    assert_eq!(body["rule"]["days"], 30);
    // a deeper rule keeps the evidence longer
    assert_eq!(
        set(&app, &app.dev_key, "shots/evidence", 365)
            .sent_status()
            .await,
        200
    );
    let marked = keep(
        &app,
        &app.dev_key,
        &["shots/kept.png", "shots/none.png"],
        true,
    )
    .json_body()
    .await;
    assert_eq!(marked["updated"], json!(["shots/kept.png"]), "{marked}");
    assert_eq!(marked["notFound"], json!(["shots/none.png"]));

    let details = app
        .get_json("/v1/objects/details?path=shots/old.png", &app.dev_key)
        .await;
    let object = &details["object"];
    assert_eq!(object["keep"], false);
    assert_eq!(object["lifecycle"]["rule"], "shots");
    assert_eq!(object["lifecycle"]["days"], 30);
    let expires =
        chrono::DateTime::parse_from_rfc3339(object["lifecycle"]["expiresAt"].as_str().unwrap())
            .unwrap();
    assert!(expires < chrono::Utc::now() - chrono::Duration::days(9));
    let kept = app
        .get_json("/v1/objects/details?path=shots/kept.png", &app.dev_key)
        .await;
    assert_eq!(kept["object"]["keep"], true);
    assert!(
        kept["object"]["lifecycle"].get("expiresAt").is_none(),
        "{kept}"
    );
    let evidence = app
        .get_json(
            "/v1/objects/details?path=shots/evidence/ban.png",
            &app.dev_key,
        )
        .await;
    assert_eq!(evidence["object"]["lifecycle"]["rule"], "shots/evidence");
    let public = app
        .get_json("/v1/objects/details?path=shots/old.png", &app.dev_key)
        .await["object"]["publicUrl"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        app.client.get(app.local_url(&public)).sent_status().await,
        200
    );

    assert_eq!(app.stored_locations().await.len(), 5);
    let pass = expire(&app).await;
    assert_eq!((pass.expired, pass.failed), (1, 0), "{pass:?}");
    assert_eq!(
        app.list_keys(&app.dev_key, None).await,
        [
            "mugs/old.png",
            "shots/evidence/ban.png",
            "shots/kept.png",
            "shots/new.png"
        ]
    );
    assert_eq!(
        app.stored_locations().await.len(),
        4,
        "its bytes are gone too"
    );
    app.client
        .get(app.local_url(&public))
        .refused(404, "NOT_FOUND")
        .await;
    assert_eq!(expire(&app).await.expired, 0, "a second pass finds nothing");

    // the audit log says the service did it, and under which rule (the audit routes are for
    // members; the store is what they read)
    let all = auth_core::audit::AuditQuery {
        limit: 100,
        ..Default::default()
    };
    let entries: Vec<_> = app
        .cdn_state
        .stores
        .audit
        .page(&app.org.id, &all)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.entry)
        .filter(|e| e.action == auth_core::audit::Action::ObjectExpire)
        .collect();
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(entries[0].target, "shots/old.png");
    assert_eq!(
        entries[0].actor,
        auth_core::audit::Actor::Service {
            task: "lifecycle".into()
        }
    );
    assert_eq!(entries[0].via, auth_core::audit::Via::Maintenance);
    assert_eq!(entries[0].details["rule"], "shots");
    assert_eq!(entries[0].details["days"], 30);

    // unkept, it goes at the next pass
    assert_eq!(
        keep(&app, &app.dev_key, &["shots/kept.png"], false)
            .sent_status()
            .await,
        200
    );
    assert_eq!(expire(&app).await.expired, 1);
    // removing a rule stops it
    let removed = app
        .delete("/v1/lifecycle?path=shots/evidence", &app.dev_key)
        .json_body()
        .await;
    assert_eq!(removed["status"], "deleted", "{removed}");
    let again = app
        .delete("/v1/lifecycle?path=shots/evidence", &app.dev_key)
        .json_body()
        .await;
    assert_eq!(again["status"], "not_found");
    // now the shots rule decides for the evidence, which is 40 days old
    assert_eq!(expire(&app).await.expired, 1);
    assert_eq!(
        app.list_keys(&app.dev_key, None).await,
        ["mugs/old.png", "shots/new.png"]
    );
}

#[tokio::test]
async fn a_backlog_of_expired_objects_goes_in_batches_in_one_pass() {
    use diesel_async::SimpleAsyncConnection;
    let app = spawn().await;
    // 2,501 old rows (their bytes were never stored: removing them is a logged no-op)
    let mut conn = app.db.conn().await.unwrap();
    conn.batch_execute(&format!(
        "INSERT INTO objects (org_id, key, size, etag, storage_path, updated_at) \
         SELECT '{0}', 'voice/' || i || '.ogg', 10, 'e', 'o/none/' || i, now() - interval '8 days' \
           FROM generate_series(1, 2501) i",
        app.org.id
    ))
    .await
    .unwrap();
    assert_eq!(set(&app, &app.dev_key, "voice", 7).sent_status().await, 200);
    let pass = expire(&app).await;
    assert_eq!((pass.expired, pass.bytes), (2501, 25_010));
    assert_eq!(app.count("SELECT count(*) AS n FROM objects").await, 0);
    assert_eq!(
        app.count("SELECT count(*) AS n FROM audit_events WHERE action = 'object.expire'")
            .await,
        2501
    );
}

#[tokio::test]
async fn rules_and_keep_marks_are_checked_scoped_and_limited() {
    let app = spawn().await;
    for (path, days, status, code, names) in [
        (
            "shots",
            0,
            400,
            "INVALID_REQUEST",
            "days must be between 1 and 3650; got 0",
        ),
        ("shots", 3651, 400, "INVALID_REQUEST", "got 3651"),
        ("../etc", 3, 400, "INVALID_PATH", "invalid path"),
        ("a/.thumbs", 3, 400, "INVALID_PATH", "invalid path"),
    ] {
        expect_error_mentioning(
            set(&app, &app.dev_key, path, days).send().await.unwrap(),
            status,
            code,
            names,
        )
        .await;
    }
    let reader = app
        .key(KeySpec::perms(&[Permission::CdnRead, Permission::CdnWrite]))
        .await;
    set(&app, &reader, "shots", 3)
        .refused(403, "FORBIDDEN")
        .await;
    keep(&app, &reader, &["a.png"], true)
        .refused(403, "FORBIDDEN")
        .await;
    let scoped = app
        .key(KeySpec {
            allow: vec!["shots".into()],
            ..KeySpec::perms(&[Permission::CdnRead, Permission::CdnDelete])
        })
        .await;
    set(&app, &scoped, "", 3)
        .refused(403, "PATH_NOT_ALLOWED")
        .await;
    set(&app, &scoped, "mugs", 3)
        .refused(403, "PATH_NOT_ALLOWED")
        .await;
    assert_eq!(set(&app, &scoped, "shots/2026", 3).sent_status().await, 200);
    assert_eq!(set(&app, &app.dev_key, "", 365).sent_status().await, 200);
    let folders = |body: Value| -> Vec<String> {
        body["rules"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["path"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        folders(app.get_json("/v1/lifecycle", &app.dev_key).await),
        ["", "shots/2026"]
    );
    assert_eq!(
        folders(app.get_json("/v1/lifecycle", &scoped).await),
        ["shots/2026"],
        "a scoped key sees the rules of its own folders"
    );
    app.delete("/v1/lifecycle?path=", &scoped)
        .refused(403, "PATH_NOT_ALLOWED")
        .await;
    app.delete("/v1/lifecycle", &app.dev_key)
        .refused(400, "INVALID_REQUEST")
        .await;
    keep(&app, &scoped, &["shots/a.png", "mugs/b.png"], true)
        .refused(403, "PATH_NOT_ALLOWED")
        .await;
    keep(&app, &app.dev_key, &[], true)
        .refused(400, "INVALID_REQUEST")
        .await;
    expect_error_mentioning(
        keep(&app, &app.dev_key, &["ok.png", "../x"], true)
            .send()
            .await
            .unwrap(),
        400,
        "INVALID_PATH",
        "`../x`",
    )
    .await;
    // 100 rules per workspace; changing one at the limit still works
    for i in 0..98 {
        assert_eq!(
            set(&app, &app.dev_key, &format!("f{i}"), 1)
                .sent_status()
                .await,
            200
        );
    }
    expect_error_mentioning(
        set(&app, &app.dev_key, "one-more", 1).send().await.unwrap(),
        409,
        "CONFLICT",
        "100 lifecycle rules",
    )
    .await;
    let changed = set(&app, &app.dev_key, "f0", 9).json_body().await;
    assert_eq!(
        (
            changed["created"].as_bool(),
            changed["rule"]["days"].as_i64()
        ),
        (Some(false), Some(9))
    );
}

#[tokio::test]
async fn usage_is_counted_per_top_level_folder() {
    let app = spawn().await;
    for (folder, name) in [
        (Some("shots/2026"), "a.png"),
        (Some("shots"), "b.png"),
        (Some("voice"), "c.png"),
        (None, "top.png"),
    ] {
        assert_eq!(
            app.upload(&app.dev_key, name, png_bytes(), folder)
                .await
                .status(),
            200
        );
    }
    let size = png_bytes().len() as i64;
    assert_eq!(
        set(&app, &app.dev_key, "shots", 30).sent_status().await,
        200
    );
    let usage = app.get_json("/v1/objects/usage", &app.dev_key).await;
    assert_eq!(
        usage["folders"],
        json!([
            { "folder": "", "objects": 1, "bytes": size },
            { "folder": "shots", "objects": 2, "bytes": 2 * size, "lifecycleDays": 30 },
            { "folder": "voice", "objects": 1, "bytes": size },
        ]),
        "{usage}"
    );
    // a delete and a move count at once (no maintenance pass needed)
    app.delete("/v1/objects?path=voice/c.png", &app.dev_key)
        .sent_status()
        .await;
    let moved = app
        .post("/v1/objects/move", &app.dev_key)
        .json(&json!({ "from": "top.png", "to": "shots/top.png" }))
        .json_body()
        .await;
    assert_eq!(moved["success"], true, "{moved}");
    let usage = app.get_json("/v1/objects/usage", &app.dev_key).await;
    assert_eq!(
        usage["folders"],
        json!([{ "folder": "shots", "objects": 3, "bytes": 3 * size, "lifecycleDays": 30 }])
    );
    // a workspace rule decides for folders without their own
    assert_eq!(set(&app, &app.dev_key, "", 365).sent_status().await, 200);
    assert_eq!(
        app.get_json("/v1/objects/usage", &app.dev_key).await["folders"][0]["lifecycleDays"],
        30,
        "the folder's own rule first"
    );
    app.upload(&app.dev_key, "d.png", png_bytes(), Some("voice"))
        .await;
    let with_root = app.get_json("/v1/objects/usage", &app.dev_key).await;
    assert_eq!(with_root["folders"][1]["folder"], "voice", "{with_root}");
    assert_eq!(with_root["folders"][1]["lifecycleDays"], 365);
    app.delete("/v1/objects?path=voice/d.png", &app.dev_key)
        .sent_status()
        .await;
    stow_db::roll_up_usage(&app.db).await.unwrap();
    assert_eq!(
        app.get_json("/v1/objects/usage", &app.dev_key).await["folders"],
        usage["folders"],
        "the same after the maintenance folds the changes"
    );
    let scoped = app
        .key(KeySpec {
            allow: vec!["voice".into()],
            ..KeySpec::perms(&[Permission::CdnRead])
        })
        .await;
    assert_eq!(
        app.get_json("/v1/objects/usage", &scoped).await["folders"],
        json!([]),
        "only folders wholly inside the key's paths"
    );
}
