//! `PATCH /v1/logs/saved-searches/{id}`: rename a saved search, or change its servers or filters.

use actix_web::{web, HttpRequest, HttpResponse};
use chrono::{SubsecRound, Utc};
use logs_core::saved::{self, SavedSearch, SavedSearchRequest};
use stow_http::{current_request_id, ApiError, Auth};

use super::create::SavedSearchResponse;
use super::{find, reader, refused, resolve, Codes};
use crate::state::ApiState;

/// Change a saved search.
#[utoipa::path(
    patch, path = "/v1/logs/saved-searches/{savedSearchId}", tag = "logs", security(("bearer" = [])),
    params(("savedSearchId" = String, Path, description = "`ss_…`")),
    request_body = SavedSearchRequest,
    responses(
        (status = 200, description = "Changed (fields not sent are kept)", body = SavedSearchResponse),
        (status = 400, description = "INVALID_REQUEST naming the field and the limit", body = stow_http::error::ApiErrorBody),
        (status = 404, description = "NOT_FOUND: no such saved search the caller may read, or a join code of no registered server", body = stow_http::error::ApiErrorBody),
        (status = 409, description = "CONFLICT: another saved search has the name (either case)", body = stow_http::error::ApiErrorBody),
        super::SavedSearchErrors,
        stow_http::error::JsonBodyErrors,
        stow_http::error::KeyedRouteErrors,
        stow_http::error::BodyRouteErrors,
    )
)]
pub async fn update_saved_search(
    auth: Auth,
    req: HttpRequest,
    path: web::Path<String>,
    body: stow_http::Json<SavedSearchRequest>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    reader(&auth)?;
    let valid = saved::validate(&body.into_inner(), false).map_err(ApiError::invalid_request)?;
    let before = find(&state, &auth, &path).await?;
    let servers = match valid.servers {
        Some(codes) => resolve(&state, &auth, codes).await?,
        None => before.servers.clone(),
    };
    let after = SavedSearch {
        name: valid.name.unwrap_or_else(|| before.name.clone()),
        servers,
        search: valid.search.unwrap_or_else(|| before.search.clone()),
        updated_at: Utc::now().trunc_subsecs(3),
        ..before.clone()
    };
    let put = state
        .stores
        .saved_searches
        .update(&after, &crate::audit::of(&req, &auth))
        .await?;
    refused(put, &after.name)?;
    // as stored: a change to nothing is no change, `updatedAt` kept (SavedSearchStore::update)
    let stored = if saved::same_content(&before, &after) {
        before
    } else {
        after
    };
    let codes = Codes::of(&state, &auth).await?;
    Ok(HttpResponse::Ok().json(SavedSearchResponse {
        success: true,
        saved_search: codes.out(stored),
        request_id: current_request_id(),
    }))
}
