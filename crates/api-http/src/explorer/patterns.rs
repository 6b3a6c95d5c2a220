//! `POST /v1/logs/patterns`: a search's messages grouped into templates (numbers, ids and quoted
//! values masked), most frequent first, over its newest events.

use actix_web::{web, HttpResponse};
use logs_core::patterns::{tally, Pattern, PatternsRequest, SAMPLE, TREND_BUCKETS};
use logs_core::player::merge_pages;
use logs_core::store::EventQuery;
use serde::Serialize;
use stow_http::{current_request_id, ApiError, Auth};
use utoipa::ToSchema;

use super::{each_server, in_search_slot, open_many, Range};
use crate::state::ApiState;

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PatternsResponse {
    pub success: bool,
    /// How many events were grouped.
    pub examined: i64,
    /// `true` when the groups are over part of the search: it has more than `sampleSize`
    /// events (the newest were grouped), or a filter on `data` read its candidates within
    /// `LOGS_DATA_SCAN_LIMIT`.
    pub sampled: bool,
    pub sample_size: usize,
    pub trend_buckets: usize,
    /// Most frequent first; ties by the most recently seen.
    pub patterns: Vec<Pattern>,
    /// The effective window: `from` raised to now minus the plan's retention when older.
    pub range: Range,
    pub request_id: String,
}

/// A search's messages grouped into patterns.
#[utoipa::path(
    post, path = "/v1/logs/patterns", tag = "logs", security(("bearer" = [])),
    request_body = PatternsRequest,
    responses(
        (status = 200, description = "Patterns, most frequent first (Cache-Control: private, no-store)", body = PatternsResponse),
        (status = 400, description = "INVALID_REQUEST", body = stow_http::error::ApiErrorBody),
        stow_http::error::JsonBodyErrors,
        super::LogReadErrors,
        stow_http::error::KeyedRouteErrors,
        stow_http::error::BodyRouteErrors,
    )
)]
pub async fn patterns(
    auth: Auth,
    body: stow_http::Json<PatternsRequest>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    let req = body.into_inner();
    let opened = open_many(
        &state,
        &auth,
        req.server_id.as_deref(),
        req.server_ids.as_deref(),
        || logs_core::patterns::validate(&req),
    )
    .await?;
    let mut rows = if opened.empty() {
        Vec::new()
    } else {
        in_search_slot(&state, &auth, async {
            let queries = opened.servers.iter().map(|server| EventQuery {
                server_id: server.id.clone(),
                from: opened.search.from,
                to: opened.search.to,
                filters: opened.search.filters.clone(),
                after: None,
                limit: SAMPLE + 1,
                scan_limit: Some(state.config.data_scan_limit),
                // whatever the scan limit let through is the sample: never too broad
                enough: 0,
            });
            let logs = &state.stores.logs;
            let pages =
                each_server(queries.collect(), |q| async move { logs.query(&q).await }).await?;
            // several servers: the newest of all of them
            Ok(merge_pages(pages, SAMPLE + 1))
        })
        .await?
    };
    let sampled = rows.len() > SAMPLE || opened.search.filters.scans_data();
    rows.truncate(SAMPLE);
    let patterns = tally(
        &rows,
        opened.search.from,
        opened.search.to,
        opened.valid.top,
    );
    Ok(HttpResponse::Ok()
        .insert_header(("Cache-Control", "private, no-store"))
        .json(PatternsResponse {
            success: true,
            examined: rows.len() as i64,
            sampled,
            sample_size: SAMPLE,
            trend_buckets: TREND_BUCKETS,
            patterns,
            range: opened.range,
            request_id: current_request_id(),
        }))
}
