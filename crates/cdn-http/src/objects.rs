//! `/v1/objects*`: list, upload (multipart, Base64, bulk), delete, bulk delete.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use auth_core::Permission;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use base64::Engine;
use cdn_core::idempotency::Fingerprint;
use cdn_core::listing::{self, TokenError};
use cdn_core::metadata::{self, Metadata};
use cdn_core::path::{normalize_folder, normalize_key};
use cdn_core::store::ListQuery;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use stow_http::{current_request_id, ApiError, Auth, Code};
use utoipa::{IntoParams, ToSchema};

use crate::form::{read_form, FormLimits, StageGuard, StagedFile};
use crate::idem;
use crate::pipeline::{place, ListedObject, UploadPolicy, UploadedObject};
use crate::state::CdnState;

/// JSON bodies of the Base64 route may be this large (about 12 MiB of file).
pub const BASE64_BODY_LIMIT: usize = 16 * 1024 * 1024;

pub fn key_policy(auth: &Auth) -> UploadPolicy {
    UploadPolicy {
        scope: auth.key.path_scope(),
        mime_lists: auth.key.allowed_mime.clone().into_iter().collect(),
        lock: None,
        randomize_name: false,
    }
}

pub(crate) fn metadata_error(e: metadata::MetadataError) -> ApiError {
    ApiError::invalid_request(format!("invalid metadata: {e}"))
}

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
pub struct ListParams {
    /// Folder to list (recursive). Required when the key is restricted to path prefixes.
    pub path: Option<String>,
    /// Page size, 1 to 1000 (default 100).
    pub limit: Option<String>,
    /// Value from the previous page.
    pub continuation_token: Option<String>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListResponse {
    pub success: bool,
    pub objects: Vec<ListedObject>,
    pub continuation_token: Option<String>,
    pub request_id: String,
}

/// List objects under a folder, recursively, in ascending key order.
#[utoipa::path(
    get, path = "/v1/objects", tag = "objects", params(ListParams), security(("bearer" = [])),
    responses(
        (status = 200, description = "One page of objects", body = ListResponse),
        (status = 400, description = "INVALID_REQUEST (limit, continuationToken) or INVALID_PATH", body = crate::docs::CdnError),
        (status = 401, description = "UNAUTHORIZED", body = crate::docs::CdnError),
        (status = 403, description = "FORBIDDEN or PATH_NOT_ALLOWED", body = crate::docs::CdnError),
        (status = 429, description = "RATE_LIMITED", body = crate::docs::CdnError),
    )
)]
pub async fn list(
    auth: Auth,
    params: web::Query<ListParams>,
    state: web::Data<CdnState>,
) -> Result<HttpResponse, ApiError> {
    auth.require(Permission::CdnRead)?;
    let folder = normalize_folder(params.path.as_deref().unwrap_or(""))
        .map_err(|e| ApiError::new(Code::InvalidPath, format!("invalid path: {e}")))?;
    let scope = auth.key.path_scope();
    if !scope.allows_listing(&folder) {
        let msg = if params.path.is_none() {
            "this key is restricted to specific path prefixes; pass `path`".to_owned()
        } else {
            format!("path `{folder}` is outside the paths this key may read")
        };
        return Err(ApiError::new(Code::PathNotAllowed, msg));
    }
    let limit = listing::parse_limit(params.limit.as_deref()).map_err(ApiError::invalid_request)?;
    let after = match &params.continuation_token {
        None => None,
        Some(t) => Some(
            listing::read_token(&state.config.signing_secret, &auth.org.id, &folder, t).map_err(
                |e| match e {
                    TokenError::Invalid | TokenError::Mismatch => {
                        ApiError::invalid_request(e.to_string())
                    }
                },
            )?,
        ),
    };
    let mut rows = state
        .repo
        .list(
            &auth.org.id,
            &ListQuery {
                folder: folder.clone(),
                after,
                denied: scope.denied.clone(),
                limit: limit + 1,
            },
        )
        .await?;
    let more = rows.len() > limit;
    rows.truncate(limit);
    let continuation_token = match (more, rows.last()) {
        (true, Some(last)) => Some(listing::make_token(
            &state.config.signing_secret,
            &auth.org.id,
            &folder,
            &last.key,
        )),
        _ => None,
    };
    let objects = rows
        .iter()
        .map(|r| state.listed(&auth.org.slug, r))
        .collect();
    Ok(HttpResponse::Ok().json(ListResponse {
        success: true,
        objects,
        continuation_token,
        request_id: current_request_id(),
    }))
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UploadResponse {
    pub success: bool,
    pub object: UploadedObject,
    pub request_id: String,
}

/// Multipart upload form (documentation only; parts may come in any order).
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct UploadForm {
    /// The file.
    #[schema(format = Binary, content_media_type = "application/octet-stream")]
    file: String,
    /// Destination folder.
    path: Option<String>,
    /// Stored name; defaults to the uploaded file name (its last segment).
    filename: Option<String>,
    /// JSON object; string values are kept, other values ignored.
    metadata: Option<String>,
}

/// Upload one file (multipart).
#[utoipa::path(
    post, path = "/v1/objects", tag = "objects", security(("bearer" = [])),
    params(("Idempotency-Key" = Option<String>, Header, description = "Makes retries safe")),
    request_body(content = UploadForm, content_type = "multipart/form-data"),
    responses(
        (status = 200, description = "Stored", body = UploadResponse),
        (status = 400, description = "INVALID_REQUEST, INVALID_PATH or TOO_MANY_FILES", body = crate::docs::CdnError),
        (status = 401, description = "UNAUTHORIZED", body = crate::docs::CdnError),
        (status = 403, description = "FORBIDDEN or PATH_NOT_ALLOWED", body = crate::docs::CdnError),
        (status = 409, description = "CONFLICT (Idempotency-Key reuse)", body = crate::docs::CdnError),
        (status = 413, description = "FILE_TOO_LARGE", body = crate::docs::CdnError),
        (status = 415, description = "CONTENT_TYPE_NOT_ALLOWED, or UNSUPPORTED_MEDIA_TYPE (a Content-Encoding on the upload: forms are never decoded)", body = crate::docs::CdnError),
        (status = 408, description = "REQUEST_TIMEOUT (the body stopped arriving)", body = crate::docs::CdnError),
        (status = 507, description = "INSUFFICIENT_STORAGE (the object store is out of space; Retry-After)", body = crate::docs::CdnError),
        (status = 429, description = "RATE_LIMITED", body = crate::docs::CdnError),
    )
)]
pub async fn upload(
    auth: Auth,
    req: HttpRequest,
    payload: web::Payload,
    state: web::Data<CdnState>,
) -> Result<HttpResponse, ApiError> {
    auth.require(Permission::CdnWrite)?;
    let limits = |retry: bool| FormLimits {
        max_file_size: state.max_file_size(&auth),
        max_files: 1,
        fail_fast: true,
        store: !retry,
    };
    multipart_route(
        &state,
        &auth,
        &req,
        payload,
        "/v1/objects",
        limits,
        |form| store_single(&state, &auth, form),
    )
    .await
}

