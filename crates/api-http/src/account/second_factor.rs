//! The member's own second factor: its state, setting it up (secret and QR code, then a code
//! from the app confirms it and the recovery codes are shown once), and turning it off (with a
//! code, so a session left open is not enough).

use actix_web::{web, HttpRequest, HttpResponse};
use auth_core::audit::Action;
use auth_core::second_factor::{self as sf, check_code};
use serde::{Deserialize, Serialize};
use stow_http::{current_request_id, ApiError, Auth, Code};
use utoipa::ToSchema;

use super::{me, seal_key};
use crate::state::ApiState;

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SecondFactorStatus {
    pub success: bool,
    /// `off`, `pending` (set up but not confirmed: not asked for at sign-in) or `on`.
    pub state: String,
    /// Recovery codes not yet used (when `on`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recovery_codes_left: Option<usize>,
    pub request_id: String,
}

/// The member's second factor.
#[utoipa::path(
    get, path = "/v1/account/second-factor", tag = "account", security(("bearer" = [])),
    responses(
        (status = 200, description = "Its state", body = SecondFactorStatus),
        super::AccountRouteErrors,
        stow_http::error::KeyedRouteErrors,
    )
)]
pub async fn status(auth: Auth, state: web::Data<ApiState>) -> Result<HttpResponse, ApiError> {
    let member = me(&auth)?;
    let factor = state.stores.members.second_factor(&member.id).await?;
    let (st, left) = match &factor {
        None => ("off", None),
        Some(f) if f.confirmed_at.is_none() => ("pending", None),
        Some(f) => ("on", Some(f.recovery_left)),
    };
    Ok(HttpResponse::Ok().json(SecondFactorStatus {
        success: true,
        state: st.to_owned(),
        recovery_codes_left: left,
        request_id: current_request_id(),
    }))
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SecondFactorSetup {
    pub success: bool,
    /// The `otpauth://totp/…` URI an authenticator app takes (the QR code holds it).
    pub otpauth_uri: String,
    /// The secret in Base32, for typing into an app by hand.
    pub secret: String,
    /// The URI as a QR code, an SVG document.
    pub qr_svg: String,
    pub request_id: String,
}

/// Start setting up a second factor (TOTP).
#[utoipa::path(
    post, path = "/v1/account/second-factor", tag = "account", security(("bearer" = [])),
    responses(
        (status = 201, description = "A new secret, shown this once; confirm it with a code", body = SecondFactorSetup),
        (status = 409, description = "CONFLICT: a second factor is on already", body = stow_http::error::ApiErrorBody),
        super::AccountRouteErrors,
        stow_http::error::KeyedRouteErrors,
    )
)]
pub async fn begin(auth: Auth, state: web::Data<ApiState>) -> Result<HttpResponse, ApiError> {
    let member = me(&auth)?;
    let key = seal_key(&state)?;
    let secret = sf::new_secret();
    state
        .stores
        .members
        .begin_second_factor(&member.id, &key.seal(&member.id, &secret))
        .await?;
    let (uri, base32) = sf::enrolment(&secret, &member.login);
    let qr = qrcode::QrCode::new(uri.as_bytes()).map_err(ApiError::internal)?;
    let svg = qr
        .render::<qrcode::render::svg::Color<'_>>()
        .min_dimensions(200, 200)
        .build();
    Ok(HttpResponse::Created()
        .insert_header(("Cache-Control", "no-store"))
        .json(SecondFactorSetup {
            success: true,
            otpauth_uri: uri,
            secret: base32,
            qr_svg: svg,
            request_id: current_request_id(),
        }))
}

/// A code from the member's app.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CodeIn {
    /// The 6 digits the app shows now (spaces ignored).
    pub code: String,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecoveryCodes {
    pub success: bool,
    /// Ten codes, each good for one sign-in without the app; shown this once.
    pub recovery_codes: Vec<String>,
    pub request_id: String,
}

/// The member's TOTP secret, opened with the operator's key (account routes and sign-in).
pub(crate) fn open(
    key: &auth_core::second_factor::SealKey,
    member: &auth_core::MemberId,
    factor: &auth_core::member::SecondFactor,
) -> Result<Vec<u8>, ApiError> {
    key.open(member, &factor.sealed_secret)
        .map_err(|e| ApiError::new(Code::Unavailable, e.to_string()))
}

