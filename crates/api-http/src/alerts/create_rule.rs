//! `POST /v1/logs/alert-rules`: a rule on a saved search, sending to destinations.

use actix_web::{web, HttpRequest, HttpResponse};
use chrono::{SubsecRound, Utc};
use logs_core::alert_store::{self, AlertRule};
use logs_core::alerts::{parse_mute, AlertRuleRequest, MAX_RULES};
use serde::Serialize;
use stow_http::{current_request_id, ApiError, Auth};
use utoipa::ToSchema;

use super::{manager, refused, AlertRuleOut};
use crate::saved_searches::find;
use crate::state::ApiState;

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AlertRuleResponse {
    pub success: bool,
    pub alert_rule: AlertRuleOut,
    pub request_id: String,
}

/// Add an alert rule.
#[utoipa::path(
    post, path = "/v1/logs/alert-rules", tag = "alerts", security(("bearer" = [])),
    request_body = AlertRuleRequest,
    responses(
        (status = 201, description = "Made; it applies to every batch committed from now on", body = AlertRuleResponse),
        (status = 400, description = "INVALID_REQUEST naming the field and the limit", body = stow_http::error::ApiErrorBody),
        (status = 404, description = "NOT_FOUND: no such saved search (that the caller may read) or destination", body = stow_http::error::ApiErrorBody),
        (status = 409, description = "CONFLICT: the name is taken (either case), or the organization has 100 rules", body = stow_http::error::ApiErrorBody),
        super::AlertErrors,
        stow_http::error::JsonBodyErrors,
        stow_http::error::KeyedRouteErrors,
        stow_http::error::BodyRouteErrors,
    )
)]
pub async fn create_alert_rule(
    auth: Auth,
    req: HttpRequest,
    body: stow_http::Json<AlertRuleRequest>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    manager(&auth)?;
    let body = body.into_inner();
    let spec = body
        .resolve(None)
        .map_err(|e| ApiError::invalid_request(e.to_string()))?;
    let muted_until = parse_mute(&body.muted_until.flatten())
        .map_err(|e| ApiError::invalid_request(e.to_string()))?;
    // the caller must be able to read what the rule watches
    find(&state, &auth, &spec.saved_search_id).await?;
    let audit = crate::audit::of(&req, &auth);
    let now = Utc::now().trunc_subsecs(3);
    let rule = AlertRule {
        id: alert_store::new_rule_id(),
        org_id: auth.org.id.clone(),
        spec,
        muted_until,
        last_fired_at: None,
        created_by: audit.actor.label().to_owned(),
        created_at: now,
        updated_at: now,
    };
    let put = state
        .stores
        .alerts
        .create_rule(&rule, MAX_RULES, &audit)
        .await?;
    refused(put, "alert rule", &rule.spec.name, MAX_RULES)?;
    Ok(HttpResponse::Created().json(AlertRuleResponse {
        success: true,
        alert_rule: rule.into(),
        request_id: current_request_id(),
    }))
}
