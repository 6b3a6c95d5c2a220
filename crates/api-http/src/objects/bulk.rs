//! `POST /v1/objects/bulk`: many files in one multipart request, each placed and reported on
//! its own.

use crate::objects::typed;
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use auth_core::Permission;
use cdn_core::metadata::{self, Metadata};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use stow_http::{current_request_id, ApiError, Auth, Code};
use utoipa::ToSchema;

use super::{key_policy, metadata_error, multipart_route};
use crate::form::FormLimits;
use crate::pipeline::{place, Existing, UploadedObject};
use crate::state::ApiState;

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

/// Per-file result of a bulk upload (docs/api.md, "POST /v1/objects/bulk").
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
    params(("Idempotency-Key" = Option<String>, Header, description = "Makes retries safe"), ("If-None-Match" = Option<String>, Header, description = "`*`: create only, file by file: a file whose key has an object fails in its result with PRECONDITION_FAILED")),
    request_body(content = BulkForm, content_type = "multipart/form-data"),
    responses(
        (status = 200, description = "One result per file, in order", body = BulkResponse),
        (status = 400, description = "INVALID_REQUEST (payload) or TOO_MANY_FILES", body = stow_http::error::ApiErrorBody),
        (status = 403, description = "FORBIDDEN", body = stow_http::error::ApiErrorBody),
        (status = 409, description = "CONFLICT", body = stow_http::error::ApiErrorBody),
        (status = 415, description = "UNSUPPORTED_MEDIA_TYPE (a Content-Encoding on the upload: forms are never decoded)", body = stow_http::error::ApiErrorBody),
        stow_http::error::KeyedRouteErrors,
        stow_http::error::BodyRouteErrors,
        stow_http::error::StoringRouteErrors,
    )
)]
pub async fn upload_bulk(
    auth: Auth,
    req: HttpRequest,
    payload: web::Payload,
    state: web::Data<ApiState>,
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
        |form, existing| store_bulk(&state, &auth, form, existing),
    )
    .await
}

async fn store_bulk(
    state: &ApiState,
    auth: &Auth,
    mut form: crate::form::Form,
    existing: Existing,
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
                .commit(
                    &auth.org.id,
                    file,
                    placement,
                    meta,
                    &mut form.guard,
                    existing,
                )
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
        typed(&BulkResponse {
            success: true,
            results,
            request_id: current_request_id(),
        })?,
    ))
}
