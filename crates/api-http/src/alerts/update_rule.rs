//! `PATCH /v1/logs/alert-rules/{id}`: change a rule, mute it until a time, or unmute it.

use actix_web::{web, HttpRequest, HttpResponse};
use chrono::{SubsecRound, Utc};
use logs_core::alerts::{parse_mute, AlertRuleRequest, MAX_RULES};
use stow_http::{current_request_id, ApiError, Auth};

use super::create_rule::AlertRuleResponse;
use super::{find_rule, manager, refused};
use crate::saved_searches::find;
use crate::state::ApiState;

/// Change an alert rule.
#[utoipa::path(
    patch, path = "/v1/logs/alert-rules/{alertRuleId}", tag = "alerts", security(("bearer" = [])),
    params(("alertRuleId" = String, Path, description = "`alr_…`")),
    request_body = AlertRuleRequest,
    responses(
        (status = 200, description = "Changed (fields not sent are kept); a changed trigger, group or saved search starts the rule's counts again", body = AlertRuleResponse),
        (status = 400, description = "INVALID_REQUEST naming the field and the limit", body = stow_http::error::ApiErrorBody),
        (status = 404, description = "NOT_FOUND: no such rule, saved search or destination", body = stow_http::error::ApiErrorBody),
        (status = 409, description = "CONFLICT: another rule has the name", body = stow_http::error::ApiErrorBody),
        super::AlertErrors,
        stow_http::error::JsonBodyErrors,
        stow_http::error::KeyedRouteErrors,
        stow_http::error::BodyRouteErrors,
    )
)]
pub async fn update_alert_rule(
    auth: Auth,
    req: HttpRequest,
    path: web::Path<String>,
    body: stow_http::Json<AlertRuleRequest>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    manager(&auth)?;
    let body = body.into_inner();
    let mut rule = find_rule(&state, &auth, &path).await?;
    rule.spec = body
        .resolve(Some(&rule.spec))
        .map_err(|e| ApiError::invalid_request(e.to_string()))?;
    if let Some(mute) = &body.muted_until {
        rule.muted_until =
            parse_mute(mute).map_err(|e| ApiError::invalid_request(e.to_string()))?;
    }
    find(&state, &auth, &rule.spec.saved_search_id).await?;
    rule.updated_at = Utc::now().trunc_subsecs(3);
    let put = state
        .stores
        .alerts
        .update_rule(&rule, &crate::audit::of(&req, &auth))
        .await?;
    refused(put, "alert rule", &rule.spec.name, MAX_RULES)?;
    let rule = find_rule(&state, &auth, &rule.id).await?;
    Ok(HttpResponse::Ok().json(AlertRuleResponse {
        success: true,
        alert_rule: rule.into(),
        request_id: current_request_id(),
    }))
}
