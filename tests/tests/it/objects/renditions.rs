#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Renditions on public delivery: a screenshot resized in each format, kept and served again
//! with the original's caching, upright by its EXIF orientation, refused for a decompression
//! bomb and for what is not an image, new for a replaced original, gone (and collected) with a
//! deleted one.

use image::GenericImageView;
use stow_images::fixtures::{claimed_png, halves, jpeg_with_orientation, png};

use super::*;

const RED: [u8; 3] = [255, 0, 0];
const BLUE: [u8; 3] = [0, 0, 255];
const GREEN: [u8; 3] = [0, 255, 0];

async fn put_image(app: &TestApp, name: &str, bytes: Vec<u8>, mime: &str) {
    app.put_file("", name, bytes, mime, "{}").await;
}

async fn get(app: &TestApp, path_and_query: &str) -> reqwest::Response {
    app.client
        .get(format!("{}/cdn/test-org/{path_and_query}", app.cdn))
        .send()
        .await
        .unwrap()
}

/// The kept renditions (their locations in the object store).
async fn kept(app: &TestApp) -> Vec<String> {
    use futures::StreamExt;
    let mut out = Vec::new();
    let mut s = app.objects.list("renditions");
    while let Some(item) = s.next().await {
        out.push(item.unwrap().0);
    }
    out
}

