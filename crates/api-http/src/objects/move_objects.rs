//! `POST /v1/objects/move`: rename an object or a folder without copying bytes.
//!
//! Locations are immutable, so a move changes rows only: each object moves in one transaction
//! (`ObjectRecordStore::rename`), found at its old key or its new one, never both or neither. A
//! folder moves in batches like a folder delete. Like a purge, the answer comes once every
//! instance's 1 s delivery-row cache has turned over since the move began, so no instance still
//! serves an object at its old key (or a 404 at its new one) afterwards.

use std::time::Instant;

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use auth_core::audit::Audit;
use auth_core::{OrgId, Permission};
use cdn_core::folder_move::{self, FolderMove};
use cdn_core::idempotency::Fingerprint;
use cdn_core::path::{normalize_folder, normalize_key, ObjectKey};
use cdn_core::store::Renamed;
use serde::{Deserialize, Serialize};
use stow_http::{current_request_id, ApiError, Auth, Code};
use utoipa::ToSchema;

use crate::idempotency;
use crate::objects::{outside_scope, typed, FOLDER_BATCH};
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
    auth.require(Permission::CdnWrite)?;
    auth.require(Permission::CdnDelete)?;
    let body = body.into_inner();
    let (from, to) = if body.folder {
        folders(&body, &auth)?
    } else {
        keys(&body, &auth)?
    };
    let mut fp = Fingerprint::new();
    fp.field("from", &from);
    fp.field("to", &to);
    fp.field("replace", if body.replace { "1" } else { "0" });
    fp.field("folder", if body.folder { "1" } else { "0" });
    let fingerprint = fp.finish();
    let ticket = idempotency::begin(&state, &req, &auth.key.id, "/v1/objects/move").await?;
    if ticket.is_retry() {
        return ticket.replay(&req, &fingerprint);
    }
    let started = Instant::now();
    let org = &auth.org.id;
    let outcome = if body.folder {
        let m = FolderMove {
            from,
            to,
            replace: body.replace,
            limit: FOLDER_BATCH,
        };
        move_folder(&state, org, &crate::audit::of(&req, &auth), m).await
    } else {
        // both were normalized as keys (`keys`)
        let keys = (ObjectKey::new(from), ObjectKey::new(to));
        move_one(
            &state,
            org,
            &crate::audit::of(&req, &auth),
            keys,
            body.replace,
        )
        .await
    };
    if outcome.is_ok() {
        outlast_row_caches(started).await;
    }
    let outcome = outcome
        .and_then(|response| typed(&response))
        .map(|body| (StatusCode::OK, body));
    ticket.finish(&fingerprint, outcome).await
}

fn keys(body: &MoveRequest, auth: &Auth) -> Result<(String, String), ApiError> {
    let scope = auth.key.path_scope();
    let key = |raw: &str, field: &str| {
        normalize_key(raw)
            .map(String::from)
            .map_err(|e| ApiError::new(Code::InvalidPath, format!("invalid {field}: {e}")))
    };
    let (from, to) = (key(&body.from, "from")?, key(&body.to, "to")?);
    for k in [&from, &to] {
        if !scope.allows(k) {
            return Err(outside_scope(auth, k, "move"));
        }
    }
    Ok((from, to))
}

fn folders(body: &MoveRequest, auth: &Auth) -> Result<(String, String), ApiError> {
    let scope = auth.key.path_scope();
    let folder = |raw: &str, field: &str| {
        normalize_folder(raw)
            .map_err(|e| ApiError::new(Code::InvalidPath, format!("invalid {field}: {e}")))
    };
    let (from, to) = (folder(&body.from, "from")?, folder(&body.to, "to")?);
    folder_move::check_folders(&from, &to)
        .map_err(|e| ApiError::new(Code::InvalidPath, e.to_string()))?;
    for f in [&from, &to] {
        if let Some(part) = scope.outside_part(f) {
            return Err(outside_scope(auth, part, "move"));
        }
    }
    Ok((from, to))
}

async fn move_one(
    state: &ApiState,
    org_id: &OrgId,
    audit: &Audit,
    (from, to): (ObjectKey, ObjectKey),
    replace: bool,
) -> Result<MoveResponse, ApiError> {
    match rename(state, org_id, audit, &from, &to, replace).await? {
        Renamed::SourceMissing => Err(ApiError::new(
            Code::NotFound,
            format!("no object has the key `{from}`"),
        )),
        Renamed::DestinationExists => Err(ApiError::new(
            Code::Conflict,
            format!("an object already has the key `{to}`; send \"replace\": true to replace it"),
        )),
        Renamed::Moved { .. } => Ok(MoveResponse {
            success: true,
            moved: usize::from(from != to),
            from: from.into_string(),
            to: to.into_string(),
            conflicts: Vec::new(),
            done: true,
            request_id: current_request_id(),
        }),
    }
}

async fn move_folder(
    state: &ApiState,
    org_id: &OrgId,
    audit: &Audit,
    m: FolderMove,
) -> Result<MoveResponse, ApiError> {
    let batch = state.stores.records.folder_move_batch(org_id, &m).await?;
    let FolderMove {
        from, to, replace, ..
    } = m;
    let (mut moved, mut conflicts) = (0, Vec::new());
    for key in &batch.movable {
        let dest = folder_move::destination(&from, &to, key);
        match rename(state, org_id, audit, key, &dest, replace).await? {
            Renamed::Moved { .. } => moved += 1,
            // taken since the batch was read
            Renamed::DestinationExists => conflicts.push(MoveConflict {
                from: key.to_string(),
                to: dest.into_string(),
            }),
            // deleted meanwhile: nothing to move
            Renamed::SourceMissing => {}
        }
    }
    let done = batch.done();
    conflicts.extend(batch.blocked.into_iter().map(|key| MoveConflict {
        to: folder_move::destination(&from, &to, &key).into_string(),
        from: key.into_string(),
    }));
    conflicts.truncate(FOLDER_BATCH);
    Ok(MoveResponse {
        success: true,
        from,
        to,
        moved,
        done,
        conflicts,
        request_id: current_request_id(),
    })
}

/// Renames one object, forgets both keys' cached rows here, and removes the bytes of an object
/// the rename replaced (after the commit; `stowctl gc` takes what fails).
async fn rename(
    state: &ApiState,
    org_id: &OrgId,
    audit: &Audit,
    from: &ObjectKey,
    to: &ObjectKey,
    replace: bool,
) -> Result<Renamed, ApiError> {
    let renamed = state
        .stores
        .records
        .rename(org_id, from, to, replace, audit)
        .await?;
    state.forget_row(org_id, from);
    state.forget_row(org_id, to);
    if let Renamed::Moved {
        replaced: Some(location),
    } = &renamed
    {
        let path = stow_objects::ObjectPath::from(location.as_str());
        if let Err(e) = state.blobs.delete(&path).await {
            tracing::warn!(error = %e, location = %location, "removing replaced bytes failed; `stowctl gc` will");
        }
    }
    Ok(renamed)
}
