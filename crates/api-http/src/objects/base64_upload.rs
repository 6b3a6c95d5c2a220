//! `POST /v1/objects/base64`: one file as Base64 (or a data URL) in JSON.

use crate::objects::typed;
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use auth_core::Permission;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use base64::Engine;
use cdn_core::idempotency::Fingerprint;
use cdn_core::metadata::{self, Metadata};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use stow_http::{current_request_id, ApiError, Auth, Code};
use utoipa::ToSchema;

use super::upload::UploadResponse;
use super::{key_policy, metadata_error};
use crate::form::{StageGuard, StagedFile};
use crate::idempotency;
use crate::pipeline::{place, Existing};
use crate::state::ApiState;

/// JSON bodies of the Base64 route may be this large (about 12 MiB of file).
pub const BASE64_BODY_LIMIT: usize = 16 * 1024 * 1024;

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
    params(("Idempotency-Key" = Option<String>, Header, description = "Makes retries safe"), ("If-None-Match" = Option<String>, Header, description = "`*`: create only; 412 PRECONDITION_FAILED when an object exists at the key")),
    request_body = Base64Upload,
    responses(
        (status = 200, description = "Stored", body = UploadResponse),
        (status = 400, description = "INVALID_REQUEST (bad Base64, metadata) or INVALID_PATH", body = stow_http::error::ApiErrorBody),
        (status = 403, description = "FORBIDDEN or PATH_NOT_ALLOWED", body = stow_http::error::ApiErrorBody),
        (status = 409, description = "CONFLICT", body = stow_http::error::ApiErrorBody),
        (status = 412, description = "PRECONDITION_FAILED (`If-None-Match: *` and an object exists at the key; nothing stored)", body = stow_http::error::ApiErrorBody),
        (status = 413, description = "FILE_TOO_LARGE or PAYLOAD_TOO_LARGE", body = stow_http::error::ApiErrorBody),
        (status = 415, description = "CONTENT_TYPE_NOT_ALLOWED, or UNSUPPORTED_MEDIA_TYPE (not JSON, or a Content-Encoding other than identity, gzip, deflate)", body = stow_http::error::ApiErrorBody),
        stow_http::error::KeyedRouteErrors,
        stow_http::error::BodyRouteErrors,
        stow_http::error::StoringRouteErrors,
    )
)]
pub async fn upload_base64(
    auth: Auth,
    req: HttpRequest,
    body: stow_http::Json<Base64Upload>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    auth.require(Permission::CdnWrite)?;
    let existing = Existing::of(&req)?;
    let body = body.into_inner();
    let mut fp = Fingerprint::new();
    fp.json(&serde_json::to_value(&body).unwrap_or(Value::Null));
    let mut fingerprint = fp.finish();
    fingerprint.extend_from_slice(existing.fingerprint_part());
    let ticket = idempotency::begin(&state, &req, &auth.key.id, "/v1/objects/base64").await?;
    if ticket.is_retry() {
        return ticket.replay(&req, &fingerprint);
    }
    let outcome = store_base64(&state, &auth, body, existing).await;
    ticket.finish(&fingerprint, outcome).await
}

async fn store_base64(
    state: &ApiState,
    auth: &Auth,
    body: Base64Upload,
    existing: Existing,
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
    let mut guard = StageGuard::new(state.blobs.clone());
    guard.track_external(location.clone());
    state
        .blobs
        .put(&location, bytes.into(), Some(&placement.content_type))
        .await?;
    let record = state
        .commit(&auth.org.id, &file, placement, meta, &mut guard, existing)
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