/// Now, in the Unix seconds TOTP steps count.
pub(crate) fn now_unix() -> u64 {
    chrono::Utc::now().timestamp().max(0) as u64
}

fn wrong_code() -> ApiError {
    ApiError::new(
        Code::InvalidRequest,
        "`code`: that is not the code the app shows now; check the device's clock, then try the next code",
    )
}

/// Confirm the second factor being set up with a code from the app.
#[utoipa::path(
    post, path = "/v1/account/second-factor/confirm", tag = "account", security(("bearer" = [])),
    request_body = CodeIn,
    responses(
        (status = 200, description = "On: sign-ins ask for a code from now; the recovery codes, shown this once", body = RecoveryCodes),
        (status = 400, description = "INVALID_REQUEST: a wrong code", body = stow_http::error::ApiErrorBody),
        (status = 409, description = "CONFLICT: nothing is being set up (start with POST /v1/account/second-factor)", body = stow_http::error::ApiErrorBody),
        super::AccountRouteErrors,
        stow_http::error::KeyedRouteErrors,
        stow_http::error::BodyRouteErrors,
        stow_http::error::JsonBodyErrors,
    )
)]
pub async fn confirm(
    auth: Auth,
    req: HttpRequest,
    body: stow_http::Json<CodeIn>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    let member = me(&auth)?;
    let key = seal_key(&state)?;
    let not_pending = || {
        ApiError::new(
            Code::Conflict,
            "no second factor is being set up; start with POST /v1/account/second-factor",
        )
    };
    let factor = state
        .stores
        .members
        .second_factor(&member.id)
        .await?
        .filter(|f| f.confirmed_at.is_none())
        .ok_or_else(not_pending)?;
    let secret = open(key, &member.id, &factor)?;
    let step = check_code(&secret, &body.code, now_unix(), None).ok_or_else(wrong_code)?;
    let codes = sf::new_recovery_codes();
    let hashes: Vec<[u8; 32]> = codes.iter().map(|c| sf::recovery_hash(c)).collect();
    let audit = crate::audit::of(&req, &auth);
    if !state
        .stores
        .members
        .confirm_second_factor(&member.id, step, &hashes, &audit)
        .await?
    {
        return Err(not_pending());
    }
    Ok(HttpResponse::Ok()
        .insert_header(("Cache-Control", "no-store"))
        .json(RecoveryCodes {
            success: true,
            recovery_codes: codes,
            request_id: current_request_id(),
        }))
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SecondFactorOff {
    pub success: bool,
    pub request_id: String,
}

/// Turn the member's second factor off (a current code proves it is them).
#[utoipa::path(
    post, path = "/v1/account/second-factor/disable", tag = "account", security(("bearer" = [])),
    request_body = CodeIn,
    responses(
        (status = 200, description = "Off: sign-ins ask for the password only", body = SecondFactorOff),
        (status = 400, description = "INVALID_REQUEST: a wrong code", body = stow_http::error::ApiErrorBody),
        (status = 409, description = "CONFLICT: no second factor is on", body = stow_http::error::ApiErrorBody),
        super::AccountRouteErrors,
        stow_http::error::KeyedRouteErrors,
        stow_http::error::BodyRouteErrors,
        stow_http::error::JsonBodyErrors,
    )
)]
pub async fn disable(
    auth: Auth,
    req: HttpRequest,
    body: stow_http::Json<CodeIn>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    let member = me(&auth)?;
    let key = seal_key(&state)?;
    let factor = state
        .stores
        .members
        .second_factor(&member.id)
        .await?
        .filter(|f| f.confirmed_at.is_some())
        .ok_or_else(|| ApiError::new(Code::Conflict, "no second factor is on"))?;
    let secret = open(key, &member.id, &factor)?;
    let step =
        check_code(&secret, &body.code, now_unix(), factor.last_step).ok_or_else(wrong_code)?;
    if !state.stores.members.use_step(&member.id, step).await? {
        return Err(wrong_code());
    }
    let audit = crate::audit::of(&req, &auth);
    state
        .stores
        .members
        .remove_second_factor(&member.id, Action::SecondFactorDisable, &audit)
        .await?;
    Ok(HttpResponse::Ok().json(SecondFactorOff {
        success: true,
        request_id: current_request_id(),
    }))
}
