//! `POST /v1/logs/facets`: the most frequent levels, event types and resources of a search.

use actix_web::{web, HttpResponse};
use logs_core::facets::{FacetsRequest, SAMPLE};
use logs_core::store::{FacetQuery, Facets};
use serde::Serialize;
use stow_http::{current_request_id, ApiError, Auth};
use utoipa::ToSchema;

use super::{each_server, in_search_slot, open_many, Range};
use crate::state::ApiState;

#[derive(Serialize, ToSchema)]
pub struct FacetValue {
    pub value: String,
    pub count: i64,
}

fn values(v: Vec<(String, i64)>) -> Vec<FacetValue> {
    v.into_iter()
        .map(|(value, count)| FacetValue { value, count })
        .collect()
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FacetsResponse {
    pub success: bool,
    /// How many events the counts are over.
    pub examined: i64,
    /// `true` when the search has more events than the newest `sampleSize` the counts are
    /// over (those matching every filter but `data`).
    pub sampled: bool,
    pub sample_size: usize,
    /// Most frequent first, ties by value; at most `top` each.
    pub levels: Vec<FacetValue>,
    pub event_types: Vec<FacetValue>,
    /// Events without a resource are not counted here.
    pub resources: Vec<FacetValue>,
    /// Player ids (`player_id` and `target_player_id`), each counted once per event it is in:
    /// the events a `playerId` search of the sample finds.
    pub players: Vec<FacetValue>,
    /// The effective window: `from` raised to now minus the plan's retention when older.
    pub range: Range,
    pub request_id: String,
}

/// The most frequent values of a search, for suggestions.
#[utoipa::path(
    post, path = "/v1/logs/facets", tag = "logs", security(("bearer" = [])),
    request_body = FacetsRequest,
    responses(
        (status = 200, description = "Top values per facet (Cache-Control: private, no-store)", body = FacetsResponse),
        (status = 400, description = "INVALID_REQUEST", body = stow_http::error::ApiErrorBody),
        stow_http::error::JsonBodyErrors,
        super::LogReadErrors,
        stow_http::error::KeyedRouteErrors,
        stow_http::error::BodyRouteErrors,
    )
)]
pub async fn facets(
    auth: Auth,
    body: stow_http::Json<FacetsRequest>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    let req = body.into_inner();
    let opened = open_many(
        &state,
        &auth,
        req.server_id.as_deref(),
        req.server_ids.as_deref(),
        || logs_core::facets::validate(&req),
    )
    .await?;
    let top = opened.valid.top;
    let facets = if opened.empty() {
        Facets::default()
    } else {
        in_search_slot(&state, &auth, async {
            let queries = opened.servers.iter().map(|server| FacetQuery {
                server_id: server.id.clone(),
                from: opened.search.from,
                to: opened.search.to,
                filters: opened.search.filters.clone(),
                sample: SAMPLE,
                top,
            });
            let logs = &state.stores.logs;
            let all =
                each_server(queries.collect(), |q| async move { logs.facets(&q).await }).await?;
            Ok(Facets::merge(all, top))
        })
        .await?
    };
    Ok(HttpResponse::Ok()
        .insert_header(("Cache-Control", "private, no-store"))
        .json(FacetsResponse {
            success: true,
            examined: facets.examined,
            sampled: facets.sampled,
            sample_size: SAMPLE,
            levels: values(facets.levels),
            event_types: values(facets.event_types),
            resources: values(facets.resources),
            players: values(facets.players),
            range: opened.range,
            request_id: current_request_id(),
        }))
}
