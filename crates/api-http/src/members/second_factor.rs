//! `DELETE /v1/members/{memberId}/second-factor`: an owner or admin takes away a member's second
//! factor (they lost their phone and their recovery codes); the member signs in with their
//! password alone and may set up a new one. Their console sessions end everywhere.

use actix_web::{web, HttpRequest, HttpResponse};
use auth_core::audit::Action;
use auth_core::MemberId;
use serde::Serialize;
use stow_http::{current_request_id, ApiError, Auth, Code};
use utoipa::ToSchema;

use super::update::current;
use super::{credentials_within_reach, manager};
use crate::state::ApiState;

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SecondFactorResetResponse {
    pub success: bool,
    /// The member's console sessions that ended.
    pub sessions_ended: u64,
    pub request_id: String,
}

/// Remove a member's second factor.
#[utoipa::path(
    delete, path = "/v1/members/{memberId}/second-factor", tag = "members", security(("bearer" = [])),
    params(("memberId" = String, Path, description = "`mem_…`")),
    responses(
        (status = 200, description = "Removed; the member's sessions ended", body = SecondFactorResetResponse),
        (status = 404, description = "NOT_FOUND: no such member in this organization, or no second factor of theirs is on", body = stow_http::error::ApiErrorBody),
        super::MemberRouteErrors,
        stow_http::error::KeyedRouteErrors,
    )
)]
pub async fn reset_second_factor(
    auth: Auth,
    req: HttpRequest,
    path: web::Path<String>,
    state: web::Data<ApiState>,
    authenticator: web::Data<stow_http::Authenticator>,
) -> Result<HttpResponse, ApiError> {
    let actor = manager(&auth)?;
    let id = MemberId::new(path.into_inner());
    if id == actor.id {
        // one's own is turned off with a code from the app (a session left open is not enough)
        return Err(ApiError::new(
            Code::Forbidden,
            "turn off your own second factor on your Account page (POST /v1/account/second-factor/disable, with a code)",
        ));
    }
    let target = current(&state, &auth, &id).await?;
    credentials_within_reach(
        &state,
        &req,
        &auth,
        actor,
        &target,
        Action::SecondFactorReset,
    )
    .await?;
    // one being set up (not confirmed) is not asked for at sign-in: there is nothing to remove
    let on = state
        .stores
        .members
        .second_factor(&id)
        .await?
        .is_some_and(|f| f.confirmed_at.is_some());
    let audit = crate::audit::of(&req, &auth);
    if !on
        || !state
            .stores
            .members
            .remove_second_factor(&id, Action::SecondFactorReset, &audit)
            .await?
    {
        return Err(ApiError::new(
            Code::NotFound,
            format!("`{}` has no second factor", target.member.login),
        ));
    }
    let sessions_ended = state
        .stores
        .console_sessions
        .end_for_member(&id, None)
        .await?;
    authenticator.forget_member(&id, &auth.org.id);
    Ok(HttpResponse::Ok().json(SecondFactorResetResponse {
        success: true,
        sessions_ended,
        request_id: current_request_id(),
    }))
}
