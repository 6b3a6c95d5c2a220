//! `POST /v1/objects/zip`: selected files, or every file under a folder, as one ZIP archive,
//! streamed as it is written (each object's bytes read from the store a chunk at a time, stored
//! uncompressed — pictures and sounds do not compress — so memory stays flat whatever the total).

use actix_web::http::header;
use actix_web::{web, HttpResponse};
use async_zip::base::write::ZipFileWriter;
use async_zip::{Compression, ZipDateTime, ZipEntryBuilder};
use auth_core::Permission;
use cdn_core::path::{normalize_folder, normalize_key};
use cdn_core::store::{ListQuery, ObjectRecord};
use futures::{AsyncWriteExt, StreamExt};
use serde::Deserialize;
use stow_http::{ApiError, Auth, Code};
use utoipa::ToSchema;

use crate::state::CdnState;

/// The most files one archive holds.
pub const MAX_ZIP_FILES: usize = 10_000;
/// Bytes buffered between the archive's writer and the response.
const PIPE_BYTES: usize = 256 * 1024;

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
        (status = 400, description = "INVALID_REQUEST (both or neither of `paths` and `path`, too many files) or INVALID_PATH naming the path", body = stow_http::error::CdnErrorBody),
        (status = 403, description = "FORBIDDEN or PATH_NOT_ALLOWED", body = stow_http::error::CdnErrorBody),
        (status = 404, description = "NOT_FOUND: a named object does not exist", body = stow_http::error::CdnErrorBody),
        stow_http::error::JsonBodyErrors,
        stow_http::error::KeyedRouteErrors,
        stow_http::error::BodyRouteErrors,
    )
)]
pub async fn zip(
    auth: Auth,
    body: stow_http::Json<ZipRequest>,
    state: web::Data<CdnState>,
) -> Result<HttpResponse, ApiError> {
    auth.require(Permission::CdnRead)?;
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
    tokio::spawn(async move {
        if let Err(e) = write_archive(writer, blobs, files).await {
            // the 200 is sent: the archive ends without its directory, which unzip reports
            tracing::warn!(error = %e, "writing a ZIP archive stopped");
        }
    });
    let body = tokio_util::io::ReaderStream::new(reader);
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

/// The objects of `paths`, each the key may read and existing, under their keys.
async fn named(
    auth: &Auth,
    state: &CdnState,
    paths: &[String],
) -> Result<Vec<(String, ObjectRecord)>, ApiError> {
    let max = state.config.max_bulk_delete_paths;
    if paths.is_empty() || paths.len() > max {
        return Err(ApiError::invalid_request(format!(
            "`paths` must name 1 to {max} files (got {})",
            paths.len()
        )));
    }
    let scope = auth.key.path_scope();
    let mut files = Vec::with_capacity(paths.len());
    for (i, raw) in paths.iter().enumerate() {
        let key = normalize_key(raw)
            .map_err(|e| ApiError::new(Code::InvalidPath, format!("invalid `paths[{i}]`: {e}")))?;
        if !scope.allows(&key) {
            return Err(ApiError::new(
                Code::PathNotAllowed,
                format!("`{key}` is outside the paths {} may read", auth.holder()),
            ));
        }
        if files.iter().any(|(name, _)| *name == key.as_str()) {
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
        files.push((key.as_str().to_owned(), record));
    }
    Ok(files)
}

/// Every object under `folder` the key may read, named by its path below the folder.
async fn under(
    auth: &Auth,
    state: &CdnState,
    folder: &str,
    denied: Vec<String>,
) -> Result<Vec<(String, ObjectRecord)>, ApiError> {
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
            files.push((name, r));
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

async fn write_archive(
    writer: tokio::io::DuplexStream,
    blobs: stow_objects::Objects,
    files: Vec<(String, ObjectRecord)>,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let mut zip = ZipFileWriter::with_tokio(writer);
    for (name, record) in files {
        let entry = ZipEntryBuilder::new(name.into(), Compression::Stored)
            .last_modification_date(ZipDateTime::from_chrono(&record.last_modified))
            .unix_permissions(0o644);
        let mut out = zip.write_entry_stream(entry).await?;
        let location = stow_objects::ObjectPath::from(record.storage_path.as_str());
        if record.size > 0 {
            let mut bytes = blobs.get(&location, None).await?;
            while let Some(chunk) = bytes.next().await {
                out.write_all(&chunk?).await?;
            }
        }
        out.close().await?;
    }
    zip.close().await?;
    Ok(())
}
