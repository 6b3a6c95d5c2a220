//! `POST /v1/account/password`: a member changes their own password. The current one is checked
//! (with the sign-in's growing waits after wrong ones, so an unattended session cannot be used to
//! guess it), the new one against the policy; every console session of theirs ends, this one
//! included.

use actix_web::{web, HttpRequest, HttpResponse};
use auth_core::audit::Action;
use serde::{Deserialize, Serialize};
use stow_http::{current_request_id, ApiError, Auth, Code};
use utoipa::ToSchema;

use super::me;
use crate::console::Console;
use crate::state::ApiState;

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ChangePassword {
    pub current_password: String,
    /// 10–256 characters, not containing the sign-in name, not a common password.
    pub new_password: String,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PasswordChanged {
    pub success: bool,
    /// The member's console sessions that ended (this one among them: sign in again).
    pub sessions_ended: u64,
    pub request_id: String,
}

/// Change the member's own password.
#[utoipa::path(
    post, path = "/v1/account/password", tag = "account", security(("bearer" = [])),
    request_body = ChangePassword,
    responses(
        (status = 200, description = "Changed; every console session of the member ended", body = PasswordChanged),
        (status = 400, description = "INVALID_REQUEST: `currentPassword` is wrong, or `newPassword` does not meet the policy (the message says which rule)", body = stow_http::error::ApiErrorBody),
        (status = 429, description = "RATE_LIMITED: too many wrong passwords for this sign-in name; `Retry-After`", body = stow_http::error::ApiErrorBody),
        super::AccountRouteErrors,
        stow_http::error::KeyedRouteErrors,
        stow_http::error::BodyRouteErrors,
        stow_http::error::JsonBodyErrors,
    )
)]
pub async fn change_password(
    auth: Auth,
    req: HttpRequest,
    body: stow_http::Json<ChangePassword>,
    state: web::Data<ApiState>,
    console: Option<web::Data<Console>>,
) -> Result<HttpResponse, ApiError> {
    let member = me(&auth)?;
    // members act only through the console, whose listener has its password workers
    let console = console
        .ok_or_else(|| ApiError::new(Code::Forbidden, "change your password in the console"))?;
    let body = body.into_inner();
    crate::console::session::check_password(&req, &console, &member.login, body.current_password)
        .await
        .map_err(|e| {
            // not 401, which would end the console session this request came from
            if e.code == Code::Unauthorized {
                ApiError::invalid_request("`currentPassword` is wrong")
            } else {
                e
            }
        })?;
    console
        .failures
        .clear(&format!("login:{}", member.login))
        .await?;
    auth_core::password::check_new(&body.new_password, &member.login)
        .map_err(|weak| ApiError::invalid_request(format!("`newPassword`: {weak}")))?;
    let hash = console.passwords.hash(body.new_password).await?;
    let audit = crate::audit::of(&req, &auth);
    state
        .stores
        .members
        .set_password(&member.id, &hash, Action::PasswordChange, &audit)
        .await?;
    let sessions_ended = state
        .stores
        .console_sessions
        .end_for_member(&member.id, None)
        .await?;
    Ok(HttpResponse::Ok().json(PasswordChanged {
        success: true,
        sessions_ended,
        request_id: current_request_id(),
    }))
}
