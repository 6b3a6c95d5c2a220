//! `DELETE /v1/members/{memberId}`: take a member out of the organization (their sign-in stays
//! for their other organizations). Their console sessions here end at once.

use actix_web::{web, HttpRequest, HttpResponse};
use auth_core::MemberId;
use serde::Serialize;
use stow_http::{current_request_id, ApiError, Auth, Authenticator};
use utoipa::ToSchema;

use stow_ops::members::Remove;

use crate::state::ApiState;

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
        (status = 404, description = "NOT_FOUND: no such member in this organization", body = stow_http::error::ApiErrorBody),
        (status = 409, description = "CONFLICT: the organization's last owner stays", body = stow_http::error::ApiErrorBody),
        super::MemberRouteErrors,
        stow_http::error::KeyedRouteErrors,
    )
)]
pub async fn remove_member(
    auth: Auth,
    req: HttpRequest,
    path: web::Path<String>,
    state: web::Data<ApiState>,
    authenticator: web::Data<Authenticator>,
) -> Result<HttpResponse, ApiError> {
    let id = MemberId::new(path.into_inner());
    let sessions_ended = Remove {
        org: auth.org.id.clone(),
        member: id.clone(),
    }
    .run(&crate::ops::ctx(&state, &req, &auth))
    .await?;
    authenticator.forget_member(&id, &auth.org.id);
    Ok(HttpResponse::Ok().json(RemoveMemberResponse {
        success: true,
        sessions_ended,
        request_id: current_request_id(),
    }))
}
