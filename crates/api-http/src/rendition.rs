//! Renditions on public delivery (`/cdn/<workspace>/<key>?w=320&h=180&fit=cover&format=webp`):
//! an image object resized, made once and kept beside the original's bytes under a name derived
//! from its storage location (`cdn_core::rendition`), so a replaced original (a new location)
//! gets new ones and garbage collection removes the old. Made off the async workers (`spawn_blocking`), at
//! most `RENDITION_CONCURRENCY` at once per instance; the rest wait their turn.
//!
//! Bounded against a flood of distinct sizes: an original keeps at most
//! `cdn_core::rendition::MAX_KEPT_PER_ORIGINAL` renditions, the oldest giving way after an hour
//! (a new size past that is 429 until then), and the renditions being made on an instance take
//! at most `RENDITION_MEMORY_MB` together, each its cost read from the original's header.

use actix_web::http::{header, Method, StatusCode};
use actix_web::{HttpRequest, HttpResponse};
use bytes::Bytes;
use cdn_core::rendition::{self, Format, Keep, Rendition, RenditionParams, MAX_SOURCE_BYTES};
use cdn_core::store::ObjectRecord;
use stow_http::{ApiError, Code};
use stow_objects::{ObjectPath, ObjectsError};

use crate::state::ApiState;

/// The rendition a delivery request asks for, if any (`w`, `h`, `fit` or `format` in its query;
/// other parameters are ignored, as on every delivery).
pub fn asked(req: &HttpRequest) -> Result<Option<Rendition>, ApiError> {
    let params: RenditionParams = stow_http::query::parse(req.query_string())?;
    if !params.asked() {
        return Ok(None);
    }
    rendition::validate(&params)
        .map(Some)
        .map_err(ApiError::invalid_request)
}

/// Answers the rendition `r` of `record` (found at `key`), with the original's caching headers
/// and an entity tag of its own; `If-None-Match` gives 304. Ranges are not served: the answer
/// is whole.
pub async fn deliver(
    req: &HttpRequest,
    state: &ApiState,
    key: &str,
    record: &ObjectRecord,
    r: Rendition,
    cache_control: &str,
) -> Result<HttpResponse, ApiError> {
    let content_type = record.content_type.as_deref().unwrap_or("");
    let Some(format) = r.output(content_type) else {
        return Err(ApiError::invalid_request(format!(
            "renditions (`w`, `h`, `fit`, `format`) are made of PNG, JPEG, WebP and GIF images; `{key}` is {}",
            if content_type.is_empty() { "of no known type" } else { content_type }
        )));
    };
    if record.size as u64 > MAX_SOURCE_BYTES {
        return Err(ApiError::invalid_request(format!(
            "`{key}` is {} bytes; renditions are made of images of at most {MAX_SOURCE_BYTES} bytes",
            record.size
        )));
    }
    let tag = r.etag(&record.etag, format);
    let etag = format!("\"{tag}\"");
    let modified_at: std::time::SystemTime = record.last_modified.into();
    let mut res = HttpResponse::build(StatusCode::OK);
    res.insert_header((header::ETAG, etag.as_str()))
        .insert_header((header::LAST_MODIFIED, httpdate::fmt_http_date(modified_at)))
        .insert_header((header::CACHE_CONTROL, cache_control))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"));
    let matches = req
        .headers()
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|inm| crate::delivery::etag_matches(inm, &tag));
    if matches {
        return Ok(res.status(StatusCode::NOT_MODIFIED).finish());
    }
    let bytes = made(state, record, &r, format).await?;
    res.insert_header((header::CONTENT_TYPE, format.content_type()));
    if req.method() == Method::HEAD {
        let empty = futures::stream::empty::<Result<Bytes, actix_web::Error>>();
        return Ok(res.no_chunking(bytes.len() as u64).streaming(empty));
    }
    Ok(res.body(bytes))
}