/// The shared flow of the multipart upload routes: claim the `Idempotency-Key`, stream the form
/// (hashing only, for a retry), then replay the stored answer or store and record the new one.
async fn multipart_route<L, S, Fut>(
    state: &CdnState,
    auth: &Auth,
    req: &HttpRequest,
    payload: web::Payload,
    route: &str,
    limits: L,
    store: S,
) -> Result<HttpResponse, ApiError>
where
    L: FnOnce(bool) -> FormLimits,
    S: FnOnce(crate::form::Form) -> Fut,
    Fut: std::future::Future<Output = Result<(StatusCode, Value), ApiError>>,
{
    let ticket = idem::begin(state, req, &auth.key.id, route).await?;
    let form = read_form(
        req.headers(),
        payload,
        &state.objects,
        &auth.org.id,
        limits(ticket.is_retry()),
    )
    .await;
    if ticket.is_retry() {
        return ticket.replay(req, &form?.fingerprint);
    }
    let (fingerprint, outcome) = match form {
        Ok(mut form) => {
            let fp = std::mem::take(&mut form.fingerprint);
            (fp, store(form).await)
        }
        Err(e) => (Vec::new(), Err(e)),
    };
    ticket.finish(&fingerprint, outcome).await
}

async fn store_single(
    state: &CdnState,
    auth: &Auth,
    mut form: crate::form::Form,
) -> Result<(StatusCode, Value), ApiError> {
    let file = match form.files.pop() {
        Some(f) => f,
        None => {
            return Err(ApiError::invalid_request(
                "the multipart part `file` is required",
            ))
        }
    };
    let meta = metadata::from_text(form.field("metadata").unwrap_or("")).map_err(metadata_error)?;
    let placement = place(
        &file,
        form.field("path"),
        form.field("filename"),
        &key_policy(auth),
    )?;
    let record = state
        .commit(&auth.org.id, &file, placement, meta, &mut form.guard)
        .await?;
    Ok((
        StatusCode::OK,
        json!({ "success": true, "object": state.uploaded(&auth.org.slug, &record), "requestId": current_request_id() }),
    ))
}

