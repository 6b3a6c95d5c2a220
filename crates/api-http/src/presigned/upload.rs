//! `POST /v1/presigned-url/{token}`: upload through an upload URL, without an API key.

use crate::objects::{typed, BulkResponse, UploadResponse};
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use auth_core::policy::PathScope;
use auth_core::Permission;
use cdn_core::upload_url::{self, Reservation, UploadUrlRecord};
use chrono::Utc;
use serde_json::Value;
use stow_http::{current_request_id, ApiError, Code};
use utoipa::ToSchema;

use crate::form::{read_form, Form, FormLimits};
use crate::idempotency;
use crate::objects::BulkResult;
use crate::pipeline::{place, Existing, UploadPolicy};
use crate::state::ApiState;

fn token_invalid() -> ApiError {
    ApiError::new(Code::TokenInvalid, "upload URL token is invalid")
}

fn token_expired(used_up: bool) -> ApiError {
    let msg = if used_up {
        "upload URL has reached its file limit"
    } else {
        "upload URL has expired"
    };
    ApiError::new(Code::TokenExpired, msg)
}

/// Upload form of an upload URL (documentation only).
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct TokenUploadForm {
    /// One or more `file` parts, or `files` / `files[N]` parts.
    #[schema(format = Binary, content_media_type = "application/octet-stream")]
    file: String,
    /// Folder under the URL's path lock (default: the lock).
    path: Option<String>,
    /// Stored name (single file only).
    filename: Option<String>,
    /// JSON object; only when the URL allows custom metadata.
    metadata: Option<String>,
}

/// Upload through an upload URL (no Authorization header).
#[utoipa::path(
    post, path = "/v1/presigned-url/{token}", tag = "upload-urls",
    params(("token" = String, Path, description = "The upload token"), ("Idempotency-Key" = Option<String>, Header, description = "Makes retries safe"), ("If-None-Match" = Option<String>, Header, description = "`*`: create only; 412 PRECONDITION_FAILED when an object exists at the key")),
    request_body(content = TokenUploadForm, content_type = "multipart/form-data"),
    responses(
        (status = 200, description = "One file: `{success, object, requestId}`; several: `{success, results, requestId}`", body = crate::objects::UploadResponse),
        (status = 400, description = "INVALID_REQUEST, INVALID_PATH or TOO_MANY_FILES", body = stow_http::error::ApiErrorBody),
        (status = 401, description = "TOKEN_INVALID", body = stow_http::error::ApiErrorBody),
        (status = 403, description = "FORBIDDEN (metadata not allowed) or PATH_NOT_ALLOWED", body = stow_http::error::ApiErrorBody),
        (status = 409, description = "CONFLICT", body = stow_http::error::ApiErrorBody),
        (status = 412, description = "PRECONDITION_FAILED (`If-None-Match: *` and an object exists at the key; nothing stored)", body = stow_http::error::ApiErrorBody),
        (status = 410, description = "TOKEN_EXPIRED (expired or used up)", body = stow_http::error::ApiErrorBody),
        (status = 413, description = "FILE_TOO_LARGE", body = stow_http::error::ApiErrorBody),
        (status = 415, description = "CONTENT_TYPE_NOT_ALLOWED, or UNSUPPORTED_MEDIA_TYPE (a Content-Encoding on the upload: forms are never decoded)", body = stow_http::error::ApiErrorBody),
        (status = 429, description = "RATE_LIMITED (this upload URL refused 10 uploads within a minute; Retry-After)", body = stow_http::error::ApiErrorBody),
        stow_http::error::BodyRouteErrors,
        stow_http::error::StoringRouteErrors,
    )
)]
pub async fn upload(
    req: HttpRequest,
    token: web::Path<String>,
    payload: web::Payload,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    let token = token.into_inner();
    if !upload_url::well_formed(&token) {
        return Err(token_invalid());
    }
    let hash = upload_url::hash_token(&token);
    if let Some(secs) = state.upload_url_blocked_for(&hash) {
        return Err(ApiError::new(
            Code::RateLimited,
            format!(
                "this upload URL refused {} uploads within {} s; it takes uploads again in {secs} s",
                upload_url::MAX_REFUSED_ATTEMPTS,
                upload_url::REFUSED_WINDOW_SECS
            ),
        )
        .with_retry_after(secs));
    }
    let result = upload_through(&req, hash, payload, &state).await;
    if result
        .as_ref()
        .is_err_and(|e| e.code.status().is_client_error())
    {
        state.upload_url_refused(&hash);
    }
    result
}

