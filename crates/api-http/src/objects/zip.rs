//! `POST /v1/objects/zip`: selected files, or every file under a folder, as one ZIP archive,
//! streamed as it is written (each object's bytes read from the store a chunk at a time, stored
//! uncompressed — pictures and sounds do not compress — so memory stays flat whatever the total).
//!
//! What one download may hold is bounded: the listing is kept as names and locations only, at
//! most `ZIP_DOWNLOADS` run at once on an instance (429 past that), a client that stops reading
//! for `LOGS_STREAM_STALL_SECONDS` is cut off, and a download that cannot be finished (a file
//! deleted or replaced meanwhile, the store failing) is aborted rather than ended as if whole.

use actix_web::http::header;
use actix_web::{web, HttpResponse};
use async_zip::base::write::ZipFileWriter;
use async_zip::{Compression, ZipDateTime, ZipEntryBuilder};
use auth_core::Permission;
use cdn_core::path::{normalize_folder, normalize_key};
use cdn_core::store::{ListQuery, ObjectRecord};
use chrono::{DateTime, Utc};
use futures::{AsyncWriteExt, StreamExt};
use serde::Deserialize;
use stow_http::{ApiError, Auth, Code};
use utoipa::ToSchema;

use std::sync::Arc;

use crate::state::ApiState;

/// The most files one archive holds.
pub const MAX_ZIP_FILES: usize = 10_000;
/// Bytes buffered between the archive's writer and the response.
const PIPE_BYTES: usize = 256 * 1024;

/// One file of an archive: what writing it needs, and nothing more (a record's metadata is not
/// kept for 10,000 files).
struct Entry {
    name: String,
    location: String,
    size: u64,
    modified: DateTime<Utc>,
}

impl Entry {
    fn new(name: String, r: &ObjectRecord) -> Self {
        Self {
            name: zip_entry_name(&name),
            location: r.storage_path.clone(),
            size: r.size.max(0) as u64,
            modified: r.last_modified,
        }
    }
}

/// An object key as a ZIP entry name that extracts inside the folder it is extracted to: a
/// first segment like `C:` (a Windows drive) or a `\` (a Windows separator) would let an
/// extractor write outside it, so `:` and `\` become `_`.
fn zip_entry_name(key: &str) -> String {
    key.replace([':', '\\'], "_")
}

/// `POST /v1/objects/zip`: `paths` or `path`, not both.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ZipRequest {
    /// Object keys, 1 to 1000 (`MAX_BULK_DELETE_PATHS`); each is in the archive under its key.
    pub paths: Option<Vec<String>>,
    /// A folder: every file under it, at most 10,000, named by their path below it.
    pub path: Option<String>,
}

/// Download files as one ZIP archive.
#[utoipa::path(
    post, path = "/v1/objects/zip", tag = "objects", request_body = ZipRequest,
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The archive (application/zip), streamed", content_type = "application/zip"),
        (status = 400, description = "INVALID_REQUEST (both or neither of `paths` and `path`, too many files) or INVALID_PATH naming the path", body = stow_http::error::ApiErrorBody),
        (status = 403, description = "FORBIDDEN or PATH_NOT_ALLOWED", body = stow_http::error::ApiErrorBody),
        (status = 404, description = "NOT_FOUND: a named object does not exist", body = stow_http::error::ApiErrorBody),
        stow_http::error::JsonBodyErrors,
        stow_http::error::KeyedRouteErrors,
        stow_http::error::BodyRouteErrors,
    )
)]
pub async fn zip(
    auth: Auth,
    body: stow_http::Json<ZipRequest>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    auth.require(Permission::CdnRead)?;
    let permit = Arc::clone(&state.zips).try_acquire_owned().map_err(|_| {
        ApiError::new(
            Code::RateLimited,
            format!(
                "{} ZIP downloads are running on this instance, the most at once; try again shortly",
                state.config.zip_concurrency
            ),
        )
        .with_retry_after(5)
    })?;
    let req = body.into_inner();
    let (files, name) = match (req.paths, req.path) {
        (Some(paths), None) => (
            named(&auth, &state, &paths).await?,
            "stowage-files".to_owned(),
        ),
        (None, Some(path)) => {
            let folder = normalize_folder(&path)
                .map_err(|e| ApiError::new(Code::InvalidPath, format!("invalid `path`: {e}")))?;
            let scope = super::readable_folder(&auth, &folder, true)?;
            let files = under(&auth, &state, &folder, scope.denied.clone()).await?;
            let name = folder
                .rsplit('/')
                .next()
                .filter(|n| !n.is_empty())
                .unwrap_or("stowage-files");
            (files, name.to_owned())
        }
        _ => {
            return Err(ApiError::invalid_request(
                "send `paths` (the files) or `path` (a folder), one of them",
            ))
        }
    };
    let (writer, reader) = tokio::io::duplex(PIPE_BYTES);
    let blobs = state.blobs.clone();
    let stall = state.config.stream_stall;
    let (done, outcome) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        let written = write_archive(writer, blobs, files, stall).await;
        if let Err(e) = &written {
            tracing::warn!(error = %e, "writing a ZIP archive stopped");
        }
        let _ = done.send(written.is_ok());
        drop(permit);
    });
    let body = finished_or_aborted(tokio_util::io::ReaderStream::new(reader), outcome);
    let encoded = percent_encoding::utf8_percent_encode(
        &format!("{name}.zip"),
        percent_encoding::NON_ALPHANUMERIC,
    )
    .to_string();
    Ok(HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, "application/zip"))
        .insert_header((
            header::CONTENT_DISPOSITION,
            format!("attachment; filename*=UTF-8''{encoded}"),
        ))
        .insert_header((header::CACHE_CONTROL, "private, no-store"))
        .streaming(body))
}

