//! `DELETE /v1/logs/destinations/{id}`: remove a destination no rule sends to (its pending
//! deliveries go with it).

use actix_web::{web, HttpRequest, HttpResponse};
use logs_core::alert_store::DestinationDelete;
use serde::Serialize;
use stow_http::{current_request_id, ApiError, Auth, Code};
use utoipa::ToSchema;

use super::manager;
use crate::state::ApiState;

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeleteAlertResponse {
    pub success: bool,
    /// The id deleted.
    pub deleted: String,
    pub request_id: String,
}

/// Delete an alert destination.
#[utoipa::path(
    delete, path = "/v1/logs/destinations/{destinationId}", tag = "alerts", security(("bearer" = [])),
    params(("destinationId" = String, Path, description = "`dst_…`")),
    responses(
        (status = 200, description = "Deleted", body = DeleteAlertResponse),
        (status = 404, description = "NOT_FOUND: no such destination", body = stow_http::error::ApiErrorBody),
        (status = 409, description = "CONFLICT: rules send to it (named in the message); change or delete them first", body = stow_http::error::ApiErrorBody),
        super::AlertErrors,
        stow_http::error::KeyedRouteErrors,
    )
)]
pub async fn delete_destination(
    auth: Auth,
    req: HttpRequest,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    manager(&auth)?;
    let id = path.into_inner();
    if !crate::storable(&id) {
        return Err(super::no_destination(&id));
    }
    match state
        .stores
        .alerts
        .delete_destination(&auth.org.id, &id, &crate::audit::of(&req, &auth))
        .await?
    {
        DestinationDelete::Done => Ok(HttpResponse::Ok().json(DeleteAlertResponse {
            success: true,
            deleted: id,
            request_id: current_request_id(),
        })),
        DestinationDelete::Missing => Err(super::no_destination(&id)),
        DestinationDelete::InUse(rules) => Err(ApiError::new(
            Code::Conflict,
            format!(
                "alert rules send to this destination ({}); remove it from them or delete them first",
                rules.iter().map(|r| format!("`{r}`")).collect::<Vec<_>>().join(", ")
            ),
        )),
    }
}
