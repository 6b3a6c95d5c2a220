//! `POST /v1/members/invitations`: an invitation link for a role (the token is shown once).

use std::time::Duration;

use actix_web::{web, HttpRequest, HttpResponse};
use auth_core::audit::Action;
use auth_core::console_session::{new_token, token_hash};
use auth_core::member::{Invitation, INVITATION_LIFETIME, MAX_INVITATION_LIFETIME};
use auth_core::roles::check_grant;
use auth_core::InvitationId;
use serde::{Deserialize, Serialize};
use stow_http::{current_request_id, ApiError, Auth};
use utoipa::ToSchema;

use super::grant_out::GrantIn;
use super::list::InvitationOut;
use super::{manager, refused};
use crate::state::CdnState;

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
        (status = 400, description = "INVALID_REQUEST: unknown role, server, bad path prefix, note or lifetime", body = stow_http::error::CdnErrorBody),
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
    state: web::Data<CdnState>,
) -> Result<HttpResponse, ApiError> {
    let actor = manager(&auth)?;
    let body = body.into_inner();
    let servers = state.stores.accounts.list_servers(&auth.org.id).await?;
    let grant = GrantIn {
        role: body.role,
        servers: body.servers,
        allow_paths: body.allow_paths,
        deny_paths: body.deny_paths,
    }
    .resolve(&servers)?;
    if let Err(r) = check_grant(&actor.grant, None, &grant) {
        let details = auth_core::audit::grant_details(&grant);
        return Err(crate::audit::refused(
            &state,
            &req,
            &auth,
            Action::MemberInvite,
            "",
            details,
            refused(r),
        )
        .await);
    }
    let note = auth_core::member::normalize_note(body.note.as_deref())
        .map_err(|e| ApiError::invalid_request(e.to_string()))?;
    let max_hours = MAX_INVITATION_LIFETIME.as_secs() / 3600;
    let hours = body
        .expires_in_hours
        .unwrap_or(INVITATION_LIFETIME.as_secs() / 3600);
    if !(1..=max_hours).contains(&hours) {
        return Err(ApiError::invalid_request(format!(
            "`expiresInHours` is {hours}; use 1 to {max_hours}"
        )));
    }
    let token = new_token();
    let now = chrono::Utc::now();
    let invitation = Invitation {
        id: InvitationId::generate(),
        org_id: auth.org.id.clone(),
        grant,
        invited_by: Some(actor.id.clone()),
        token_hash: token_hash(&token),
        note,
        created_at: now,
        expires_at: now + Duration::from_secs(hours * 3600),
        accepted_at: None,
    };
    state
        .stores
        .members
        .create_invitation(&invitation, &crate::audit::of(&req, &auth))
        .await?;
    Ok(HttpResponse::Created().json(InviteResponse {
        success: true,
        invitation: InvitationOut::new(&servers, &invitation),
        accept_path: format!("/invite#{token}"),
        token,
        request_id: current_request_id(),
    }))
}
