//! [`Invite`]: an invitation link for a grant (its token is in the answer only).

use std::time::Duration;

use auth_core::audit::Action;
use auth_core::console_session::{new_token, token_hash};
use auth_core::member::{normalize_note, Invitation, INVITATION_LIFETIME, MAX_INVITATION_LIFETIME};
use auth_core::roles::{check_grant, Capability};
use auth_core::{InvitationId, OrgId, Server};

use super::{refusal, GrantRequest};
use crate::{Ctx, OpError};

#[derive(Debug, Clone)]
pub struct Invite {
    pub org: OrgId,
    pub grant: GrantRequest,
    /// Who it is for, shown in the team's list.
    pub note: Option<String>,
    /// How long the link works, in hours (default 72).
    pub expires_in_hours: Option<u64>,
}

pub struct Invited {
    pub invitation: Invitation,
    /// The link's secret, shown this once.
    pub token: String,
    /// The organization's servers (join codes to show the grant with).
    pub servers: Vec<Server>,
}

impl Invite {
    pub async fn run(self, ctx: &Ctx<'_>) -> Result<Invited, OpError> {
        let actor = ctx.member_with(Capability::ManageMembers)?;
        if !ctx.acts_in(&self.org) {
            return Err(OpError::Forbidden(
                "invitations are made in your own organization".into(),
            ));
        }
        let servers = ctx.stores.accounts.list_servers(&self.org).await?;
        let grant = self.grant.resolve(&servers)?;
        if let Some(actor) = actor {
            if let Err(r) = check_grant(&actor.grant, None, &grant) {
                let details = auth_core::roles::grant_details(&grant);
                return Err(ctx
                    .refused(&self.org, Action::MemberInvite, "", details, refusal(r))
                    .await);
            }
        }
        let note = normalize_note(self.note.as_deref()).map_err(|_| {
            OpError::invalid(
                "note",
                format!(
                    " has at most {} characters and no control characters",
                    auth_core::member::MAX_NOTE_CHARS
                ),
            )
        })?;
        let max_hours = MAX_INVITATION_LIFETIME.as_secs() / 3600;
        let hours = self
            .expires_in_hours
            .unwrap_or(INVITATION_LIFETIME.as_secs() / 3600);
        if !(1..=max_hours).contains(&hours) {
            return Err(OpError::invalid(
                "expiresInHours",
                format!(" is {hours}; use 1 to {max_hours}"),
            ));
        }
        let token = new_token();
        let invitation = Invitation {
            id: InvitationId::generate(),
            org_id: self.org,
            grant,
            invited_by: actor.map(|a| a.id.clone()),
            token_hash: token_hash(&token),
            note,
            created_at: ctx.now,
            expires_at: ctx.now + Duration::from_secs(hours * 3600),
            accepted_at: None,
        };
        ctx.stores
            .members
            .create_invitation(&invitation, &ctx.audit)
            .await?;
        Ok(Invited {
            invitation,
            token,
            servers,
        })
    }
}
