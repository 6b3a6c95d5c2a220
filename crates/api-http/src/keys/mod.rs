//! `/v1/keys…`: an organization's API keys, managed from the console by members whose role
//! manages keys (owners and admins). The rules (who may, reach, audit) are `stow_ops::keys`,
//! which `stowctl key` runs too; these handlers parse, run and render. Secrets are shown once,
//! when a key is made or rotated, and never stored.

pub mod create;
pub mod delete;
pub mod disable;
pub mod list;
pub mod rotate;

/// What every keys route may answer besides its own errors (OpenAPI).
#[derive(utoipa::IntoResponses)]
#[allow(dead_code)]
pub enum KeyRouteErrors {
    /// FORBIDDEN: an API key, a role that does not manage keys, or a key beyond the caller's own
    /// permissions, servers or paths (the message says which).
    #[response(status = 403)]
    Forbidden(stow_http::error::ApiErrorBody),
}
