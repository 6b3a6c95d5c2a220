//! Public delivery: `GET|HEAD /cdn/<workspace>/<key>`, the target of every `publicUrl`.
//!
//! Streams from the object store (never buffers a whole file), answers `ETag`, `Last-Modified`,
//! `Cache-Control`, `X-Content-Type-Options: nosniff`, single `Range` (206/416, honouring
//! `If-Range`) and `If-None-Match` or, without it, `If-Modified-Since` (304). Only raster images, audio, video
//! and plain text render inline; every other type is an attachment with a sandboxing CSP
//! ([`renders_inline`]), so nothing active ever renders on the delivery origin.

use actix_web::http::header::{self, HeaderValue};
use actix_web::http::{Method, StatusCode};
use actix_web::HttpMessage;
use actix_web::{web, HttpRequest, HttpResponse};
use auth_core::OrgId;
use cdn_core::content_type::renders_inline;
use cdn_core::path::{is_hidden, normalize_key};
use cdn_core::range::{parse_range, Unsatisfiable};
use cdn_core::store::ObjectRecord;
use futures::StreamExt;
use percent_encoding::percent_decode_str;
use stow_http::{ApiError, Code};

use crate::state::{ApiState, StaleMark};

pub const CACHE_CONTROL: &str = "public, max-age=300";

pub(crate) fn not_found() -> ApiError {
    ApiError::new(Code::NotFound, "no such object")
}

/// Whether an `If-None-Match` header names `etag` (unquoted; weak comparison, `*` matches).
pub(crate) fn etag_matches(header: &str, etag: &str) -> bool {
    header.split(',').any(|t| {
        let t = t.trim();
        let t = t.strip_prefix("W/").unwrap_or(t);
        t == "*" || t.trim_matches('"') == etag
    })
}

/// `If-Range`: the range applies only while the object is the one the client started from, named
/// by its (strong) ETag; otherwise the whole body is sent, so a resumed download never splices two
/// versions. A date is not trusted: an object replaced within the same second keeps its
/// `Last-Modified`.
fn if_range_holds(header: &str, etag: &str) -> bool {
    header
        .trim()
        .strip_prefix('"')
        .and_then(|rest| rest.strip_suffix('"'))
        == Some(etag)
}

/// `If-Modified-Since` (used only without `If-None-Match`): true when the object has not
/// changed since that date, at the one-second precision of HTTP dates.
fn unmodified_since(header: &str, last_modified: std::time::SystemTime) -> bool {
    let Ok(since) = httpdate::parse_http_date(header.trim()) else {
        return false; // an invalid date is ignored
    };
    let seconds = |t: std::time::SystemTime| {
        t.duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs())
    };
    seconds(last_modified) <= seconds(since)
}

/// Everything under `/cdn/`: GET and HEAD deliver, other methods are refused.
pub async fn dispatch(
    req: HttpRequest,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    req.extensions_mut()
        .insert(stow_http::request::RouteLabel("/cdn/{workspace}/{key}"));
    if req.method() == actix_web::http::Method::GET || req.method() == actix_web::http::Method::HEAD
    {
        deliver(req, state).await
    } else {
        stow_http::method_not_allowed(req).await
    }
}

