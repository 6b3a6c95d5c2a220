//! `GET /v1/objects`: one page of a folder's objects, recursively, in ascending key order; with
//! `delimiter=/`, the folder view instead: objects directly inside and sub-folders, each once.

use actix_web::{web, HttpResponse};
use auth_core::Permission;
use cdn_core::folder::{FolderEntry, FolderQuery};
use cdn_core::listing::{self, TokenError};
use cdn_core::path::normalize_folder;
use cdn_core::store::ListQuery;
use serde::{Deserialize, Serialize};
use stow_http::{current_request_id, ApiError, Auth, Code};
use utoipa::{IntoParams, ToSchema};

use crate::pipeline::ListedObject;
use crate::state::ApiState;

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
pub struct ListParams {
    /// Folder to list (recursive). Required when the key is restricted to path prefixes.
    pub path: Option<String>,
    /// Page size, 1 to 1000 (default 100).
    pub limit: Option<String>,
    /// Value from the previous page.
    pub continuation_token: Option<String>,
    /// `/` for the folder view: the objects directly in `path` and its sub-folders (in
    /// `folders`), each once, instead of every object below `path`.
    pub delimiter: Option<String>,
}

/// A sub-folder in the folder view.
#[derive(Serialize, ToSchema)]
pub struct ListedFolder {
    /// Its path, to pass as `path` to list it (`shots/2026`).
    pub path: String,
    /// Its last segment (`2026`).
    pub name: String,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListResponse {
    pub success: bool,
    pub objects: Vec<ListedObject>,
    /// With `delimiter=/` only: the page's sub-folders.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub folders: Option<Vec<ListedFolder>>,
    pub continuation_token: Option<String>,
    pub request_id: String,
}

/// List objects under a folder, recursively, in ascending key order (or, with `delimiter=/`, the
/// objects directly in it and its sub-folders).
#[utoipa::path(
    get, path = "/v1/objects", tag = "objects", params(ListParams), security(("bearer" = [])),
    responses(
        (status = 200, description = "One page of objects", body = ListResponse),
        (status = 400, description = "INVALID_REQUEST (limit, continuationToken) or INVALID_PATH", body = stow_http::error::ApiErrorBody),
        (status = 403, description = "FORBIDDEN or PATH_NOT_ALLOWED", body = stow_http::error::ApiErrorBody),
        stow_http::error::KeyedRouteErrors,
    )
)]
pub async fn list(
    auth: Auth,
    params: stow_http::Query<ListParams>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    auth.require(Permission::CdnRead)?;
    let folder = normalize_folder(params.path.as_deref().unwrap_or(""))
        .map_err(|e| ApiError::new(Code::InvalidPath, format!("invalid path: {e}")))?;
    let scope = super::readable_folder(&auth, &folder, params.path.is_some())?;
    let limit = listing::parse_limit(params.limit.as_deref()).map_err(ApiError::invalid_request)?;
    let folder_view = match params.delimiter.as_deref() {
        None => false,
        Some("/") => true,
        Some(other) => {
            return Err(ApiError::invalid_request(format!(
                "delimiter {other:?} is not supported; use `/` (or leave it out for a recursive listing)"
            )))
        }
    };
    // a token is bound to its listing: the folder, and which of the two views
    let binding = if folder_view {
        format!("{folder}?delimiter=/")
    } else {
        folder.clone()
    };
    let keys = state.signing_keys().await?;
    let after = match &params.continuation_token {
        None => None,
        Some(t) => Some(
            listing::read_token(&keys, &auth.org.id, &binding, t).map_err(|e| match e {
                TokenError::Invalid | TokenError::Mismatch => {
                    ApiError::invalid_request(e.to_string())
                }
            })?,
        ),
    };
    let (objects, folders, last) = if folder_view {
        let query = FolderQuery {
            folder: folder.clone(),
            after,
            denied: scope.denied.clone(),
            limit: limit + 1,
        };
        let mut entries = state
            .stores
            .records
            .list_folder(&auth.org.id, &query)
            .await?;
        let more = entries.len() > limit;
        entries.truncate(limit);
        let last = more
            .then(|| entries.last().map(FolderEntry::sort_key))
            .flatten();
        let (mut objects, mut folders) = (Vec::new(), Vec::new());
        for entry in &entries {
            match entry {
                FolderEntry::Object(r) => objects.push(state.listed(&auth.org.slug, r)),
                FolderEntry::Folder(path) => folders.push(ListedFolder {
                    name: cdn_core::path::last_segment(path).to_owned(),
                    path: path.clone(),
                }),
            }
        }
        (objects, Some(folders), last)
    } else {
        let query = ListQuery {
            folder: folder.clone(),
            after,
            denied: scope.denied.clone(),
            limit: limit + 1,
        };
        let mut rows = state.stores.records.list(&auth.org.id, &query).await?;
        let more = rows.len() > limit;
        rows.truncate(limit);
        let last = more
            .then(|| rows.last().map(|r| r.key.to_string()))
            .flatten();
        let objects = rows
            .iter()
            .map(|r| state.listed(&auth.org.slug, r))
            .collect();
        (objects, None, last)
    };
    let continuation_token =
        last.map(|last| listing::make_token(&keys, &auth.org.id, &binding, &last));
    Ok(HttpResponse::Ok().json(ListResponse {
        success: true,
        objects,
        folders,
        continuation_token,
        request_id: current_request_id(),
    }))
}