async fn upload_through(
    req: &HttpRequest,
    hash: [u8; 32],
    payload: web::Payload,
    state: &ApiState,
) -> Result<HttpResponse, ApiError> {
    let record = state
        .stores
        .upload_urls
        .get(&hash)
        .await?
        .ok_or_else(token_invalid)?;
    // the creating key must still be valid, and its own restrictions still apply
    let key = state
        .stores
        .accounts
        .get_key(&record.key_id)
        .await?
        .ok_or_else(token_invalid)?;
    if key.check_usable(Utc::now()).is_err() || !key.permissions.contains(Permission::CdnWrite) {
        return Err(token_invalid());
    }
    let org = state
        .stores
        .accounts
        .get_org(&record.org_id)
        .await?
        .ok_or_else(token_invalid)?;
    let existing = Existing::of(req)?;
    let credential = format!("tok:{}", hex::encode(hash));
    // a retry of a completed upload is answered even when that upload used the last slot
    let ticket = idempotency::begin(state, req, &credential, "/v1/presigned-url/{token}").await?;
    let remaining = record.max_files - record.files_used;
    let open = if ticket.is_retry() {
        Ok(())
    } else if record.expires_at <= Utc::now() {
        Err(token_expired(false))
    } else if remaining <= 0 {
        Err(token_expired(true))
    } else {
        Ok(())
    };
    if let Err(e) = open {
        return ticket.finish(&[], Err(e)).await;
    }
    let limits = FormLimits {
        max_file_size: record.max_file_size.max(1) as u64,
        max_files: remaining.max(1) as usize,
        fail_fast: false,
        store: !ticket.is_retry(),
    };
    let form = read_form(req.headers(), payload, &state.blobs, &org.id, limits)
        .await
        .map(|mut form| {
            form.fingerprint
                .extend_from_slice(existing.fingerprint_part());
            form
        });
    if ticket.is_retry() {
        return ticket.replay(req, &form?.fingerprint);
    }
    let form = form.map_err(|e| {
        if e.code == Code::TooManyFiles {
            ApiError::new(
                Code::TooManyFiles,
                format!("this upload URL accepts {remaining} more file(s); nothing was stored"),
            )
        } else {
            e
        }
    });
    let (fingerprint, outcome) = match form {
        Ok(mut form) => {
            let fp = std::mem::take(&mut form.fingerprint);
            let scope = PathScope::new(key.allowed_prefixes.clone(), key.denied_prefixes.clone());
            (
                fp,
                store_through_token(
                    state,
                    &record,
                    &org.slug,
                    scope,
                    key.allowed_mime.clone(),
                    form,
                    existing,
                )
                .await,
            )
        }
        Err(e) => (Vec::new(), Err(e)),
    };
    ticket.finish(&fingerprint, outcome).await
}

async fn store_through_token(
    state: &ApiState,
    record: &UploadUrlRecord,
    slug: &str,
    scope: PathScope,
    key_mime: Option<Vec<String>>,
    mut form: Form,
    existing: Existing,
) -> Result<(StatusCode, Value), ApiError> {
    check_form(record, &form)?;
    let single = form.files.len() == 1;
    let meta = cdn_core::metadata::from_text(form.field("metadata").unwrap_or(""))
        .map_err(crate::objects::metadata_error)?;
    reserve(state, record, form.files.len() as i32).await?;
    let policy = UploadPolicy {
        scope,
        holder: "the key that made this upload URL".to_owned(),
        mime_lists: key_mime
            .into_iter()
            .chain(record.allowed_mime.clone())
            .collect(),
        lock: Some(record.path.clone()),
        randomize_name: record.randomize_name,
    };
    let folder = form.field("path").map(str::to_owned);
    let filename = form.field("filename").map(str::to_owned);
    let files = std::mem::take(&mut form.files);
    let mut results = Vec::with_capacity(files.len());
    let mut failed = 0;
    for file in &files {
        let outcome = async {
            if file.too_large {
                return Err(ApiError::new(
                    Code::FileTooLarge,
                    format!(
                        "file is larger than this upload URL's limit of {} bytes",
                        record.max_file_size
                    ),
                ));
            }
            let placement = place(file, folder.as_deref(), filename.as_deref(), &policy)?;
            state
                .commit(
                    &record.org_id,
                    file,
                    placement,
                    meta.clone(),
                    &mut form.guard,
                    existing,
                )
                .await
        }
        .await;
        if outcome.is_err() {
            failed += 1;
        }
        results.push((file.field.clone(), outcome));
    }
    if failed > 0 {
        if let Err(e) = state
            .stores
            .upload_urls
            .release(&record.token_hash, failed)
            .await
        {
            tracing::warn!(error = %e, "releasing upload-URL slots failed");
        }
    }
    if single {
        let (_, outcome) = results
            .pop()
            .ok_or_else(|| ApiError::internal("no result"))?;
        let record = outcome?;
        return Ok((
            StatusCode::OK,
            typed(&UploadResponse {
                success: true,
                object: state.uploaded(slug, &record),
                request_id: current_request_id(),
            })?,
        ));
    }
    let results: Vec<BulkResult> = results
        .into_iter()
        .map(|(field, outcome)| match outcome {
            Ok(r) => BulkResult::stored(&field, state.uploaded(slug, &r)),
            Err(e) => BulkResult::failed(&field, &e),
        })
        .collect();
    Ok((
        StatusCode::OK,
        typed(&BulkResponse {
            success: true,
            results,
            request_id: current_request_id(),
        })?,
    ))
}

/// The form's own rules for an upload URL: a file, metadata only when allowed, `filename` only
/// with one file.
fn check_form(record: &UploadUrlRecord, form: &Form) -> Result<(), ApiError> {
    if form.files.is_empty() {
        return Err(ApiError::invalid_request(
            "at least one `file` part is required",
        ));
    }
    if form.field("metadata").is_some() && !record.allow_custom_metadata {
        return Err(ApiError::new(
            Code::Forbidden,
            "this upload URL does not allow custom metadata",
        ));
    }
    let single = form.files.len() == 1;
    if !single && form.field("filename").is_some() {
        return Err(ApiError::invalid_request(
            "`filename` applies to single-file uploads only",
        ));
    }
    Ok(())
}

/// Takes `n` of the upload URL's remaining uses, or says why it cannot.
async fn reserve(state: &ApiState, record: &UploadUrlRecord, n: i32) -> Result<(), ApiError> {
    match state
        .stores
        .upload_urls
        .reserve(&record.token_hash, n, Utc::now())
        .await?
    {
        Reservation::Reserved => Ok(()),
        Reservation::NotFound => Err(token_invalid()),
        Reservation::Expired => Err(token_expired(false)),
        Reservation::Exhausted => Err(token_expired(true)),
        Reservation::TooMany { remaining } => Err(ApiError::new(
            Code::TooManyFiles,
            format!("this upload URL accepts {remaining} more file(s); nothing was stored"),
        )),
    }
}
