//! `DELETE /v1/placeholders?pattern=`: remove a placeholder.

use actix_web::{web, HttpRequest, HttpResponse};
use auth_core::Permission;
use cdn_core::placeholder::Pattern;
use serde::{Deserialize, Serialize};
use stow_http::{current_request_id, ApiError, Auth};
use utoipa::{IntoParams, ToSchema};

use super::{pattern_in_scope, refused};
use crate::state::ApiState;

#[derive(Deserialize, IntoParams)]
pub struct RemovePlaceholderParams {
    /// The pattern, as set (it is normalized the same way).
    pub pattern: Option<String>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RemovePlaceholderResponse {
    pub success: bool,
    /// The normalized pattern.
    pub pattern: String,
    /// `deleted`, or `not_found` when the pattern had no placeholder.
    pub status: String,
    pub request_id: String,
}

/// Remove a placeholder.
#[utoipa::path(
    delete, path = "/v1/placeholders", tag = "placeholders", params(RemovePlaceholderParams), security(("bearer" = [])),
    responses(
        (status = 200, description = "Removed, or there was none", body = RemovePlaceholderResponse),
        (status = 400, description = "INVALID_PATH, or INVALID_REQUEST (no `pattern`)", body = stow_http::error::ApiErrorBody),
        (status = 403, description = "FORBIDDEN (no cdn:write) or PATH_NOT_ALLOWED", body = stow_http::error::ApiErrorBody),
        stow_http::error::KeyedRouteErrors,
    )
)]
pub async fn remove_placeholder(
    auth: Auth,
    req: HttpRequest,
    params: stow_http::Query<RemovePlaceholderParams>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    auth.require(Permission::CdnWrite)?;
    let raw = params
        .pattern
        .as_deref()
        .ok_or_else(|| ApiError::invalid_request("query parameter `pattern` is required"))?;
    let pattern = Pattern::parse(raw).map_err(refused)?;
    pattern_in_scope(&auth, &pattern)?;
    let deleted = state
        .stores
        .placeholders
        .delete(
            &auth.org.id,
            pattern.as_str(),
            &crate::audit::of(&req, &auth),
        )
        .await?;
    state.forget_placeholders(&auth.org.id);
    Ok(HttpResponse::Ok().json(RemovePlaceholderResponse {
        success: true,
        pattern: pattern.as_str().to_owned(),
        status: if deleted { "deleted" } else { "not_found" }.to_owned(),
        request_id: current_request_id(),
    }))
}
