//! The console's pages and assets, compiled into the binary (`crates/api-http/console/`), each
//! kept gzip-compressed too and sent so to browsers that accept it.

use std::sync::OnceLock;

use actix_web::http::header::{self, HeaderValue};
use actix_web::{web, HttpRequest, HttpResponse};
use flate2::write::GzEncoder;
use std::io::Write;

struct Asset {
    name: &'static str,
    content_type: &'static str,
    body: &'static str,
}

macro_rules! assets {
    ($($name:literal => $type:literal),* $(,)?) => {
        const ASSETS: &[Asset] = &[
            $(Asset { name: $name, content_type: $type, body: include_str!(concat!("../../console/", $name)) },)*
        ];
    };
}

assets! {
    "index.html" => "text/html; charset=utf-8",
    "console.css" => "text/css; charset=utf-8",
    "app.js" => "text/javascript; charset=utf-8",
    "api.js" => "text/javascript; charset=utf-8",
    "ui.js" => "text/javascript; charset=utf-8",
    "overview.js" => "text/javascript; charset=utf-8",
    "objects.js" => "text/javascript; charset=utf-8",
    "logs.js" => "text/javascript; charset=utf-8",
    "icon.svg" => "image/svg+xml",
}

fn gzipped() -> &'static Vec<Vec<u8>> {
    static GZ: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    GZ.get_or_init(|| {
        ASSETS
            .iter()
            .map(|a| {
                let mut gz = GzEncoder::new(Vec::new(), flate2::Compression::best());
                // writing to a Vec cannot fail
                let _ = gz.write_all(a.body.as_bytes());
                gz.finish().unwrap_or_default()
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

fn send(req: &HttpRequest, index: usize, cache: &'static str) -> HttpResponse {
    let asset = &ASSETS[index];
    let mut res = HttpResponse::Ok();
    res.insert_header((header::CONTENT_TYPE, asset.content_type))
        .insert_header((header::CACHE_CONTROL, cache))
        .insert_header((header::VARY, "Accept-Encoding"));
    if accepts_gzip(req) {
        res.insert_header((header::CONTENT_ENCODING, HeaderValue::from_static("gzip")))
            .body(gzipped()[index].clone())
    } else {
        res.body(asset.body)
    }
}

/// `GET /assets/{name}`.
pub async fn asset(req: HttpRequest, name: web::Path<String>) -> HttpResponse {
    match ASSETS
        .iter()
        .position(|a| a.name == name.as_str() && a.name != "index.html")
    {
        // revalidated on each load: a new release is picked up at once
        Some(i) => send(&req, i, "no-cache"),
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
    send(&req, 0, "no-store")
}

#[cfg(test)]
mod tests {
    use super::accepts_gzip;
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
}