#[derive(Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Base64Upload {
    /// Raw Base64 (padded or not) or a `data:<mime>;base64,<data>` URL.
    pub data: String,
    /// Stored name; when absent, a generated name with the extension of the detected type.
    pub filename: Option<String>,
    /// Destination folder.
    pub path: Option<String>,
    /// Object of strings, or a JSON string holding one.
    #[schema(value_type = Object)]
    pub metadata: Option<Value>,
    /// Declared type; default the data URL's type.
    pub content_type: Option<String>,
}

fn decode_base64(data: &str) -> Result<(Option<String>, Vec<u8>), ApiError> {
    let (declared, payload) = match data.strip_prefix("data:") {
        Some(rest) => {
            let (meta, payload) = rest
                .split_once(',')
                .ok_or_else(|| ApiError::invalid_request("data URL has no `,` before its data"))?;
            let mime = meta.strip_suffix(";base64").ok_or_else(|| {
                ApiError::invalid_request("data URL must be Base64 (`data:<mime>;base64,<data>`)")
            })?;
            (Some(mime.to_owned()).filter(|m| !m.is_empty()), payload)
        }
        None => (None, data),
    };
    let cleaned: String = payload
        .chars()
        .filter(|c| !c.is_ascii_whitespace())
        .collect();
    let config =
        GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent);
    let standard = GeneralPurpose::new(&base64::alphabet::STANDARD, config);
    let url_safe = GeneralPurpose::new(&base64::alphabet::URL_SAFE, config);
    let bytes = standard
        .decode(&cleaned)
        .or_else(|_| url_safe.decode(&cleaned))
        .map_err(|e| ApiError::invalid_request(format!("data is not valid Base64: {e}")))?;
    Ok((declared, bytes))
}