/// The archive's bytes, then — once the writer is done — its end, or an error when the writer
/// failed: the status is sent, and ending the body with an error aborts the connection, so a
/// client sees a failed download (curl exits non-zero) rather than a clean end with a broken
/// archive inside.
fn finished_or_aborted(
    bytes: tokio_util::io::ReaderStream<tokio::io::DuplexStream>,
    outcome: tokio::sync::oneshot::Receiver<bool>,
) -> impl futures::Stream<Item = Result<web::Bytes, std::io::Error>> {
    let end = futures::stream::once(async move {
        match outcome.await {
            Ok(true) => None,
            _ => Some(Err(std::io::Error::other(
                "the ZIP archive could not be finished",
            ))),
        }
    })
    .filter_map(futures::future::ready);
    bytes.chain(end)
}

/// The objects of `paths`, each the key may read and existing, under their keys.
async fn named(auth: &Auth, state: &ApiState, paths: &[String]) -> Result<Vec<Entry>, ApiError> {
    let max = state.config.max_bulk_delete_paths;
    if paths.is_empty() || paths.len() > max {
        return Err(ApiError::invalid_request(format!(
            "`paths` must name 1 to {max} files (got {})",
            paths.len()
        )));
    }
    let scope = auth.key.path_scope();
    let mut files = Vec::with_capacity(paths.len());
    let mut seen = std::collections::HashSet::with_capacity(paths.len());
    for (i, raw) in paths.iter().enumerate() {
        let key = normalize_key(raw)
            .map_err(|e| ApiError::new(Code::InvalidPath, format!("invalid `paths[{i}]`: {e}")))?;
        if !scope.allows(&key) {
            return Err(ApiError::new(
                Code::PathNotAllowed,
                format!("`{key}` is outside the paths {} may read", auth.holder()),
            ));
        }
        if seen.contains(key.as_str()) {
            continue;
        }
        let record = state
            .stores
            .records
            .get(&auth.org.id, &key)
            .await?
            .ok_or_else(|| {
                ApiError::new(Code::NotFound, format!("no object has the key `{key}`"))
            })?;
        seen.insert(key.as_str().to_owned());
        files.push(Entry::new(key.as_str().to_owned(), &record));
    }
    Ok(files)
}

/// Every object under `folder` the key may read, named by its path below the folder.
async fn under(
    auth: &Auth,
    state: &ApiState,
    folder: &str,
    denied: Vec<String>,
) -> Result<Vec<Entry>, ApiError> {
    let prefix = if folder.is_empty() {
        String::new()
    } else {
        format!("{folder}/")
    };
    let mut files = Vec::new();
    let mut after = None;
    loop {
        let page = state
            .stores
            .records
            .list(
                &auth.org.id,
                &ListQuery {
                    folder: folder.to_owned(),
                    after: after.clone(),
                    denied: denied.clone(),
                    limit: 1000,
                },
            )
            .await?;
        let last = page.last().map(|r| r.key.as_str().to_owned());
        let full = page.len() == 1000;
        for r in page {
            let key = r.key.as_str();
            // the folder's own key (an object named like the folder) keeps its name
            let name = key.strip_prefix(&prefix).unwrap_or(key).to_owned();
            files.push(Entry::new(name, &r));
        }
        if files.len() > MAX_ZIP_FILES {
            return Err(ApiError::invalid_request(format!(
                "`{folder}` holds more than {MAX_ZIP_FILES} files; download its sub-folders one at a time"
            )));
        }
        match last {
            Some(l) if full => after = Some(l),
            _ => return Ok(files),
        }
    }
}

/// `step` of writing an archive, failed when it waits longer than `stall` (the client stopped
/// reading and every buffer between is full).
async fn within<T, E>(
    stall: std::time::Duration,
    step: impl std::future::Future<Output = Result<T, E>>,
) -> Result<T, Box<dyn std::error::Error + Send + Sync>>
where
    E: std::error::Error + Send + Sync + 'static,
{
    match tokio::time::timeout(stall, step).await {
        Ok(done) => Ok(done?),
        Err(_) => Err(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            "the client stopped reading",
        )
        .into()),
    }
}

/// Writes the archive of `files` into `writer`. Fails when a write waits longer than `stall`
/// (the client stopped reading), when a file cannot be read, or when its bytes are not its
/// recorded size (it was replaced or deleted meanwhile).
async fn write_archive(
    writer: tokio::io::DuplexStream,
    blobs: stow_objects::Objects,
    files: Vec<Entry>,
    stall: std::time::Duration,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let mut zip = ZipFileWriter::with_tokio(writer);
    for file in files {
        let entry = ZipEntryBuilder::new(file.name.into(), Compression::Stored)
            .last_modification_date(ZipDateTime::from_chrono(&file.modified))
            .unix_permissions(0o644);
        let mut out = within(stall, zip.write_entry_stream(entry)).await?;
        let location = stow_objects::ObjectPath::from(file.location.as_str());
        let mut written = 0u64;
        if file.size > 0 {
            let mut bytes = blobs.get(&location, None).await?;
            while let Some(chunk) = bytes.next().await {
                let chunk = chunk?;
                written += chunk.len() as u64;
                within(stall, out.write_all(&chunk)).await?;
            }
        }
        if written != file.size {
            return Err(format!(
                "an object changed while its archive was written ({written} of {} bytes)",
                file.size
            )
            .into());
        }
        within(stall, out.close()).await?;
    }
    within(stall, zip.close()).await?;
    Ok(())
}
