//! `/v1/members…`: an organization's members, their roles and the invitations that bring them
//! in (docs/api.md "Members"). Only a member whose role manages members (owners and admins) uses
//! these, through the console; API keys are refused, whatever their permissions. The rules of who
//! may give what are `auth_core::roles`.

pub mod grant_out;
pub mod invite;
pub mod list;
pub mod remove;
pub mod reset;
pub mod revoke;
pub mod second_factor;
pub mod update;

use auth_core::key::MemberAct;
use auth_core::member::{credential_reach, CredentialRefusal};
use auth_core::roles::{Capability, Refusal};
use stow_http::{ApiError, Auth, Code};

/// The member acting, when their role manages members.
fn manager(auth: &Auth) -> Result<&MemberAct, ApiError> {
    auth.require_capability(Capability::ManageMembers)?;
    auth.member
        .as_ref()
        .ok_or_else(|| auth_core::AuthError::MembersOnly.into())
}

/// Refuses a change to `target`'s credentials (password, second factor) unless the actor could
/// make it in every organization the person belongs to (`auth_core::member::check_credential_reach`:
/// a password or second factor is the person's, not this membership's), and records the refusal
/// as an attempt at `action`.
async fn credentials_within_reach(
    state: &crate::state::ApiState,
    req: &actix_web::HttpRequest,
    auth: &Auth,
    actor: &MemberAct,
    target: &auth_core::member::MemberContext,
    action: auth_core::audit::Action,
) -> Result<(), ApiError> {
    let reach = credential_reach(state.stores.members.as_ref(), &actor.id, &target.member.id);
    let refusal = match reach.await? {
        Ok(()) => return Ok(()),
        Err(CredentialRefusal::Beyond(r)) => refused(r),
        Err(other @ CredentialRefusal::OtherOrganization) => {
            ApiError::new(Code::Forbidden, other.to_string())
        }
    };
    let details = serde_json::json!({ "memberId": target.member.id });
    Err(crate::audit::refused(
        state,
        req,
        auth,
        action,
        &target.member.login,
        details,
        refusal,
    )
    .await)
}

fn refused(r: Refusal) -> ApiError {
    stow_ops::members::refusal(r).into()
}

/// What every members route may answer besides its own errors (OpenAPI).
#[derive(utoipa::IntoResponses)]
#[allow(dead_code)]
pub enum MemberRouteErrors {
    /// FORBIDDEN: an API key, a role that does not manage members, or a change beyond the
    /// caller's own role, servers or paths (the message says which).
    #[response(status = 403)]
    Forbidden(stow_http::error::ApiErrorBody),
}