#[utoipa::path(
    get, path = "/cdn/{workspace}/{key}", tag = "delivery",
    params(("workspace" = String, Path, description = "Workspace slug"), ("key" = String, Path, description = "Object key, each segment percent-encoded"),
        ("w" = Option<u32>, Query, description = "Rendition width in pixels (1-2048): the image resized (PNG, JPEG, WebP and GIF originals)"),
        ("h" = Option<u32>, Query, description = "Rendition height in pixels (1-2048)"),
        ("fit" = Option<String>, Query, description = "`contain` (default: the whole picture inside the box) or `cover` (the box filled, cropped around the centre; needs w and h)"),
        ("format" = Option<String>, Query, description = "`webp`, `jpeg` or `png` (default: the original's; PNG for a GIF)")),
    responses(
        (status = 200, description = "The bytes (or the rendition's)"),
        (status = 400, description = "INVALID_REQUEST: a rendition parameter, an original that is not an image, has too many pixels or would take too much memory", body = stow_http::error::ApiErrorBody),
        (status = 206, description = "A byte range"),
        (status = 304, description = "Not modified (If-None-Match, or If-Modified-Since without it)"),
        (status = 404, description = "No such object: the error envelope, or, for a key a placeholder pattern matches, the fallback object's bytes with `X-Stowage-Placeholder` naming it", body = stow_http::error::ApiErrorBody),
        (status = 416, description = "Range not satisfiable"),
        (status = 429, description = "RATE_LIMITED: a new rendition size of an original that has 24 kept, all made within the hour; `Retry-After` says when", body = stow_http::error::ApiErrorBody),
    )
)]
pub async fn deliver(
    req: HttpRequest,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    let raw = req
        .uri()
        .path()
        .strip_prefix("/cdn/")
        .ok_or_else(not_found)?;
    let (slug, raw_key) = raw.split_once('/').ok_or_else(not_found)?;
    let key = percent_decode_str(raw_key)
        .decode_utf8()
        .map_err(|_| not_found())?;
    let key = normalize_key(&key).map_err(|_| not_found())?;
    if is_hidden(&key) {
        return Err(not_found());
    }
    let stale = StaleMark::default();
    let org = state
        .org_by_slug(slug, &stale)
        .await?
        .ok_or_else(not_found)?;
    let Some(record) = state.delivery_row(&org.id, &key, &stale).await? else {
        return placeholder(&req, &state, &org.id, &key, &stale).await;
    };
    if let Some(r) = crate::rendition::asked(&req)? {
        return crate::rendition::deliver(&req, &state, &key, &record, r, CACHE_CONTROL).await;
    }
    let size = record.size as u64;
    let quoted = format!("\"{}\"", record.etag);
    let modified_at: std::time::SystemTime = record.last_modified.into();
    let last_modified = httpdate::fmt_http_date(modified_at);

    let mut res = HttpResponse::build(StatusCode::OK);
    res.insert_header((header::ETAG, quoted.as_str()))
        .insert_header((header::LAST_MODIFIED, last_modified))
        .insert_header((header::CACHE_CONTROL, CACHE_CONTROL))
        .insert_header((header::ACCEPT_RANGES, "bytes"));
    let content_type = content_headers(&mut res, &key, &record);

    let text = |name| req.headers().get(name).and_then(|v| v.to_str().ok());
    let not_modified = match (text(header::IF_NONE_MATCH), text(header::IF_MODIFIED_SINCE)) {
        (Some(inm), _) => etag_matches(inm, &record.etag),
        (None, Some(ims)) => unmodified_since(ims, modified_at),
        (None, None) => false,
    };
    if not_modified {
        return Ok(res.status(StatusCode::NOT_MODIFIED).finish());
    }

    let range_header = text(header::RANGE)
        .filter(|_| text(header::IF_RANGE).is_none_or(|h| if_range_holds(h, &record.etag)));
    let range = match range_header {
        None => None,
        Some(h) => match parse_range(h, size) {
            Ok(r) => r,
            Err(Unsatisfiable) => {
                return Ok(res
                    .status(StatusCode::RANGE_NOT_SATISFIABLE)
                    .insert_header((header::CONTENT_RANGE, format!("bytes */{size}")))
                    .finish())
            }
        },
    };
    res.insert_header((header::CONTENT_TYPE, content_type));
    if let Some(r) = &range {
        res.status(StatusCode::PARTIAL_CONTENT).insert_header((
            header::CONTENT_RANGE,
            format!("bytes {}-{}/{size}", r.start, r.end - 1),
        ));
    }
    send(&req, &state, res, &record, range).await
}

/// How long a placeholder answer may be cached (by browsers and shared caches alike): short, so
/// the real object shows soon after it is uploaded.
pub const PLACEHOLDER_CACHE_CONTROL: &str = "public, max-age=60";
/// Names the fallback object in a placeholder answer (its key, percent-encoded but for `/`).
pub const PLACEHOLDER_HEADER: &str = "x-stowage-placeholder";

/// What the placeholder header leaves as it is: RFC 3986 unreserved characters and `/`.
const PLACEHOLDER_KEY: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'/');

/// A missing key: a plain 404, or, when one of the organization's placeholder patterns matches
/// it and the fallback exists, the fallback's bytes with status 404 (never a cacheable 200 under
/// the missing key's URL), [`PLACEHOLDER_CACHE_CONTROL`] and [`PLACEHOLDER_HEADER`]. No
/// validators and no ranges: the answer is not the object at this URL.
async fn placeholder(
    req: &HttpRequest,
    state: &ApiState,
    org_id: &OrgId,
    key: &str,
    stale: &StaleMark,
) -> Result<HttpResponse, ApiError> {
    let set = state.placeholder_set(org_id, stale).await?;
    let Some((_, fallback)) = set.fallback_for(key) else {
        return Err(not_found());
    };
    let record = state
        .delivery_row(org_id, fallback, stale)
        .await?
        .ok_or_else(not_found)?;
    // a key is UTF-8 and a header value visible ASCII: the key goes percent-encoded, `/` kept
    let named = percent_encoding::utf8_percent_encode(fallback, PLACEHOLDER_KEY).to_string();
    let mut res = HttpResponse::build(StatusCode::NOT_FOUND);
    res.insert_header((header::CACHE_CONTROL, PLACEHOLDER_CACHE_CONTROL))
        .insert_header((PLACEHOLDER_HEADER, named));
    let content_type = content_headers(&mut res, fallback, &record);
    res.insert_header((header::CONTENT_TYPE, content_type));
    send(req, state, res, &record, None).await
}

