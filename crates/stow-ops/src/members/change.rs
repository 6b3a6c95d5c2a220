//! [`ChangeGrant`] and [`Remove`]: a member's role, servers or paths changed, or the member taken
//! out of the organization. Nobody changes or removes a member beyond their own reach, and the
//! last owner stays; refusals are recorded. The member's console sessions in the organization
//! end with the change (the front end also forgets what it caches of them).

use auth_core::audit::Action;
use auth_core::member::{MemberContext, Membership};
use auth_core::roles::{check_grant, check_removal, Capability, Grant, Role};
use auth_core::{MemberId, OrgId, Server};

use super::{refusal, GrantRequest};
use crate::{Ctx, OpError};

/// The grant the caller acts with: a member's own, the operator's as an owner's everywhere (the
/// last-owner rule holds for them too).
fn acting_grant(ctx: &Ctx<'_>) -> Result<Grant, OpError> {
    Ok(ctx
        .member_with(Capability::ManageMembers)?
        .map_or_else(|| Grant::everywhere(Role::Owner), |a| a.grant.clone()))
}

/// Member `id` in `org` as the caller may see them (404 for one of another organization).
pub async fn current(ctx: &Ctx<'_>, org: &OrgId, id: &MemberId) -> Result<MemberContext, OpError> {
    let found = if ctx.acts_in(org) {
        ctx.stores.members.member_context(id, org).await?
    } else {
        None
    };
    found.ok_or_else(|| OpError::NotFound(format!("no member `{id}` in this organization")))
}

pub struct ChangeGrant {
    pub org: OrgId,
    pub member: MemberId,
    pub grant: GrantRequest,
}

pub struct Changed {
    pub before: MemberContext,
    pub membership: Membership,
    /// Console sessions that ended (none when the grant is the one they had).
    pub sessions_ended: u64,
    /// Whether the grant is another than before (the front end forgets its cached context).
    pub changed: bool,
    pub servers: Vec<Server>,
}

impl ChangeGrant {
    pub async fn run(self, ctx: &Ctx<'_>) -> Result<Changed, OpError> {
        let actor = acting_grant(ctx)?;
        let servers = ctx.stores.accounts.list_servers(&self.org).await?;
        let grant = self.grant.resolve(&servers)?;
        let before = current(ctx, &self.org, &self.member).await?;
        if let Err(r) = check_grant(&actor, Some(&before.membership.grant), &grant) {
            let details = serde_json::json!({
                "memberId": self.member,
                "from": auth_core::roles::grant_details(&before.membership.grant),
                "to": auth_core::roles::grant_details(&grant),
            });
            let login = before.member.login.clone();
            return Err(ctx
                .refused(&self.org, Action::MemberChange, &login, details, refusal(r))
                .await);
        }
        let membership = ctx
            .stores
            .members
            .set_grant(&self.org, &self.member, &grant, &ctx.audit)
            .await?;
        let changed = before.membership.grant != grant;
        let sessions_ended = if changed {
            end_sessions(ctx, &self.org, &self.member).await?
        } else {
            0
        };
        Ok(Changed {
            before,
            membership,
            sessions_ended,
            changed,
            servers,
        })
    }
}

async fn end_sessions(ctx: &Ctx<'_>, org: &OrgId, id: &MemberId) -> Result<u64, OpError> {
    Ok(ctx
        .stores
        .console_sessions
        .end_for_member(id, Some(org))
        .await?)
}

pub struct Remove {
    pub org: OrgId,
    pub member: MemberId,
}

impl Remove {
    /// The console sessions that ended with the membership.
    pub async fn run(self, ctx: &Ctx<'_>) -> Result<u64, OpError> {
        let actor = acting_grant(ctx)?;
        let target = current(ctx, &self.org, &self.member).await?;
        let owners = ctx
            .stores
            .members
            .list_members(&self.org)
            .await?
            .iter()
            .filter(|(_, m)| m.grant.role == Role::Owner)
            .count();
        if let Err(r) = check_removal(&actor, &target.membership.grant, owners) {
            let details = serde_json::json!({ "memberId": self.member });
            let login = target.member.login.clone();
            return Err(ctx
                .refused(&self.org, Action::MemberRemove, &login, details, refusal(r))
                .await);
        }
        ctx.stores
            .members
            .remove_member(&self.org, &self.member, &ctx.audit)
            .await?;
        end_sessions(ctx, &self.org, &self.member).await
    }
}
