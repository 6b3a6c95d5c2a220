//! `GET /v1/keys`: the organization's keys (never their secrets).

use actix_web::{web, HttpResponse};
use auth_core::{ApiKey, Server};
use serde::Serialize;
use stow_http::{current_request_id, ApiError, Auth};
use utoipa::ToSchema;

use crate::state::ApiState;

fn ts(t: chrono::DateTime<chrono::Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// A key as the console lists it.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct KeyOut {
    /// `key_…`
    pub id: String,
    pub name: Option<String>,
    /// `developer` or `server`.
    pub credential_type: String,
    /// A server key's join code.
    pub server: Option<String>,
    /// `cdn:read`, … `logs:write`.
    pub permissions: Vec<String>,
    /// Join codes a developer key's logs are limited to; null for every server.
    pub log_servers: Option<Vec<String>>,
    pub allow_paths: Vec<String>,
    pub deny_paths: Vec<String>,
    pub allowed_mime_types: Option<Vec<String>>,
    /// `stw_dev_…` or `stw_srv_…`: the kind, never any part of the secret.
    pub hint: String,
    pub created_at: String,
    pub expires_at: Option<String>,
    pub last_used_at: Option<String>,
    /// `active`, `disabled` or `expired`.
    pub state: String,
}

impl KeyOut {
    pub fn new(servers: &[Server], k: &ApiKey) -> Self {
        let code = |id: &auth_core::ServerId| {
            servers
                .iter()
                .find(|s| s.id == *id)
                .map_or_else(|| id.to_string(), |s| s.cfx_id.clone())
        };
        Self {
            id: k.id.to_string(),
            name: k.name.clone(),
            credential_type: k.credential_type.as_str().to_owned(),
            server: k.server_id.as_ref().map(code),
            permissions: k.permissions.names(),
            log_servers: k.servers.named().map(|ids| ids.iter().map(code).collect()),
            allow_paths: k.allowed_prefixes.clone(),
            deny_paths: k.denied_prefixes.clone(),
            allowed_mime_types: k.allowed_mime.clone(),
            hint: k.hint.clone(),
            created_at: ts(k.created_at),
            expires_at: k.expires_at.map(ts),
            last_used_at: k.last_used_at.map(ts),
            state: k.state(chrono::Utc::now()).to_owned(),
        }
    }
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListKeysResponse {
    pub success: bool,
    pub keys: Vec<KeyOut>,
    pub request_id: String,
}

/// List the organization's keys.
#[utoipa::path(
    get, path = "/v1/keys", tag = "keys", security(("bearer" = [])),
    responses(
        (status = 200, description = "The organization's keys, by id", body = ListKeysResponse),
        super::KeyRouteErrors,
        stow_http::error::KeyedRouteErrors,
    )
)]
pub async fn list_keys(auth: Auth, state: web::Data<ApiState>) -> Result<HttpResponse, ApiError> {
    // the role rule of every keys operation (members whose role manages keys)
    crate::ops::reading(&state, &auth).member_with(auth_core::roles::Capability::ManageKeys)?;
    let servers = state.stores.accounts.list_servers(&auth.org.id).await?;
    let keys = state.stores.accounts.list_keys(&auth.org.id).await?;
    Ok(HttpResponse::Ok().json(ListKeysResponse {
        success: true,
        keys: keys.iter().map(|k| KeyOut::new(&servers, k)).collect(),
        request_id: current_request_id(),
    }))
}
