//! The console's pages and assets: every file of `crates/api-http/console/` compiled into the
//! binary (rust-embed, in debug builds too), each kept gzip-compressed too and sent so to browsers
//! that accept it, with an entity tag from its content's hash so a reload revalidates with a 304.

use std::collections::HashMap;
use std::sync::OnceLock;

use actix_web::http::header::{self, HeaderValue};
use actix_web::{web, HttpRequest, HttpResponse};
use flate2::write::GzEncoder;
use std::io::Write;

#[derive(rust_embed::Embed)]
#[folder = "console/"]
// JSDoc types for the checker only (scripts/console-check.sh): no page loads it
#[exclude = "types.js"]
struct Files;

/// The page every console URL answers with.
const PAGE: &str = "index.html";

struct Asset {
    content_type: &'static str,
    body: &'static [u8],
    gzip: Vec<u8>,
    /// `"<16 hex digits of the SHA-256 of the body>"`.
    etag: HeaderValue,
}

fn content_type(name: &str) -> &'static str {
    match name.rsplit_once('.').map(|(_, ext)| ext) {
        Some("html") => "text/html; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("js") => "text/javascript; charset=utf-8",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        _ => "application/octet-stream",
    }
}

fn gzip(body: &[u8]) -> Vec<u8> {
    let mut gz = GzEncoder::new(Vec::new(), flate2::Compression::best());
    // writing to a Vec cannot fail
    let _ = gz.write_all(body);
    gz.finish().unwrap_or_default()
}

/// Every asset by name, read (and compressed) once.
fn assets() -> &'static HashMap<String, Asset> {
    static ASSETS: OnceLock<HashMap<String, Asset>> = OnceLock::new();
    ASSETS.get_or_init(|| {
        Files::iter()
            .filter_map(|name| {
                let file = Files::get(&name)?;
                let body: &'static [u8] = match file.data {
                    std::borrow::Cow::Borrowed(b) => b,
                    std::borrow::Cow::Owned(v) => Vec::leak(v),
                };
                let hash = hex::encode(&file.metadata.sha256_hash()[..8]);
                let etag = HeaderValue::from_str(&format!("\"{hash}\"")).ok()?;
                let asset = Asset {
                    content_type: content_type(&name),
                    body,
                    gzip: gzip(body),
                    etag,
                };
                Some((name.into_owned(), asset))
            })
            .collect()
    })
}

/// Whether the request's `Accept-Encoding` prefers gzip to the plain bytes (actix's negotiation:
/// q-values, `*`, `identity;q=0`).
fn accepts_gzip(req: &HttpRequest) -> bool {
    use actix_web::http::header::{AcceptEncoding, Encoding, Header};
    AcceptEncoding::parse(req)
        .ok()
        .and_then(|accept| accept.negotiate([Encoding::gzip(), Encoding::identity()].iter()))
        .is_some_and(|chosen| chosen == Encoding::gzip())
}

/// Whether the request's `If-None-Match` names this entity tag (or `*`).
fn not_modified(req: &HttpRequest, etag: &HeaderValue) -> bool {
    let Some(wanted) = req
        .headers()
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    let ours = etag.to_str().unwrap_or_default();
    wanted
        .split(',')
        .map(|t| t.trim().trim_start_matches("W/"))
        .any(|t| t == "*" || t == ours)
}

fn send(req: &HttpRequest, asset: &'static Asset, cache: &'static str) -> HttpResponse {
    if not_modified(req, &asset.etag) {
        return HttpResponse::NotModified()
            .insert_header((header::ETAG, asset.etag.clone()))
            .insert_header((header::CACHE_CONTROL, cache))
            .insert_header((header::VARY, "Accept-Encoding"))
            .finish();
    }
    let mut res = HttpResponse::Ok();
    res.insert_header((header::CONTENT_TYPE, asset.content_type))
        .insert_header((header::CACHE_CONTROL, cache))
        .insert_header((header::ETAG, asset.etag.clone()))
        .insert_header((header::VARY, "Accept-Encoding"));
    if accepts_gzip(req) {
        res.insert_header((header::CONTENT_ENCODING, HeaderValue::from_static("gzip")))
            .body(asset.gzip.clone())
    } else {
        res.body(asset.body)
    }
}

/// `GET /assets/{name}`.
pub async fn asset(req: HttpRequest, name: web::Path<String>) -> HttpResponse {
    match assets()
        .get(name.as_str())
        .filter(|_| name.as_str() != PAGE)
    {
        // revalidated on each load (a 304 while unchanged): a new release is picked up at once
        Some(asset) => send(&req, asset, "no-cache"),
        None => HttpResponse::NotFound()
            .content_type("text/plain; charset=utf-8")
            .body("no such console asset"),
    }
}

/// Every other `GET`: the console page, which routes by its own URL (`/objects?path=…`,
/// `/logs?…`), so a shared link or the back button lands on the same view.
pub async fn page(req: HttpRequest) -> HttpResponse {
    if req.method() != actix_web::http::Method::GET && req.method() != actix_web::http::Method::HEAD
    {
        return HttpResponse::MethodNotAllowed()
            .insert_header((header::ALLOW, "GET, HEAD"))
            .finish();
    }
    match assets().get(PAGE) {
        Some(page) => send(&req, page, "no-store"),
        None => HttpResponse::InternalServerError().finish(),
    }
}

#[cfg(test)]
mod tests {
    use super::{accepts_gzip, assets, not_modified, PAGE};
    use actix_web::test::TestRequest;

    fn gzip_for(header: Option<&str>) -> bool {
        let mut req = TestRequest::get();
        if let Some(h) = header {
            req = req.insert_header(("accept-encoding", h));
        }
        accepts_gzip(&req.to_http_request())
    }

    #[test]
    fn gzip_is_sent_only_when_the_client_takes_it() {
        assert!(gzip_for(Some("gzip, deflate, br")));
        assert!(gzip_for(Some("br;q=1.0, gzip;q=0.8")));
        assert!(!gzip_for(None));
        assert!(!gzip_for(Some("identity")));
        assert!(!gzip_for(Some("gzip;q=0")));
        assert!(!gzip_for(Some("gzip;q=0.0, identity")));
        assert!(!gzip_for(Some("br")));
    }

    #[test]
    fn every_file_of_the_folder_is_embedded_but_the_checker_types() {
        let names: Vec<&str> = assets().keys().map(String::as_str).collect();
        for name in [PAGE, "app.js", "api.js", "ui.js", "console.css", "icon.svg"] {
            assert!(names.contains(&name), "{name} in {names:?}");
        }
        assert!(!names.contains(&"types.js"), "{names:?}");
        assert_eq!(
            assets()["app.js"].content_type,
            "text/javascript; charset=utf-8"
        );
    }

    #[test]
    fn entity_tags_come_from_the_content_and_answer_if_none_match() {
        let etag = assets()["app.js"].etag.clone();
        let tag = etag.to_str().unwrap();
        assert_eq!(tag.len(), 18, "{tag}");
        assert_ne!(
            etag,
            assets()["api.js"].etag,
            "different content, different tag"
        );
        let with = |v: &str| {
            let req = TestRequest::get().insert_header(("if-none-match", v));
            not_modified(&req.to_http_request(), &etag)
        };
        assert!(with(tag));
        assert!(with(&format!("\"0000000000000000\", W/{tag}")));
        assert!(with("*"));
        assert!(!with("\"0000000000000000\""));
        assert!(!not_modified(&TestRequest::get().to_http_request(), &etag));
    }
}
