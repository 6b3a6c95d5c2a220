//! `GET /v1/presigned-url`: create an upload URL within the key's scope.

use actix_web::HttpMessage;
use actix_web::{web, HttpRequest, HttpResponse};
use auth_core::Permission;
use cdn_core::upload_url::{
    self, build_spec, RawParams, SpecError, UploadUrlRecord, WorkspaceLimits,
};
use chrono::{Duration, Utc};
use serde::Serialize;
use stow_http::{current_request_id, ApiError, Auth, Code};
use utoipa::{IntoParams, ToSchema};

use crate::state::ApiState;

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

/// Set by the console (never from anything a client sends): the API host's origin, which
/// `uploadUrl` must name when the request came through the console's origin.
#[derive(Debug, Clone)]
pub struct ApiOrigin(pub String);

/// The origin of `uploadUrl`: `API_BASE_URL` when set. Otherwise the request's own `Host`, and
/// the forwarding headers (`Forwarded`, `X-Forwarded-Host`, `X-Forwarded-Proto`) only when the
/// peer is one of `TRUSTED_PROXIES`: from anyone else they would let a caller put any host into
/// a URL that is handed on to browsers.
fn api_base(req: &HttpRequest, state: &ApiState) -> String {
    if let Some(base) = &state.config.api_base_url {
        return base.clone();
    }
    if let Some(ApiOrigin(origin)) = req.extensions().get::<ApiOrigin>() {
        return origin.clone();
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
        (status = 400, description = "INVALID_REQUEST or INVALID_PATH, naming the parameter", body = stow_http::error::ApiErrorBody),
        (status = 403, description = "FORBIDDEN or PATH_NOT_ALLOWED", body = stow_http::error::ApiErrorBody),
        (status = 415, description = "CONTENT_TYPE_NOT_ALLOWED", body = stow_http::error::ApiErrorBody),
        stow_http::error::KeyedRouteErrors,
    )
)]
pub async fn create(
    auth: Auth,
    req: HttpRequest,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    auth.require(Permission::CdnWrite)?;
    if auth.member.is_some() {
        // an upload URL lives as long as the key that made it stays usable
        return Err(ApiError::new(
            Code::Forbidden,
            "upload URLs are made with API keys, whose life they share; use a key with cdn:write",
        ));
    }
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
        .stores
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
