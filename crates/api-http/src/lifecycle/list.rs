//! `GET /v1/lifecycle`: the lifecycle rules this key could set.

use actix_web::{web, HttpResponse};
use auth_core::Permission;
use serde::Serialize;
use stow_http::{current_request_id, ApiError, Auth};
use utoipa::ToSchema;

use super::LifecycleRuleView;
use crate::state::ApiState;

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LifecycleRuleList {
    pub success: bool,
    /// In folder byte order; only those whose whole folder lies inside the key's paths.
    pub rules: Vec<LifecycleRuleView>,
    pub request_id: String,
}

/// The organization's lifecycle rules.
#[utoipa::path(
    get, path = "/v1/lifecycle", tag = "lifecycle", security(("bearer" = [])),
    responses(
        (status = 200, description = "The rules", body = LifecycleRuleList),
        (status = 403, description = "FORBIDDEN (no cdn:read)", body = stow_http::error::ApiErrorBody),
        stow_http::error::KeyedRouteErrors,
    )
)]
pub async fn list_lifecycle_rules(
    auth: Auth,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    auth.require(Permission::CdnRead)?;
    let scope = auth.key.path_scope();
    let rules = state
        .stores
        .lifecycle
        .list(&auth.org.id)
        .await?
        .into_iter()
        .filter(|r| scope.outside_part(&r.folder).is_none())
        .map(Into::into)
        .collect();
    Ok(HttpResponse::Ok().json(LifecycleRuleList {
        success: true,
        rules,
        request_id: current_request_id(),
    }))
}
