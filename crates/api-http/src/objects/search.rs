//! `POST /v1/objects/search`: objects anywhere under a folder whose path contains a text or whose
//! metadata holds one of some values, sorted by path, last modified or size, paged by token.

use actix_web::{web, HttpResponse};
use auth_core::Permission;
use cdn_core::listing::{self, TokenError};
use cdn_core::search::{Position, SearchRequest};
use serde::Serialize;
use stow_http::{current_request_id, ApiError, Auth, Code};
use utoipa::ToSchema;

use crate::pipeline::ListedObject;
use crate::state::ApiState;

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchResponse {
    pub success: bool,
    /// In the search's order.
    pub objects: Vec<ListedObject>,
    /// Send as `continuationToken` (with the same search) for the next page; `null` at the end.
    pub continuation_token: Option<String>,
    pub request_id: String,
}

/// Find objects by a text in their path or by metadata values, sorted.
#[utoipa::path(
    post, path = "/v1/objects/search", tag = "objects", request_body = SearchRequest,
    security(("bearer" = [])),
    responses(
        (status = 200, description = "One page of objects", body = SearchResponse),
        (status = 400, description = "INVALID_REQUEST (a field, or a token of another search) or INVALID_PATH", body = stow_http::error::ApiErrorBody),
        (status = 403, description = "FORBIDDEN or PATH_NOT_ALLOWED", body = stow_http::error::ApiErrorBody),
        stow_http::error::JsonBodyErrors,
        stow_http::error::KeyedRouteErrors,
        stow_http::error::BodyRouteErrors,
    )
)]
pub async fn search(
    auth: Auth,
    body: stow_http::Json<SearchRequest>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    auth.require(Permission::CdnRead)?;
    let req = body.into_inner();
    let mut query = cdn_core::search::validate(&req).map_err(|e| {
        if e.starts_with("`path`") {
            ApiError::new(Code::InvalidPath, e)
        } else {
            ApiError::invalid_request(e)
        }
    })?;
    let scope = super::readable_folder(&auth, &query.folder, req.path.is_some())?;
    query.denied = scope.denied.clone();
    let binding = query.binding();
    let keys = state.signing_keys().await?;
    if let Some(token) = &req.continuation_token {
        let invalid = || {
            ApiError::invalid_request(
                "continuationToken is malformed, or belongs to a different search (path, contains, metadataValues, sort and order must be unchanged)",
            )
        };
        let position =
            listing::read_token(&keys, &auth.org.id, &binding, token).map_err(|e| match e {
                TokenError::Invalid | TokenError::Mismatch => invalid(),
            })?;
        query.after = Some(serde_json::from_str::<Position>(&position).map_err(|_| invalid())?);
    }
    let limit = query.limit;
    query.limit = limit + 1;
    let mut rows = state.stores.records.search(&auth.org.id, &query).await?;
    let more = rows.len() > limit;
    rows.truncate(limit);
    let continuation_token = rows.last().filter(|_| more).map(|last| {
        let position = serde_json::to_string(&Position::of(query.sort, last)).unwrap_or_default();
        listing::make_token(&keys, &auth.org.id, &binding, &position)
    });
    Ok(HttpResponse::Ok().json(SearchResponse {
        success: true,
        objects: rows
            .iter()
            .map(|r| state.listed(&auth.org.slug, r))
            .collect(),
        continuation_token,
        request_id: current_request_id(),
    }))
}
