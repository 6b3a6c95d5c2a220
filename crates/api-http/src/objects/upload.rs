//! `POST /v1/objects`: one file as multipart.

use crate::objects::typed;
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use auth_core::Permission;
use cdn_core::metadata::{self};
use serde::Serialize;
use serde_json::Value;
use stow_http::{current_request_id, ApiError, Auth};
use utoipa::ToSchema;

use super::{key_policy, metadata_error, multipart_route};
use crate::form::FormLimits;
use crate::pipeline::{place, Existing, UploadedObject};
use crate::state::ApiState;

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
    params(("Idempotency-Key" = Option<String>, Header, description = "Makes retries safe"), ("If-None-Match" = Option<String>, Header, description = "`*`: create only; 412 PRECONDITION_FAILED when an object exists at the key")),
    request_body(content = UploadForm, content_type = "multipart/form-data"),
    responses(
        (status = 200, description = "Stored", body = UploadResponse),
        (status = 400, description = "INVALID_REQUEST, INVALID_PATH or TOO_MANY_FILES", body = stow_http::error::ApiErrorBody),
        (status = 403, description = "FORBIDDEN or PATH_NOT_ALLOWED", body = stow_http::error::ApiErrorBody),
        (status = 409, description = "CONFLICT (Idempotency-Key reuse)", body = stow_http::error::ApiErrorBody),
        (status = 412, description = "PRECONDITION_FAILED (`If-None-Match: *` and an object exists at the key; nothing stored)", body = stow_http::error::ApiErrorBody),
        (status = 413, description = "FILE_TOO_LARGE", body = stow_http::error::ApiErrorBody),
        (status = 415, description = "CONTENT_TYPE_NOT_ALLOWED, or UNSUPPORTED_MEDIA_TYPE (a Content-Encoding on the upload: forms are never decoded)", body = stow_http::error::ApiErrorBody),
        stow_http::error::KeyedRouteErrors,
        stow_http::error::BodyRouteErrors,
        stow_http::error::StoringRouteErrors,
    )
)]
pub async fn upload(
    auth: Auth,
    req: HttpRequest,
    payload: web::Payload,
    state: web::Data<ApiState>,
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
        |form, existing| store_single(&state, &auth, form, existing),
    )
    .await
}

/// Places and commits the form's one file.
async fn store_single(
    state: &ApiState,
    auth: &Auth,
    mut form: crate::form::Form,
    existing: Existing,
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
        .commit(
            &auth.org.id,
            &file,
            placement,
            meta,
            &mut form.guard,
            existing,
        )
        .await?;
    Ok((
        StatusCode::OK,
        typed(&UploadResponse {
            success: true,
            object: state.uploaded(&auth.org.slug, &record),
            request_id: current_request_id(),
        })?,
    ))
}
