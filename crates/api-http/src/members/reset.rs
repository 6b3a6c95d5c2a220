//! `POST /v1/members/{memberId}/password-reset`: a one-time link with which the member sets a new
//! password (for one who forgot theirs). The token is shown once and stored only as its SHA-256;
//! it works once, for 24 hours, and a newer link replaces an older one.

use std::time::Duration;

use actix_web::{web, HttpRequest, HttpResponse};
use auth_core::audit::Action;
use auth_core::console_session::{new_token, token_hash};
use auth_core::member::{PasswordReset, RESET_LIFETIME};
use auth_core::MemberId;
use serde::Serialize;
use stow_http::{current_request_id, ApiError, Auth};
use utoipa::ToSchema;

use super::update::current;
use super::{credentials_within_reach, manager};
use crate::state::ApiState;

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PasswordResetResponse {
    pub success: bool,
    /// The link's secret, shown this once.
    pub token: String,
    /// The console path that uses it (`/reset#<token>`), to put after the console's origin.
    pub reset_path: String,
    pub expires_at: String,
    pub request_id: String,
}

/// Make a password reset link for a member.
#[utoipa::path(
    post, path = "/v1/members/{memberId}/password-reset", tag = "members", security(("bearer" = [])),
    params(("memberId" = String, Path, description = "`mem_…`")),
    responses(
        (status = 201, description = "The link's token, shown once", body = PasswordResetResponse),
        (status = 404, description = "NOT_FOUND: no such member in this organization", body = stow_http::error::ApiErrorBody),
        super::MemberRouteErrors,
        stow_http::error::KeyedRouteErrors,
    )
)]
pub async fn reset_password(
    auth: Auth,
    req: HttpRequest,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    let actor = manager(&auth)?;
    let id = MemberId::new(path.into_inner());
    let target = current(&state, &auth, &id).await?;
    credentials_within_reach(
        &state,
        &req,
        &auth,
        actor,
        &target,
        Action::PasswordResetIssue,
    )
    .await?;
    let token = new_token();
    let now = chrono::Utc::now();
    let expires_at = now + Duration::from_secs(RESET_LIFETIME.as_secs());
    state
        .stores
        .members
        .create_reset(
            &PasswordReset {
                member_id: id,
                made_by: Some(actor.id.clone()),
                token_hash: token_hash(&token),
                created_at: now,
                expires_at,
            },
            &auth.org.id,
            &crate::audit::of(&req, &auth),
        )
        .await?;
    Ok(HttpResponse::Created().json(PasswordResetResponse {
        success: true,
        reset_path: format!("/reset#{token}"),
        token,
        expires_at: expires_at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        request_id: current_request_id(),
    }))
}