/// `X-Content-Type-Options`, and for a type that does not render inline an attachment
/// disposition (named after `key`'s last segment) with a sandboxing CSP; returns the
/// `Content-Type` to send.
fn content_headers(
    res: &mut actix_web::HttpResponseBuilder,
    key: &str,
    record: &ObjectRecord,
) -> HeaderValue {
    let content_type = record
        .content_type
        .as_deref()
        .unwrap_or(cdn_core::content_type::OCTET_STREAM);
    res.insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"));
    if !renders_inline(content_type) {
        let name = key.rsplit('/').next().unwrap_or("download");
        let encoded =
            percent_encoding::utf8_percent_encode(name, percent_encoding::NON_ALPHANUMERIC);
        res.insert_header((
            header::CONTENT_DISPOSITION,
            format!("attachment; filename*=UTF-8''{encoded}"),
        ))
        .insert_header((
            header::CONTENT_SECURITY_POLICY,
            "sandbox; default-src 'none'",
        ));
    }
    HeaderValue::from_str(content_type)
        .unwrap_or(HeaderValue::from_static("application/octet-stream"))
}

/// Finishes `res` with the record's bytes (all, or `range`): nothing for HEAD, small objects
/// from memory, the rest streamed from the object store.
async fn send(
    req: &HttpRequest,
    state: &ApiState,
    mut res: actix_web::HttpResponseBuilder,
    record: &ObjectRecord,
    range: Option<std::ops::Range<u64>>,
) -> Result<HttpResponse, ApiError> {
    let size = record.size as u64;
    let length = range.as_ref().map_or(size, |r| r.end - r.start);
    if req.method() == Method::HEAD {
        // a sized body that is never polled: actix sends its length and no bytes for HEAD
        let empty = futures::stream::empty::<Result<bytes::Bytes, actix_web::Error>>();
        return Ok(res.no_chunking(length).streaming(empty));
    }
    // small objects are served from memory, keyed by their immutable location
    if size <= crate::state::SMALL_OBJECT_BYTES {
        let bytes = match state.small_objects.get(&record.storage_path) {
            Some(b) => b,
            None => {
                let location = stow_objects::ObjectPath::from(record.storage_path.as_str());
                let b = match state.blobs.read_all(&location).await {
                    Ok(b) => b,
                    Err(stow_objects::ObjectsError::NotFound) => return Err(not_found()),
                    Err(e) => return Err(e.into()),
                };
                state
                    .small_objects
                    .insert(record.storage_path.clone(), b.clone());
                b
            }
        };
        let body = match &range {
            Some(r) => bytes.slice(r.start as usize..r.end as usize),
            None => bytes,
        };
        return Ok(res.body(body));
    }
    let location = stow_objects::ObjectPath::from(record.storage_path.as_str());
    let stream = match state
        .blobs
        .get(&location, range.or(Some(0..size)).filter(|_| size > 0))
        .await
    {
        Ok(s) => s,
        // replaced or deleted between the row read and the byte read
        Err(stow_objects::ObjectsError::NotFound) => return Err(not_found()),
        Err(e) => return Err(e.into()),
    };
    let body = stream
        .map(|chunk| chunk.map_err(|e| actix_web::error::ErrorInternalServerError(e.to_string())));
    Ok(res.no_chunking(length).streaming(body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn etags() {
        assert!(etag_matches("\"abc\"", "abc"));
        assert!(etag_matches("W/\"abc\"", "abc"));
        assert!(etag_matches("\"x\", \"abc\"", "abc"));
        assert!(etag_matches("*", "abc"));
        assert!(!etag_matches("\"abd\"", "abc"));
    }

    #[test]
    fn if_range_needs_the_same_version() {
        assert!(if_range_holds("\"abc\"", "abc"));
        assert!(if_range_holds(" \"abc\" ", "abc"));
        assert!(!if_range_holds("\"abd\"", "abc"));
        // weak tags never validate a range (RFC 9110 13.1.5); dates are not trusted
        assert!(!if_range_holds("W/\"abc\"", "abc"));
        assert!(!if_range_holds("Mon, 23 Nov 2026 03:00:00 GMT", "abc"));
        assert!(!if_range_holds("\"abc", "abc"));
        assert!(!if_range_holds("abc", "abc"));
        assert!(!if_range_holds("", "abc"));
    }

    #[test]
    fn if_modified_since_at_second_precision() {
        use std::time::{Duration, UNIX_EPOCH};
        let at = UNIX_EPOCH + Duration::from_millis(1_795_402_800_250); // 2026-11-23T03:00:00.250Z
        assert!(unmodified_since("Mon, 23 Nov 2026 03:00:00 GMT", at));
        assert!(unmodified_since("Mon, 23 Nov 2026 03:00:01 GMT", at));
        assert!(!unmodified_since("Mon, 23 Nov 2026 02:59:59 GMT", at));
        assert!(!unmodified_since("yesterday", at));
        assert!(!unmodified_since("", at));
    }
}
