//! `/password-reset*`: a member sets a new password with a reset link an owner or admin made.
//! The token comes in the JSON body (the page reads it from the link's fragment). Using it ends
//! every console session of the member; they then sign in with the new password.

use actix_web::{web, HttpRequest, HttpResponse};
use auth_core::console_session::token_hash;
use auth_core::member::credential_reach;
use serde::{Deserialize, Serialize};
use stow_http::{ApiError, Code, Json};

use super::guard::same_origin;
use super::session::{check_address, no_store};
use super::Console;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Token {
    token: String,
}

#[derive(Serialize)]
pub struct ResetFor {
    /// The sign-in name the new password is for.
    login: String,
}

/// The member an open link is for, when its maker still reaches them in every organization they
/// belong to (`auth_core::member::check_credential_reach`): a link made while the person belonged
/// to the maker's organization alone stops working once they join another one, and one whose
/// maker lost the role that made it stops too. Links an operator made (`stowctl`) always work.
async fn open_link_for(
    console: &Console,
    hash: &[u8; 32],
    now: chrono::DateTime<chrono::Utc>,
) -> Result<auth_core::member::Member, ApiError> {
    let (member, made_by) = console
        .members
        .reset_member(hash, now)
        .await?
        .ok_or_else(not_open)?;
    if let Some(maker) = made_by {
        credential_reach(console.members.as_ref(), &maker, &member.id)
            .await?
            .map_err(|_| {
            ApiError::new(
                Code::Forbidden,
                "this reset link no longer works: you now belong to an organization its maker does not manage; change your password on your Account page, or ask an operator",
            )
        })?;
    }
    Ok(member)
}

fn not_open() -> ApiError {
    ApiError::new(
        Code::NotFound,
        "this reset link does not work: it was used, replaced by a newer one or has expired; ask an owner or admin for a new one",
    )
}

/// `POST /password-reset/preview {"token"}`: whose password an open link sets.
pub async fn preview(
    req: HttpRequest,
    console: web::Data<Console>,
    body: Json<Token>,
) -> Result<HttpResponse, ApiError> {
    same_origin(&req)?;
    check_address(&req, &console).await?;
    let member =
        open_link_for(&console, &token_hash(body.token.trim()), chrono::Utc::now()).await?;
    Ok(no_store(HttpResponse::Ok().json(ResetFor {
        login: member.login,
    })))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewPassword {
    token: String,
    password: String,
}

/// `POST /password-reset {"token", "password"}`: sets the password (checked against the policy)
/// and ends every console session of the member.
pub async fn reset(
    req: HttpRequest,
    console: web::Data<Console>,
    body: Json<NewPassword>,
) -> Result<HttpResponse, ApiError> {
    same_origin(&req)?;
    check_address(&req, &console).await?;
    let body = body.into_inner();
    let hash = token_hash(body.token.trim());
    let now = chrono::Utc::now();
    let member = open_link_for(&console, &hash, now).await?;
    auth_core::password::check_new(&body.password, &member.login)
        .map_err(|weak| ApiError::invalid_request(format!("`password`: {weak}")))?;
    let password_hash = console.passwords.hash(body.password).await?;
    let id = console
        .members
        .use_reset(
            &hash,
            &password_hash,
            now,
            &crate::audit::signed_out(&req, member.id.clone(), member.login.clone()),
        )
        .await?
        .ok_or_else(not_open)?;
    console.sessions.end_for_member(&id, None).await?;
    Ok(no_store(HttpResponse::Ok().json(ResetFor {
        login: member.login,
    })))
}