/// Upload one Base64-encoded file in a JSON body.
#[utoipa::path(
    post, path = "/v1/objects/base64", tag = "objects", security(("bearer" = [])),
    params(("Idempotency-Key" = Option<String>, Header, description = "Makes retries safe")),
    request_body = Base64Upload,
    responses(
        (status = 200, description = "Stored", body = UploadResponse),
        (status = 400, description = "INVALID_REQUEST (bad Base64, metadata) or INVALID_PATH", body = crate::docs::CdnError),
        (status = 401, description = "UNAUTHORIZED", body = crate::docs::CdnError),
        (status = 403, description = "FORBIDDEN or PATH_NOT_ALLOWED", body = crate::docs::CdnError),
        (status = 409, description = "CONFLICT", body = crate::docs::CdnError),
        (status = 413, description = "FILE_TOO_LARGE or PAYLOAD_TOO_LARGE", body = crate::docs::CdnError),
        (status = 415, description = "CONTENT_TYPE_NOT_ALLOWED, or UNSUPPORTED_MEDIA_TYPE (not JSON, or a Content-Encoding other than identity, gzip, deflate)", body = crate::docs::CdnError),
        (status = 408, description = "REQUEST_TIMEOUT (the body stopped arriving)", body = crate::docs::CdnError),
        (status = 507, description = "INSUFFICIENT_STORAGE (the object store is out of space; Retry-After)", body = crate::docs::CdnError),
    )
)]
pub async fn upload_base64(
    auth: Auth,
    req: HttpRequest,
    body: stow_http::Json<Base64Upload>,
    state: web::Data<CdnState>,
) -> Result<HttpResponse, ApiError> {
    auth.require(Permission::CdnWrite)?;
    let body = body.into_inner();
    let mut fp = Fingerprint::new();
    fp.json(&serde_json::to_value(&body).unwrap_or(Value::Null));
    let fingerprint = fp.finish();
    let ticket = idem::begin(&state, &req, &auth.key.id, "/v1/objects/base64").await?;
    if ticket.is_retry() {
        return ticket.replay(&req, &fingerprint);
    }
    let outcome = store_base64(&state, &auth, body).await;
    ticket.finish(&fingerprint, outcome).await
}

async fn store_base64(
    state: &CdnState,
    auth: &Auth,
    body: Base64Upload,
) -> Result<(StatusCode, Value), ApiError> {
    let (url_type, bytes) = decode_base64(&body.data)?;
    let max = state.max_file_size(auth);
    if bytes.len() as u64 > max {
        return Err(ApiError::new(
            Code::FileTooLarge,
            format!("file is larger than the limit of {max} bytes"),
        ));
    }
    let meta = match &body.metadata {
        None => Metadata::new(),
        Some(v) => metadata::from_value(v).map_err(metadata_error)?,
    };
    let digest = blake3::hash(&bytes).to_hex().to_string();
    let location = stow_objects::Objects::fresh_location(&auth.org.id);
    let file = StagedFile {
        field: "data".into(),
        file_name: body.filename.clone(),
        declared: body.content_type.clone().or(url_type),
        location: Some(location.clone()),
        size: bytes.len() as u64,
        digest,
        head: bytes[..bytes.len().min(cdn_core::content_type::SNIFF_LEN)].to_vec(),
        too_large: false,
    };
    let placement = place(
        &file,
        body.path.as_deref(),
        body.filename.as_deref(),
        &key_policy(auth),
    )?;
    let mut guard = StageGuard::new(state.objects.clone());
    guard.track_external(location.clone());
    state
        .objects
        .put(&location, bytes.into(), Some(&placement.content_type))
        .await?;
    let record = state
        .commit(&auth.org.id, &file, placement, meta, &mut guard)
        .await?;
    Ok((
        StatusCode::OK,
        json!({ "success": true, "object": state.uploaded(&auth.org.slug, &record), "requestId": current_request_id() }),
    ))
}

