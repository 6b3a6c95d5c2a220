//! `PUT /v1/members/{memberId}`: change a member's role, servers or paths. Their console
//! sessions in this organization end at once.

use actix_web::{web, HttpRequest, HttpResponse};
use auth_core::audit::Action;
use auth_core::roles::check_grant;
use auth_core::MemberId;
use serde::Serialize;
use stow_http::{current_request_id, ApiError, Auth, Authenticator};
use utoipa::ToSchema;

use super::grant_out::GrantIn;
use super::list::MemberOut;
use super::{manager, refused};
use crate::state::CdnState;

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateMemberResponse {
    pub success: bool,
    pub member: MemberOut,
    /// Console sessions of the member that ended with the change.
    pub sessions_ended: u64,
    pub request_id: String,
}

/// The member's current place in the organization, or 404.
pub(super) async fn current(
    state: &CdnState,
    auth: &Auth,
    id: &MemberId,
) -> Result<auth_core::member::MemberContext, ApiError> {
    state
        .stores
        .members
        .member_context(id, &auth.org.id)
        .await?
        .ok_or_else(|| {
            ApiError::new(
                stow_http::Code::NotFound,
                format!("no member `{id}` in this organization"),
            )
        })
}

/// Ends the member's sessions in this organization and forgets their cached context here.
pub(super) async fn end_sessions(
    state: &CdnState,
    authenticator: &Authenticator,
    auth: &Auth,
    id: &MemberId,
) -> Result<u64, ApiError> {
    let ended = state
        .stores
        .console_sessions
        .end_for_member(id, Some(&auth.org.id))
        .await?;
    authenticator.forget_member(id, &auth.org.id);
    Ok(ended)
}

/// Change a member's grant.
#[utoipa::path(
    put, path = "/v1/members/{memberId}", tag = "members", security(("bearer" = [])),
    params(("memberId" = String, Path, description = "`mem_…`")),
    request_body = GrantIn,
    responses(
        (status = 200, description = "Changed; the member's sessions here ended", body = UpdateMemberResponse),
        (status = 400, description = "INVALID_REQUEST: unknown role, server or bad path prefix", body = stow_http::error::CdnErrorBody),
        (status = 404, description = "NOT_FOUND: no such member in this organization", body = stow_http::error::CdnErrorBody),
        (status = 409, description = "CONFLICT: it would leave the organization without an owner", body = stow_http::error::CdnErrorBody),
        super::MemberRouteErrors,
        stow_http::error::KeyedRouteErrors,
        stow_http::error::BodyRouteErrors,
        stow_http::error::JsonBodyErrors,
    )
)]
pub async fn update_member(
    auth: Auth,
    req: HttpRequest,
    path: web::Path<String>,
    body: stow_http::Json<GrantIn>,
    state: web::Data<CdnState>,
    authenticator: web::Data<Authenticator>,
) -> Result<HttpResponse, ApiError> {
    let actor = manager(&auth)?;
    let id = MemberId::new(path.into_inner());
    let servers = state.stores.accounts.list_servers(&auth.org.id).await?;
    let grant = body.into_inner().request().resolve(&servers)?;
    let before = current(&state, &auth, &id).await?;
    if let Err(r) = check_grant(&actor.grant, Some(&before.membership.grant), &grant) {
        let details = serde_json::json!({
            "memberId": id,
            "from": auth_core::audit::grant_details(&before.membership.grant),
            "to": auth_core::audit::grant_details(&grant),
        });
        return Err(crate::audit::refused(
            &state,
            &req,
            &auth,
            Action::MemberChange,
            &before.member.login,
            details,
            refused(r),
        )
        .await);
    }
    let membership = state
        .stores
        .members
        .set_grant(&auth.org.id, &id, &grant, &crate::audit::of(&req, &auth))
        .await?;
    // sessions end when the grant changes; the same grant again changes nothing
    let sessions_ended = if before.membership.grant == grant {
        0
    } else {
        end_sessions(&state, &authenticator, &auth, &id).await?
    };
    Ok(HttpResponse::Ok().json(UpdateMemberResponse {
        success: true,
        member: MemberOut::new(&servers, &before.member, &membership),
        sessions_ended,
        request_id: current_request_id(),
    }))
}
