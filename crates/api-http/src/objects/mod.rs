//! `/v1/objects*`, one module per operation beside its wire types: list, search, upload
//! (multipart, Base64, bulk), ZIP download, details, delete, bulk delete, folder delete, move, purge,
//! keep (lifecycle exemption), usage per folder. What several of them share is here.

mod base64_upload;
mod bulk;
mod bulk_delete;
mod delete;
mod delete_folder;
mod details;
mod keep;
mod list;
mod move_objects;
mod purge;
mod search;
mod upload;
mod usage;
mod zip;

pub use base64_upload::*;
pub use bulk::*;
pub use bulk_delete::*;
pub use delete::*;
pub use delete_folder::*;
pub use details::*;
pub use keep::*;
pub use list::*;
pub use move_objects::*;
pub use purge::*;
pub use search::*;
pub use upload::*;
pub use usage::*;
pub use zip::*;

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use cdn_core::metadata;
use serde_json::Value;
use stow_http::{ApiError, Auth};

use crate::form::{read_form, FormLimits};
use crate::idempotency;
use crate::pipeline::{Existing, UploadPolicy};
use crate::state::ApiState;

/// The key's paths, when it may read `folder` (`named`: the request sent a `path`); else 403
/// `PATH_NOT_ALLOWED` saying why.
pub(crate) fn readable_folder(
    auth: &Auth,
    folder: &str,
    named: bool,
) -> Result<auth_core::PathScope, ApiError> {
    let scope = auth.key.path_scope();
    if scope.allows_listing(folder) {
        return Ok(scope);
    }
    let msg = if named {
        format!(
            "path `{folder}` is outside the paths {} may read",
            auth.holder()
        )
    } else {
        "this key is restricted to specific path prefixes; pass `path`".to_owned()
    };
    Err(ApiError::new(stow_http::Code::PathNotAllowed, msg))
}

pub fn key_policy(auth: &Auth) -> UploadPolicy {
    UploadPolicy {
        scope: auth.key.path_scope(),
        holder: auth.holder(),
        mime_lists: auth.key.allowed_mime.clone().into_iter().collect(),
        lock: None,
        randomize_name: false,
    }
}

/// The JSON of a typed answer: the documented response type is the one serialized (and stored for
/// idempotent replays as these bytes).
pub(crate) fn typed<T: serde::Serialize>(body: &T) -> Result<Value, ApiError> {
    serde_json::to_value(body).map_err(ApiError::internal)
}

/// Refuses a folder the key may not wholly change, naming the part outside its paths.
pub(crate) fn whole_folder_in_scope(auth: &Auth, folder: &str, verb: &str) -> Result<(), ApiError> {
    match auth.key.path_scope().outside_part(folder) {
        None => Ok(()),
        Some(part) => Err(outside_scope(auth, part, verb)),
    }
}

/// 403 `PATH_NOT_ALLOWED` for a request that changed nothing because `part` is outside the key's
/// paths (`verb`: what the request does, `delete`, `move`).
pub(crate) fn outside_scope(auth: &Auth, part: &str, verb: &str) -> ApiError {
    ApiError::new(
        stow_http::Code::PathNotAllowed,
        stow_ops::outside_paths_text(&auth.holder(), part, verb),
    )
}

/// Refuses an empty list of paths or one over `max` (`TOO_MANY_FILES`), naming the limit.
pub(crate) fn paths_within(paths: &[String], max: usize) -> Result<(), ApiError> {
    if paths.len() > max {
        return Err(ApiError::new(
            stow_http::Code::TooManyFiles,
            format!("paths has {} entries; the limit is {max}", paths.len()),
        ));
    }
    if paths.is_empty() {
        return Err(ApiError::invalid_request(
            "paths must contain at least one object key",
        ));
    }
    Ok(())
}

pub(crate) fn metadata_error(e: metadata::MetadataError) -> ApiError {
    ApiError::invalid_request(format!("invalid metadata: {e}"))
}

/// The shared flow of the multipart upload routes: claim the `Idempotency-Key`, stream the form
/// (hashing only, for a retry), then replay the stored answer or store and record the new one.
pub(super) async fn multipart_route<L, S, Fut>(
    state: &ApiState,
    auth: &Auth,
    req: &HttpRequest,
    payload: web::Payload,
    route: &str,
    limits: L,
    store: S,
) -> Result<HttpResponse, ApiError>
where
    L: FnOnce(bool) -> FormLimits,
    S: FnOnce(crate::form::Form, Existing) -> Fut,
    Fut: std::future::Future<Output = Result<(StatusCode, Value), ApiError>>,
{
    let existing = Existing::of(req)?;
    let ticket = idempotency::begin(state, req, &auth.key.id, route).await?;
    let form = read_form(
        req.headers(),
        payload,
        &state.blobs,
        &auth.org.id,
        limits(ticket.is_retry()),
    )
    .await;
    let form = form.map(|mut form| {
        form.fingerprint
            .extend_from_slice(existing.fingerprint_part());
        form
    });
    if ticket.is_retry() {
        return ticket.replay(req, &form?.fingerprint);
    }
    let (fingerprint, outcome) = match form {
        Ok(mut form) => {
            let fp = std::mem::take(&mut form.fingerprint);
            (fp, store(form, existing).await)
        }
        Err(e) => (Vec::new(), Err(e)),
    };
    ticket.finish(&fingerprint, outcome).await
}
