//! `DELETE /v1/keys/{keyId}`: delete a key for good (its sessions and upload URLs go with it).

use actix_web::{web, HttpRequest, HttpResponse};
use auth_core::KeyId;
use serde::Serialize;
use stow_http::{current_request_id, ApiError, Auth};
use utoipa::ToSchema;

use stow_ops::keys::Delete;

use crate::state::ApiState;

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeleteKeyResponse {
    pub success: bool,
    pub request_id: String,
}

/// Delete a key.
#[utoipa::path(
    delete, path = "/v1/keys/{keyId}", tag = "keys", security(("bearer" = [])),
    params(("keyId" = String, Path, description = "`key_…`")),
    responses(
        (status = 200, description = "Deleted", body = DeleteKeyResponse),
        (status = 404, description = "NOT_FOUND: no such key in this organization", body = stow_http::error::ApiErrorBody),
        super::KeyRouteErrors,
        stow_http::error::KeyedRouteErrors,
    )
)]
pub async fn delete_key(
    auth: Auth,
    req: HttpRequest,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    // its console sessions and upload URLs are deleted with it (foreign keys)
    Delete {
        key: KeyId::new(path.into_inner()),
    }
    .run(&crate::ops::ctx(&state, &req, &auth))
    .await?;
    Ok(HttpResponse::Ok().json(DeleteKeyResponse {
        success: true,
        request_id: current_request_id(),
    }))
}
