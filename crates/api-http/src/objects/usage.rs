//! `GET /v1/objects/usage`: objects and bytes per top-level folder.

use actix_web::{web, HttpResponse};
use auth_core::Permission;
use serde::Serialize;
use stow_http::{current_request_id, ApiError, Auth};
use utoipa::ToSchema;

use crate::state::ApiState;

/// One top-level folder's objects.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FolderUsageView {
    /// The folder (a key's first segment); `""` for objects at the top level.
    pub folder: String,
    pub objects: i64,
    /// The sum of their sizes.
    pub bytes: i64,
    /// Days after which a lifecycle rule deletes the files directly in this folder: the folder's
    /// own rule, else the workspace's (path `""`); absent when neither exists. Rules on deeper
    /// folders are listed by `GET /v1/lifecycle`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lifecycle_days: Option<i64>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UsageResponse {
    pub success: bool,
    /// In folder byte order; only folders that hold objects and lie wholly inside the key's
    /// paths (`""` only for a key with every path).
    pub folders: Vec<FolderUsageView>,
    pub request_id: String,
}

/// Objects and bytes per top-level folder.
#[utoipa::path(
    get, path = "/v1/objects/usage", tag = "objects", security(("bearer" = [])),
    responses(
        (status = 200, description = "Usage per top-level folder, exact as of the last committed change", body = UsageResponse),
        (status = 403, description = "FORBIDDEN (no cdn:read)", body = stow_http::error::ApiErrorBody),
        stow_http::error::KeyedRouteErrors,
    )
)]
pub async fn usage(auth: Auth, state: web::Data<ApiState>) -> Result<HttpResponse, ApiError> {
    auth.require(Permission::CdnRead)?;
    let scope = auth.key.path_scope();
    let (folders, rules) = futures::try_join!(
        state.stores.records.folder_usage(&auth.org.id),
        state.stores.lifecycle.list(&auth.org.id)
    )?;
    let folders = folders
        .into_iter()
        .filter(|u| scope.outside_part(&u.folder).is_none())
        .map(|u| FolderUsageView {
            lifecycle_days: rules
                .iter()
                .filter(|r| r.folder == u.folder || r.folder.is_empty())
                .max_by_key(|r| r.folder.len())
                .map(|r| r.days),
            folder: u.folder,
            objects: u.totals.objects,
            bytes: u.totals.bytes,
        })
        .collect();
    Ok(HttpResponse::Ok().json(UsageResponse {
        success: true,
        folders,
        request_id: current_request_id(),
    }))
}
