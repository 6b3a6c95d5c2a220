//! `POST /v1/logs/query`: filtered, cursor-paginated search over a window of at most seven days
//! (pinned); [`run`] also serves `POST /v1/logs/search`, the same search over any window.

use actix_web::{web, HttpResponse};
use logs_core::player::merge_pages;
use logs_core::query::{search_digest, QueryRequest};
use logs_core::search::RangeLimit;
use logs_core::store::EventQuery;
use serde::Serialize;
use stow_http::{current_request_id, ApiError, Auth};
use utoipa::ToSchema;

use super::{each_server, in_search_slot, open_many, Cursors, EventOut, Range};
use crate::state::ApiState;

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Pagination {
    pub has_more: bool,
    pub next_cursor: Option<String>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct QueryResponse {
    pub success: bool,
    pub events: Vec<EventOut>,
    pub pagination: Pagination,
    /// The effective window: `from` raised to now minus the plan's retention when older.
    pub range: Range,
    pub request_id: String,
}

/// Search stored events, newest first.
#[utoipa::path(
    post, path = "/v1/logs/query", tag = "logs", security(("bearer" = [])),
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
pub async fn query(
    auth: Auth,
    body: stow_http::Json<QueryRequest>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    run(
        auth,
        body.into_inner(),
        state,
        RangeLimit::Days(logs_core::query::MAX_RANGE_DAYS),
    )
    .await
}

/// One page of the search `req` over a window bounded by `range`.
pub(crate) async fn run(
    auth: Auth,
    req: QueryRequest,
    state: web::Data<ApiState>,
    range: RangeLimit,
) -> Result<HttpResponse, ApiError> {
    let opened = open_many(
        &state,
        &auth,
        req.server_id.as_deref(),
        req.server_ids.as_deref(),
        || logs_core::query::validate_within(&req, range),
    )
    .await?;
    // the window as asked (retention aside): what a cursor is bound to, with the server, or
    // with the list of servers `serverIds` named
    let valid = &opened.valid;
    let bound = if opened.many {
        let mut ids: Vec<&str> = opened.servers.iter().map(|s| s.id.as_str()).collect();
        ids.sort_unstable();
        search_digest(&format!("servers:{}", ids.join(",")), valid)
    } else {
        search_digest(&opened.servers[0].cfx_id, valid)
    };
    let cursors = Cursors::new(&state, &auth, bound).await?;
    let after = cursors.position(req.cursor.as_deref())?;
    let mut rows = if opened.empty() {
        Vec::new()
    } else {
        in_search_slot(&state, &auth, async {
            let started = std::time::Instant::now();
            let queries = opened.servers.iter().map(|server| EventQuery {
                server_id: server.id.clone(),
                from: opened.search.from,
                to: opened.search.to,
                filters: opened.search.filters.clone(),
                after,
                limit: valid.limit + 1,
                scan_limit: Some(state.config.data_scan_limit),
                enough: valid.limit,
            });
            let logs = &state.stores.logs;
            let pages =
                each_server(queries.collect(), |q| async move { logs.query(&q).await }).await?;
            metrics::histogram!("logs_query_duration_seconds")
                .record(started.elapsed().as_secs_f64());
            // several servers: their pages merged newest first (event ids are unique across
            // servers, so one `(occurred_at, id)` cursor continues all of them)
            Ok(merge_pages(pages, valid.limit + 1))
        })
        .await?
    };
    let has_more = rows.len() > valid.limit;
    rows.truncate(valid.limit);
    let next_cursor = cursors.next(has_more, rows.last());
    Ok(HttpResponse::Ok()
        .insert_header(("Cache-Control", "private, no-store"))
        .json(QueryResponse {
            success: true,
            events: rows.into_iter().map(EventOut::from).collect(),
            pagination: Pagination {
                has_more,
                next_cursor,
            },
            range: opened.range,
            request_id: current_request_id(),
        }))
}
