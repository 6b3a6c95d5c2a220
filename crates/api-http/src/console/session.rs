//! `/session`: sign in with a member's sign-in name and password, or with an API key (either is
//! exchanged for a session cookie); the current session; switching organization; sign out. The
//! key or password is read once, from the JSON body, and never stored or echoed.

use actix_web::cookie::{Cookie, SameSite};
use actix_web::{web, HttpRequest, HttpResponse};
use auth_core::console_session::{new_token, token_hash, Session, Subject};
use auth_core::member::normalize_login;
use auth_core::{MemberId, OrgId};
use serde::{Deserialize, Serialize};
use stow_http::rate_limit::retry_after_secs;
use stow_http::{ApiError, Authenticator, Code, Json};

use super::guard::{check_state_change, resume, same_origin, COOKIE};
use super::Console;

mod proofs;
pub(crate) use proofs::check_password;
use proofs::wrong_password;
pub(super) use proofs::{check_address, check_second_factor, SecondProof};

/// `{"key": "…"}`, or `{"login": "…", "password": "…"}` with an optional `organizationId`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SignIn {
    key: Option<String>,
    login: Option<String>,
    password: Option<String>,
    organization_id: Option<OrgId>,
    /// The code of the member's authenticator app, when their second factor is on.
    code: Option<String>,
    /// …or one of their recovery codes instead.
    recovery_code: Option<String>,
}

/// What the page needs of its session (the caller itself is `/api/v1/whoami`).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfo {
    csrf_token: String,
    /// When the session ends whatever its use (`CONSOLE_SESSION_HOURS` after sign-in).
    expires_at: String,
    /// For a member's session: the organization it acts in and the others they may switch to.
    #[serde(skip_serializing_if = "Option::is_none")]
    member: Option<MemberInfo>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MemberInfo {
    id: String,
    login: String,
    display_name: Option<String>,
    organization_id: String,
    organizations: Vec<OrganizationChoice>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OrganizationChoice {
    id: String,
    name: String,
    role: String,
}

async fn info(console: &Console, s: &Session) -> Result<SessionInfo, ApiError> {
    let absolute =
        chrono::Duration::from_std(console.lifetimes.absolute).unwrap_or(chrono::Duration::zero());
    let member = match &s.subject {
        Subject::Key { .. } => None,
        Subject::Member { member_id, org_id } => {
            Some(member_info(console, member_id, org_id).await?)
        }
    };
    Ok(SessionInfo {
        csrf_token: s.csrf_token.clone(),
        expires_at: (s.created_at + absolute).to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        member,
    })
}

async fn member_info(
    console: &Console,
    member_id: &MemberId,
    org_id: &OrgId,
) -> Result<MemberInfo, ApiError> {
    let gone = || ApiError::from(auth_core::AuthError::MemberGone);
    let member = console
        .members
        .get_member(member_id)
        .await?
        .ok_or_else(gone)?;
    let mut organizations = Vec::new();
    for m in console.members.memberships(member_id).await? {
        if let Some(ctx) = console.members.member_context(member_id, &m.org_id).await? {
            organizations.push(OrganizationChoice {
                id: ctx.org.id.to_string(),
                name: ctx.org.name,
                role: m.grant.role.as_str().to_owned(),
            });
        }
    }
    Ok(MemberInfo {
        id: member.id.to_string(),
        login: member.login,
        display_name: member.display_name,
        organization_id: org_id.to_string(),
        organizations,
    })
}

fn cookie(req: &HttpRequest, value: String) -> Cookie<'static> {
    Cookie::build(COOKIE, value)
        .http_only(true)
        .same_site(SameSite::Strict)
        .secure(req.connection_info().scheme() == "https")
        .path("/")
        .finish()
}

pub(super) fn no_store(mut res: HttpResponse) -> HttpResponse {
    res.headers_mut().insert(
        actix_web::http::header::CACHE_CONTROL,
        actix_web::http::header::HeaderValue::from_static("no-store"),
    );
    res
}

/// Starts a session for `subject`, replacing this browser's previous one; the answer sets its
/// cookie.
pub(super) async fn start(
    req: &HttpRequest,
    console: &Console,
    subject: Subject,
) -> Result<HttpResponse, ApiError> {
    if let Some(previous) = req.cookie(COOKIE) {
        console.sessions.end(&token_hash(previous.value())).await?;
    }
    let token = new_token();
    let now = chrono::Utc::now();
    let session = Session {
        id_hash: token_hash(&token),
        subject,
        csrf_token: new_token(),
        created_at: now,
        last_seen_at: now,
    };
    console.sessions.create(&session).await?;
    let body = info(console, &session).await?;
    Ok(no_store(
        HttpResponse::Ok().cookie(cookie(req, token)).json(body),
    ))
}

