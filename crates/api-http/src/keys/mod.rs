//! `/v1/keys…`: an organization's API keys, managed from the console by members whose role
//! manages keys (owners and admins). The rules (who may, reach, audit) are `stow_ops::keys`,
//! which `stowctl key` runs too; these handlers parse, run and render. Secrets are shown once,
//! when a key is made or rotated, and never stored.

pub mod create;
pub mod delete;
pub mod disable;
pub mod list;
pub mod rotate;

use auth_core::key::MemberAct;
use auth_core::roles::Capability;
use stow_http::{ApiError, Auth};

/// The member acting, when their role manages keys.
fn manager(auth: &Auth) -> Result<&MemberAct, ApiError> {
    auth.require_capability(Capability::ManageKeys)?;
    auth.member
        .as_ref()
        .ok_or_else(|| auth_core::AuthError::MembersOnly.into())
}

/// What every keys route may answer besides its own errors (OpenAPI).
#[derive(utoipa::IntoResponses)]
#[allow(dead_code)]
pub enum KeyRouteErrors {
    /// FORBIDDEN: an API key, a role that does not manage keys, or a key beyond the caller's own
    /// permissions, servers or paths (the message says which).
    #[response(status = 403)]
    Forbidden(stow_http::error::ApiErrorBody),
}
