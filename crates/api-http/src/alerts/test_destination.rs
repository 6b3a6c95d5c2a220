//! `POST /v1/logs/destinations/{id}/test`: queue a test message to a destination; it shows in
//! the delivery log like any delivery.

use actix_web::{web, HttpResponse};
use chrono::Utc;
use serde::Serialize;
use stow_http::{current_request_id, ApiError, Auth};
use utoipa::ToSchema;

use super::manager;
use crate::state::ApiState;

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TestMessageResponse {
    pub success: bool,
    /// The test message's delivery (`msg_…`), to follow in the delivery log.
    pub delivery_id: String,
    pub request_id: String,
}

/// Send a test message.
#[utoipa::path(
    post, path = "/v1/logs/destinations/{destinationId}/test", tag = "alerts", security(("bearer" = [])),
    params(("destinationId" = String, Path, description = "`dst_…`")),
    responses(
        (status = 202, description = "Queued; sent within a second or so, retried like any delivery", body = TestMessageResponse),
        (status = 404, description = "NOT_FOUND: no such destination", body = stow_http::error::ApiErrorBody),
        super::AlertErrors,
        stow_http::error::KeyedRouteErrors,
    )
)]
pub async fn test_destination(
    auth: Auth,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    manager(&auth)?;
    let id = path.into_inner();
    let queued = match crate::storable(&id) {
        true => {
            state
                .stores
                .alerts
                .send_test(&auth.org.id, &id, Utc::now())
                .await?
        }
        false => None,
    };
    let delivery = queued.ok_or_else(|| super::no_destination(&id))?;
    Ok(HttpResponse::Accepted().json(TestMessageResponse {
        success: true,
        delivery_id: delivery,
        request_id: current_request_id(),
    }))
}