/// The rendition's bytes: kept ones, or made now (and kept).
async fn made(
    state: &ApiState,
    record: &ObjectRecord,
    r: &Rendition,
    format: Format,
) -> Result<Bytes, ApiError> {
    let name = r.cache_path(&record.storage_path, format);
    // a kept rendition never changes at its name (the original's location is immutable): the
    // small ones are served from memory like small objects
    if let Some(bytes) = state.small_objects.get(&name) {
        metrics::counter!("cdn_renditions_total", "source" => "kept").increment(1);
        return Ok(bytes);
    }
    let kept = ObjectPath::from(name.as_str());
    if let Some(bytes) = read(state, &kept).await? {
        metrics::counter!("cdn_renditions_total", "source" => "kept").increment(1);
        remember(state, name, &bytes);
        return Ok(bytes);
    }
    // one at a time per permit; a request that waited may find it made by the one before
    let _permit = state
        .renditions
        .acquire()
        .await
        .map_err(|_| ApiError::new(Code::Unavailable, "shutting down"))?;
    if let Some(bytes) = read(state, &kept).await? {
        metrics::counter!("cdn_renditions_total", "source" => "kept").increment(1);
        remember(state, name, &bytes);
        return Ok(bytes);
    }
    let evict = room_for_one_more(state, record).await?;
    let original = ObjectPath::from(record.storage_path.as_str());
    let source = match state.blobs.read_all(&original).await {
        Ok(b) => b,
        // replaced or deleted between the row read and the byte read
        Err(ObjectsError::NotFound) => return Err(crate::delivery::not_found()),
        Err(e) => return Err(e.into()),
    };
    // the memory it takes, from the header, out of the instance's budget for renditions
    let cost = stow_images::cost(&source, stow_images::Bounds::default()).map_err(refused)?;
    let megabytes = u32::try_from(cost.div_ceil(1 << 20))
        .unwrap_or(u32::MAX)
        .min(state.config.rendition_memory_mb);
    let _memory = state
        .rendition_memory
        .acquire_many(megabytes)
        .await
        .map_err(|_| ApiError::new(Code::Unavailable, "shutting down"))?;
    let started = std::time::Instant::now();
    let rendition = *r;
    let result =
        tokio::task::spawn_blocking(move || stow_images::render(&source, &rendition, format))
            .await
            .map_err(|e| {
                tracing::error!(error = %e, "rendition task failed");
                ApiError::new(Code::Internal, "making the rendition failed")
            })?;
    metrics::histogram!("cdn_rendition_seconds").record(started.elapsed().as_secs_f64());
    let made = result.map_err(refused)?;
    metrics::counter!("cdn_renditions_total", "source" => "made").increment(1);
    let bytes = Bytes::from(made.bytes);
    if let Some(oldest) = evict {
        if let Err(e) = state.blobs.delete(&ObjectPath::from(oldest.as_str())).await {
            tracing::warn!(error = %e, "evicting a kept rendition failed");
        }
    }
    // kept for the next request; a failed write only costs the next one a new rendition
    if let Err(e) = state
        .blobs
        .put(&kept, bytes.clone(), Some(format.content_type()))
        .await
    {
        tracing::warn!(error = %e, "keeping a rendition failed");
    }
    remember(state, name, &bytes);
    Ok(bytes)
}

/// The answer to a rendition that cannot be made of these bytes (400), or a failure.
fn refused(e: stow_images::RenderError) -> ApiError {
    match e {
        stow_images::RenderError::TooManyPixels { .. }
        | stow_images::RenderError::TooMuchMemory { .. }
        | stow_images::RenderError::Undecodable(_) => ApiError::invalid_request(e.to_string()),
        other => {
            tracing::error!(error = %other, "rendition failed");
            ApiError::new(Code::Internal, "making the rendition failed")
        }
    }
}

/// Whether one more rendition of `record` may be kept (`cdn_core::rendition::keep`): `None`
/// when there is room, the oldest to evict once the new one is made, or 429 until the oldest
/// may give way.
async fn room_for_one_more(
    state: &ApiState,
    record: &ObjectRecord,
) -> Result<Option<String>, ApiError> {
    use futures::TryStreamExt;
    let kept: Vec<(String, chrono::DateTime<chrono::Utc>)> = state
        .blobs
        .list(&Rendition::kept_under(&record.storage_path))
        .try_collect()
        .await?;
    let now = chrono::Utc::now();
    match rendition::keep(&kept, now) {
        Keep::Room => Ok(None),
        Keep::Evict(oldest) => Ok(Some(oldest)),
        Keep::Full { until } => {
            let wait = (until - now).num_seconds().max(1) as u64;
            Err(ApiError::new(
                Code::RateLimited,
                format!(
                    "{} sizes of this image were made in the last hour, the most kept; ask for one of them, or for a new size in {wait} s",
                    rendition::MAX_KEPT_PER_ORIGINAL
                ),
            )
            .with_retry_after(wait))
        }
    }
}

/// Keeps a small rendition in the in-process cache of small objects, by its name.
fn remember(state: &ApiState, name: String, bytes: &Bytes) {
    if bytes.len() as u64 <= crate::state::SMALL_OBJECT_BYTES {
        state.small_objects.insert(name, bytes.clone());
    }
}

async fn read(state: &ApiState, location: &ObjectPath) -> Result<Option<Bytes>, ApiError> {
    match state.blobs.read_all(location).await {
        Ok(b) => Ok(Some(b)),
        Err(ObjectsError::NotFound) => Ok(None),
        Err(e) => Err(e.into()),
    }
}
