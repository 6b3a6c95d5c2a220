//! `DELETE /v1/members/invitations/{invitationId}`: withdraw an invitation not yet accepted; its
//! link stops working.

use actix_web::{web, HttpRequest, HttpResponse};
use auth_core::audit::Action;
use auth_core::InvitationId;
use serde::Serialize;
use stow_http::{current_request_id, ApiError, Auth, Code};
use utoipa::ToSchema;

use super::{manager, refused};
use crate::state::ApiState;

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
        (status = 404, description = "NOT_FOUND: no pending invitation with this id here", body = stow_http::error::ApiErrorBody),
        super::MemberRouteErrors,
        stow_http::error::KeyedRouteErrors,
    )
)]
pub async fn revoke_invitation(
    auth: Auth,
    req: HttpRequest,
    path: web::Path<String>,
    state: web::Data<ApiState>,
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
    if let Err(r) = auth_core::roles::check_grant(&actor.grant, None, &invitation.grant) {
        let entry =
            crate::audit::of(&req, &auth).invitation(Action::InvitationWithdraw, invitation);
        return Err(crate::audit::refused(
            &state,
            &req,
            &auth,
            Action::InvitationWithdraw,
            &entry.target,
            entry.details,
            refused(r),
        )
        .await);
    }
    state
        .stores
        .members
        .revoke_invitation(&auth.org.id, &id, &crate::audit::of(&req, &auth))
        .await?;
    Ok(HttpResponse::Ok().json(RevokeInvitationResponse {
        success: true,
        request_id: current_request_id(),
    }))
}
