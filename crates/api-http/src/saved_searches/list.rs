//! `GET /v1/logs/saved-searches`: the organization's saved searches the caller may read.

use actix_web::{web, HttpResponse};
use serde::Serialize;
use stow_http::{current_request_id, ApiError, Auth};
use utoipa::ToSchema;

use super::{reader, visible, Codes, SavedSearchOut};
use crate::state::ApiState;

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListSavedSearchesResponse {
    pub success: bool,
    /// By name, case-insensitively.
    pub saved_searches: Vec<SavedSearchOut>,
    pub request_id: String,
}

/// List saved searches.
#[utoipa::path(
    get, path = "/v1/logs/saved-searches", tag = "logs", security(("bearer" = [])),
    responses(
        (status = 200, description = "Every saved search whose servers the caller may all read", body = ListSavedSearchesResponse),
        super::SavedSearchErrors,
        stow_http::error::KeyedRouteErrors,
    )
)]
pub async fn list_saved_searches(
    auth: Auth,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    reader(&auth)?;
    let all = state.stores.saved_searches.list(&auth.org.id).await?;
    let codes = Codes::of(&state, &auth).await?;
    Ok(HttpResponse::Ok()
        .insert_header(("Cache-Control", "private, no-store"))
        .json(ListSavedSearchesResponse {
            success: true,
            saved_searches: all
                .into_iter()
                .filter(|s| visible(&auth, s))
                .map(|s| codes.out(s))
                .collect(),
            request_id: current_request_id(),
        }))
}
