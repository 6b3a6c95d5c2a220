//! `GET /v1/placeholders`: the placeholders this key could set.

use actix_web::{web, HttpResponse};
use auth_core::Permission;
use cdn_core::placeholder::Pattern;
use serde::Serialize;
use stow_http::{current_request_id, ApiError, Auth};
use utoipa::ToSchema;

use super::PlaceholderView;
use crate::state::ApiState;

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlaceholderList {
    pub success: bool,
    /// In pattern byte order; only those whose pattern lies inside the key's paths.
    pub placeholders: Vec<PlaceholderView>,
    pub request_id: String,
}

/// The organization's placeholders.
#[utoipa::path(
    get, path = "/v1/placeholders", tag = "placeholders", security(("bearer" = [])),
    responses(
        (status = 200, description = "The placeholders", body = PlaceholderList),
        (status = 403, description = "FORBIDDEN (no cdn:read)", body = stow_http::error::ApiErrorBody),
        stow_http::error::KeyedRouteErrors,
    )
)]
pub async fn list_placeholders(
    auth: Auth,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    auth.require(Permission::CdnRead)?;
    let scope = auth.key.path_scope();
    let placeholders = state
        .stores
        .placeholders
        .list(&auth.org.id)
        .await?
        .into_iter()
        .filter(|p| {
            Pattern::parse(&p.pattern).is_ok_and(|pattern| pattern.outside(&scope).is_none())
        })
        .map(|p| PlaceholderView::new(&state, &auth.org.slug, p))
        .collect();
    Ok(HttpResponse::Ok().json(PlaceholderList {
        success: true,
        placeholders,
        request_id: current_request_id(),
    }))
}
