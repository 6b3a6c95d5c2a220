//! `GET /v1/logs/alert-rules`: the organization's alert rules the caller may see.

use actix_web::{web, HttpResponse};
use serde::Serialize;
use stow_http::{current_request_id, ApiError, Auth};
use utoipa::ToSchema;

use super::{lister, rule_visible, AlertRuleOut};
use crate::state::CdnState;

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
    state: web::Data<CdnState>,
) -> Result<HttpResponse, ApiError> {
    lister(&auth)?;
    let mut out = Vec::new();
    for rule in state.stores.alerts.rules(&auth.org.id).await? {
        if rule_visible(&state, &auth, &rule).await? {
            out.push(rule.into());
        }
    }
    Ok(HttpResponse::Ok()
        .insert_header(("Cache-Control", "private, no-store"))
        .json(ListAlertRulesResponse {
            success: true,
            alert_rules: out,
            request_id: current_request_id(),
        }))
}
