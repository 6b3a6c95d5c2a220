#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `GET /v1/objects/details`: one object without listing.

use super::*;

#[tokio::test]
async fn details_describe_one_object_and_keep_its_creation_time() {
    let app = spawn().await;
    let form = Form::new()
        .part("file", file_part(png_bytes(), "a.png"))
        .text("path", "shots")
        .text("metadata", r#"{"player":"p1"}"#);
    let first = app
        .post("/v1/objects", &app.dev_key)
        .multipart(form)
        .json_body()
        .await;
    let body = app
        .get("/v1/objects/details?path=shots/a.png", &app.dev_key)
        .json_body()
        .await;
    assert_eq!(body["success"], true);
    let o = &body["object"];
    assert_eq!(o["key"], "shots/a.png");
    assert_eq!(o["size"], png_bytes().len());
    assert_eq!(o["contentType"], "image/png");
    assert_eq!(o["etag"], first["object"]["etag"]);
    assert_eq!(o["metadata"], json!({ "player": "p1" }));
    assert_eq!(o["publicUrl"], first["object"]["publicUrl"]);
    assert_eq!(o["createdAt"], o["updatedAt"], "{o}");
    // the listing says the same
    let listed = app
        .get("/v1/objects?path=shots", &app.dev_key)
        .json_body()
        .await;
    assert_eq!(listed["objects"][0]["lastModified"], o["updatedAt"]);

    let replaced = app
        .upload(
            &app.dev_key,
            "a.png",
            b"other bytes".to_vec(),
            Some("shots"),
        )
        .await;
    assert_eq!(replaced.status(), 200);
    let again = app
        .get("/v1/objects/details?path=shots/a.png", &app.dev_key)
        .json_body()
        .await;
    assert_eq!(
        again["object"]["createdAt"], o["createdAt"],
        "a replacement keeps it"
    );
    assert!(again["object"]["updatedAt"].as_str() >= o["updatedAt"].as_str());
    assert_ne!(again["object"]["etag"], o["etag"]);
    assert_eq!(again["object"]["size"], 11);
}

#[tokio::test]
async fn details_refuse_like_the_other_reads() {
    let app = spawn().await;
    assert_eq!(
        app.upload(&app.dev_key, "a.png", png_bytes(), Some("pub"))
            .await
            .status(),
        200
    );
    assert_eq!(
        app.upload(&app.dev_key, "b.png", png_bytes(), Some("priv"))
            .await
            .status(),
        200
    );
    app.get("/v1/objects/details?path=pub/missing.png", &app.dev_key)
        .refused(404, "NOT_FOUND")
        .await;
    app.get("/v1/objects/details", &app.dev_key)
        .refused(400, "INVALID_REQUEST")
        .await;
    app.get("/v1/objects/details?path=../etc/passwd", &app.dev_key)
        .refused(400, "INVALID_PATH")
        .await;
    let scoped = app
        .key(KeySpec {
            allow: vec!["pub".into()],
            ..KeySpec::perms(&[Permission::CdnRead])
        })
        .await;
    assert_eq!(
        app.get("/v1/objects/details?path=pub/a.png", &scoped)
            .sent_status()
            .await,
        200
    );
    app.get("/v1/objects/details?path=priv/b.png", &scoped)
        .refused(403, "PATH_NOT_ALLOWED")
        .await;
    let writer = app.key(KeySpec::perms(&[Permission::CdnWrite])).await;
    app.get("/v1/objects/details?path=pub/a.png", &writer)
        .refused(403, "FORBIDDEN")
        .await;
}

/// A dot-named segment is an invalid path here as on every route (docs/api.md, "Paths"): the
/// docs once said 404 for this route while it answered 400.
#[tokio::test]
async fn a_dot_named_key_is_an_invalid_path() {
    let app = spawn().await;
    for path in [".env", "shots/.cache/a.png", "shots/.a.png"] {
        let url = format!("/v1/objects/details?path={}", urlencode(path));
        expect_error_mentioning(
            app.get(&url, &app.dev_key).send().await.unwrap(),
            400,
            "INVALID_PATH",
            "invalid path",
        )
        .await;
    }
}
