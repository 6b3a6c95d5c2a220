//! `DELETE /v1/logs/alert-rules/{id}`: delete a rule, with its firings and their deliveries
//! (pending ones are not sent).

use actix_web::{web, HttpRequest, HttpResponse};
use stow_http::{current_request_id, ApiError, Auth, Code};

use super::delete_destination::DeleteAlertResponse;
use super::{find_rule, manager};
use crate::state::ApiState;

/// Delete an alert rule.
#[utoipa::path(
    delete, path = "/v1/logs/alert-rules/{alertRuleId}", tag = "alerts", security(("bearer" = [])),
    params(("alertRuleId" = String, Path, description = "`alr_…`")),
    responses(
        (status = 200, description = "Deleted", body = DeleteAlertResponse),
        (status = 404, description = "NOT_FOUND: no such rule the caller may see", body = stow_http::error::ApiErrorBody),
        super::AlertErrors,
        stow_http::error::KeyedRouteErrors,
    )
)]
pub async fn delete_alert_rule(
    auth: Auth,
    req: HttpRequest,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    manager(&auth)?;
    let rule = find_rule(&state, &auth, &path).await?;
    let gone = state
        .stores
        .alerts
        .delete_rule(&auth.org.id, &rule.id, &crate::audit::of(&req, &auth))
        .await?;
    if !gone {
        return Err(ApiError::new(
            Code::NotFound,
            format!("no alert rule `{}` in this organization", rule.id),
        ));
    }
    Ok(HttpResponse::Ok().json(DeleteAlertResponse {
        success: true,
        deleted: rule.id,
        request_id: current_request_id(),
    }))
}
