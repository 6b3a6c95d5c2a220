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

fn throttled(what: &str, wait: std::time::Duration) -> ApiError {
    ApiError::new(
        Code::RateLimited,
        format!(
            "too many sign-in attempts {what}; try again in {} s",
            retry_after_secs(wait)
        ),
    )
    .with_retry_after(retry_after_secs(wait))
}

/// The wait after repeated wrong passwords for one sign-in name.
fn throttled_failures(wait: std::time::Duration) -> ApiError {
    let secs = retry_after_secs(wait);
    ApiError::new(
        Code::RateLimited,
        format!("too many wrong passwords for this sign-in name; try again in {secs} s"),
    )
    .with_retry_after(secs)
}

/// The per-address sign-in throttle (keys and passwords alike).
pub(super) async fn check_address(req: &HttpRequest, console: &Console) -> Result<(), ApiError> {
    let address = address_of(req);
    console
        .sign_ins
        .check(&format!("signin:{address}"))
        .await
        .map_err(|wait| throttled("from this address", wait))
}

/// The client's address as the sign-in throttles count it (an IPv6 client by its /64: each of
/// its addresses is not a fresh allowance).
pub(crate) fn address_of(req: &HttpRequest) -> String {
    let trusted = req
        .app_data::<web::Data<crate::state::ApiState>>()
        .map(|s| s.config.trusted_proxies.clone())
        .unwrap_or_default();
    stow_http::request::client_ip(req, &trusted)
        .map_or_else(|| "unknown".to_owned(), stow_http::request::address_bucket)
}

/// Whether a failure of `login` from `address` still makes its next attempt wait
/// (`auth_core::backoff::subjects`: this name from this address, or this name from anywhere).
async fn failures_wait(console: &Console, login: &str, address: &str) -> Result<(), ApiError> {
    let now = chrono::Utc::now();
    for (subject, _) in auth_core::backoff::subjects(login, address) {
        if let Some(until) = console.failures.blocked_until(&subject, now).await? {
            let wait = (until - now).to_std().unwrap_or_default();
            return Err(throttled_failures(wait));
        }
    }
    Ok(())
}

/// Counts a failed sign-in of `login` from `address` in both of its counts.
async fn count_failure(console: &Console, login: &str, address: &str) -> Result<(), ApiError> {
    let now = chrono::Utc::now();
    for (subject, free) in auth_core::backoff::subjects(login, address) {
        console.failures.fail(&subject, now, free).await?;
    }
    Ok(())
}

/// A whole sign-in of `login` from `address`: both of its counts start again.
async fn clear_failures(console: &Console, login: &str, address: &str) -> Result<(), ApiError> {
    for (subject, _) in auth_core::backoff::subjects(login, address) {
        console.failures.clear(&subject).await?;
    }
    Ok(())
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

/// The one answer to a wrong password and to a sign-in name nobody has.
fn wrong_password() -> ApiError {
    ApiError::new(Code::Unauthorized, "wrong sign-in name or password")
}

/// Checks a member's password (as slowly for an unknown name as for a wrong password); the
/// member when it matches. A right password does not clear the name's failures: the caller does
/// once the whole sign-in holds ([`check_second_factor`]), so wrong second-factor codes keep
/// adding up however often the password is right.
pub(crate) async fn check_password(
    req: &HttpRequest,
    console: &Console,
    login: &str,
    password: String,
) -> Result<auth_core::member::Member, ApiError> {
    let address = address_of(req);
    failures_wait(console, login, &address).await?;
    let member = console.members.find_member(login).await?;
    let stored = member.as_ref().map(|m| m.password_hash.clone());
    let matches = console.passwords.verify(password, stored).await?;
    match member {
        Some(member) if matches => Ok(member),
        _ => {
            count_failure(console, login, &address).await?;
            Err(wrong_password())
        }
    }
}

/// What a member sends besides their password when their second factor is on.
#[derive(Default)]
pub(super) struct SecondProof {
    pub code: Option<String>,
    pub recovery_code: Option<String>,
}

fn wrong_code() -> ApiError {
    ApiError::new(
        Code::Unauthorized,
        "wrong code: type the code the app shows now (each works once), or a recovery code",
    )
}

/// After a right password: a member whose second factor is on proves it with a current code
/// of their app (never one used before) or an unused recovery code. A wrong one counts as a
/// failed sign-in of the name (the same growing waits as wrong passwords).
pub(super) async fn check_second_factor(
    req: &HttpRequest,
    console: &Console,
    member: &auth_core::member::Member,
    proof: SecondProof,
) -> Result<(), ApiError> {
    let address = address_of(req);
    let Some(factor) = console
        .members
        .second_factor(&member.id)
        .await?
        .filter(|f| f.confirmed_at.is_some())
    else {
        clear_failures(console, &member.login, &address).await?;
        return Ok(());
    };
    let accepted = match (proof.code, proof.recovery_code) {
        (Some(code), None) => {
            let key = console.seal.as_ref().ok_or_else(|| {
                ApiError::new(
                    Code::Unavailable,
                    "this service cannot check second factors now (SECOND_FACTOR_KEY is not set); use a recovery code or ask its operator",
                )
            })?;
            let secret = crate::account::second_factor::open(key, &member.id, &factor)?;
            let now = crate::account::second_factor::now_unix();
            match auth_core::second_factor::check_code(&secret, &code, now, factor.last_step) {
                Some(step) => console.members.use_step(&member.id, step).await?,
                None => false,
            }
        }
        (None, Some(recovery)) => {
            let hash = auth_core::second_factor::recovery_hash(&recovery);
            let audit =
                crate::audit::signed_out(req, member.id.clone(), member.login.clone());
            console
                .members
                .use_recovery_code(&member.id, &hash, &audit)
                .await?
        }
        (None, None) => {
            return Err(ApiError::new(
                Code::SecondFactorRequired,
                "your second factor is on: send the code your authenticator app shows (`code`) or a recovery code (`recoveryCode`)",
            ))
        }
        (Some(_), Some(_)) => {
            return Err(ApiError::invalid_request(
                "send `code` or `recoveryCode`, not both",
            ))
        }
    };
    if accepted {
        clear_failures(console, &member.login, &address).await?;
        Ok(())
    } else {
        count_failure(console, &member.login, &address).await?;
        Err(wrong_code())
    }
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
