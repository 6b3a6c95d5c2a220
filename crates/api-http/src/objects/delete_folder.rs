//! `POST /v1/objects/delete-folder`: every object under a folder, in bounded batches
//! (`stow_ops::objects::DeleteFolder`: who may, the paths, the batch, the bytes); the client
//! repeats it until `done`.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use cdn_core::idempotency::Fingerprint;
use serde::{Deserialize, Serialize};
use stow_http::{current_request_id, ApiError, Auth};
use stow_ops::objects::DeleteFolder;
use utoipa::ToSchema;

use crate::idempotency;
use crate::objects::typed;
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
    let ctx = crate::ops::ctx(&state, &req, &auth);
    let checked = DeleteFolder {
        path: body.into_inner().path,
    }
    .check(&ctx)?;
    let mut fp = Fingerprint::new();
    fp.field("path", checked.folder());
    let fingerprint = fp.finish();
    let ticket =
        idempotency::begin(&state, &req, &auth.key.id, "/v1/objects/delete-folder").await?;
    if ticket.is_retry() {
        return ticket.replay(&req, &fingerprint);
    }
    let outcome = checked
        .run(&ctx, &auth.org.id, state.get_ref())
        .await
        .map_err(ApiError::from)
        .and_then(|d| {
            typed(&DeleteFolderResponse {
                success: true,
                path: d.path,
                deleted: d.deleted,
                done: d.done,
                request_id: current_request_id(),
            })
        })
        .map(|body| (StatusCode::OK, body));
    ticket.finish(&fingerprint, outcome).await
}
