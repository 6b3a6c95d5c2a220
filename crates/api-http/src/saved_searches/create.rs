//! `POST /v1/logs/saved-searches`: save a search for the organization.

use actix_web::{web, HttpRequest, HttpResponse};
use chrono::{SubsecRound, Utc};
use logs_core::saved::{self, SavedSearch, SavedSearchRequest, MAX_SAVED_SEARCHES};
use serde::Serialize;
use stow_http::{current_request_id, ApiError, Auth};
use utoipa::ToSchema;

use super::{reader, refused, resolve, Codes, SavedSearchOut};
use crate::state::ApiState;

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SavedSearchResponse {
    pub success: bool,
    pub saved_search: SavedSearchOut,
    pub request_id: String,
}

/// Save a search.
#[utoipa::path(
    post, path = "/v1/logs/saved-searches", tag = "logs", security(("bearer" = [])),
    request_body = SavedSearchRequest,
    responses(
        (status = 201, description = "Saved", body = SavedSearchResponse),
        (status = 400, description = "INVALID_REQUEST naming the field and the limit", body = stow_http::error::ApiErrorBody),
        (status = 404, description = "NOT_FOUND: a join code of no registered server of this organization", body = stow_http::error::ApiErrorBody),
        (status = 409, description = "CONFLICT: the name is taken (either case), or the organization has 200 saved searches", body = stow_http::error::ApiErrorBody),
        super::SavedSearchErrors,
        stow_http::error::JsonBodyErrors,
        stow_http::error::KeyedRouteErrors,
        stow_http::error::BodyRouteErrors,
    )
)]
pub async fn create_saved_search(
    auth: Auth,
    req: HttpRequest,
    body: stow_http::Json<SavedSearchRequest>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    reader(&auth)?;
    let valid = saved::validate(&body.into_inner(), true).map_err(ApiError::invalid_request)?;
    let servers = resolve(
        &state,
        &auth,
        valid.servers.unwrap_or(saved::ServerCodes::All),
    )
    .await?;
    let audit = crate::audit::of(&req, &auth);
    let now = Utc::now().trunc_subsecs(3);
    let s = SavedSearch {
        id: saved::new_id(),
        org_id: auth.org.id.clone(),
        name: valid.name.unwrap_or_default(),
        servers,
        search: valid.search.unwrap_or_default(),
        created_at: now,
        updated_at: now,
        // as the audit log names the caller: the member's sign-in name or the key's name
        created_by: audit.actor.label().to_owned(),
    };
    let put = state
        .stores
        .saved_searches
        .create(&s, MAX_SAVED_SEARCHES, &audit)
        .await?;
    refused(put, &s.name)?;
    let codes = Codes::of(&state, &auth).await?;
    Ok(HttpResponse::Created().json(SavedSearchResponse {
        success: true,
        saved_search: codes.out(s),
        request_id: current_request_id(),
    }))
}
