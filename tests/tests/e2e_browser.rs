#![allow(clippy::unwrap_used, clippy::expect_used)]
//! A real browser uploads through an upload URL from another origin (`just e2e`).
//!
//! A page served on its own localhost port draws a PNG on a canvas and sends it with `fetch` +
//! `FormData` to an upload URL of the API host (a different origin, so CORS is exercised), then
//! reports the response to the page server. The test checks the object through the API.

use std::process::Stdio;
use std::time::Duration;

use actix_web::{web, App, HttpResponse, HttpServer};
use stowage_tests::*;

const PAGE: &str = r#"<!doctype html><html><body><canvas id="c" width="32" height="32"></canvas><script>
(async () => {
  const report = (r) => fetch('/result', { method: 'POST', headers: {'Content-Type': 'application/json'}, body: JSON.stringify(r) });
  try {
    const c = document.getElementById('c');
    const g = c.getContext('2d');
    g.fillStyle = '#2a7'; g.fillRect(0, 0, 32, 32);
    const blob = await new Promise((ok) => c.toBlob(ok, 'image/png'));
    const form = new FormData();
    form.append('file', blob, 'canvas.png');
    const res = await fetch('UPLOAD_URL', { method: 'POST', body: form });
    const body = await res.json();
    await report({ status: res.status, requestId: res.headers.get('X-Request-Id'), body });
  } catch (e) {
    await report({ error: String(e) });
  }
})();
</script></body></html>"#;

fn chromium() -> Option<String> {
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find(|b| {
            std::process::Command::new("which")
                .arg(b)
                .stdout(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        })
        .map(|b| b.to_string())
}

#[tokio::test]
#[ignore = "needs Chromium; run with `just e2e`"]
async fn browser_uploads_through_an_upload_url() {
    let browser = chromium().expect("chromium is installed (`just e2e` installs it)");
    let app = spawn().await;
    let url: Value = app
        .get(
            "/v1/presigned-url?path=browser&allowedMimeTypes=image/png",
            &app.dev_key,
        )
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let upload_url = url["uploadUrl"].as_str().unwrap().to_owned();

    let (tx, mut rx) = tokio::sync::mpsc::channel::<Value>(1);
    let page = PAGE.replace("UPLOAD_URL", &upload_url);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let page_port = listener.local_addr().unwrap().port();
    let server = HttpServer::new(move || {
        let page = page.clone();
        let tx = tx.clone();
        App::new()
            .route(
                "/page.html",
                web::get().to(move || {
                    let page = page.clone();
                    async move { HttpResponse::Ok().content_type("text/html").body(page) }
                }),
            )
            .route(
                "/result",
                web::post().to(move |body: stow_http::Json<Value>| {
                    let tx = tx.clone();
                    async move {
                        let _ = tx.send(body.into_inner()).await;
                        HttpResponse::Ok().finish()
                    }
                }),
            )
    })
    .workers(1)
    .listen(listener)
    .unwrap()
    .run();
    tokio::spawn(server);

    let profile = std::env::temp_dir().join(format!("stowage-chromium-{}", ulid::Ulid::new()));
    let mut child = tokio::process::Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            &format!("--user-data-dir={}", profile.display()),
            &format!("http://localhost:{page_port}/page.html"),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let result = tokio::time::timeout(Duration::from_secs(60), rx.recv()).await;
    let _ = child.kill().await;
    let _ = std::fs::remove_dir_all(profile);
    let result = result.expect("the page reported within 60 s").unwrap();
    assert_eq!(result["status"], 200, "{result}");
    assert!(
        result["requestId"]
            .as_str()
            .is_some_and(|id| id.starts_with("req_")),
        "X-Request-Id is exposed to the page: {result}"
    );
    let object = &result["body"]["object"];
    assert_eq!(object["key"], "browser/canvas.png");
    assert_eq!(object["contentType"], "image/png");

    let listed = app.list_keys(&app.dev_key, Some("browser")).await;
    assert_eq!(listed, vec!["browser/canvas.png"]);
    let public = app.local_url(object["publicUrl"].as_str().unwrap());
    let bytes = app
        .client
        .get(public)
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    assert!(bytes.starts_with(b"\x89PNG"), "a real PNG from the canvas");
}
