//! `/v1/account/…`: the signed-in member's own settings — their second factor (docs/api.md
//! "Second factor"). Members only, whatever their role; API keys are refused.

pub mod password;
pub mod second_factor;

use auth_core::key::MemberAct;
use auth_core::second_factor::SealKey;
use stow_http::{ApiError, Auth, Code};

use crate::state::ApiState;

/// The member acting (API keys have no account).
fn me(auth: &Auth) -> Result<&MemberAct, ApiError> {
    auth.member
        .as_ref()
        .ok_or_else(|| auth_core::AuthError::MembersOnly.into())
}

/// The operator's sealing key, or the answer that says it is missing.
pub(crate) fn seal_key(state: &ApiState) -> Result<&SealKey, ApiError> {
    state.config.second_factor_key.as_ref().ok_or_else(|| {
        ApiError::new(
            Code::Unavailable,
            "second factors are not set up on this service (its operator sets SECOND_FACTOR_KEY, docs/operations.md)",
        )
    })
}

/// What every account route may answer besides its own errors (OpenAPI).
#[derive(utoipa::IntoResponses)]
#[allow(dead_code)]
pub enum AccountRouteErrors {
    /// FORBIDDEN: an API key (only a member has an account).
    #[response(status = 403)]
    Forbidden(stow_http::error::ApiErrorBody),
    /// SERVICE_UNAVAILABLE: the service has no `SECOND_FACTOR_KEY`.
    #[response(status = 503)]
    Unavailable(stow_http::error::ApiErrorBody),
}
