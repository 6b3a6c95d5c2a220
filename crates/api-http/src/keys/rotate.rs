//! `POST /v1/keys/{keyId}/rotate`: a new key with the same settings (its secret shown once); the
//! old one keeps working until disabled, so clients can move over first.

use actix_web::{web, HttpRequest, HttpResponse};
use auth_core::KeyId;
use serde::{Deserialize, Serialize};
use stow_http::{current_request_id, ApiError, Auth};
use utoipa::ToSchema;

use stow_ops::keys::Rotate;

use super::list::KeyOut;
use crate::state::ApiState;

#[derive(Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct RotateKeyParams {
    /// Disable the old key at once (default false).
    #[serde(default)]
    pub disable_old: bool,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RotateKeyResponse {
    pub success: bool,
    pub key: KeyOut,
    /// The new key's secret, shown this once.
    pub secret: String,
    /// The old key's id.
    pub replaces: String,
    pub old_disabled: bool,
    pub request_id: String,
}

/// Rotate a key.
#[utoipa::path(
    post, path = "/v1/keys/{keyId}/rotate", tag = "keys", security(("bearer" = [])),
    params(("keyId" = String, Path, description = "`key_…`"), RotateKeyParams),
    responses(
        (status = 201, description = "The new key; its secret is shown once", body = RotateKeyResponse),
        (status = 400, description = "INVALID_REQUEST: a query other than `disableOld=true|false`", body = stow_http::error::ApiErrorBody),
        (status = 404, description = "NOT_FOUND: no such key in this organization", body = stow_http::error::ApiErrorBody),
        super::KeyRouteErrors,
        stow_http::error::KeyedRouteErrors,
    )
)]
pub async fn rotate_key(
    auth: Auth,
    req: HttpRequest,
    path: web::Path<String>,
    params: stow_http::Query<RotateKeyParams>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    let rotated = Rotate {
        key: KeyId::new(path.into_inner()),
        disable_old: params.disable_old,
    }
    .run(&crate::ops::ctx(&state, &req, &auth))
    .await?;
    Ok(HttpResponse::Created().json(RotateKeyResponse {
        success: true,
        key: KeyOut::new(&rotated.servers, &rotated.key),
        secret: rotated.secret,
        replaces: rotated.old.id.to_string(),
        old_disabled: params.disable_old,
        request_id: current_request_id(),
    }))
}