/// Bulk upload form (documentation only).
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct BulkForm {
    /// Repeated file parts: `files[0]`, `files[1]`, ... or `files` repeated.
    #[schema(format = Binary, content_media_type = "application/octet-stream")]
    files: Vec<String>,
    /// JSON: `{"items": [{"fieldName": "files[0]", "path": "...", "filename": "...", "metadata": {...}}]}`
    payload: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct BulkPayload {
    items: Vec<BulkItem>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct BulkItem {
    field_name: String,
    path: Option<String>,
    filename: Option<String>,
    metadata: Option<Value>,
}

/// Per-file result of a bulk upload (interface 2.2).
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BulkResult {
    pub success: bool,
    pub field_name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub public_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub etag: Option<String>,
    /// Error code on failure, e.g. `PATH_NOT_ALLOWED`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl BulkResult {
    pub fn failed(field_name: &str, e: &ApiError) -> Self {
        Self {
            success: false,
            field_name: field_name.to_owned(),
            key: None,
            size: None,
            public_url: None,
            content_type: None,
            etag: None,
            error: Some(e.code.cdn_name().to_owned()),
            message: Some(e.message.clone()),
        }
    }

    pub fn stored(field_name: &str, o: UploadedObject) -> Self {
        Self {
            success: true,
            field_name: field_name.to_owned(),
            key: Some(o.key),
            size: Some(o.size),
            public_url: Some(o.public_url),
            content_type: o.content_type,
            etag: Some(o.etag),
            error: None,
            message: None,
        }
    }
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BulkResponse {
    pub success: bool,
    pub results: Vec<BulkResult>,
    pub request_id: String,
}

/// Upload several files; each is validated and stored independently.
#[utoipa::path(
    post, path = "/v1/objects/bulk", tag = "objects", security(("bearer" = [])),
    params(("Idempotency-Key" = Option<String>, Header, description = "Makes retries safe")),
    request_body(content = BulkForm, content_type = "multipart/form-data"),
    responses(
        (status = 200, description = "One result per file, in order", body = BulkResponse),
        (status = 400, description = "INVALID_REQUEST (payload) or TOO_MANY_FILES", body = crate::docs::CdnError),
        (status = 401, description = "UNAUTHORIZED", body = crate::docs::CdnError),
        (status = 403, description = "FORBIDDEN", body = crate::docs::CdnError),
        (status = 409, description = "CONFLICT", body = crate::docs::CdnError),
        (status = 415, description = "UNSUPPORTED_MEDIA_TYPE (a Content-Encoding on the upload: forms are never decoded)", body = crate::docs::CdnError),
        (status = 408, description = "REQUEST_TIMEOUT (the body stopped arriving)", body = crate::docs::CdnError),
        (status = 507, description = "INSUFFICIENT_STORAGE (the object store is out of space; Retry-After)", body = crate::docs::CdnError),
    )
)]
pub async fn upload_bulk(
    auth: Auth,
    req: HttpRequest,
    payload: web::Payload,
    state: web::Data<CdnState>,
) -> Result<HttpResponse, ApiError> {
    auth.require(Permission::CdnWrite)?;
    let limits = |retry: bool| FormLimits {
        max_file_size: state.max_file_size(&auth),
        max_files: state.config.max_bulk_files,
        fail_fast: false,
        store: !retry,
    };
    multipart_route(
        &state,
        &auth,
        &req,
        payload,
        "/v1/objects/bulk",
        limits,
        |form| store_bulk(&state, &auth, form),
    )
    .await
}

async fn store_bulk(
    state: &CdnState,
    auth: &Auth,
    mut form: crate::form::Form,
) -> Result<(StatusCode, Value), ApiError> {
    let raw = form.field("payload").ok_or_else(|| {
        ApiError::invalid_request("the multipart part `payload` (JSON with `items`) is required")
    })?;
    let payload: BulkPayload = serde_json::from_str(raw)
        .map_err(|e| ApiError::invalid_request(format!("invalid payload JSON: {e}")))?;
    if form.files.is_empty() {
        return Err(ApiError::invalid_request(
            "at least one file part (`files[0]` or `files`) is required",
        ));
    }
    for (i, item) in payload.items.iter().enumerate() {
        if let Some(j) = payload.items[..i]
            .iter()
            .position(|other| other.field_name == item.field_name)
        {
            return Err(ApiError::invalid_request(format!(
                "payload items {j} and {i} both describe `{}`",
                item.field_name
            )));
        }
        if !form.files.iter().any(|f| f.field == item.field_name) {
            return Err(ApiError::invalid_request(format!(
                "payload item names `{}`, but no file part has that name",
                item.field_name
            )));
        }
    }
    let policy = key_policy(auth);
    let files = std::mem::take(&mut form.files);
    let mut results = Vec::with_capacity(files.len());
    for file in &files {
        let result = async {
            let item = payload
                .items
                .iter()
                .find(|i| i.field_name == file.field)
                .ok_or_else(|| {
                    ApiError::invalid_request(format!("no payload item describes `{}`", file.field))
                })?;
            if file.too_large {
                return Err(ApiError::new(
                    Code::FileTooLarge,
                    format!(
                        "file is larger than the limit of {} bytes",
                        state.max_file_size(auth)
                    ),
                ));
            }
            let meta = match &item.metadata {
                None => Metadata::new(),
                Some(v) => metadata::from_value(v).map_err(metadata_error)?,
            };
            let placement = place(
                file,
                item.path.as_deref(),
                item.filename.as_deref(),
                &policy,
            )?;
            state
                .commit(&auth.org.id, file, placement, meta, &mut form.guard)
                .await
        }
        .await;
        results.push(match result {
            Ok(record) => BulkResult::stored(&file.field, state.uploaded(&auth.org.slug, &record)),
            Err(e) => BulkResult::failed(&file.field, &e),
        });
    }
    Ok((
        StatusCode::OK,
        json!({ "success": true, "results": results, "requestId": current_request_id() }),
    ))
}

#[derive(Deserialize, IntoParams)]
pub struct DeleteParams {
    /// The object key to delete.
    pub path: Option<String>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeleteResponse {
    pub success: bool,
    pub key: String,
    /// `deleted`, or `not_found` when no object had that key.
    pub status: String,
    pub request_id: String,
}

/// Delete one object (idempotent).
#[utoipa::path(
    delete, path = "/v1/objects", tag = "objects", params(DeleteParams, ("Idempotency-Key" = Option<String>, Header, description = "Makes retries safe")), security(("bearer" = [])),
    responses(
        (status = 200, description = "Deleted, or not found", body = DeleteResponse),
        (status = 400, description = "INVALID_PATH or INVALID_REQUEST", body = crate::docs::CdnError),
        (status = 401, description = "UNAUTHORIZED", body = crate::docs::CdnError),
        (status = 403, description = "FORBIDDEN or PATH_NOT_ALLOWED", body = crate::docs::CdnError),
        (status = 409, description = "CONFLICT", body = crate::docs::CdnError),
    )
)]
pub async fn delete_one(
    auth: Auth,
    req: HttpRequest,
    params: web::Query<DeleteParams>,
    state: web::Data<CdnState>,
) -> Result<HttpResponse, ApiError> {
    auth.require(Permission::CdnDelete)?;
    let raw = params.path.as_deref().ok_or_else(|| {
        ApiError::invalid_request("query parameter `path` (the object key) is required")
    })?;
    let mut fp = Fingerprint::new();
    fp.field("path", raw);
    let fingerprint = fp.finish();
    let ticket = idem::begin(&state, &req, &auth.key.id, "/v1/objects").await?;
    if ticket.is_retry() {
        return ticket.replay(&req, &fingerprint);
    }
    let outcome = delete_path(&state, &auth, raw).await.map(|(key, status)| {
        (
            StatusCode::OK,
            json!({ "success": true, "key": key, "status": status, "requestId": current_request_id() }),
        )
    });
    ticket.finish(&fingerprint, outcome).await
}

