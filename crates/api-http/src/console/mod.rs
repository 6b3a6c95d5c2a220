//! The web console (docs/console.md): a second listener of `cdn-api`, on its own origin, so no
//! user-uploaded byte is ever served where a signed-in session lives.
//!
//! It serves the compiled-in assets ([`assets`]), the sign-in exchange ([`session`]) and, under
//! `/api`, the public API routes themselves: the same table, handlers and policy code, acting as
//! the session's key ([`guard`]). Nothing here is reachable by a route the API host lacks.

pub mod assets;
pub mod guard;
pub mod invitation;
pub mod passwords;
pub mod reset;
pub mod session;

use std::sync::Arc;

use actix_web::middleware::from_fn;
use actix_web::web;
use auth_core::console_session::{ConsoleSessionStore, Lifetimes};
use auth_core::member::MemberStore;

/// What the console's handlers share.
pub struct Console {
    pub sessions: Arc<dyn ConsoleSessionStore>,
    pub members: Arc<dyn MemberStore>,
    /// Password hashing and checking, off the async workers.
    pub passwords: passwords::PasswordWork,
    /// Failed password sign-ins per sign-in name, with growing waits
    /// (`auth_core::backoff`), across instances, whether or not a member has that name.
    pub failures: Arc<dyn auth_core::backoff::SignInFailureStore>,
    pub lifetimes: Lifetimes,
    /// The Content-Security-Policy of every console answer (previews come from the delivery
    /// origin, which is named in it).
    pub csp: String,
    /// The API listener's port: upload URLs made through the console name the API host
    /// (`API_BASE_URL` when set, else this port on the host the console was reached by).
    pub api_port: u16,
    /// Sign-in attempts per client address ([`SIGN_IN_QUOTA`]), across instances.
    pub sign_ins: stow_http::rate_limit::SharedLimiter,
    /// The operator's key that opens members' TOTP secrets (`SECOND_FACTOR_KEY`).
    pub seal: Option<auth_core::second_factor::SealKey>,
}

/// Sign-in attempts one address may make: 10 at once, then one every 6 seconds (10 a minute).
/// Enough for a person who mistypes, far too few to guess a 256-bit key, and a flood of wrong keys
/// from one address costs the database nothing past the first ten.
pub const SIGN_IN_QUOTA: auth_core::rate::Quota = auth_core::rate::Quota {
    per_second: 1.0 / 6.0,
    burst: 10,
};

impl Console {
    pub fn new(
        stores: &crate::state::Stores,
        lifetimes: Lifetimes,
        config: &stow_http::Config,
        api_port: u16,
    ) -> Self {
        Self {
            sessions: Arc::clone(&stores.console_sessions),
            members: Arc::clone(&stores.members),
            passwords: passwords::PasswordWork::new(config.password_workers),
            failures: Arc::clone(&stores.sign_in_failures),
            lifetimes,
            csp: content_security_policy(&config.public_base_url),
            api_port,
            sign_ins: stow_http::rate_limit::SharedLimiter::new(
                Arc::clone(&stores.rate_buckets),
                SIGN_IN_QUOTA,
            ),
            seal: config.second_factor_key.clone(),
        }
    }
}

/// Scripts, styles and API calls only from the console's own origin; images and media also from
/// the delivery origin (previews), and frames only from it (a sandboxed text preview: user bytes
/// stay on their own origin); the console itself is never framed; no plugins, no `<base>`, forms
/// only to itself.
pub fn content_security_policy(public_base_url: &str) -> String {
    let delivery = url::Url::parse(public_base_url)
        .ok()
        .map(|u| u.origin().ascii_serialization())
        .filter(|o| o != "null")
        .unwrap_or_default();
    format!(
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob: {delivery}; \
         media-src blob: {delivery}; frame-src {delivery}; connect-src 'self'; form-action 'self'; \
         base-uri 'none'; frame-ancestors 'none'"
    )
}

/// Headers of every console answer: the CSP, no framing, no sniffing, no referrer.
pub async fn security_headers(
    req: actix_web::dev::ServiceRequest,
    next: actix_web::middleware::Next<impl actix_web::body::MessageBody + 'static>,
) -> Result<actix_web::dev::ServiceResponse<impl actix_web::body::MessageBody>, actix_web::Error> {
    use actix_web::http::header::{self, HeaderName, HeaderValue};
    let csp = req
        .app_data::<web::Data<Console>>()
        .and_then(|c| HeaderValue::from_str(&c.csp).ok());
    let mut res = next.call(req).await?;
    let headers = res.headers_mut();
    if let Some(csp) = csp {
        headers.insert(header::CONTENT_SECURITY_POLICY, csp);
    }
    for (name, value) in [
        ("x-frame-options", "DENY"),
        ("x-content-type-options", "nosniff"),
        ("referrer-policy", "no-referrer"),
        ("cross-origin-opener-policy", "same-origin"),
        ("cross-origin-resource-policy", "same-origin"),
    ] {
        headers.insert(
            HeaderName::from_static(name),
            HeaderValue::from_static(value),
        );
    }
    Ok(res)
}

/// Every route of the console listener.
pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::resource("/session")
            .route(web::get().to(session::current))
            .route(web::post().to(session::sign_in))
            .route(web::delete().to(session::sign_out)),
    )
    .route(
        "/session/organization",
        web::post().to(session::switch_organization),
    )
    .route("/invitation/preview", web::post().to(invitation::preview))
    .route("/invitation/accept", web::post().to(invitation::accept))
    .route("/password-reset/preview", web::post().to(reset::preview))
    .route("/password-reset", web::post().to(reset::reset))
    .service(
        web::scope("/api")
            .wrap(from_fn(guard::act_as_session_key))
            .configure(crate::openapi::api_routes)
            // an unknown API path is the API's JSON 404, not the console page
            .default_service(web::to(stow_http::not_found)),
    )
    .route("/assets/{name}", web::get().to(assets::asset))
    .default_service(web::to(assets::page));
}
