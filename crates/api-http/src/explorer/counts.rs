//! `POST /v1/logs/counts`: a search's events per level in time buckets (a histogram).

use actix_web::{web, HttpResponse};
use logs_core::counts::{interval_name, CountsRequest, LevelTotals};
use logs_core::store::CountQuery;
use serde::Serialize;
use stow_http::{current_request_id, ApiError, Auth};
use utoipa::ToSchema;

use super::{each_server, in_search_slot, open_many, ts, Range};
use crate::state::ApiState;

/// Events per level in one bucket.
#[derive(Serialize, ToSchema, Default)]
pub struct LevelCounts {
    pub debug: i64,
    pub info: i64,
    pub warn: i64,
    pub error: i64,
    pub fatal: i64,
}

impl From<LevelTotals> for LevelCounts {
    fn from([debug, info, warn, error, fatal]: LevelTotals) -> Self {
        Self {
            debug,
            info,
            warn,
            error,
            fatal,
        }
    }
}

#[derive(Serialize, ToSchema)]
pub struct Bucket {
    /// The bucket's start (UTC, a multiple of the interval since the Unix epoch); it ends where
    /// the next begins. The first and last count only events inside `range`.
    pub start: String,
    pub total: i64,
    pub levels: LevelCounts,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CountsResponse {
    pub success: bool,
    /// The bucket length used (`auto` resolved), e.g. `15m`.
    pub interval: String,
    pub interval_seconds: i64,
    /// The effective window: `from` raised to now minus the plan's retention when older.
    pub range: Range,
    /// Every bucket that holds part of `range`, oldest first, zeros included.
    pub buckets: Vec<Bucket>,
    pub total: i64,
    pub request_id: String,
}

/// Count a search's events per level over time.
#[utoipa::path(
    post, path = "/v1/logs/counts", tag = "logs", security(("bearer" = [])),
    request_body = CountsRequest,
    responses(
        (status = 200, description = "Buckets of counts per level (Cache-Control: private, no-store)", body = CountsResponse),
        (status = 400, description = "INVALID_REQUEST, or SEARCH_TOO_BROAD (a `data` filter past `LOGS_DATA_SCAN_LIMIT`)", body = stow_http::error::ApiErrorBody),
        stow_http::error::JsonBodyErrors,
        super::LogReadErrors,
        stow_http::error::KeyedRouteErrors,
        stow_http::error::BodyRouteErrors,
    )
)]
pub async fn counts(
    auth: Auth,
    body: stow_http::Json<CountsRequest>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    let req = body.into_inner();
    let opened = open_many(
        &state,
        &auth,
        req.server_id.as_deref(),
        req.server_ids.as_deref(),
        || logs_core::counts::validate(&req),
    )
    .await?;
    let (from, to) = (opened.search.from, opened.search.to);
    let bucket = opened
        .valid
        .bucket(from, to)
        .map_err(ApiError::invalid_request)?;
    let rows = if opened.empty() {
        Vec::new()
    } else {
        in_search_slot(&state, &auth, async {
            // several servers: their counts add up bucket by bucket (in `fill`)
            let queries = opened.servers.iter().map(|server| CountQuery {
                server_id: server.id.clone(),
                from,
                to,
                filters: opened.search.filters.clone(),
                bucket,
                scan_limit: state.config.data_scan_limit,
            });
            let logs = &state.stores.logs;
            let each =
                each_server(queries.collect(), |q| async move { logs.counts(&q).await }).await?;
            let rows: Vec<_> = each.into_iter().flatten().collect();
            Ok(rows)
        })
        .await?
    };
    let (filled, total) = logs_core::counts::fill(from, to, bucket, &rows);
    let buckets = filled
        .into_iter()
        .map(|b| Bucket {
            start: ts(b.start),
            total: b.total(),
            levels: LevelCounts::from(b.levels),
        })
        .collect();
    Ok(HttpResponse::Ok()
        .insert_header(("Cache-Control", "private, no-store"))
        .json(CountsResponse {
            success: true,
            interval: interval_name(bucket.num_seconds()),
            interval_seconds: bucket.num_seconds(),
            range: opened.range,
            buckets,
            total,
            request_id: current_request_id(),
        }))
}