/// Deletes one key; returns the normalized key and `deleted` / `not_found`.
async fn delete_path(
    state: &CdnState,
    auth: &Auth,
    raw: &str,
) -> Result<(String, &'static str), ApiError> {
    let key = normalize_key(raw)
        .map_err(|e| ApiError::new(Code::InvalidPath, format!("invalid path: {e}")))?;
    if !auth.key.path_scope().allows(&key) {
        return Err(ApiError::new(
            Code::PathNotAllowed,
            format!("`{key}` is outside the paths this key may delete"),
        ));
    }
    let deleted = state.repo.delete(&auth.org.id, &key).await?;
    state.forget_row(&auth.org.id, &key);
    match deleted {
        Some(record) => {
            if let Err(e) = state
                .objects
                .delete(&stow_objects::ObjectPath::from(
                    record.storage_path.as_str(),
                ))
                .await
            {
                tracing::warn!(error = %e, location = %record.storage_path, "removing deleted bytes failed; `stowctl gc` will");
            }
            Ok((key, "deleted"))
        }
        None => Ok((key, "not_found")),
    }
}

#[derive(Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BulkDeleteRequest {
    /// Object keys to delete (at most 1000 by default).
    pub paths: Vec<String>,
}

/// Per-path result of a bulk delete (interface 2.3).
#[derive(Serialize, ToSchema)]
pub struct BulkDeleteResult {
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    pub success: bool,
    /// `deleted` or `not_found`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BulkDeleteResponse {
    pub success: bool,
    pub results: Vec<BulkDeleteResult>,
    pub request_id: String,
}

