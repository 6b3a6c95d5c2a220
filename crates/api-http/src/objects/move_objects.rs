//! `POST /v1/objects/move`: rename an object or a folder without copying bytes
//! (`stow_ops::objects::MoveObjects`: who may, the paths, the batches). Like a purge, the answer
//! comes once every instance's 1 s delivery-row cache has turned over since the move began, so no
//! instance still serves an object at its old key (or a 404 at its new one) afterwards.

use std::time::Instant;

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use cdn_core::idempotency::Fingerprint;
use serde::{Deserialize, Serialize};
use stow_http::{current_request_id, ApiError, Auth};
use stow_ops::objects::{MoveObjects, Moved};
use utoipa::ToSchema;

use crate::idempotency;
use crate::objects::typed;
use crate::state::{outlast_row_caches, ApiState};

#[derive(Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MoveRequest {
    /// The object key (or, with `folder: true`, the folder) to move.
    pub from: String,
    /// Its new key (or folder).
    pub to: String,
    /// Replace an object that already has the destination key (default false: 409).
    #[serde(default)]
    pub replace: bool,
    /// Move every object under the folder `from` to the folder `to` (default false).
    #[serde(default)]
    pub folder: bool,
}

/// An object that stayed because its destination was taken.
#[derive(Serialize, ToSchema)]
pub struct MoveConflict {
    pub from: String,
    pub to: String,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MoveResponse {
    pub success: bool,
    /// The normalized source and destination.
    pub from: String,
    pub to: String,
    /// Objects this request moved.
    pub moved: usize,
    /// Folder moves: objects left in place because their destination exists (send `replace`);
    /// at most 1,000 are named.
    pub conflicts: Vec<MoveConflict>,
    /// False when a folder move has more objects it can move: call again. True when every
    /// object left under `from` (if any) is a conflict.
    pub done: bool,
    pub request_id: String,
}

/// Move or rename an object or a folder (rows only; the bytes stay where they are).
#[utoipa::path(
    post, path = "/v1/objects/move", tag = "objects", security(("bearer" = [])),
    params(("Idempotency-Key" = Option<String>, Header, description = "Makes retries safe")),
    request_body = MoveRequest,
    responses(
        (status = 200, description = "Moved (a folder: this batch; `done` says whether anything is left)", body = MoveResponse),
        (status = 400, description = "INVALID_PATH (a key or folder, the root, a folder into itself) or INVALID_REQUEST", body = stow_http::error::ApiErrorBody),
        (status = 403, description = "FORBIDDEN (needs cdn:write and cdn:delete) or PATH_NOT_ALLOWED (source or destination outside the key's paths)", body = stow_http::error::ApiErrorBody),
        (status = 404, description = "NOT_FOUND: no object has the source key", body = stow_http::error::ApiErrorBody),
        (status = 409, description = "CONFLICT: the destination exists and `replace` was not sent, or Idempotency-Key reuse", body = stow_http::error::ApiErrorBody),
        (status = 413, description = "PAYLOAD_TOO_LARGE", body = stow_http::error::ApiErrorBody),
        (status = 415, description = "UNSUPPORTED_MEDIA_TYPE", body = stow_http::error::ApiErrorBody),
        stow_http::error::KeyedRouteErrors,
        stow_http::error::BodyRouteErrors,
    )
)]
pub async fn move_objects(
    auth: Auth,
    req: HttpRequest,
    body: stow_http::Json<MoveRequest>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    let body = body.into_inner();
    let ctx = crate::ops::ctx(&state, &req, &auth);
    let checked = MoveObjects {
        from: body.from,
        to: body.to,
        replace: body.replace,
        folder: body.folder,
    }
    .check(&ctx)?;
    let mut fp = Fingerprint::new();
    fp.field("from", checked.from());
    fp.field("to", checked.to());
    fp.field("replace", if checked.replace() { "1" } else { "0" });
    fp.field("folder", if checked.folder() { "1" } else { "0" });
    let fingerprint = fp.finish();
    let ticket = idempotency::begin(&state, &req, &auth.key.id, "/v1/objects/move").await?;
    if ticket.is_retry() {
        return ticket.replay(&req, &fingerprint);
    }
    let started = Instant::now();
    let outcome = checked.run(&ctx, &auth.org.id, state.get_ref()).await;
    if outcome.is_ok() {
        outlast_row_caches(started).await;
    }
    let outcome = outcome
        .map_err(ApiError::from)
        .and_then(|m| typed(&response(m)))
        .map(|body| (StatusCode::OK, body));
    ticket.finish(&fingerprint, outcome).await
}

fn response(m: Moved) -> MoveResponse {
    MoveResponse {
        success: true,
        from: m.from,
        to: m.to,
        moved: m.moved,
        conflicts: m
            .conflicts
            .into_iter()
            .map(|c| MoveConflict {
                from: c.from,
                to: c.to,
            })
            .collect(),
        done: m.done,
        request_id: current_request_id(),
    }
}
