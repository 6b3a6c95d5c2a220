//! `POST /v1/logs/players`: the players seen under a name, across the servers a key may read,
//! each with the identifier that opens their player view.

use std::sync::Arc;

use actix_web::{web, HttpResponse};
use auth_core::Permission;
use chrono::Utc;
use logs_core::player::merge_pages;
use logs_core::players::{matches, Match, PlayersRequest, PER_SERVER};
use logs_core::store::{EventRow, NameQuery};
use serde::Serialize;
use stow_http::{current_request_id, ApiError, Auth};
use utoipa::ToSchema;

use super::{each_server, in_search_slot, named_servers, readable_servers, ts, Range};
use crate::state::ApiState;

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlayersResponse {
    pub success: bool,
    /// The name as sent.
    pub name: String,
    /// Join codes of the servers looked on.
    pub servers: Vec<String>,
    /// The players seen under the name, most events first.
    pub matches: Vec<Match>,
    /// Whether a server had more events under the name than were read (its newest 500).
    pub sampled: bool,
    /// The effective window: `from` raised to now minus the plan's retention when older.
    pub range: Range,
    pub request_id: String,
}

/// Players seen under a name, across servers.
#[utoipa::path(
    post, path = "/v1/logs/players", tag = "logs", security(("bearer" = [])),
    request_body = PlayersRequest,
    responses(
        (status = 200, description = "The players seen under the name (Cache-Control: private, no-store)", body = PlayersResponse),
        (status = 400, description = "INVALID_REQUEST", body = stow_http::error::ApiErrorBody),
        stow_http::error::JsonBodyErrors,
        super::LogReadErrors,
        stow_http::error::KeyedRouteErrors,
        stow_http::error::BodyRouteErrors,
    )
)]
pub async fn players(
    auth: Auth,
    body: stow_http::Json<PlayersRequest>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    let req = body.into_inner();
    auth.require(Permission::LogsRead)?;
    let valid = logs_core::players::validate(&req).map_err(ApiError::invalid_request)?;
    let servers = match &req.server_ids {
        Some(codes) => named_servers(&state, &auth, codes).await?,
        None => readable_servers(&state, &auth).await?,
    };
    let search = valid
        .search
        .clone()
        .within_retention(auth.plan.retention_days, Utc::now());
    let found: Vec<Vec<EventRow>> = if search.is_empty() || servers.is_empty() {
        Vec::new()
    } else {
        let queries: Vec<NameQuery> = servers
            .iter()
            .map(|s| NameQuery {
                server_id: s.id.clone(),
                from: search.from,
                to: search.to,
                name: valid.name.clone(),
                limit: PER_SERVER + 1,
            })
            .collect();
        let logs = Arc::clone(&state.stores.logs);
        in_search_slot(&state, &auth, async move {
            each_server(queries, |q| {
                let logs = Arc::clone(&logs);
                async move { logs.named(&q).await }
            })
            .await
        })
        .await?
    };
    let sampled = found.iter().any(|rows| rows.len() > PER_SERVER);
    // newest first across servers: each player's servers come most recent first
    let rows = merge_pages(
        found
            .into_iter()
            .map(|mut rows| {
                rows.truncate(PER_SERVER);
                rows
            })
            .collect(),
        usize::MAX,
    );
    Ok(HttpResponse::Ok()
        .insert_header(("Cache-Control", "private, no-store"))
        .json(PlayersResponse {
            success: true,
            name: req.name.unwrap_or_default(),
            servers: servers.iter().map(|s| s.cfx_id.clone()).collect(),
            matches: matches(&rows),
            sampled,
            range: Range {
                from: ts(search.from),
                to: ts(search.to),
            },
            request_id: current_request_id(),
        }))
}
