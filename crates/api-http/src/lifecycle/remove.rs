//! `DELETE /v1/lifecycle?path=`: remove a folder's lifecycle rule.

use actix_web::{web, HttpRequest, HttpResponse};
use auth_core::Permission;
use cdn_core::lifecycle::LifecycleError;
use cdn_core::path::normalize_folder;
use serde::{Deserialize, Serialize};
use stow_http::{current_request_id, ApiError, Auth};
use utoipa::{IntoParams, ToSchema};

use super::refused;
use crate::objects::whole_folder_in_scope;
use crate::state::ApiState;

#[derive(Deserialize, IntoParams)]
pub struct RemoveLifecycleRuleParams {
    /// The rule's folder, as set (normalized the same way); empty for the workspace's rule.
    pub path: Option<String>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RemoveLifecycleRuleResponse {
    pub success: bool,
    /// The normalized folder.
    pub path: String,
    /// `deleted`, or `not_found` when the folder had no rule.
    pub status: String,
    pub request_id: String,
}

/// Remove a lifecycle rule.
#[utoipa::path(
    delete, path = "/v1/lifecycle", tag = "lifecycle", params(RemoveLifecycleRuleParams), security(("bearer" = [])),
    responses(
        (status = 200, description = "Removed, or there was none", body = RemoveLifecycleRuleResponse),
        (status = 400, description = "INVALID_PATH, or INVALID_REQUEST (no `path`)", body = stow_http::error::ApiErrorBody),
        (status = 403, description = "FORBIDDEN (no cdn:delete) or PATH_NOT_ALLOWED", body = stow_http::error::ApiErrorBody),
        stow_http::error::KeyedRouteErrors,
    )
)]
pub async fn remove_lifecycle_rule(
    auth: Auth,
    req: HttpRequest,
    params: stow_http::Query<RemoveLifecycleRuleParams>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    auth.require(Permission::CdnDelete)?;
    let raw = params.path.as_deref().ok_or_else(|| {
        ApiError::invalid_request(
            "query parameter `path` is required (empty for the workspace's rule)",
        )
    })?;
    let folder = normalize_folder(raw).map_err(|e| refused(LifecycleError::Folder(e)))?;
    whole_folder_in_scope(&auth, &folder, "delete")?;
    let deleted = state
        .stores
        .lifecycle
        .delete(&auth.org.id, &folder, &crate::audit::of(&req, &auth))
        .await?;
    Ok(HttpResponse::Ok().json(RemoveLifecycleRuleResponse {
        success: true,
        path: folder,
        status: if deleted { "deleted" } else { "not_found" }.to_owned(),
        request_id: current_request_id(),
    }))
}
