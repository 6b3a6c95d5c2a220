//! `POST /v1/keys/{keyId}/disable` and `/enable`: stop a key (its console sessions end at once,
//! its API calls within `KEY_CACHE_SECONDS`, its upload URLs with it), or let it work again (an
//! expired key stays expired).

use actix_web::{web, HttpRequest, HttpResponse};
use auth_core::audit::Action;
use serde::Serialize;
use stow_http::{current_request_id, ApiError, Auth};
use utoipa::ToSchema;

use super::list::KeyOut;
use super::{end_key_sessions, manager, reachable_key};
use crate::state::CdnState;

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct KeyStateResponse {
    pub success: bool,
    pub key: KeyOut,
    pub request_id: String,
}

async fn answer(
    state: &CdnState,
    auth: &Auth,
    key: &auth_core::ApiKey,
) -> Result<HttpResponse, ApiError> {
    let servers = state.stores.accounts.list_servers(&auth.org.id).await?;
    Ok(HttpResponse::Ok().json(KeyStateResponse {
        success: true,
        key: KeyOut::new(&servers, key),
        request_id: current_request_id(),
    }))
}

/// Disable a key.
#[utoipa::path(
    post, path = "/v1/keys/{keyId}/disable", tag = "keys", security(("bearer" = [])),
    params(("keyId" = String, Path, description = "`key_…`")),
    responses(
        (status = 200, description = "Disabled", body = KeyStateResponse),
        (status = 404, description = "NOT_FOUND: no such key in this organization", body = stow_http::error::CdnErrorBody),
        super::KeyRouteErrors,
        stow_http::error::KeyedRouteErrors,
    )
)]
pub async fn disable_key(
    auth: Auth,
    req: HttpRequest,
    path: web::Path<String>,
    state: web::Data<CdnState>,
) -> Result<HttpResponse, ApiError> {
    let actor = manager(&auth)?;
    let key = reachable_key(&state, &req, &auth, actor, &path, Action::KeyDisable).await?;
    let key = state
        .stores
        .accounts
        .disable_key(&key.id, chrono::Utc::now(), &crate::audit::of(&req, &auth))
        .await?;
    end_key_sessions(&state, &key.id).await?;
    answer(&state, &auth, &key).await
}

/// Enable a disabled key.
#[utoipa::path(
    post, path = "/v1/keys/{keyId}/enable", tag = "keys", security(("bearer" = [])),
    params(("keyId" = String, Path, description = "`key_…`")),
    responses(
        (status = 200, description = "Enabled (an expired key stays expired)", body = KeyStateResponse),
        (status = 404, description = "NOT_FOUND: no such key in this organization", body = stow_http::error::CdnErrorBody),
        super::KeyRouteErrors,
        stow_http::error::KeyedRouteErrors,
    )
)]
pub async fn enable_key(
    auth: Auth,
    req: HttpRequest,
    path: web::Path<String>,
    state: web::Data<CdnState>,
) -> Result<HttpResponse, ApiError> {
    let actor = manager(&auth)?;
    let key = reachable_key(&state, &req, &auth, actor, &path, Action::KeyEnable).await?;
    let key = state
        .stores
        .accounts
        .enable_key(&key.id, &crate::audit::of(&req, &auth))
        .await?;
    answer(&state, &auth, &key).await
}