#[tokio::test]
async fn a_screenshot_is_resized_kept_and_served_with_its_caching_rules() {
    let app = spawn().await;
    put_image(
        &app,
        "shot.png",
        png(&halves(1920, 1080, RED, BLUE)),
        "image/png",
    )
    .await;
    let original = get(&app, "shot.png").await;
    let original_etag = original.headers()["etag"].to_str().unwrap().to_owned();
    let cache_control = original.headers()["cache-control"]
        .to_str()
        .unwrap()
        .to_owned();
    for (query, mime, size) in [
        ("w=320", "image/png", (320, 180)),
        ("w=320&format=webp", "image/webp", (320, 180)),
        (
            "w=160&h=160&fit=cover&format=jpeg",
            "image/jpeg",
            (160, 160),
        ),
        ("h=90", "image/png", (160, 90)),
    ] {
        let res = get(&app, &format!("shot.png?{query}")).await;
        assert_eq!(res.status(), 200, "{query}");
        assert_eq!(res.headers()["content-type"], mime, "{query}");
        assert_eq!(
            res.headers()["cache-control"].to_str().unwrap(),
            cache_control
        );
        let etag = res.headers()["etag"].to_str().unwrap().to_owned();
        assert_ne!(etag, original_etag);
        let picture = image::load_from_memory(&res.bytes().await.unwrap()).unwrap();
        assert_eq!(picture.dimensions(), size, "{query}");
        let (w, h) = size;
        assert!(
            picture.get_pixel(w / 8, h / 2)[0] > 200,
            "red on the left: {query}"
        );
        assert!(
            picture.get_pixel(w - w / 8, h / 2)[2] > 200,
            "blue on the right: {query}"
        );
        // revalidation answers 304
        let again = app
            .client
            .get(format!("{}/cdn/test-org/shot.png?{query}", app.cdn))
            .header("If-None-Match", &etag)
            .send()
            .await
            .unwrap();
        assert_eq!(again.status(), 304, "{query}");
    }
    // each made once and kept beside the original's bytes
    let locations = kept(&app).await;
    assert_eq!(locations.len(), 4);
    // another instance (its memory empty) answers from what was kept (marked here), not made
    // again
    let small = locations
        .iter()
        .find(|l| l.ends_with("/320xauto-contain.png"))
        .unwrap();
    app.objects
        .put(
            &stow_objects::ObjectPath::from(small.as_str()),
            bytes::Bytes::from_static(b"kept"),
            None,
        )
        .await
        .unwrap();
    let other = app.second_cdn();
    let res = app
        .client
        .get(format!("{other}/cdn/test-org/shot.png?w=320"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.bytes().await.unwrap().as_ref(), b"kept");
    // and this instance from its memory: the rendition it made
    let res = get(&app, "shot.png?w=320").await;
    let picture = image::load_from_memory(&res.bytes().await.unwrap()).unwrap();
    assert_eq!(picture.dimensions(), (320, 180));
    // other query parameters are ignored, as on every delivery
    let plain = get(&app, "shot.png?v=2").await;
    assert_eq!(plain.headers()["etag"].to_str().unwrap(), original_etag);
}

#[tokio::test]
async fn a_phone_photo_is_turned_upright_by_its_exif_orientation() {
    let app = spawn().await;
    // stored 200 × 100, red left and blue right, "rotate 90° clockwise to view"
    let jpeg = jpeg_with_orientation(&halves(200, 100, RED, BLUE), 6);
    put_image(&app, "phone.jpg", jpeg, "image/jpeg").await;
    let res = get(&app, "phone.jpg?h=100&format=png").await;
    assert_eq!(res.status(), 200);
    let picture = image::load_from_memory(&res.bytes().await.unwrap()).unwrap();
    assert_eq!(picture.dimensions(), (50, 100), "upright: taller than wide");
    assert!(picture.get_pixel(25, 10)[0] > 200, "red on top");
    assert!(picture.get_pixel(25, 90)[2] > 200, "blue below");
}

#[tokio::test]
async fn bombs_non_images_and_bad_parameters_are_refused_by_name() {
    let app = spawn().await;
    put_image(&app, "bomb.png", claimed_png(100_000, 100_000), "image/png").await;
    let res = get(&app, "bomb.png?w=100").await;
    let err = expect_error(res, 400, "INVALID_REQUEST").await;
    let message = err["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("100000 × 100000") && message.contains("at most 40000000 pixels"),
        "{message}"
    );
    // the original is still delivered as it is
    assert_eq!(get(&app, "bomb.png").await.status(), 200);
    app.upload(&app.dev_key, "notes.txt", b"hello".to_vec(), None)
        .await;
    let err = expect_error(get(&app, "notes.txt?w=100").await, 400, "INVALID_REQUEST").await;
    assert!(err["error"]["message"]
        .as_str()
        .unwrap()
        .contains("PNG, JPEG, WebP and GIF"));
    put_image(&app, "ok.png", png(&halves(20, 20, RED, BLUE)), "image/png").await;
    for (query, says) in [
        ("w=0", "`w` must be a whole number of pixels from 1 to 2048"),
        ("w=2049", "`w` must be"),
        ("h=big", "`h` must be"),
        ("w=10&fit=fill", "`fit` must be"),
        ("w=10&fit=cover", "`fit=cover` needs both"),
        ("format=gif", "`format` must be"),
        ("format=png", "needs `w`, `h` or both"),
    ] {
        let err = expect_error(
            get(&app, &format!("ok.png?{query}")).await,
            400,
            "INVALID_REQUEST",
        )
        .await;
        assert!(
            err["error"]["message"].as_str().unwrap().contains(says),
            "{query}: {err}"
        );
    }
    assert!(kept(&app).await.is_empty(), "nothing was made");
}

#[tokio::test]
async fn a_replaced_original_gets_new_renditions_and_a_deleted_ones_are_collected() {
    let app = spawn().await;
    put_image(
        &app,
        "shot.png",
        png(&halves(400, 200, RED, BLUE)),
        "image/png",
    )
    .await;
    let first = get(&app, "shot.png?w=100").await;
    let first_etag = first.headers()["etag"].to_str().unwrap().to_owned();
    let picture = image::load_from_memory(&first.bytes().await.unwrap()).unwrap();
    assert!(picture.get_pixel(10, 25)[0] > 200);
    // the same key, new bytes: the rendition follows
    put_image(
        &app,
        "shot.png",
        png(&halves(400, 200, GREEN, GREEN)),
        "image/png",
    )
    .await;
    let second = app
        .client
        .get(format!("{}/cdn/test-org/shot.png?w=100", app.cdn))
        .header("If-None-Match", &first_etag)
        .send()
        .await
        .unwrap();
    assert_eq!(second.status(), 200, "the old tag no longer matches");
    let picture = image::load_from_memory(&second.bytes().await.unwrap()).unwrap();
    assert!(picture.get_pixel(10, 25)[1] > 200, "green now");
    assert_eq!(kept(&app).await.len(), 2);
    // deleted: the rendition is gone with it, and collection removes what was kept
    let res = app
        .client
        .delete(format!("{}/v1/objects?path=shot.png", app.cdn))
        .bearer_auth(&app.dev_key)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    tokio::time::timeout(std::time::Duration::from_secs(5), async {
        while get(&app, "shot.png?w=100").await.status() != 404 {
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("the rendition of a deleted object is not served");
    stow_admin::gc(&app.db, &app.objects, chrono::Duration::seconds(0))
        .await
        .unwrap();
    assert!(kept(&app).await.is_empty(), "{:?}", kept(&app).await);
}

/// A flood of distinct sizes of one image makes and keeps a bounded number of renditions: the
/// 24 kept ones are served again, a 25th new size within the hour is 429 with `Retry-After`
/// (one client wrote 3,000 renditions of one image in 5 seconds).
#[tokio::test]
async fn distinct_sizes_of_one_image_are_bounded() {
    let app = spawn().await;
    put_image(
        &app,
        "shot.png",
        png(&halves(64, 64, RED, BLUE)),
        "image/png",
    )
    .await;
    let max = cdn_core::rendition::MAX_KEPT_PER_ORIGINAL;
    for w in 1..=max {
        let res = get(&app, &format!("shot.png?w={w}")).await;
        assert_eq!(res.status(), 200, "w={w}");
    }
    assert_eq!(kept(&app).await.len(), max);
    let refused = get(&app, &format!("shot.png?w={}", max + 1)).await;
    assert_eq!(refused.status(), 429);
    let wait: u64 = refused.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((3500..=3600).contains(&wait), "{wait}");
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["error"]["code"], "RATE_LIMITED", "{body}");
    // the kept ones are still served, and nothing more was kept
    assert_eq!(get(&app, "shot.png?w=3").await.status(), 200);
    assert_eq!(kept(&app).await.len(), max);
    // another image has its own room
    put_image(
        &app,
        "other.png",
        png(&halves(64, 64, RED, GREEN)),
        "image/png",
    )
    .await;
    assert_eq!(get(&app, "other.png?w=30").await.status(), 200);
}
