//! `POST /v1/members/invitations`: an invitation link for a role (the token is shown once).

use actix_web::{web, HttpRequest, HttpResponse};
use serde::{Deserialize, Serialize};
use stow_http::{current_request_id, ApiError, Auth};
use stow_ops::members::Invite;
use utoipa::ToSchema;

use super::grant_out::GrantIn;
use super::list::InvitationOut;
use crate::state::ApiState;

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct InviteRequest {
    /// `owner`, `admin`, `moderator` or `viewer`.
    pub role: String,
    /// Join codes of the servers whose logs the member will see; absent for every server.
    pub servers: Option<Vec<String>>,
    #[serde(default)]
    pub allow_paths: Vec<String>,
    #[serde(default)]
    pub deny_paths: Vec<String>,
    /// Who it is for, shown in the team's list (at most 200 characters).
    pub note: Option<String>,
    /// How long the link works: 1 to 720 hours, default 72.
    pub expires_in_hours: Option<u64>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct InviteResponse {
    pub success: bool,
    pub invitation: InvitationOut,
    /// The link's secret, shown this once: it works once, until `expiresAt`.
    pub token: String,
    /// The console path that accepts it (`/invite#<token>`), to put after the console's origin.
    pub accept_path: String,
    pub request_id: String,
}

/// Invite someone.
#[utoipa::path(
    post, path = "/v1/members/invitations", tag = "members", security(("bearer" = [])),
    request_body = InviteRequest,
    responses(
        (status = 201, description = "Invitation made; the token is shown once", body = InviteResponse),
        (status = 400, description = "INVALID_REQUEST: unknown role, server, bad path prefix, note or lifetime", body = stow_http::error::ApiErrorBody),
        super::MemberRouteErrors,
        stow_http::error::KeyedRouteErrors,
        stow_http::error::BodyRouteErrors,
        stow_http::error::JsonBodyErrors,
    )
)]
pub async fn invite(
    auth: Auth,
    req: HttpRequest,
    body: stow_http::Json<InviteRequest>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    let body = body.into_inner();
    let invited = Invite {
        org: auth.org.id.clone(),
        grant: GrantIn {
            role: body.role,
            servers: body.servers,
            allow_paths: body.allow_paths,
            deny_paths: body.deny_paths,
        }
        .request(),
        note: body.note,
        expires_in_hours: body.expires_in_hours,
    }
    .run(&crate::ops::ctx(&state, &req, &auth))
    .await?;
    let token = invited.token;
    Ok(HttpResponse::Created().json(InviteResponse {
        success: true,
        invitation: InvitationOut::new(&invited.servers, &invited.invitation),
        accept_path: format!("/invite#{token}"),
        token,
        request_id: current_request_id(),
    }))
}
