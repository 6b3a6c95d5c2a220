//! `GET /v1/audit`: a page of the organization's audit log, newest first.

use actix_web::{web, HttpResponse};
use serde::Serialize;
use stow_http::{current_request_id, ApiError, Auth};
use utoipa::ToSchema;

use super::event_out::AuditEventOut;
use super::{page_size, reader, AuditParams};
use crate::state::ApiState;

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListAuditResponse {
    pub success: bool,
    /// Newest first.
    pub events: Vec<AuditEventOut>,
    /// Pass as `cursor` for the next (older) page; absent on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    pub request_id: String,
}

/// Read the audit log (owners and admins).
#[utoipa::path(
    get, path = "/v1/audit", tag = "audit", security(("bearer" = [])),
    params(AuditParams),
    responses(
        (status = 200, description = "A page of entries, newest first", body = ListAuditResponse),
        (status = 400, description = "INVALID_REQUEST: a filter that is not valid (the message names it)", body = stow_http::error::ApiErrorBody),
        super::AuditRouteErrors,
        stow_http::error::KeyedRouteErrors,
    )
)]
pub async fn list_audit(
    auth: Auth,
    params: stow_http::Query<AuditParams>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    reader(&auth)?;
    let limit = page_size(params.limit)?;
    // one more than a page tells whether another follows
    let mut query = params.query(limit + 1)?;
    query.limit = limit + 1;
    let mut events = state.stores.audit.page(&auth.org.id, &query).await?;
    let next_cursor = if events.len() > limit {
        events.truncate(limit);
        events.last().map(|e| e.id.to_string())
    } else {
        None
    };
    Ok(HttpResponse::Ok()
        .insert_header(("Cache-Control", "private, no-store"))
        .json(ListAuditResponse {
            success: true,
            events: events.into_iter().map(Into::into).collect(),
            next_cursor,
            request_id: current_request_id(),
        }))
}
