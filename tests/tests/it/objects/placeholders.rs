#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Placeholders: `GET|PUT|DELETE /v1/placeholders`, and delivery of a missing key a pattern
//! matches.

use super::*;

fn set(app: &TestApp, key: &str, pattern: &str, fallback: &str) -> reqwest::RequestBuilder {
    app.put("/v1/placeholders", key)
        .json(&json!({ "pattern": pattern, "fallback": fallback }))
}

fn remove(app: &TestApp, key: &str, pattern: &str) -> reqwest::RequestBuilder {
    app.delete(
        &format!("/v1/placeholders?pattern={}", urlencode(pattern)),
        key,
    )
}

async fn stored(app: &TestApp, name: &str, bytes: Vec<u8>, folder: &str) {
    let res = app.upload(&app.dev_key, name, bytes, Some(folder)).await;
    assert_eq!(res.status(), 200, "{}", res.text().await.unwrap());
}

fn cdn(app: &TestApp, key: &str) -> String {
    format!("{}/cdn/test-org/{key}", app.cdn)
}

#[tokio::test]
async fn a_placeholder_is_served_for_a_missing_key_and_not_for_an_existing_one() {
    let app = spawn().await;
    stored(&app, "missing.png", png_bytes(), "inventory").await;
    stored(&app, "bread.webp", webp_bytes(), "inventory/items").await;
    // before any placeholder: the plain envelope
    app.client
        .get(cdn(&app, "inventory/items/apple.png"))
        .refused(404, "NOT_FOUND")
        .await;

    let body = set(
        &app,
        &app.dev_key,
        "inventory//items/*",
        "inventory/missing.png",
    )
    .json_body()
    .await;
    assert_eq!(body["success"], true, "{body}");
    assert_eq!(body["created"], true);
    assert_eq!(body["placeholder"]["pattern"], "inventory/items/*");
    assert_eq!(body["placeholder"]["fallback"], "inventory/missing.png");
    assert_eq!(
        body["placeholder"]["fallbackUrl"],
        "http://cdn.test/cdn/test-org/inventory/missing.png"
    );

    // an existing key is itself
    let real = app
        .client
        .get(cdn(&app, "inventory/items/bread.webp"))
        .send()
        .await
        .unwrap();
    assert_eq!(real.status(), 200);
    assert!(real.headers().get("x-stowage-placeholder").is_none());
    assert_eq!(real.bytes().await.unwrap().to_vec(), webp_bytes());

    // a missing key the pattern matches: the fallback's bytes, as a short-lived 404
    for headers in [vec![], vec![("range", "bytes=0-3"), ("if-none-match", "*")]] {
        let mut req = app.client.get(cdn(&app, "inventory/items/apple.png"));
        for (name, value) in headers {
            req = req.header(name, value);
        }
        let res = req.send().await.unwrap();
        assert_eq!(res.status(), 404);
        let h = res.headers().clone();
        assert_eq!(h["x-stowage-placeholder"], "inventory/missing.png");
        assert_eq!(h["cache-control"], "public, max-age=60");
        assert_eq!(h["content-type"], "image/png");
        assert_eq!(h["x-content-type-options"], "nosniff");
        for absent in ["etag", "last-modified", "accept-ranges", "content-range"] {
            assert!(h.get(absent).is_none(), "{absent}");
        }
        assert_eq!(res.bytes().await.unwrap().to_vec(), png_bytes());
    }
    let head = app
        .client
        .head(cdn(&app, "inventory/items/apple.png"))
        .send()
        .await
        .unwrap();
    assert_eq!(head.status(), 404);
    assert_eq!(
        head.headers()["x-stowage-placeholder"],
        "inventory/missing.png"
    );
    assert_eq!(
        head.headers()["content-length"],
        png_bytes().len().to_string().as_str()
    );

    // what the pattern does not match stays a plain 404: a deeper key, a sibling folder, a
    // hidden key, another workspace
    for other in [
        "inventory/items/sub/apple.png",
        "inventory/itemsx/apple.png",
        "inventory/items/.apple.png",
    ] {
        let res = app.client.get(cdn(&app, other)).send().await.unwrap();
        assert!(
            res.headers().get("x-stowage-placeholder").is_none(),
            "{other}"
        );
        expect_error(res, 404, "NOT_FOUND").await;
    }

    // once the real object exists it is served, not the placeholder
    stored(&app, "apple.png", webp_bytes(), "inventory/items").await;
    let res = app
        .client
        .get(cdn(&app, "inventory/items/apple.png"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert!(res.headers().get("x-stowage-placeholder").is_none());

    // a removed placeholder is no longer served by the instance that removed it
    let body = remove(&app, &app.dev_key, "inventory/items/*")
        .json_body()
        .await;
    assert_eq!(body["status"], "deleted", "{body}");
    app.client
        .get(cdn(&app, "inventory/items/pear.png"))
        .refused(404, "NOT_FOUND")
        .await;
}

#[tokio::test]
async fn a_fallback_key_beyond_ascii_is_named_percent_encoded() {
    let app = spawn().await;
    stored(&app, "icône manquante.png", png_bytes(), "icônes").await;
    assert_eq!(
        set(&app, &app.dev_key, "objets/*", "icônes/icône manquante.png")
            .sent_status()
            .await,
        200
    );
    let res = app
        .client
        .get(cdn(&app, "objets/pain.png"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 404);
    assert_eq!(
        res.headers()["x-stowage-placeholder"],
        "ic%C3%B4nes/ic%C3%B4ne%20manquante.png"
    );
    assert_eq!(res.bytes().await.unwrap().to_vec(), png_bytes());
}

#[tokio::test]
async fn a_placeholder_whose_fallback_was_deleted_is_a_plain_404() {
    let app = spawn().await;
    stored(&app, "missing.png", png_bytes(), "icons").await;
    assert_eq!(
        set(&app, &app.dev_key, "items/**", "icons/missing.png")
            .sent_status()
            .await,
        200
    );
    assert_eq!(
        app.client
            .get(cdn(&app, "items/a/b/c.png"))
            .sent_status()
            .await,
        404
    );
    assert_eq!(
        app.delete("/v1/objects?path=icons/missing.png", &app.dev_key)
            .sent_status()
            .await,
        200
    );
    let res = app
        .client
        .get(cdn(&app, "items/a/b/c.png"))
        .send()
        .await
        .unwrap();
    assert!(res.headers().get("x-stowage-placeholder").is_none());
    expect_error(res, 404, "NOT_FOUND").await;
}

#[tokio::test]
async fn placeholders_need_their_permissions_and_stay_inside_the_keys_paths() {
    let app = spawn().await;
    stored(&app, "fallback.png", png_bytes(), "inventory").await;
    stored(&app, "fallback.png", png_bytes(), "maps").await;
    let read_only = app.key(KeySpec::perms(&[Permission::CdnRead])).await;
    set(
        &app,
        &read_only,
        "inventory/items/*",
        "inventory/fallback.png",
    )
    .refused(403, "FORBIDDEN")
    .await;
    remove(&app, &read_only, "inventory/items/*")
        .refused(403, "FORBIDDEN")
        .await;
    let write_only = app.key(KeySpec::perms(&[Permission::CdnWrite])).await;
    app.get("/v1/placeholders", &write_only)
        .refused(403, "FORBIDDEN")
        .await;
    app.get("/v1/placeholders", "nope")
        .refused(401, "UNAUTHORIZED")
        .await;

    let scoped = app
        .key(KeySpec {
            allow: vec!["inventory".into()],
            deny: vec!["inventory/secret".into()],
            ..KeySpec::perms(&[Permission::CdnRead, Permission::CdnWrite])
        })
        .await;
    assert_eq!(
        set(&app, &scoped, "inventory/items/*", "inventory/fallback.png")
            .sent_status()
            .await,
        200
    );
    for (pattern, fallback, part) in [
        // a wildcard segment reaches the denied sub-folder
        (
            "inventory/*/a.png",
            "inventory/fallback.png",
            "`inventory/secret`",
        ),
        (
            "inventory/secret/*",
            "inventory/fallback.png",
            "`inventory/secret`",
        ),
        ("maps/*", "inventory/fallback.png", "`maps`"),
        ("*/items", "inventory/fallback.png", "every folder"),
    ] {
        let err = set(&app, &scoped, pattern, fallback)
            .refused(403, "PATH_NOT_ALLOWED")
            .await;
        let message = err["error"]["message"].as_str().unwrap();
        assert!(message.contains(&format!("reaches {part}")), "{message}");
    }
    let err = set(&app, &scoped, "inventory/items/*", "maps/fallback.png")
        .refused(403, "PATH_NOT_ALLOWED")
        .await;
    assert!(
        err["error"]["message"]
            .as_str()
            .unwrap()
            .contains("fallback `maps/fallback.png`"),
        "{err}"
    );

    // the unrestricted key sets one outside; the scoped key neither sees nor removes it
    assert_eq!(
        set(&app, &app.dev_key, "maps/*", "maps/fallback.png")
            .sent_status()
            .await,
        200
    );
    let patterns = |body: Value| -> Vec<String> {
        body["placeholders"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["pattern"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        patterns(app.get("/v1/placeholders", &scoped).json_body().await),
        ["inventory/items/*"]
    );
    assert_eq!(
        patterns(app.get("/v1/placeholders", &read_only).json_body().await),
        ["inventory/items/*", "maps/*"]
    );
    remove(&app, &scoped, "maps/*")
        .refused(403, "PATH_NOT_ALLOWED")
        .await;
    assert_eq!(
        remove(&app, &scoped, "inventory/items/*").json_body().await["status"],
        "deleted"
    );
}

#[tokio::test]
async fn placeholder_input_is_checked_and_the_count_is_limited() {
    let app = spawn().await;
    stored(&app, "f.png", png_bytes(), "icons").await;
    let err = set(&app, &app.dev_key, "items/[a", "icons/f.png")
        .refused(400, "INVALID_PATH")
        .await;
    assert!(
        err["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("invalid pattern `items/[a`: "),
        "{err}"
    );
    for (pattern, fallback) in [
        ("../items/*", "icons/f.png"),
        ("items/.cache/*", "icons/f.png"),
        ("", "icons/f.png"),
        ("items/*", "/icons/f.png"),
        ("items/*", ""),
    ] {
        set(&app, &app.dev_key, pattern, fallback)
            .refused(400, "INVALID_PATH")
            .await;
    }
    let err = set(&app, &app.dev_key, "items/*", "icons/none.png")
        .refused(400, "INVALID_REQUEST")
        .await;
    assert!(
        err["error"]["message"]
            .as_str()
            .unwrap()
            .contains("`icons/none.png` is not an object of this workspace"),
        "{err}"
    );
    app.put("/v1/placeholders", &app.dev_key)
        .json(&json!({ "pattern": "items/*", "fallback": "icons/f.png", "ttl": 5 }))
        .refused(400, "INVALID_REQUEST")
        .await;
    app.put("/v1/placeholders", &app.dev_key)
        .json(&json!({ "pattern": "items/*" }))
        .refused(400, "INVALID_REQUEST")
        .await;
    app.delete("/v1/placeholders", &app.dev_key)
        .refused(400, "INVALID_REQUEST")
        .await;
    assert_eq!(
        remove(&app, &app.dev_key, "never/*").json_body().await["status"],
        "not_found"
    );

    // N - 1, N accepted; N + 1 refused; replacing one of the N is not a new one
    let limit = cdn_core::placeholder::MAX_PLACEHOLDERS;
    for i in 0..limit {
        let res = set(&app, &app.dev_key, &format!("p{i}/*"), "icons/f.png")
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 200, "placeholder {i}");
    }
    let err = set(&app, &app.dev_key, "one-more/*", "icons/f.png")
        .refused(409, "CONFLICT")
        .await;
    assert!(
        err["error"]["message"]
            .as_str()
            .unwrap()
            .contains(&format!("{limit} placeholders, the limit")),
        "{err}"
    );
    let replaced = set(&app, &app.dev_key, "p7/*", "icons/f.png")
        .json_body()
        .await;
    assert_eq!(replaced["created"], false, "{replaced}");
    assert_eq!(
        app.get("/v1/placeholders", &app.dev_key).json_body().await["placeholders"]
            .as_array()
            .unwrap()
            .len(),
        limit
    );
}
