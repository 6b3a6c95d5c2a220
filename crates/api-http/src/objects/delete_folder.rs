//! `POST /v1/objects/delete-folder`: every object under a folder, in bounded batches.
//!
//! One request deletes at most [`super::FOLDER_BATCH`] objects (rows in one statement, then their
//! bytes) and says whether the folder is now empty; the client repeats it until `done`. So no
//! request runs long, a cut-off request loses nothing (what it committed is gone, the rest stays
//! for the next call), and bytes whose removal fails are left to `stowctl gc`.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use auth_core::{OrgId, Permission};
use cdn_core::idempotency::Fingerprint;
use cdn_core::path::normalize_folder;
use serde::{Deserialize, Serialize};
use stow_http::{current_request_id, ApiError, Auth, Code};
use utoipa::ToSchema;

use crate::idempotency;
use crate::objects::{folder_batch, typed, whole_folder_in_scope};
use crate::state::ApiState;

#[derive(Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteFolderRequest {
    /// The folder (`shots/2026`); not the root.
    pub path: String,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeleteFolderResponse {
    pub success: bool,
    /// The normalized folder.
    pub path: String,
    /// Objects this request deleted (at most 1000).
    pub deleted: usize,
    /// True when no object is left under the folder; else call again.
    pub done: bool,
    pub request_id: String,
}

/// Delete every object under a folder, up to 1000 per call; repeat until `done`.
#[utoipa::path(
    post, path = "/v1/objects/delete-folder", tag = "objects", security(("bearer" = [])),
    params(("Idempotency-Key" = Option<String>, Header, description = "Makes retries safe")),
    request_body = DeleteFolderRequest,
    responses(
        (status = 200, description = "A batch deleted; `done` says whether anything is left", body = DeleteFolderResponse),
        (status = 400, description = "INVALID_PATH (including the root) or INVALID_REQUEST", body = stow_http::error::ApiErrorBody),
        (status = 403, description = "FORBIDDEN, or PATH_NOT_ALLOWED (any part of the folder outside the key's paths; nothing was deleted)", body = stow_http::error::ApiErrorBody),
        (status = 409, description = "CONFLICT (Idempotency-Key reuse)", body = stow_http::error::ApiErrorBody),
        (status = 413, description = "PAYLOAD_TOO_LARGE", body = stow_http::error::ApiErrorBody),
        (status = 415, description = "UNSUPPORTED_MEDIA_TYPE", body = stow_http::error::ApiErrorBody),
        stow_http::error::KeyedRouteErrors,
        stow_http::error::BodyRouteErrors,
    )
)]
pub async fn delete_folder(
    auth: Auth,
    req: HttpRequest,
    body: stow_http::Json<DeleteFolderRequest>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    auth.require(Permission::CdnDelete)?;
    let folder = normalize_folder(&body.path)
        .map_err(|e| ApiError::new(Code::InvalidPath, format!("invalid path: {e}")))?;
    if folder.is_empty() {
        return Err(ApiError::new(
            Code::InvalidPath,
            "path must name a folder; the whole workspace cannot be deleted at once",
        ));
    }
    whole_folder_in_scope(&auth, &folder, "delete")?;
    let mut fp = Fingerprint::new();
    fp.field("path", &folder);
    let fingerprint = fp.finish();
    let ticket =
        idempotency::begin(&state, &req, &auth.key.id, "/v1/objects/delete-folder").await?;
    if ticket.is_retry() {
        return ticket.replay(&req, &fingerprint);
    }
    let outcome = delete_batch(&state, &auth.org.id, &crate::audit::of(&req, &auth), folder)
        .await
        .and_then(|response| typed(&response))
        .map(|body| (StatusCode::OK, body));
    ticket.finish(&fingerprint, outcome).await
}

async fn delete_batch(
    state: &ApiState,
    org_id: &OrgId,
    audit: &auth_core::audit::Audit,
    folder: String,
) -> Result<DeleteFolderResponse, ApiError> {
    let (keys, done) = folder_batch(state, org_id, &folder).await?;
    let deleted = state
        .stores
        .records
        .delete_many(org_id, &keys, audit)
        .await?;
    for record in &deleted {
        state.forget_row(org_id, &record.key);
        let location = stow_objects::ObjectPath::from(record.storage_path.as_str());
        if let Err(e) = state.blobs.delete(&location).await {
            tracing::warn!(error = %e, location = %record.storage_path, "removing deleted bytes failed; `stowctl gc` will");
        }
    }
    Ok(DeleteFolderResponse {
        success: true,
        path: folder,
        deleted: deleted.len(),
        done,
        request_id: current_request_id(),
    })
}
