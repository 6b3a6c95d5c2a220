//! `POST /v1/keys`: make a key (its secret is in this answer only).

use actix_web::{web, HttpRequest, HttpResponse};
use serde::{Deserialize, Serialize};
use stow_http::{current_request_id, ApiError, Auth};
use stow_ops::keys::CreateKey;
use utoipa::ToSchema;

use super::list::KeyOut;
use crate::state::ApiState;

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CreateKeyRequest {
    /// A label for the list (at most 100 characters).
    pub name: Option<String>,
    /// `developer` (default) or `server`.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// A server key's join code (required for `server`, refused otherwise).
    pub server: Option<String>,
    /// `cdn:read`, `cdn:write`, `cdn:delete`, `cdn:purge`, `logs:read`, `logs:write`; a server key
    /// always has `cdn:write`, `logs:read` and `logs:write` as well.
    #[serde(default)]
    pub permissions: Vec<String>,
    /// Join codes a developer key's logs are limited to; absent for every server.
    pub log_servers: Option<Vec<String>>,
    #[serde(default)]
    pub allow_paths: Vec<String>,
    #[serde(default)]
    pub deny_paths: Vec<String>,
    /// RFC 3339, in the future; absent for a key that does not expire.
    pub expires_at: Option<String>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateKeyResponse {
    pub success: bool,
    pub key: KeyOut,
    /// The secret, shown this once: it is stored only as a hash.
    pub secret: String,
    pub request_id: String,
}

/// Make a key.
#[utoipa::path(
    post, path = "/v1/keys", tag = "keys", security(("bearer" = [])),
    request_body = CreateKeyRequest,
    responses(
        (status = 201, description = "Made; the secret is shown once", body = CreateKeyResponse),
        (status = 400, description = "INVALID_REQUEST: the field and what is valid", body = stow_http::error::ApiErrorBody),
        super::KeyRouteErrors,
        stow_http::error::KeyedRouteErrors,
        stow_http::error::BodyRouteErrors,
        stow_http::error::JsonBodyErrors,
    )
)]
pub async fn create_key(
    auth: Auth,
    req: HttpRequest,
    body: stow_http::Json<CreateKeyRequest>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    let body = body.into_inner();
    let made = CreateKey {
        org: auth.org.id.clone(),
        kind: body.kind,
        name: body.name,
        server: body.server,
        permissions: body.permissions,
        log_servers: body.log_servers,
        allow_paths: body.allow_paths,
        deny_paths: body.deny_paths,
        mime: vec![],
        expires_at: body.expires_at,
    }
    .run(&crate::ops::ctx(&state, &req, &auth))
    .await?;
    Ok(HttpResponse::Created().json(CreateKeyResponse {
        success: true,
        key: KeyOut::new(&made.servers, &made.key),
        secret: made.secret,
        request_id: current_request_id(),
    }))
}
