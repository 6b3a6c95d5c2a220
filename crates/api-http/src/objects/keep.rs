//! `POST /v1/objects/keep`: mark objects to be kept whatever the lifecycle rules say, or unmark
//! them (`cdn_core::lifecycle`).

use actix_web::{web, HttpRequest, HttpResponse};
use auth_core::Permission;
use cdn_core::path::normalize_key;
use cdn_core::ObjectKey;
use serde::{Deserialize, Serialize};
use stow_http::{current_request_id, ApiError, Auth, Code};
use utoipa::ToSchema;

use crate::state::ApiState;

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct KeepRequest {
    /// Object paths (at most 1000 by default, `MAX_BULK_DELETE_PATHS`).
    pub paths: Vec<String>,
    /// `true` to keep them whatever the lifecycle rules say; `false` to let the rules apply.
    pub keep: bool,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct KeepResponse {
    pub success: bool,
    pub keep: bool,
    /// The normalized paths of the objects that exist, now marked as asked.
    pub updated: Vec<String>,
    /// The normalized paths that name no object (nothing to mark).
    pub not_found: Vec<String>,
    pub request_id: String,
}

/// Keep objects whatever the lifecycle rules say (or stop keeping them).
#[utoipa::path(
    post, path = "/v1/objects/keep", tag = "lifecycle", security(("bearer" = [])),
    request_body = KeepRequest,
    responses(
        (status = 200, description = "Marked; paths that name no object are listed in `notFound`", body = KeepResponse),
        (status = 400, description = "INVALID_PATH (names the path; nothing was marked), INVALID_REQUEST (no paths) or TOO_MANY_FILES", body = stow_http::error::ApiErrorBody),
        (status = 403, description = "FORBIDDEN (no cdn:delete) or PATH_NOT_ALLOWED (names the path; nothing was marked)", body = stow_http::error::ApiErrorBody),
        (status = 413, description = "PAYLOAD_TOO_LARGE", body = stow_http::error::ApiErrorBody),
        (status = 415, description = "UNSUPPORTED_MEDIA_TYPE", body = stow_http::error::ApiErrorBody),
        stow_http::error::KeyedRouteErrors,
        stow_http::error::BodyRouteErrors,
    )
)]
pub async fn keep(
    auth: Auth,
    req: HttpRequest,
    body: stow_http::Json<KeepRequest>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    // unkeeping an object lets a rule delete it: the permission a delete takes
    auth.require(Permission::CdnDelete)?;
    super::paths_within(&body.paths, state.config.max_bulk_delete_paths)?;
    let scope = auth.key.path_scope();
    let mut keys: Vec<ObjectKey> = Vec::with_capacity(body.paths.len());
    for path in &body.paths {
        let key = normalize_key(path)
            .map_err(|e| ApiError::new(Code::InvalidPath, format!("invalid path `{path}`: {e}")))?;
        if !scope.allows(&key) {
            return Err(ApiError::new(
                Code::PathNotAllowed,
                format!(
                    "`{key}` is outside the paths {} may delete; nothing was marked",
                    auth.holder()
                ),
            ));
        }
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    let found = state
        .stores
        .records
        .set_keep(
            &auth.org.id,
            &keys,
            body.keep,
            &crate::audit::of(&req, &auth),
        )
        .await?;
    for key in &found {
        state.forget_row(&auth.org.id, key);
    }
    let not_found = keys
        .iter()
        .filter(|k| !found.contains(k))
        .map(ToString::to_string)
        .collect();
    Ok(HttpResponse::Ok().json(KeepResponse {
        success: true,
        keep: body.keep,
        updated: found.into_iter().map(ObjectKey::into_string).collect(),
        not_found,
        request_id: current_request_id(),
    }))
}
