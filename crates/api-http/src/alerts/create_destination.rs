//! `POST /v1/logs/destinations`: a Discord webhook or a generic (signed) webhook to send alerts
//! to. A generic webhook's signing secret is in this answer only.

use actix_web::{web, HttpRequest, HttpResponse};
use chrono::{SubsecRound, Utc};
use logs_core::alert_store::{self, Destination, DestinationKind, MAX_DESTINATIONS};
use logs_core::saved::validate_name;
use serde::{Deserialize, Serialize};
use stow_alerts::secrets::new_signing_secret;
use stow_alerts::Secrets;
use stow_http::{current_request_id, ApiError, Auth};
use utoipa::ToSchema;

use super::{allow, manager, refused, seal_key, DestinationOut};
use crate::state::ApiState;

/// `POST /v1/logs/destinations`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateDestinationRequest {
    /// 1 to 100 characters, unique in the organization (either case).
    pub name: String,
    /// `discord` or `webhook`.
    pub kind: String,
    /// Discord: `https://discord.com/api/webhooks/<id>/<token>`. Generic: any public `https`
    /// address (no private, loopback, link-local or metadata address, also after DNS
    /// resolution; redirects are not followed).
    pub url: String,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DestinationResponse {
    pub success: bool,
    pub destination: DestinationOut,
    /// Generic webhooks, when made or rotated: the Standard Webhooks signing secret
    /// (`whsec_…`). Shown this once; it cannot be read again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signing_secret: Option<String>,
    pub request_id: String,
}

/// Add an alert destination.
#[utoipa::path(
    post, path = "/v1/logs/destinations", tag = "alerts", security(("bearer" = [])),
    request_body = CreateDestinationRequest,
    responses(
        (status = 201, description = "Made; a generic webhook's signing secret is in this answer only", body = DestinationResponse),
        (status = 400, description = "INVALID_REQUEST naming the field: name, kind, or url (https only, public addresses only)", body = stow_http::error::ApiErrorBody),
        (status = 409, description = "CONFLICT: the name is taken (either case), or the organization has 50 destinations", body = stow_http::error::ApiErrorBody),
        (status = 503, description = "UNAVAILABLE: the operator has not set SECOND_FACTOR_KEY", body = stow_http::error::ApiErrorBody),
        super::AlertErrors,
        stow_http::error::JsonBodyErrors,
        stow_http::error::KeyedRouteErrors,
        stow_http::error::BodyRouteErrors,
    )
)]
pub async fn create_destination(
    auth: Auth,
    req: HttpRequest,
    body: stow_http::Json<CreateDestinationRequest>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    manager(&auth)?;
    let body = body.into_inner();
    let name = validate_name(&body.name).map_err(ApiError::invalid_request)?;
    let kind = DestinationKind::parse(&body.kind).ok_or_else(|| {
        ApiError::invalid_request(format!(
            "`kind` must be `discord` or `webhook`; got {:?}",
            body.kind
        ))
    })?;
    let key = seal_key(&state)?;
    let url = stow_alerts::check_resolves(kind, &body.url, allow(&state))
        .await
        .map_err(ApiError::invalid_request)?;
    let signing_secret = (kind == DestinationKind::Webhook).then(new_signing_secret);
    let id = alert_store::new_destination_id();
    let secrets = Secrets {
        url: url.to_string(),
        signing_secret: signing_secret.clone(),
    };
    let audit = crate::audit::of(&req, &auth);
    let now = Utc::now().trunc_subsecs(3);
    let d = Destination {
        sealed: secrets.seal(key, &id),
        id,
        org_id: auth.org.id.clone(),
        name,
        kind,
        url_hint: logs_core::alert_delivery::url_hint(kind, &url),
        created_by: audit.actor.label().to_owned(),
        created_at: now,
        updated_at: now,
    };
    let put = state
        .stores
        .alerts
        .create_destination(&d, MAX_DESTINATIONS, &audit)
        .await?;
    refused(put, "destination", &d.name, MAX_DESTINATIONS)?;
    Ok(HttpResponse::Created()
        .insert_header(("Cache-Control", "no-store"))
        .json(DestinationResponse {
            success: true,
            destination: d.into(),
            signing_secret,
            request_id: current_request_id(),
        }))
}
