//! Scoped upload URLs: `GET /v1/presigned-url` creates one, `POST /v1/presigned-url/{token}`
//! uploads through it without an API key. The token's file limit is enforced by an atomic
//! reservation in Postgres after the form is read and before any row is committed, so
//! concurrent requests (on any number of instances) never store more than `maxFiles` files.

use crate::objects::{typed, BulkResponse, UploadResponse};
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use auth_core::policy::PathScope;
use auth_core::Permission;
use cdn_core::upload_url::{
    self, build_spec, RawParams, Reservation, SpecError, UploadUrlRecord, WorkspaceLimits,
};
use chrono::{Duration, Utc};
use serde::Serialize;
use serde_json::Value;
use stow_http::{current_request_id, ApiError, Auth, Code};
use utoipa::{IntoParams, ToSchema};

use crate::form::{read_form, Form, FormLimits};
use crate::idempotency;
use crate::objects::BulkResult;
use crate::pipeline::{place, UploadPolicy};
use crate::state::CdnState;

/// Query parameters of `GET /v1/presigned-url` (documentation; parsed by hand to accept
/// repeated `allowedMimeTypes`).
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct CreateParams {
    /// Lifetime in seconds (default 900), clamped to the workspace maximum (default 3600).
    #[param(rename = "expiresIn")]
    expires_in: Option<i64>,
    /// Path lock and default upload folder.
    path: Option<String>,
    /// Files the URL accepts (default 1, at most 1000).
    #[param(rename = "maxFiles")]
    max_files: Option<i64>,
    /// Bytes per file (default and ceiling: the workspace file-size limit).
    #[param(rename = "maxFileSize")]
    max_file_size: Option<i64>,
    /// Comma-separated allow-list, or the parameter repeated.
    #[param(rename = "allowedMimeTypes")]
    allowed_mime_types: Option<String>,
    /// Whether uploads may carry metadata (default false).
    #[param(rename = "allowCustomMetadata")]
    allow_custom_metadata: Option<bool>,
    /// Give every stored file a fresh random name keeping its extension.
    #[param(rename = "randomizeName")]
    randomize_name: Option<bool>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UploadUrlResponse {
    pub success: bool,
    pub upload_url: String,
    pub method: String,
    pub token: String,
    pub expires_at: String,
    pub max_files: i32,
    pub max_file_size: i64,
    /// Empty when any type is allowed.
    pub allowed_mime_types: Vec<String>,
    pub allow_custom_metadata: bool,
    pub randomize_name: bool,
    pub path: String,
    pub request_id: String,
}

fn parse_params(query: &str) -> Result<RawParams, ApiError> {
    let mut raw = RawParams::default();
    for (k, v) in url::form_urlencoded::parse(query.as_bytes()) {
        let v = v.into_owned();
        // a repeated parameter is refused rather than one copy silently winning: `path` is a lock
        let once = |slot: &mut Option<String>, v: String| match slot {
            Some(_) => Err(ApiError::invalid_request(format!(
                "query parameter `{k}` appears more than once"
            ))),
            None => {
                *slot = Some(v);
                Ok(())
            }
        };
        match k.as_ref() {
            "expiresIn" => once(&mut raw.expires_in, v)?,
            "path" => once(&mut raw.path, v)?,
            "maxFiles" => once(&mut raw.max_files, v)?,
            "maxFileSize" => once(&mut raw.max_file_size, v)?,
            "allowedMimeTypes" => raw.allowed_mime_types.push(v),
            "allowCustomMetadata" => once(&mut raw.allow_custom_metadata, v)?,
            "randomizeName" => once(&mut raw.randomize_name, v)?,
            other => {
                return Err(ApiError::invalid_request(format!(
                    "unknown query parameter `{other}` (expected expiresIn, path, maxFiles, maxFileSize, allowedMimeTypes, allowCustomMetadata, randomizeName)"
                )))
            }
        }
    }
    Ok(raw)
}

/// The origin of `uploadUrl`: `API_BASE_URL` when set. Otherwise the request's own `Host`, and
/// the forwarding headers (`Forwarded`, `X-Forwarded-Host`, `X-Forwarded-Proto`) only when the
/// peer is one of `TRUSTED_PROXIES`: from anyone else they would let a caller put any host into
/// a URL that is handed on to browsers.
fn api_base(req: &HttpRequest, state: &CdnState) -> String {
    if let Some(base) = &state.config.api_base_url {
        return base.clone();
    }
    let trusted = req.peer_addr().is_some_and(|peer| {
        state
            .config
            .trusted_proxies
            .iter()
            .any(|net| net.contains(&peer.ip()))
    });
    if trusted {
        let info = req.connection_info();
        return format!("{}://{}", info.scheme(), info.host());
    }
    let host = req
        .headers()
        .get(actix_web::http::header::HOST)
        .and_then(|h| h.to_str().ok())
        .filter(|h| is_authority(h))
        .map_or_else(|| req.app_config().host().to_owned(), str::to_owned);
    format!("http://{host}")
}

/// A `Host` value that is a host name or address with an optional port, and nothing else.
fn is_authority(host: &str) -> bool {
    !host.contains(['@', '/', '?', '#', '\\'])
        && url::Url::parse(&format!("http://{host}/")).is_ok_and(|u| u.host().is_some())
}

/// Create a short-lived upload URL.
#[utoipa::path(
    get, path = "/v1/presigned-url", tag = "upload-urls", params(CreateParams), security(("bearer" = [])),
    responses(
        (status = 201, description = "Created (Cache-Control: no-store)", body = UploadUrlResponse),
        (status = 400, description = "INVALID_REQUEST or INVALID_PATH, naming the parameter", body = stow_http::error::CdnErrorBody),
        (status = 401, description = "UNAUTHORIZED", body = stow_http::error::CdnErrorBody),
        (status = 403, description = "FORBIDDEN or PATH_NOT_ALLOWED", body = stow_http::error::CdnErrorBody),
        (status = 415, description = "CONTENT_TYPE_NOT_ALLOWED", body = stow_http::error::CdnErrorBody),
    )
)]
pub async fn create(
    auth: Auth,
    req: HttpRequest,
    state: web::Data<CdnState>,
) -> Result<HttpResponse, ApiError> {
    auth.require(Permission::CdnWrite)?;
    let raw = parse_params(req.query_string())?;
    let limits = WorkspaceLimits {
        max_file_size: auth.plan.max_file_size,
        max_url_lifetime_secs: i64::from(auth.plan.max_url_lifetime_secs),
    };
    let spec = build_spec(
        &raw,
        &auth.key.path_scope(),
        auth.key.allowed_mime.as_deref(),
        limits,
    )
    .map_err(|e| match e {
        SpecError::Invalid(m) => ApiError::invalid_request(m),
        SpecError::InvalidPath(p) => ApiError::new(Code::InvalidPath, format!("invalid path: {p}")),
        SpecError::PathNotAllowed(_) => ApiError::new(Code::PathNotAllowed, e.to_string()),
        SpecError::MimeNotAllowed => ApiError::new(Code::ContentTypeNotAllowed, e.to_string()),
    })?;
    let token = upload_url::generate_token();
    let expires_at = Utc::now() + Duration::seconds(spec.expires_in);
    state
        .upload_urls
        .create(&UploadUrlRecord {
            token_hash: token.hash,
            org_id: auth.org.id.clone(),
            key_id: auth.key.id.clone(),
            path: spec.path.clone(),
            max_files: spec.max_files,
            files_used: 0,
            max_file_size: spec.max_file_size,
            allowed_mime: spec.allowed_mime.clone(),
            allow_custom_metadata: spec.allow_custom_metadata,
            randomize_name: spec.randomize_name,
            expires_at,
        })
        .await?;
    let body = UploadUrlResponse {
        success: true,
        upload_url: format!(
            "{}/v1/presigned-url/{}",
            api_base(&req, &state),
            token.token
        ),
        method: "POST".into(),
        token: token.token,
        expires_at: expires_at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        max_files: spec.max_files,
        max_file_size: spec.max_file_size,
        allowed_mime_types: spec.allowed_mime.unwrap_or_default(),
        allow_custom_metadata: spec.allow_custom_metadata,
        randomize_name: spec.randomize_name,
        path: spec.path,
        request_id: current_request_id(),
    };
    Ok(HttpResponse::Created()
        .insert_header(("Cache-Control", "no-store"))
        .json(body))
}

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
    params(("token" = String, Path, description = "The upload token"), ("Idempotency-Key" = Option<String>, Header, description = "Makes retries safe")),
    request_body(content = TokenUploadForm, content_type = "multipart/form-data"),
    responses(
        (status = 200, description = "One file: `{success, object, requestId}`; several: `{success, results, requestId}`", body = crate::objects::UploadResponse),
        (status = 400, description = "INVALID_REQUEST, INVALID_PATH or TOO_MANY_FILES", body = stow_http::error::CdnErrorBody),
        (status = 401, description = "TOKEN_INVALID", body = stow_http::error::CdnErrorBody),
        (status = 403, description = "FORBIDDEN (metadata not allowed) or PATH_NOT_ALLOWED", body = stow_http::error::CdnErrorBody),
        (status = 409, description = "CONFLICT", body = stow_http::error::CdnErrorBody),
        (status = 410, description = "TOKEN_EXPIRED (expired or used up)", body = stow_http::error::CdnErrorBody),
        (status = 413, description = "FILE_TOO_LARGE", body = stow_http::error::CdnErrorBody),
        (status = 415, description = "CONTENT_TYPE_NOT_ALLOWED, or UNSUPPORTED_MEDIA_TYPE (a Content-Encoding on the upload: forms are never decoded)", body = stow_http::error::CdnErrorBody),
        (status = 408, description = "REQUEST_TIMEOUT (the body stopped arriving)", body = stow_http::error::CdnErrorBody),
        (status = 429, description = "RATE_LIMITED (this upload URL refused 10 uploads within a minute; Retry-After)", body = stow_http::error::CdnErrorBody),
        (status = 507, description = "INSUFFICIENT_STORAGE (the object store is out of space; Retry-After)", body = stow_http::error::CdnErrorBody),
    )
)]
pub async fn upload(
    req: HttpRequest,
    token: web::Path<String>,
    payload: web::Payload,
    state: web::Data<CdnState>,
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
    state: &CdnState,
) -> Result<HttpResponse, ApiError> {
    let record = state
        .upload_urls
        .get(&hash)
        .await?
        .ok_or_else(token_invalid)?;
    // the creating key must still be valid, and its own restrictions still apply
    let key = state
        .accounts
        .get_key(&record.key_id)
        .await?
        .ok_or_else(token_invalid)?;
    if key.check_usable(Utc::now()).is_err() || !key.permissions.contains(Permission::CdnWrite) {
        return Err(token_invalid());
    }
    let org = state
        .accounts
        .get_org(&record.org_id)
        .await?
        .ok_or_else(token_invalid)?;
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
    let form = read_form(req.headers(), payload, &state.blobs, &org.id, limits).await;
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
                    &hash,
                    &org.slug,
                    scope,
                    key.allowed_mime.clone(),
                    form,
                )
                .await,
            )
        }
        Err(e) => (Vec::new(), Err(e)),
    };
    ticket.finish(&fingerprint, outcome).await
}

async fn store_through_token(
    state: &CdnState,
    record: &UploadUrlRecord,
    hash: &[u8; 32],
    slug: &str,
    scope: PathScope,
    key_mime: Option<Vec<String>>,
    mut form: Form,
) -> Result<(StatusCode, Value), ApiError> {
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
    let meta = cdn_core::metadata::from_text(form.field("metadata").unwrap_or(""))
        .map_err(crate::objects::metadata_error)?;
    let n = form.files.len() as i32;
    match state.upload_urls.reserve(hash, n, Utc::now()).await? {
        Reservation::Reserved => {}
        Reservation::NotFound => return Err(token_invalid()),
        Reservation::Expired => return Err(token_expired(false)),
        Reservation::Exhausted => return Err(token_expired(true)),
        Reservation::TooMany { remaining } => {
            return Err(ApiError::new(
                Code::TooManyFiles,
                format!("this upload URL accepts {remaining} more file(s); nothing was stored"),
            ))
        }
    }
    let policy = UploadPolicy {
        scope,
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
        if let Err(e) = state.upload_urls.release(hash, failed).await {
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
