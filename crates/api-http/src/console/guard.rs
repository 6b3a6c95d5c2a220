//! The `/api` scope of the console: each request acts as its session's key or member
//! ([`stow_http::auth::ActingAs`]), through the public routes and their policy code.
//! State changes need the session's CSRF token and a same-origin request.

use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::{Method, StatusCode};
use actix_web::middleware::Next;
use actix_web::{web, HttpMessage, HttpRequest};
use auth_core::console_session::{csrf_matches, needs_touch, token_hash, Session};
use stow_http::auth::ActingAs;
use stow_http::{ApiError, Code};

use super::Console;
use crate::presigned::ApiOrigin;

/// The session cookie (HttpOnly, SameSite=Strict; Secure behind HTTPS).
pub const COOKIE: &str = "stowage_console";
/// The header that carries the session's CSRF token on every state change.
pub const CSRF_HEADER: &str = "x-csrf-token";

fn console(req: &HttpRequest) -> Result<web::Data<Console>, ApiError> {
    req.app_data::<web::Data<Console>>()
        .cloned()
        .ok_or_else(|| ApiError::internal("console not configured"))
}

/// The live session of this request's cookie: 401 without one, or once it has expired (an expired
/// one is ended on the way).
pub async fn resume(req: &HttpRequest) -> Result<(web::Data<Console>, Session), ApiError> {
    let console = console(req)?;
    let not_signed_in = || {
        ApiError::new(
            Code::Unauthorized,
            "not signed in to the console; sign in with your password or an API key",
        )
    };
    let token = req.cookie(COOKIE).ok_or_else(not_signed_in)?;
    let id_hash = token_hash(token.value());
    let session = console
        .sessions
        .get(&id_hash)
        .await?
        .ok_or_else(not_signed_in)?;
    let now = chrono::Utc::now();
    if !console.lifetimes.alive(&session, now) {
        console.sessions.end(&id_hash).await?;
        return Err(ApiError::new(
            Code::Unauthorized,
            "the console session has expired; sign in again",
        ));
    }
    if needs_touch(&session, now) {
        console.sessions.touch(&id_hash, now).await?;
    }
    Ok((console, session))
}

fn changes_state(method: &Method) -> bool {
    !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

/// Refuses a request another site made the browser send: `Sec-Fetch-Site: cross-site`, or an
/// `Origin` whose host is not this request's host.
pub fn same_origin(req: &HttpRequest) -> Result<(), ApiError> {
    let refused = || {
        ApiError::new(
            Code::Forbidden,
            "cross-site request refused: console changes must come from the console's own pages",
        )
    };
    let header = |name: &str| req.headers().get(name).and_then(|v| v.to_str().ok());
    if header("sec-fetch-site").is_some_and(|s| s == "cross-site" || s == "same-site") {
        return Err(refused());
    }
    if let Some(origin) = header("origin") {
        let host = header("host").unwrap_or_default();
        let origin_host = url::Url::parse(origin).ok().and_then(|u| {
            u.host_str().map(|h| match u.port() {
                Some(p) => format!("{h}:{p}"),
                None => h.to_owned(),
            })
        });
        if origin_host.as_deref() != Some(host) {
            return Err(refused());
        }
    }
    Ok(())
}

/// A state change needs the session's CSRF token in `X-CSRF-Token` and a same-origin request.
pub fn check_state_change(req: &HttpRequest, session: &Session) -> Result<(), ApiError> {
    if !changes_state(req.method()) {
        return Ok(());
    }
    same_origin(req)?;
    let presented = req
        .headers()
        .get(CSRF_HEADER)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if !csrf_matches(&session.csrf_token, presented) {
        return Err(ApiError::new(
            Code::Forbidden,
            "missing or wrong X-CSRF-Token: reload the console page and try again",
        ));
    }
    Ok(())
}

/// Middleware of the console's `/api` scope.
pub async fn act_as_session_key(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<EitherBody<impl MessageBody>>, actix_web::Error> {
    let checked = match resume(req.request()).await {
        Ok((console, session)) => {
            check_state_change(req.request(), &session).map(|()| (console, session))
        }
        Err(e) => Err(e),
    };
    let (console, session) = match checked {
        Ok(found) => found,
        Err(e) => return Ok(req.error_response(e).map_into_right_body()),
    };
    req.extensions_mut()
        .insert(ActingAs(session.subject.clone()));
    // the Host the browser used (not forwarding headers, which anyone can send)
    let host = req
        .headers()
        .get(actix_web::http::header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let hostname = url::Url::parse(&format!("http://{host}/"))
        .ok()
        .and_then(|u| u.host_str().map(str::to_owned))
        .unwrap_or_else(|| "127.0.0.1".into());
    req.extensions_mut()
        .insert(ApiOrigin(format!("http://{hostname}:{}", console.api_port)));
    let res = next.call(req).await?;
    if res.status() == StatusCode::UNAUTHORIZED {
        // the key is disabled, expired or deleted, or the member left: the session ends with it
        if let Err(e) = console.sessions.end(&session.id_hash).await {
            tracing::warn!(error = %e, "ending the session of an unusable key failed");
        }
    }
    Ok(res.map_into_left_body())
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::test::TestRequest;

    fn allowed(host: &str, headers: &[(&str, &str)]) -> bool {
        let mut req = TestRequest::post().insert_header(("host", host));
        for h in headers {
            req = req.insert_header(*h);
        }
        same_origin(&req.to_http_request()).is_ok()
    }

    #[test]
    fn only_the_consoles_own_origin_may_change_state() {
        let host = "console.example.com";
        assert!(allowed(host, &[]), "no Origin: a same-origin form or curl");
        assert!(allowed(host, &[("origin", "https://console.example.com")]));
        assert!(allowed(host, &[("sec-fetch-site", "same-origin")]));
        assert!(
            allowed(host, &[("sec-fetch-site", "none")]),
            "typed by the user"
        );
        for refused in [
            "https://evil.example",
            "https://console.example.com.evil.example",
            "https://evil.example/console.example.com",
            "https://console.example.com:444",
            "null",
            "",
            "console.example.com",
        ] {
            assert!(!allowed(host, &[("origin", refused)]), "{refused:?}");
        }
        assert!(!allowed(host, &[("sec-fetch-site", "cross-site")]));
        assert!(
            !allowed(host, &[("sec-fetch-site", "same-site")]),
            "a sibling subdomain"
        );
        // ports are part of the origin
        assert!(allowed(
            "127.0.0.1:8082",
            &[("origin", "http://127.0.0.1:8082")]
        ));
        assert!(!allowed(
            "127.0.0.1:8082",
            &[("origin", "http://127.0.0.1:8080")]
        ));
        assert!(allowed("[::1]:8082", &[("origin", "http://[::1]:8082")]));
    }

    #[test]
    fn safe_methods_change_nothing_and_need_no_token() {
        assert!(!changes_state(&Method::GET));
        assert!(!changes_state(&Method::HEAD));
        assert!(!changes_state(&Method::OPTIONS));
        for m in [Method::POST, Method::PUT, Method::DELETE, Method::PATCH] {
            assert!(changes_state(&m), "{m}");
        }
    }
}
