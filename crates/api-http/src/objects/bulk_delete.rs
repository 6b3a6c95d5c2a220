//! `POST /v1/objects/bulk-delete`: delete many objects, each reported on its own.

use crate::objects::typed;
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use auth_core::Permission;
use cdn_core::idempotency::Fingerprint;
use cdn_core::path::normalize_key;
use serde::{Deserialize, Serialize};
use serde_json::json;
use stow_http::{current_request_id, ApiError, Auth, Code};
use utoipa::ToSchema;

use super::delete::delete_path;
use crate::idempotency;
use crate::state::ApiState;

#[derive(Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BulkDeleteRequest {
    /// Object keys to delete (at most 1000 by default).
    pub paths: Vec<String>,
}

/// Per-path result of a bulk delete (docs/api.md, "POST /v1/objects/bulk-delete").
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
        (status = 400, description = "INVALID_REQUEST or TOO_MANY_FILES", body = stow_http::error::ApiErrorBody),
        (status = 403, description = "FORBIDDEN", body = stow_http::error::ApiErrorBody),
        (status = 409, description = "CONFLICT", body = stow_http::error::ApiErrorBody),
        (status = 413, description = "PAYLOAD_TOO_LARGE", body = stow_http::error::ApiErrorBody),
        (status = 415, description = "UNSUPPORTED_MEDIA_TYPE (not JSON, or a Content-Encoding other than identity, gzip, deflate)", body = stow_http::error::ApiErrorBody),
        stow_http::error::KeyedRouteErrors,
        stow_http::error::BodyRouteErrors,
    )
)]
pub async fn bulk_delete(
    auth: Auth,
    req: HttpRequest,
    body: stow_http::Json<BulkDeleteRequest>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    auth.require(Permission::CdnDelete)?;
    let body = body.into_inner();
    super::paths_within(&body.paths, state.config.max_bulk_delete_paths)?;
    let mut fp = Fingerprint::new();
    fp.json(&json!(body.paths));
    let fingerprint = fp.finish();
    let ticket = idempotency::begin(&state, &req, &auth.key.id, "/v1/objects/bulk-delete").await?;
    if ticket.is_retry() {
        return ticket.replay(&req, &fingerprint);
    }
    let audit = crate::audit::of(&req, &auth);
    let mut results = Vec::with_capacity(body.paths.len());
    for path in &body.paths {
        results.push(match delete_path(&state, &auth, &audit, path).await {
            Ok((key, status)) => BulkDeleteResult {
                path: path.clone(),
                key: Some(key.into_string()),
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
                key: normalize_key(path).ok().map(String::from),
                success: false,
                status: None,
                error: Some(e.code.cdn_name().to_owned()),
                message: Some(e.message),
            },
        });
    }
    let outcome = typed(&BulkDeleteResponse {
        success: true,
        results,
        request_id: current_request_id(),
    })
    .map(|body| (StatusCode::OK, body));
    ticket.finish(&fingerprint, outcome).await
}
