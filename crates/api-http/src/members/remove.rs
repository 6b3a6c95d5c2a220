//! `DELETE /v1/members/{memberId}`: take a member out of the organization (their sign-in stays
//! for their other organizations). Their console sessions here end at once.

use actix_web::{web, HttpRequest, HttpResponse};
use auth_core::audit::Action;
use auth_core::roles::{check_removal, Role};
use auth_core::MemberId;
use serde::Serialize;
use stow_http::{current_request_id, ApiError, Auth, Authenticator};
use utoipa::ToSchema;

use super::update::{current, end_sessions};
use super::{manager, refused};
use crate::state::CdnState;

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RemoveMemberResponse {
    pub success: bool,
    /// Console sessions of the member that ended.
    pub sessions_ended: u64,
    pub request_id: String,
}

/// Remove a member.
#[utoipa::path(
    delete, path = "/v1/members/{memberId}", tag = "members", security(("bearer" = [])),
    params(("memberId" = String, Path, description = "`mem_…`")),
    responses(
        (status = 200, description = "Removed; their sessions here ended", body = RemoveMemberResponse),
        (status = 404, description = "NOT_FOUND: no such member in this organization", body = stow_http::error::CdnErrorBody),
        (status = 409, description = "CONFLICT: the organization's last owner stays", body = stow_http::error::CdnErrorBody),
        super::MemberRouteErrors,
        stow_http::error::KeyedRouteErrors,
    )
)]
pub async fn remove_member(
    auth: Auth,
    req: HttpRequest,
    path: web::Path<String>,
    state: web::Data<CdnState>,
    authenticator: web::Data<Authenticator>,
) -> Result<HttpResponse, ApiError> {
    let actor = manager(&auth)?;
    let id = MemberId::new(path.into_inner());
    let target = current(&state, &auth, &id).await?;
    let owners = state
        .stores
        .members
        .list_members(&auth.org.id)
        .await?
        .iter()
        .filter(|(_, m)| m.grant.role == Role::Owner)
        .count();
    if let Err(r) = check_removal(&actor.grant, &target.membership.grant, owners) {
        let details = serde_json::json!({ "memberId": id });
        return Err(crate::audit::refused(
            &state,
            &req,
            &auth,
            Action::MemberRemove,
            &target.member.login,
            details,
            refused(r),
        )
        .await);
    }
    state
        .stores
        .members
        .remove_member(&auth.org.id, &id, &crate::audit::of(&req, &auth))
        .await?;
    let sessions_ended = end_sessions(&state, &authenticator, &auth, &id).await?;
    Ok(HttpResponse::Ok().json(RemoveMemberResponse {
        success: true,
        sessions_ended,
        request_id: current_request_id(),
    }))
}
