//! An organization's API keys: made, rotated, disabled, enabled and deleted by members whose role
//! manages keys (owners and admins) and by the operator. Nobody makes or touches a key that
//! reaches beyond their own permissions, servers or paths (`auth_core::roles::check_key`); such
//! attempts are refused and recorded. Secrets are shown once, when a key is made or rotated.

mod create;
mod rotate;
mod state;

pub use create::{CreateKey, Created, MAX_NAME_CHARS};
pub use rotate::{Rotate, Rotated};
pub use state::{Delete, Disable, Disabled, Enable};

use auth_core::audit::Action;
use auth_core::roles::{check_key, Capability, KeyGrant};
use auth_core::{ApiKey, KeyId};

use crate::{Ctx, OpError};

/// Key `id` as the caller may act on it: in their organization (another organization's key is
/// as unknown as a missing one) and, for a member, within what they may give. A refusal is
/// recorded as an attempt at `action`.
async fn reachable(ctx: &Ctx<'_>, id: &KeyId, action: Action) -> Result<ApiKey, OpError> {
    let actor = ctx.member_with(Capability::ManageKeys)?;
    let key = ctx
        .stores
        .accounts
        .get_key(id)
        .await?
        .filter(|k| ctx.acts_in(&k.org_id))
        .ok_or_else(|| match ctx.bound_org() {
            Some(_) => OpError::NotFound(format!("no key `{id}` in this organization")),
            None => OpError::NotFound(format!("unknown key {:?}", id.as_str())),
        })?;
    if let Some(actor) = actor {
        if let Err(r) = check_key(&actor.grant, &KeyGrant::of(&key)) {
            let details = serde_json::json!({ "name": key.name });
            let error = OpError::Forbidden(r.to_string());
            return Err(ctx
                .refused(&key.org_id, action, id.as_str(), details, error)
                .await);
        }
    }
    Ok(key)
}

#[cfg(test)]
mod tests;
