//! `POST /v1/objects/purge`: after the answer, no instance serves a cached older state of the
//! listed keys (docs/api.md, "POST /v1/objects/purge"; the FiveMesh SDK's `purgeObjects`).
//!
//! What an instance caches per key is the row behind it, for at most `DELIVERY_ROW_TTL` from
//! the moment it started reading it (bytes are cached by immutable location, so a fresh row never
//! meets old bytes). A row read before the change being purged was committed therefore expires,
//! on every instance, within that TTL of the purge's start: `stow_ops::objects::Purge` has this
//! instance forget the keys at once (and audits them), and the answer waits out the rest of the
//! TTL so that the others have too.

use std::time::Instant;

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use cdn_core::idempotency::Fingerprint;
use serde::{Deserialize, Serialize};
use stow_http::{current_request_id, ApiError, Auth};
use stow_ops::objects::Purge;
use utoipa::ToSchema;

use crate::idempotency;
use crate::objects::typed;
use crate::state::{outlast_row_caches, ApiState};

#[derive(Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PurgeRequest {
    /// Object keys (1 to 1000 by default), normalized like upload keys.
    pub paths: Vec<String>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PurgeResponse {
    pub success: bool,
    /// The normalized keys, in request order.
    pub paths: Vec<String>,
    /// How many distinct keys of `paths` name an existing object.
    pub purged: usize,
    pub request_id: String,
}

/// Drop every cached state of some objects on every instance.
#[utoipa::path(
    post, path = "/v1/objects/purge", tag = "objects", security(("bearer" = [])),
    params(("Idempotency-Key" = Option<String>, Header, description = "Makes retries safe")),
    request_body = PurgeRequest,
    responses(
        (status = 200, description = "Purged: no instance serves a cached older state of these keys any more", body = PurgeResponse),
        (status = 400, description = "INVALID_REQUEST (no paths), INVALID_PATH or TOO_MANY_FILES", body = stow_http::error::ApiErrorBody),
        (status = 403, description = "FORBIDDEN (no cdn:purge) or PATH_NOT_ALLOWED (a path outside the key's paths; nothing was purged)", body = stow_http::error::ApiErrorBody),
        (status = 409, description = "CONFLICT (Idempotency-Key reuse)", body = stow_http::error::ApiErrorBody),
        (status = 413, description = "PAYLOAD_TOO_LARGE", body = stow_http::error::ApiErrorBody),
        (status = 415, description = "UNSUPPORTED_MEDIA_TYPE (not JSON, or a Content-Encoding other than identity, gzip, deflate)", body = stow_http::error::ApiErrorBody),
        stow_http::error::KeyedRouteErrors,
        stow_http::error::BodyRouteErrors,
    )
)]
pub async fn purge(
    auth: Auth,
    req: HttpRequest,
    body: stow_http::Json<PurgeRequest>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    let ctx = crate::ops::ctx(&state, &req, &auth);
    let checked = Purge {
        paths: body.into_inner().paths,
        max: state.config.max_bulk_delete_paths,
    }
    .check(&ctx)?;
    let mut fp = Fingerprint::new();
    for key in checked.keys() {
        fp.field("path", key);
    }
    let fingerprint = fp.finish();
    let ticket = idempotency::begin(&state, &req, &auth.key.id, "/v1/objects/purge").await?;
    if ticket.is_retry() {
        return ticket.replay(&req, &fingerprint);
    }
    let started = Instant::now();
    let outcome = checked.run(&ctx, &auth.org.id, state.get_ref()).await;
    if outcome.is_ok() {
        // the other instances' row caches have turned over too
        outlast_row_caches(started).await;
    }
    let outcome = outcome
        .map_err(ApiError::from)
        .and_then(|p| {
            typed(&PurgeResponse {
                success: true,
                paths: p.paths,
                purged: p.purged,
                request_id: current_request_id(),
            })
        })
        .map(|body| (StatusCode::OK, body));
    ticket.finish(&fingerprint, outcome).await
}
