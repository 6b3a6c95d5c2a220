//! `POST /v1/keys/{keyId}/disable` and `/enable`: stop a key (its console sessions end at once,
//! its API calls within `KEY_CACHE_SECONDS`, its upload URLs with it), or let it work again (an
//! expired key stays expired).

use actix_web::{web, HttpRequest, HttpResponse};
use auth_core::KeyId;
use serde::Serialize;
use stow_http::{current_request_id, ApiError, Auth};
use utoipa::ToSchema;

use stow_ops::keys::{Disable, Enable};

use super::list::KeyOut;
use crate::state::ApiState;

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct KeyStateResponse {
    pub success: bool,
    pub key: KeyOut,
    pub request_id: String,
}

fn answer(servers: &[auth_core::Server], key: &auth_core::ApiKey) -> HttpResponse {
    HttpResponse::Ok().json(KeyStateResponse {
        success: true,
        key: KeyOut::new(servers, key),
        request_id: current_request_id(),
    })
}

/// Disable a key.
#[utoipa::path(
    post, path = "/v1/keys/{keyId}/disable", tag = "keys", security(("bearer" = [])),
    params(("keyId" = String, Path, description = "`key_…`")),
    responses(
        (status = 200, description = "Disabled", body = KeyStateResponse),
        (status = 404, description = "NOT_FOUND: no such key in this organization", body = stow_http::error::ApiErrorBody),
        super::KeyRouteErrors,
        stow_http::error::KeyedRouteErrors,
    )
)]
pub async fn disable_key(
    auth: Auth,
    req: HttpRequest,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    let done = Disable {
        key: KeyId::new(path.into_inner()),
    }
    .run(&crate::ops::ctx(&state, &req, &auth))
    .await?;
    Ok(answer(&done.servers, &done.key))
}

/// Enable a disabled key.
#[utoipa::path(
    post, path = "/v1/keys/{keyId}/enable", tag = "keys", security(("bearer" = [])),
    params(("keyId" = String, Path, description = "`key_…`")),
    responses(
        (status = 200, description = "Enabled (an expired key stays expired)", body = KeyStateResponse),
        (status = 404, description = "NOT_FOUND: no such key in this organization", body = stow_http::error::ApiErrorBody),
        super::KeyRouteErrors,
        stow_http::error::KeyedRouteErrors,
    )
)]
pub async fn enable_key(
    auth: Auth,
    req: HttpRequest,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    let (key, servers) = Enable {
        key: KeyId::new(path.into_inner()),
    }
    .run(&crate::ops::ctx(&state, &req, &auth))
    .await?;
    Ok(answer(&servers, &key))
}
