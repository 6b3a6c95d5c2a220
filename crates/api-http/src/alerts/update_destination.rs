//! `PATCH /v1/logs/destinations/{id}`: rename a destination, change its address, or rotate a
//! generic webhook's signing secret (the new one is in this answer only).

use actix_web::{web, HttpRequest, HttpResponse};
use chrono::{SubsecRound, Utc};
use logs_core::alert_store::DestinationKind;
use logs_core::saved::validate_name;
use serde::Deserialize;
use stow_alerts::secrets::new_signing_secret;
use stow_alerts::Secrets;
use stow_http::{current_request_id, ApiError, Auth};
use utoipa::ToSchema;

use super::create_destination::DestinationResponse;
use super::{allow, find_destination, manager, may_redirect, refused, seal_key};
use crate::state::ApiState;

/// `PATCH /v1/logs/destinations/{id}`: fields not sent are kept.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpdateDestinationRequest {
    pub name: Option<String>,
    /// A new address (checked as when made).
    pub url: Option<String>,
    /// Generic webhooks: `true` makes a new signing secret; the old one stops working at once.
    pub rotate_secret: Option<bool>,
}

/// Change an alert destination.
#[utoipa::path(
    patch, path = "/v1/logs/destinations/{destinationId}", tag = "alerts", security(("bearer" = [])),
    params(("destinationId" = String, Path, description = "`dst_…`")),
    request_body = UpdateDestinationRequest,
    responses(
        (status = 200, description = "Changed; a rotated signing secret is in this answer only", body = DestinationResponse),
        (status = 400, description = "INVALID_REQUEST naming the field", body = stow_http::error::ApiErrorBody),
        (status = 403, description = "FORBIDDEN: besides the permission, a new `url` while rules sending here watch servers outside the caller's", body = stow_http::error::ApiErrorBody),
        (status = 404, description = "NOT_FOUND: no such destination", body = stow_http::error::ApiErrorBody),
        (status = 409, description = "CONFLICT: another destination has the name", body = stow_http::error::ApiErrorBody),
        (status = 503, description = "UNAVAILABLE: the operator has not set SECOND_FACTOR_KEY, or it changed since the destination was made", body = stow_http::error::ApiErrorBody),
        super::AlertErrors,
        stow_http::error::JsonBodyErrors,
        stow_http::error::KeyedRouteErrors,
        stow_http::error::BodyRouteErrors,
    )
)]
pub async fn update_destination(
    auth: Auth,
    req: HttpRequest,
    path: web::Path<String>,
    body: stow_http::Json<UpdateDestinationRequest>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    manager(&auth)?;
    let body = body.into_inner();
    if body.name.is_none() && body.url.is_none() && body.rotate_secret != Some(true) {
        return Err(ApiError::invalid_request(
            "send at least one of `name`, `url` and `\"rotateSecret\": true`",
        ));
    }
    let name = body
        .name
        .as_deref()
        .map(validate_name)
        .transpose()
        .map_err(ApiError::invalid_request)?;
    let mut d = find_destination(&state, &auth, &path).await?;
    if body.rotate_secret == Some(true) && d.kind != DestinationKind::Webhook {
        return Err(ApiError::invalid_request(
            "`rotateSecret`: only generic webhooks have a signing secret",
        ));
    }
    let key = seal_key(&state)?;
    let mut secrets = Secrets::open(key, &d.id, &d.sealed).map_err(|_| {
        ApiError::new(
            stow_http::Code::Unavailable,
            "the destination's secrets do not open with the operator's SECOND_FACTOR_KEY (it changed since the destination was made); delete it and make it again",
        )
    })?;
    let mut what = Vec::new();
    if let Some(n) = name {
        if n != d.name {
            what.push("name");
        }
        d.name = n;
    }
    if let Some(raw) = &body.url {
        may_redirect(&state, &auth, &d.id).await?;
        let url = stow_alerts::check_resolves(d.kind, raw, allow(&state))
            .await
            .map_err(ApiError::invalid_request)?;
        d.url_hint = logs_core::alert_delivery::url_hint(d.kind, &url);
        secrets.url = url.to_string();
        what.push("url");
    }
    let mut rotated = None;
    if body.rotate_secret == Some(true) {
        let s = new_signing_secret();
        secrets.signing_secret = Some(s.clone());
        rotated = Some(s);
        what.push("signing secret rotated");
    }
    d.sealed = secrets.seal(key, &d.id);
    d.updated_at = Utc::now().trunc_subsecs(3);
    let audit = crate::audit::of(&req, &auth);
    let put = state
        .stores
        .alerts
        .update_destination(&d, &what.join(", "), &audit)
        .await?;
    refused(
        put,
        "destination",
        &d.name,
        logs_core::alert_store::MAX_DESTINATIONS,
    )?;
    Ok(HttpResponse::Ok()
        .insert_header(("Cache-Control", "no-store"))
        .json(DestinationResponse {
            success: true,
            destination: d.into(),
            signing_secret: rotated,
            request_id: current_request_id(),
        }))
}
