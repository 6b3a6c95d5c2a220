//! `GET /v1/logs/destinations`: the organization's alert destinations.

use actix_web::{web, HttpResponse};
use serde::Serialize;
use stow_http::{current_request_id, ApiError, Auth};
use utoipa::ToSchema;

use super::{lister, DestinationOut};
use crate::state::ApiState;

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListDestinationsResponse {
    pub success: bool,
    /// By name, case-insensitively.
    pub destinations: Vec<DestinationOut>,
    pub request_id: String,
}

/// List alert destinations.
#[utoipa::path(
    get, path = "/v1/logs/destinations", tag = "alerts", security(("bearer" = [])),
    responses(
        (status = 200, description = "Every destination (addresses as hints, never secrets)", body = ListDestinationsResponse),
        super::AlertErrors,
        stow_http::error::KeyedRouteErrors,
    )
)]
pub async fn list_destinations(
    auth: Auth,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    lister(&auth)?;
    let list = state.stores.alerts.destinations(&auth.org.id).await?;
    Ok(HttpResponse::Ok()
        .insert_header(("Cache-Control", "private, no-store"))
        .json(ListDestinationsResponse {
            success: true,
            destinations: list.into_iter().map(Into::into).collect(),
            request_id: current_request_id(),
        }))
}
