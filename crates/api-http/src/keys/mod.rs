//! `/v1/keys…`: an organization's API keys, managed from the console by members whose role
//! manages keys (owners and admins). Nobody makes or touches a key that reaches beyond their own
//! permissions, servers or paths (`auth_core::roles::check_key`). Secrets are shown once, when a
//! key is made or rotated, and never stored.

pub mod create;
pub mod delete;
pub mod disable;
pub mod list;
pub mod rotate;

use auth_core::key::MemberAct;
use auth_core::roles::{check_key, Capability, KeyGrant};
use auth_core::{ApiKey, KeyId};
use stow_http::{ApiError, Auth, Code};

use crate::state::CdnState;

/// The member acting, when their role manages keys.
fn manager(auth: &Auth) -> Result<&MemberAct, ApiError> {
    auth.require_capability(Capability::ManageKeys)?;
    auth.member
        .as_ref()
        .ok_or_else(|| auth_core::AuthError::MembersOnly.into())
}

/// The organization's key `id`, when it lies within what `actor` may give (404 for another
/// organization's or an unknown key; 403 for one beyond the actor's reach).
/// A refusal is recorded in the audit log as an attempt at `action`.
async fn reachable_key(
    state: &CdnState,
    req: &actix_web::HttpRequest,
    auth: &Auth,
    actor: &MemberAct,
    id: &str,
    action: auth_core::audit::Action,
) -> Result<ApiKey, ApiError> {
    let key = state
        .stores
        .accounts
        .get_key(&KeyId::new(id))
        .await?
        .filter(|k| k.org_id == auth.org.id)
        .ok_or_else(|| {
            ApiError::new(
                Code::NotFound,
                format!("no key `{id}` in this organization"),
            )
        })?;
    if let Err(r) = check_key(&actor.grant, &KeyGrant::of(&key)) {
        let details = serde_json::json!({ "name": key.name });
        let error = ApiError::new(Code::Forbidden, r.to_string());
        return Err(crate::audit::refused(state, req, auth, action, id, details, error).await);
    }
    Ok(key)
}

/// A disabled or deleted key's console sessions end at once (its API calls stop within
/// `KEY_CACHE_SECONDS`).
async fn end_key_sessions(state: &CdnState, key: &KeyId) -> Result<u64, ApiError> {
    Ok(state.stores.console_sessions.end_for_key(key).await?)
}

/// What every keys route may answer besides its own errors (OpenAPI).
#[derive(utoipa::IntoResponses)]
#[allow(dead_code)]
pub enum KeyRouteErrors {
    /// FORBIDDEN: an API key, a role that does not manage keys, or a key beyond the caller's own
    /// permissions, servers or paths (the message says which).
    #[response(status = 403)]
    Forbidden(stow_http::error::CdnErrorBody),
}
