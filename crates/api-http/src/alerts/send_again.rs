//! `POST /v1/logs/alert-deliveries/{id}/send-again`: send a delivered or failed delivery again,
//! with the same `webhook-id` and 24 more hours of retries — a delivery of a rule the caller sees
//! (`stow_ops::alerts::SendAgain`).

use actix_web::{web, HttpResponse};
use serde::Serialize;
use stow_http::{current_request_id, ApiError, Auth};
use stow_ops::alerts::SendAgain;
use utoipa::ToSchema;

use super::manager;
use crate::state::ApiState;

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SendAgainResponse {
    pub success: bool,
    pub delivery_id: String,
    pub request_id: String,
}

/// Send a delivery again.
#[utoipa::path(
    post, path = "/v1/logs/alert-deliveries/{deliveryId}/send-again", tag = "alerts", security(("bearer" = [])),
    params(("deliveryId" = String, Path, description = "`msg_…`")),
    responses(
        (status = 202, description = "Pending again", body = SendAgainResponse),
        (status = 404, description = "NOT_FOUND: no such delivery", body = stow_http::error::ApiErrorBody),
        (status = 409, description = "CONFLICT: the delivery is still pending (it is being tried)", body = stow_http::error::ApiErrorBody),
        super::AlertErrors,
        stow_http::error::KeyedRouteErrors,
    )
)]
pub async fn send_delivery_again(
    auth: Auth,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    manager(&auth)?;
    let id = path.into_inner();
    SendAgain {
        org: auth.org.id.clone(),
        delivery: id.clone(),
    }
    .run(&crate::ops::reading(&state, &auth))
    .await?;
    Ok(HttpResponse::Accepted().json(SendAgainResponse {
        success: true,
        delivery_id: id,
        request_id: current_request_id(),
    }))
}
