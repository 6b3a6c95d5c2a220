//! `/invitation/*`: what an invitation link offers, and accepting it. The token comes in the JSON
//! body (the page reads it from the link's fragment, which no server or log sees). Accepting
//! makes a member (or, for a sign-in name that has one, checks its password and adds the
//! organization) and starts their session.

use actix_web::{web, HttpRequest, HttpResponse};
use auth_core::console_session::{token_hash, Subject};
use auth_core::member::{normalize_login, Accepter};
use serde::{Deserialize, Serialize};
use stow_http::{ApiError, Code, Json};

use super::guard::same_origin;
use super::session::{
    check_address, check_password, check_second_factor, no_store, start, SecondProof,
};
use super::Console;
use crate::members::grant_out::GrantOut;
use crate::state::ApiState;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Token {
    token: String,
}

/// What the accept page shows before anyone types a password.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Preview {
    organization: String,
    #[serde(flatten)]
    grant: GrantOut,
    expires_at: String,
}

fn not_open() -> ApiError {
    ApiError::new(
        Code::NotFound,
        "this invitation link does not work: it was used, withdrawn or has expired; ask for a new one",
    )
}

/// `POST /invitation/preview {"token"}`: the organization and role an open invitation gives.
pub async fn preview(
    req: HttpRequest,
    state: web::Data<ApiState>,
    console: web::Data<Console>,
    body: Json<Token>,
) -> Result<HttpResponse, ApiError> {
    same_origin(&req)?;
    check_address(&req, &console).await?;
    let hash = token_hash(body.token.trim());
    let now = chrono::Utc::now();
    let invitation = console
        .members
        .find_invitation(&hash)
        .await?
        .filter(|i| i.open_at(now))
        .ok_or_else(not_open)?;
    let org = state
        .stores
        .accounts
        .get_org(&invitation.org_id)
        .await?
        .ok_or_else(not_open)?;
    let grant = GrantOut::of(&state, &invitation.org_id, &invitation.grant).await?;
    Ok(no_store(
        HttpResponse::Ok().json(Preview {
            organization: org.name,
            grant,
            expires_at: invitation
                .expires_at
                .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        }),
    ))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Accept {
    token: String,
    login: String,
    password: String,
    display_name: Option<String>,
    /// For a member whose second factor is on: their app's code, or a recovery code.
    code: Option<String>,
    recovery_code: Option<String>,
}

/// Longest display name, in characters.
const MAX_NAME_CHARS: usize = 100;

/// `POST /invitation/accept {"token", "login", "password", "displayName"?}`: a new sign-in name
/// makes a member with this password (checked against the password policy); a sign-in name that
/// has a member joins with that member's password. The session starts in the new organization.
pub async fn accept(
    req: HttpRequest,
    console: web::Data<Console>,
    body: Json<Accept>,
) -> Result<HttpResponse, ApiError> {
    same_origin(&req)?;
    check_address(&req, &console).await?;
    let body = body.into_inner();
    let login =
        normalize_login(&body.login).map_err(|e| ApiError::invalid_request(e.to_string()))?;
    let display_name = body
        .display_name
        .map(|n| n.trim().to_owned())
        .filter(|n| !n.is_empty());
    if display_name
        .as_ref()
        .is_some_and(|n| n.chars().count() > MAX_NAME_CHARS || n.chars().any(char::is_control))
    {
        return Err(ApiError::invalid_request(format!(
            "`displayName` has at most {MAX_NAME_CHARS} characters and no control characters"
        )));
    }
    let hash = token_hash(body.token.trim());
    let now = chrono::Utc::now();
    // an unusable link is said before any password work
    console
        .members
        .find_invitation(&hash)
        .await?
        .filter(|i| i.open_at(now))
        .ok_or_else(not_open)?;
    let login_for_audit = login.clone();
    let accepter = match console.members.find_member(&login).await? {
        Some(_) => {
            let member = check_password(&req, &console, &login, body.password).await?;
            let proof = SecondProof {
                code: body.code,
                recovery_code: body.recovery_code,
            };
            check_second_factor(&req, &console, &member, proof).await?;
            Accepter::Existing(member.id)
        }
        None => {
            auth_core::password::check_new(&body.password, &login)
                .map_err(|weak| ApiError::invalid_request(format!("`password`: {weak}")))?;
            Accepter::New {
                login,
                display_name,
                password_hash: console.passwords.hash(body.password).await?,
            }
        }
    };
    let acting = match &accepter {
        Accepter::Existing(id) => crate::audit::signed_out(&req, id.clone(), login_for_audit),
        Accepter::New { .. } => {
            crate::audit::signed_out(&req, auth_core::MemberId::default(), login_for_audit)
        }
    };
    let (member, membership) = console
        .members
        .accept_invitation(&hash, &accepter, now, &acting)
        .await?
        .ok_or_else(not_open)?;
    let subject = Subject::Member {
        member_id: member.id,
        org_id: membership.org_id,
    };
    start(&req, &console, subject).await
}
