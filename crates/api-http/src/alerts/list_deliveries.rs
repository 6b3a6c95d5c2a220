//! `GET /v1/logs/alert-deliveries`: the delivery log, newest first — every rule's, or one's.

use actix_web::{web, HttpResponse};
use logs_core::alert_store::{DeliveryQuery, MAX_DELIVERY_PAGE};
use serde::{Deserialize, Serialize};
use stow_http::{current_request_id, ApiError, Auth};
use utoipa::{IntoParams, ToSchema};

use super::{find_rule, lister, visible_rules, DeliveryOut};
use crate::state::ApiState;

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct DeliveriesParams {
    /// Only this rule's deliveries (`alr_…`).
    pub rule_id: Option<String>,
    /// The previous page's `nextCursor`.
    pub cursor: Option<String>,
    /// 1 to 200 (default 50).
    pub limit: Option<usize>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListDeliveriesResponse {
    pub success: bool,
    /// Newest first.
    pub deliveries: Vec<DeliveryOut>,
    /// Pass as `cursor` for older deliveries; `null` on the last page.
    pub next_cursor: Option<String>,
    pub request_id: String,
}

/// List alert deliveries.
#[utoipa::path(
    get, path = "/v1/logs/alert-deliveries", tag = "alerts", security(("bearer" = [])),
    params(DeliveriesParams),
    responses(
        (status = 200, description = "A page of the delivery log (finished deliveries are kept 7 days)", body = ListDeliveriesResponse),
        (status = 400, description = "INVALID_REQUEST: limit or cursor", body = stow_http::error::ApiErrorBody),
        (status = 404, description = "NOT_FOUND: no such rule the caller may see", body = stow_http::error::ApiErrorBody),
        super::AlertErrors,
        stow_http::error::KeyedRouteErrors,
    )
)]
pub async fn list_alert_deliveries(
    auth: Auth,
    params: stow_http::Query<DeliveriesParams>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    lister(&auth)?;
    let limit = params.limit.unwrap_or(50);
    if !(1..=MAX_DELIVERY_PAGE).contains(&limit) {
        return Err(ApiError::invalid_request(format!(
            "`limit` must be between 1 and {MAX_DELIVERY_PAGE}; got {limit}"
        )));
    }
    let before = match &params.cursor {
        None => None,
        Some(c) => Some(c.parse::<i64>().map_err(|_| {
            ApiError::invalid_request(
                "`cursor` is not one this route gave (pass `nextCursor` as it is)",
            )
        })?),
    };
    if let Some(rule) = &params.rule_id {
        find_rule(&state, &auth, rule).await?;
    }
    // a caller limited to some servers sees the deliveries of the rules it may see (and test
    // messages), not those of rules on other servers' searches
    let only_rules = match auth.log_scope() {
        auth_core::ServerScope::All => None,
        auth_core::ServerScope::Only(_) => Some(
            visible_rules(&state, &auth)
                .await?
                .into_iter()
                .map(|r| r.id)
                .collect(),
        ),
    };
    let page = state
        .stores
        .alerts
        .deliveries(&DeliveryQuery {
            org_id: auth.org.id.clone(),
            rule_id: params.rule_id.clone(),
            before,
            only_rules,
            limit,
        })
        .await?;
    let next_cursor = (page.len() == limit)
        .then(|| page.last().map(|d| d.seq.to_string()))
        .flatten();
    Ok(HttpResponse::Ok()
        .insert_header(("Cache-Control", "private, no-store"))
        .json(ListDeliveriesResponse {
            success: true,
            deliveries: page.into_iter().map(Into::into).collect(),
            next_cursor,
            request_id: current_request_id(),
        }))
}
