//! `PUT /v1/members/{memberId}`: change a member's role, servers or paths. Their console
//! sessions in this organization end at once.

use actix_web::{web, HttpRequest, HttpResponse};
use auth_core::MemberId;
use serde::Serialize;
use stow_http::{current_request_id, ApiError, Auth, Authenticator};
use utoipa::ToSchema;

use super::grant_out::GrantIn;
use stow_ops::members::ChangeGrant;

use super::list::MemberOut;
use crate::state::ApiState;

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
    state: &ApiState,
    auth: &Auth,
    id: &MemberId,
) -> Result<auth_core::member::MemberContext, ApiError> {
    let ctx = crate::ops::reading(state, auth);
    Ok(stow_ops::members::current(&ctx, &auth.org.id, id).await?)
}

/// Change a member's grant.
#[utoipa::path(
    put, path = "/v1/members/{memberId}", tag = "members", security(("bearer" = [])),
    params(("memberId" = String, Path, description = "`mem_…`")),
    request_body = GrantIn,
    responses(
        (status = 200, description = "Changed; the member's sessions here ended", body = UpdateMemberResponse),
        (status = 400, description = "INVALID_REQUEST: unknown role, server or bad path prefix", body = stow_http::error::ApiErrorBody),
        (status = 404, description = "NOT_FOUND: no such member in this organization", body = stow_http::error::ApiErrorBody),
        (status = 409, description = "CONFLICT: it would leave the organization without an owner", body = stow_http::error::ApiErrorBody),
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
    state: web::Data<ApiState>,
    authenticator: web::Data<Authenticator>,
) -> Result<HttpResponse, ApiError> {
    let id = MemberId::new(path.into_inner());
    let done = ChangeGrant {
        org: auth.org.id.clone(),
        member: id.clone(),
        grant: body.into_inner().request(),
    }
    .run(&crate::ops::ctx(&state, &req, &auth))
    .await?;
    if done.changed {
        authenticator.forget_member(&id, &auth.org.id);
    }
    Ok(HttpResponse::Ok().json(UpdateMemberResponse {
        success: true,
        member: MemberOut::new(&done.servers, &done.before.member, &done.membership),
        sessions_ended: done.sessions_ended,
        request_id: current_request_id(),
    }))
}
