//! `/session`: sign in with an API key (exchanged for a session cookie), the current session,
//! sign out. The key is read once, from the JSON body, and never stored or echoed.

use actix_web::cookie::{Cookie, SameSite};
use actix_web::{web, HttpRequest, HttpResponse};
use auth_core::console_session::{new_token, token_hash, Session};
use serde::{Deserialize, Serialize};
use stow_http::rate_limit::retry_after_secs;
use stow_http::{ApiError, Authenticator, Code, Json};

use super::guard::{check_state_change, resume, same_origin, COOKIE};
use super::Console;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SignIn {
    key: String,
}

/// What the page needs of its session (the key itself is `/api/v1/whoami`).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfo {
    csrf_token: String,
    /// When the session ends whatever its use (`CONSOLE_SESSION_HOURS` after sign-in).
    expires_at: String,
}

fn info(console: &Console, s: &Session) -> SessionInfo {
    let absolute =
        chrono::Duration::from_std(console.lifetimes.absolute).unwrap_or(chrono::Duration::zero());
    SessionInfo {
        csrf_token: s.csrf_token.clone(),
        expires_at: (s.created_at + absolute).to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
    }
}

fn cookie(req: &HttpRequest, value: String) -> Cookie<'static> {
    Cookie::build(COOKIE, value)
        .http_only(true)
        .same_site(SameSite::Strict)
        .secure(req.connection_info().scheme() == "https")
        .path("/")
        .finish()
}

fn no_store(mut res: HttpResponse) -> HttpResponse {
    res.headers_mut().insert(
        actix_web::http::header::CACHE_CONTROL,
        actix_web::http::header::HeaderValue::from_static("no-store"),
    );
    res
}

/// `POST /session {"key": "…"}`: a usable key of any type starts a session.
pub async fn sign_in(
    req: HttpRequest,
    authenticator: web::Data<Authenticator>,
    console: web::Data<Console>,
    body: Json<SignIn>,
) -> Result<HttpResponse, ApiError> {
    same_origin(&req)?;
    let trusted = req
        .app_data::<web::Data<crate::state::CdnState>>()
        .map(|s| s.config.trusted_proxies.clone())
        .unwrap_or_default();
    let address = stow_http::request::client_ip(&req, &trusted)
        .map_or_else(|| "unknown".to_owned(), |ip| ip.to_string());
    console
        .sign_ins
        .check(&format!("signin:{address}"))
        .await
        .map_err(|wait| {
            ApiError::new(
                Code::RateLimited,
                format!(
                    "too many sign-in attempts from this address; try again in {} s",
                    retry_after_secs(wait)
                ),
            )
            .with_retry_after(retry_after_secs(wait))
        })?;
    let ctx = authenticator.authenticate_secret(body.key.trim()).await?;
    // signing in again replaces this browser's session rather than leaving it behind
    if let Some(previous) = req.cookie(COOKIE) {
        console.sessions.end(&token_hash(previous.value())).await?;
    }
    authenticator.rate_limit(&ctx.key.id).await?;
    let token = new_token();
    let now = chrono::Utc::now();
    let session = Session {
        id_hash: token_hash(&token),
        key_id: ctx.key.id.clone(),
        key_hash: auth_core::secret::hash(body.key.trim()),
        csrf_token: new_token(),
        created_at: now,
        last_seen_at: now,
    };
    console.sessions.create(&session).await?;
    Ok(no_store(
        HttpResponse::Ok()
            .cookie(cookie(&req, token))
            .json(info(&console, &session)),
    ))
}

/// `GET /session`: the current session, or 401.
pub async fn current(req: HttpRequest) -> Result<HttpResponse, ApiError> {
    let (console, session) = resume(&req).await?;
    Ok(no_store(HttpResponse::Ok().json(info(&console, &session))))
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
