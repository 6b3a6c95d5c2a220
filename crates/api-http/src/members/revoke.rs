//! `DELETE /v1/members/invitations/{invitationId}`: withdraw an invitation not yet accepted; its
//! link stops working.

use actix_web::{web, HttpResponse};
use auth_core::InvitationId;
use serde::Serialize;
use stow_http::{current_request_id, ApiError, Auth, Code};
use utoipa::ToSchema;

use super::{manager, refused};
use crate::state::CdnState;

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RevokeInvitationResponse {
    pub success: bool,
    pub request_id: String,
}

/// Withdraw an invitation.
#[utoipa::path(
    delete, path = "/v1/members/invitations/{invitationId}", tag = "members", security(("bearer" = [])),
    params(("invitationId" = String, Path, description = "`inv_…`")),
    responses(
        (status = 200, description = "Withdrawn", body = RevokeInvitationResponse),
        (status = 404, description = "NOT_FOUND: no pending invitation with this id here", body = stow_http::error::CdnErrorBody),
        super::MemberRouteErrors,
        stow_http::error::KeyedRouteErrors,
    )
)]
pub async fn revoke_invitation(
    auth: Auth,
    path: web::Path<String>,
    state: web::Data<CdnState>,
) -> Result<HttpResponse, ApiError> {
    let actor = manager(&auth)?;
    let id = InvitationId::new(path.into_inner());
    let pending = state
        .stores
        .members
        .pending_invitations(&auth.org.id)
        .await?;
    let invitation = pending.iter().find(|i| i.id == id).ok_or_else(|| {
        ApiError::new(
            Code::NotFound,
            format!("no pending invitation `{id}` in this organization"),
        )
    })?;
    // only what the actor could have given is theirs to withdraw
    auth_core::roles::check_grant(&actor.grant, None, &invitation.grant).map_err(refused)?;
    state
        .stores
        .members
        .revoke_invitation(&auth.org.id, &id)
        .await?;
    Ok(HttpResponse::Ok().json(RevokeInvitationResponse {
        success: true,
        request_id: current_request_id(),
    }))
}
