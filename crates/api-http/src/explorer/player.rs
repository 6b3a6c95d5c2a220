//! `POST /v1/logs/player`: one player across the servers a key may read — a summary of who they
//! are and what happened to them, and one timeline, newest first, paged by cursor.

use std::sync::Arc;

use actix_web::{web, HttpResponse};
use auth_core::Permission;
use chrono::Utc;
use logs_core::player::{digest, merge_pages, summarize, PlayerRequest, Summary, SAMPLE};
use logs_core::store::PlayerEventsQuery;
use serde::Serialize;
use stow_http::{current_request_id, ApiError, Auth};
use utoipa::ToSchema;

use super::query::Pagination;
use super::{
    each_server, in_search_slot, named_servers, readable_servers, ts, Cursors, EventOut, Range,
};
use crate::state::ApiState;

/// Servers one statement reads (the store's index terms grow with them).
const SERVERS_PER_READ: usize = 100;

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlayerResponse {
    pub success: bool,
    /// The player as sent.
    pub player: String,
    /// Join codes of the servers looked on.
    pub servers: Vec<String>,
    /// With the first page only (no `cursor`): made from the player's newest events.
    pub summary: Option<Summary>,
    /// Every event where the player is the actor or the target, newest first.
    pub events: Vec<EventOut>,
    pub pagination: Pagination,
    /// The effective window: `from` raised to now minus the plan's retention when older.
    pub range: Range,
    pub request_id: String,
}

/// A player across servers: identifiers, names, sessions, and their timeline.
#[utoipa::path(
    post, path = "/v1/logs/player", tag = "logs", security(("bearer" = [])),
    request_body = PlayerRequest,
    responses(
        (status = 200, description = "The summary (first page) and a page of the timeline (Cache-Control: private, no-store)", body = PlayerResponse),
        (status = 400, description = "INVALID_REQUEST, INVALID_CURSOR or CURSOR_EXPIRED", body = stow_http::error::ApiErrorBody),
        stow_http::error::JsonBodyErrors,
        super::LogReadErrors,
        stow_http::error::KeyedRouteErrors,
        stow_http::error::BodyRouteErrors,
    )
)]
pub async fn player(
    auth: Auth,
    body: stow_http::Json<PlayerRequest>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    let req = body.into_inner();
    auth.require(Permission::LogsRead)?;
    let valid = logs_core::player::validate(&req).map_err(ApiError::invalid_request)?;
    let servers = match &req.server_ids {
        Some(codes) => named_servers(&state, &auth, codes).await?,
        None => readable_servers(&state, &auth).await?,
    };
    let now = Utc::now();
    let search = valid
        .search
        .clone()
        .within_retention(auth.plan.retention_days, now);
    let ids: Vec<&str> = servers.iter().map(|s| s.id.as_str()).collect();
    let cursors = Cursors::new(&state, &auth, digest(&valid, &ids)).await?;
    let after = cursors.position(req.cursor.as_deref())?;
    let (mut rows, summary) = if search.is_empty() || servers.is_empty() {
        (Vec::new(), after.is_none().then(Summary::default))
    } else {
        in_search_slot(&state, &auth, async {
            // every server in one read per group of servers (the store scans each index once
            // per partition for the whole group), the groups a few at a time
            let read_all = |after, limit| {
                let logs = Arc::clone(&state.stores.logs);
                let queries: Vec<PlayerEventsQuery> = servers
                    .chunks(SERVERS_PER_READ)
                    .map(|group| PlayerEventsQuery {
                        org: auth.org.id.clone(),
                        servers: group.iter().map(|s| s.id.clone()).collect(),
                        from: search.from,
                        to: search.to,
                        player: valid.player.clone(),
                        after,
                        limit,
                    })
                    .collect();
                each_server(queries, move |q| {
                    let logs = Arc::clone(&logs);
                    async move { Ok(logs.player_events(&q).await?) }
                })
            };
            match after {
                // the first page is the newest of the summary's sample
                None => {
                    let newest = read_all(None, SAMPLE + 1).await?;
                    let sampled = newest.iter().flatten().count() > SAMPLE;
                    let rows = merge_pages(newest, SAMPLE);
                    let summary = summarize(&valid.player, &rows, sampled);
                    let mut page = rows;
                    page.truncate(valid.limit + 1);
                    Ok((page, Some(summary)))
                }
                Some(_) => {
                    let pages = read_all(after, valid.limit + 1).await?;
                    Ok((merge_pages(pages, valid.limit + 1), None))
                }
            }
        })
        .await?
    };
    let has_more = rows.len() > valid.limit;
    rows.truncate(valid.limit);
    let next_cursor = cursors.next(has_more, rows.last());
    Ok(HttpResponse::Ok()
        .insert_header(("Cache-Control", "private, no-store"))
        .json(PlayerResponse {
            success: true,
            player: valid.player.id.clone(),
            servers: servers.iter().map(|s| s.cfx_id.clone()).collect(),
            summary,
            events: rows.into_iter().map(EventOut::from).collect(),
            pagination: Pagination {
                has_more,
                next_cursor,
            },
            range: Range {
                from: ts(search.from),
                to: ts(search.to),
            },
            request_id: current_request_id(),
        }))
}