/// `POST /session`: a usable key of any type, or a member's sign-in name and password, starts a
/// session. A member acts in `organizationId` when given (one of theirs), else in the first of
/// their organizations by name.
pub async fn sign_in(
    req: HttpRequest,
    authenticator: web::Data<Authenticator>,
    console: web::Data<Console>,
    body: Json<SignIn>,
) -> Result<HttpResponse, ApiError> {
    same_origin(&req)?;
    let body = body.into_inner();
    let subject = match (body.key, body.login, body.password) {
        (Some(key), None, None)
            if body.organization_id.is_none()
                && body.code.is_none()
                && body.recovery_code.is_none() =>
        {
            check_address(&req, &console).await?;
            let ctx = authenticator.authenticate_secret(key.trim()).await?;
            authenticator.rate_limit(&ctx.key.id).await?;
            Subject::Key {
                key_id: ctx.key.id.clone(),
                key_hash: auth_core::secret::hash(key.trim()),
            }
        }
        (None, Some(login), Some(password)) => {
            check_address(&req, &console).await?;
            let login = normalize_login(&login).map_err(|_| wrong_password())?;
            let member = check_password(&req, &console, &login, password).await?;
            let proof = SecondProof {
                code: body.code,
                recovery_code: body.recovery_code,
            };
            check_second_factor(&req, &console, &member, proof).await?;
            let orgs = console.members.memberships(&member.id).await?;
            let org_id = match body.organization_id {
                Some(wanted) => orgs
                    .into_iter()
                    .find(|m| m.org_id == wanted)
                    .map(|m| m.org_id)
                    .ok_or_else(|| {
                        ApiError::new(
                            Code::Forbidden,
                            format!("you are not a member of organization `{wanted}`"),
                        )
                    })?,
                None => orgs.into_iter().next().map(|m| m.org_id).ok_or_else(|| {
                    ApiError::new(
                        Code::Forbidden,
                        "you are not a member of any organization now; ask an owner for a new invitation",
                    )
                })?,
            };
            Subject::Member {
                member_id: member.id,
                org_id,
            }
        }
        _ => {
            return Err(ApiError::invalid_request(
                "send either `key`, or `login` and `password` (with an optional `organizationId`)",
            ))
        }
    };
    start(&req, &console, subject).await
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Switch {
    organization_id: OrgId,
}

/// `POST /session/organization {"organizationId"}` (with the CSRF token): a member's session
/// moves to another of their organizations; a new session replaces it (new cookie and CSRF
/// token).
pub async fn switch_organization(
    req: HttpRequest,
    body: Json<Switch>,
) -> Result<HttpResponse, ApiError> {
    let (console, session) = resume(&req).await?;
    check_state_change(&req, &session)?;
    let Subject::Member { member_id, .. } = &session.subject else {
        return Err(ApiError::new(
            Code::Forbidden,
            "a session signed in with an API key acts in that key's organization only",
        ));
    };
    let wanted = &body.organization_id;
    if console
        .members
        .member_context(member_id, wanted)
        .await?
        .is_none()
    {
        return Err(ApiError::new(
            Code::Forbidden,
            format!("you are not a member of organization `{wanted}`"),
        ));
    }
    let subject = Subject::Member {
        member_id: member_id.clone(),
        org_id: wanted.clone(),
    };
    start(&req, &console, subject).await
}

/// `GET /session`: the current session, or 401.
pub async fn current(req: HttpRequest) -> Result<HttpResponse, ApiError> {
    let (console, session) = resume(&req).await?;
    let body = info(&console, &session).await?;
    Ok(no_store(HttpResponse::Ok().json(body)))
}

/// `DELETE /session` (with the CSRF token): ends the session server-side and clears the cookie.
pub async fn sign_out(req: HttpRequest) -> Result<HttpResponse, ApiError> {
    let (console, session) = resume(&req).await?;
    check_state_change(&req, &session)?;
    console.sessions.end(&session.id_hash).await?;
    let mut gone = cookie(&req, String::new());
    gone.make_removal();
    Ok(no_store(HttpResponse::NoContent().cookie(gone).finish()))
}
