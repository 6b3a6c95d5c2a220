//! `GET /v1/logs/alert-rules`: the organization's alert rules the caller may see.

use actix_web::{web, HttpResponse};
use serde::Serialize;
use stow_http::{current_request_id, ApiError, Auth};
use utoipa::ToSchema;

use super::{lister, visible_rules, AlertRuleOut};
use crate::state::ApiState;

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListAlertRulesResponse {
    pub success: bool,
    /// By name, case-insensitively.
    pub alert_rules: Vec<AlertRuleOut>,
    pub request_id: String,
}

/// List alert rules.
#[utoipa::path(
    get, path = "/v1/logs/alert-rules", tag = "alerts", security(("bearer" = [])),
    responses(
        (status = 200, description = "Every rule whose saved search the caller may read", body = ListAlertRulesResponse),
        super::AlertErrors,
        stow_http::error::KeyedRouteErrors,
    )
)]
pub async fn list_alert_rules(
    auth: Auth,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    lister(&auth)?;
    let out = visible_rules(&state, &auth)
        .await?
        .into_iter()
        .map(Into::into)
        .collect();
    Ok(HttpResponse::Ok()
        .insert_header(("Cache-Control", "private, no-store"))
        .json(ListAlertRulesResponse {
            success: true,
            alert_rules: out,
            request_id: current_request_id(),
        }))
}
