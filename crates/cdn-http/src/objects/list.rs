//! `GET /v1/objects`: one page of a folder's objects, recursively, in ascending key order.

use actix_web::{web, HttpResponse};
use auth_core::Permission;
use cdn_core::listing::{self, TokenError};
use cdn_core::path::normalize_folder;
use cdn_core::store::ListQuery;
use secrecy::ExposeSecret;
use serde::{Deserialize, Serialize};
use stow_http::{current_request_id, ApiError, Auth, Code};
use utoipa::{IntoParams, ToSchema};

use crate::pipeline::ListedObject;
use crate::state::CdnState;

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
pub struct ListParams {
    /// Folder to list (recursive). Required when the key is restricted to path prefixes.
    pub path: Option<String>,
    /// Page size, 1 to 1000 (default 100).
    pub limit: Option<String>,
    /// Value from the previous page.
    pub continuation_token: Option<String>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListResponse {
    pub success: bool,
    pub objects: Vec<ListedObject>,
    pub continuation_token: Option<String>,
    pub request_id: String,
}

/// List objects under a folder, recursively, in ascending key order.
#[utoipa::path(
    get, path = "/v1/objects", tag = "objects", params(ListParams), security(("bearer" = [])),
    responses(
        (status = 200, description = "One page of objects", body = ListResponse),
        (status = 400, description = "INVALID_REQUEST (limit, continuationToken) or INVALID_PATH", body = stow_http::error::CdnErrorBody),
        (status = 403, description = "FORBIDDEN or PATH_NOT_ALLOWED", body = stow_http::error::CdnErrorBody),
        stow_http::error::KeyedRouteErrors,
    )
)]
pub async fn list(
    auth: Auth,
    params: web::Query<ListParams>,
    state: web::Data<CdnState>,
) -> Result<HttpResponse, ApiError> {
    auth.require(Permission::CdnRead)?;
    let folder = normalize_folder(params.path.as_deref().unwrap_or(""))
        .map_err(|e| ApiError::new(Code::InvalidPath, format!("invalid path: {e}")))?;
    let scope = auth.key.path_scope();
    if !scope.allows_listing(&folder) {
        let msg = if params.path.is_none() {
            "this key is restricted to specific path prefixes; pass `path`".to_owned()
        } else {
            format!("path `{folder}` is outside the paths this key may read")
        };
        return Err(ApiError::new(Code::PathNotAllowed, msg));
    }
    let limit = listing::parse_limit(params.limit.as_deref()).map_err(ApiError::invalid_request)?;
    let after = match &params.continuation_token {
        None => None,
        Some(t) => Some(
            listing::read_token(
                state.config.signing_secret.expose_secret(),
                &auth.org.id,
                &folder,
                t,
            )
            .map_err(|e| match e {
                TokenError::Invalid | TokenError::Mismatch => {
                    ApiError::invalid_request(e.to_string())
                }
            })?,
        ),
    };
    let mut rows = state
        .records
        .list(
            &auth.org.id,
            &ListQuery {
                folder: folder.clone(),
                after,
                denied: scope.denied.clone(),
                limit: limit + 1,
            },
        )
        .await?;
    let more = rows.len() > limit;
    rows.truncate(limit);
    let continuation_token = match (more, rows.last()) {
        (true, Some(last)) => Some(listing::make_token(
            state.config.signing_secret.expose_secret(),
            &auth.org.id,
            &folder,
            &last.key,
        )),
        _ => None,
    };
    let objects = rows
        .iter()
        .map(|r| state.listed(&auth.org.slug, r))
        .collect();
    Ok(HttpResponse::Ok().json(ListResponse {
        success: true,
        objects,
        continuation_token,
        request_id: current_request_id(),
    }))
}
