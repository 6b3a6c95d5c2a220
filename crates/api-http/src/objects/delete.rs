//! `DELETE /v1/objects?path=<key>`: delete one object (idempotent: a missing key is `not_found`).

use crate::objects::typed;
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use auth_core::audit::Audit;
use auth_core::Permission;
use cdn_core::idempotency::Fingerprint;
use cdn_core::path::{normalize_key, ObjectKey};
use serde::{Deserialize, Serialize};
use stow_http::{current_request_id, ApiError, Auth, Code};
use utoipa::{IntoParams, ToSchema};

use crate::idempotency;
use crate::state::ApiState;

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
        (status = 400, description = "INVALID_PATH or INVALID_REQUEST", body = stow_http::error::ApiErrorBody),
        (status = 403, description = "FORBIDDEN or PATH_NOT_ALLOWED", body = stow_http::error::ApiErrorBody),
        (status = 409, description = "CONFLICT", body = stow_http::error::ApiErrorBody),
        stow_http::error::KeyedRouteErrors,
    )
)]
pub async fn delete_one(
    auth: Auth,
    req: HttpRequest,
    params: stow_http::Query<DeleteParams>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    auth.require(Permission::CdnDelete)?;
    let raw = params.path.as_deref().ok_or_else(|| {
        ApiError::invalid_request("query parameter `path` (the object key) is required")
    })?;
    let mut fp = Fingerprint::new();
    fp.field("path", raw);
    let fingerprint = fp.finish();
    let ticket = idempotency::begin(&state, &req, &auth.key.id, "/v1/objects").await?;
    if ticket.is_retry() {
        return ticket.replay(&req, &fingerprint);
    }
    let outcome = delete_path(&state, &auth, &crate::audit::of(&req, &auth), raw)
        .await
        .and_then(|(key, status)| {
            typed(&DeleteResponse {
                success: true,
                key: key.into_string(),
                status: status.to_owned(),
                request_id: current_request_id(),
            })
        })
        .map(|body| (StatusCode::OK, body));
    ticket.finish(&fingerprint, outcome).await
}

/// Deletes one key; returns the normalized key and `deleted` / `not_found`.
pub(super) async fn delete_path(
    state: &ApiState,
    auth: &Auth,
    audit: &Audit,
    raw: &str,
) -> Result<(ObjectKey, &'static str), ApiError> {
    let key = normalize_key(raw)
        .map_err(|e| ApiError::new(Code::InvalidPath, format!("invalid path: {e}")))?;
    if !auth.key.path_scope().allows(&key) {
        return Err(ApiError::new(
            Code::PathNotAllowed,
            format!("`{key}` is outside the paths {} may delete", auth.holder()),
        ));
    }
    let deleted = state
        .stores
        .records
        .delete(&auth.org.id, &key, audit)
        .await?;
    state.forget_row(&auth.org.id, &key);
    match deleted {
        Some(record) => {
            if let Err(e) = state
                .blobs
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