/// Delete many objects; per-path failures do not fail the request.
#[utoipa::path(
    post, path = "/v1/objects/bulk-delete", tag = "objects", security(("bearer" = [])),
    params(("Idempotency-Key" = Option<String>, Header, description = "Makes retries safe")),
    request_body = BulkDeleteRequest,
    responses(
        (status = 200, description = "One result per path", body = BulkDeleteResponse),
        (status = 400, description = "INVALID_REQUEST or TOO_MANY_FILES", body = crate::docs::CdnError),
        (status = 401, description = "UNAUTHORIZED", body = crate::docs::CdnError),
        (status = 403, description = "FORBIDDEN", body = crate::docs::CdnError),
        (status = 409, description = "CONFLICT", body = crate::docs::CdnError),
        (status = 413, description = "PAYLOAD_TOO_LARGE", body = crate::docs::CdnError),
        (status = 415, description = "UNSUPPORTED_MEDIA_TYPE (not JSON, or a Content-Encoding other than identity, gzip, deflate)", body = crate::docs::CdnError),
        (status = 408, description = "REQUEST_TIMEOUT (the body stopped arriving)", body = crate::docs::CdnError),
        (status = 429, description = "RATE_LIMITED", body = crate::docs::CdnError),
        (status = 503, description = "SERVICE_UNAVAILABLE", body = crate::docs::CdnError),
    )
)]
pub async fn bulk_delete(
    auth: Auth,
    req: HttpRequest,
    body: stow_http::Json<BulkDeleteRequest>,
    state: web::Data<CdnState>,
) -> Result<HttpResponse, ApiError> {
    auth.require(Permission::CdnDelete)?;
    let body = body.into_inner();
    let max = state.config.max_bulk_delete_paths;
    if body.paths.len() > max {
        return Err(ApiError::new(
            Code::TooManyFiles,
            format!("paths has {} entries; the limit is {max}", body.paths.len()),
        ));
    }
    if body.paths.is_empty() {
        return Err(ApiError::invalid_request(
            "paths must contain at least one object key",
        ));
    }
    let mut fp = Fingerprint::new();
    fp.json(&json!(body.paths));
    let fingerprint = fp.finish();
    let ticket = idem::begin(&state, &req, &auth.key.id, "/v1/objects/bulk-delete").await?;
    if ticket.is_retry() {
        return ticket.replay(&req, &fingerprint);
    }
    let mut results = Vec::with_capacity(body.paths.len());
    for path in &body.paths {
        results.push(match delete_path(&state, &auth, path).await {
            Ok((key, status)) => BulkDeleteResult {
                path: path.clone(),
                key: Some(key),
                success: true,
                status: Some(status.to_owned()),
                error: None,
                message: None,
            },
            Err(e) if e.code == Code::Unavailable || e.code == Code::Internal => {
                // a dependency failure is not a per-path verdict: fail the request so it is retried
                return ticket.finish(&fingerprint, Err(e)).await;
            }
            Err(e) => BulkDeleteResult {
                path: path.clone(),
                key: normalize_key(path).ok(),
                success: false,
                status: None,
                error: Some(e.code.cdn_name().to_owned()),
                message: Some(e.message),
            },
        });
    }
    let outcome = Ok((
        StatusCode::OK,
        json!({ "success": true, "results": results, "requestId": current_request_id() }),
    ));
    ticket.finish(&fingerprint, outcome).await
}
