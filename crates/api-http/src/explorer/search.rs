//! `POST /v1/logs/search`: the query's search (same body, same answer, same cursors) over any
//! window within the plan's retention, for the explorer's longer ranges; the pinned
//! `POST /v1/logs/query` keeps its seven days.

use actix_web::{web, HttpResponse};
use logs_core::query::QueryRequest;
use logs_core::search::RangeLimit;
use stow_http::{ApiError, Auth};

use super::query::{run, QueryResponse};
use crate::state::ApiState;

/// Search stored events, newest first, over any window (`from` raised to the plan's retention).
#[utoipa::path(
    post, path = "/v1/logs/search", tag = "logs", security(("bearer" = [])),
    request_body = QueryRequest,
    responses(
        (status = 200, description = "One page of events (Cache-Control: private, no-store)", body = QueryResponse),
        (status = 400, description = "INVALID_REQUEST, INVALID_CURSOR, CURSOR_EXPIRED or SEARCH_TOO_BROAD (a `data` filter past `LOGS_DATA_SCAN_LIMIT`)", body = stow_http::error::ApiErrorBody),
        stow_http::error::JsonBodyErrors,
        super::LogReadErrors,
        stow_http::error::KeyedRouteErrors,
        stow_http::error::BodyRouteErrors,
    )
)]
pub async fn search(
    auth: Auth,
    body: stow_http::Json<QueryRequest>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    run(auth, body.into_inner(), state, RangeLimit::None).await
}
