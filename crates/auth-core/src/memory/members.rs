//! [`MemberStore`] of [`MemoryAccounts`]: members live beside the organizations they belong to.

use std::collections::HashMap;

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::{unknown, MemoryAccounts, State};
use crate::audit::{Action, Actor, Audit};
use crate::ids::{InvitationId, MemberId, OrgId};
use crate::member::{
    Accepter, Invitation, Member, MemberContext, MemberStore, Membership, PasswordReset,
    SecondFactor, LAST_OWNER, SECOND_FACTOR_ON,
};
use crate::roles::grant_details;
use crate::roles::{Grant, Role};
use crate::store::StoreError;

#[derive(Default)]
pub(super) struct Members {
    members: HashMap<MemberId, Member>,
    memberships: Vec<Membership>,
    invitations: Vec<Invitation>,
    /// Resets not yet used, with the time each was used (`None`: open).
    resets: Vec<(PasswordReset, Option<DateTime<Utc>>)>,
    /// Second factors by member, and their unused recovery codes' hashes.
    second_factors: HashMap<MemberId, (SecondFactor, Vec<[u8; 32]>)>,
}

impl Members {
    fn position(&self, org: &OrgId, id: &MemberId) -> Result<usize, StoreError> {
        self.memberships
            .iter()
            .position(|m| m.org_id == *org && m.member_id == *id)
            .ok_or_else(|| unknown("member", id))
    }

    /// Whether replacing the membership at `index` by `role` (or removing it) takes away the
    /// organization's last owner ([`crate::roles::leaves_no_owner`]).
    fn ends_last_owner(&self, org: &OrgId, index: usize, role: Option<Role>) -> bool {
        let owners = self
            .memberships
            .iter()
            .filter(|m| m.org_id == *org && m.grant.role == Role::Owner)
            .count();
        crate::roles::leaves_no_owner(self.memberships[index].grant.role, role, owners)
    }
}

/// One entry per organization `member` belongs to (a password is theirs in all of them).
fn in_every_org(
    st: &State,
    audit: &Audit,
    action: Action,
    member: &Member,
) -> Vec<crate::audit::AuditEntry> {
    st.members
        .memberships
        .iter()
        .filter(|m| m.member_id == member.id)
        .map(|m| audit.member(&m.org_id, action, member, serde_json::json!({})))
        .collect()
}

fn last_owner() -> StoreError {
    StoreError::Conflict(LAST_OWNER.into())
}

fn accept(
    st: &mut State,
    token_hash: &[u8; 32],
    accepter: &Accepter,
    now: DateTime<Utc>,
) -> Result<Option<(Member, Membership, Invitation)>, StoreError> {
    let m = &mut st.members;
    let Some(index) = m
        .invitations
        .iter()
        .position(|i| i.token_hash == *token_hash && i.open_at(now))
    else {
        return Ok(None);
    };
    let (org_id, grant) = (
        m.invitations[index].org_id.clone(),
        m.invitations[index].grant.clone(),
    );
    let member = match accepter {
        Accepter::New {
            login,
            display_name,
            password_hash,
        } => {
            if m.members.values().any(|x| x.login == *login) {
                return Err(StoreError::Conflict(format!(
                    "the login \"{login}\" is taken"
                )));
            }
            Member {
                id: MemberId::generate(),
                login: login.clone(),
                display_name: display_name.clone(),
                password_hash: password_hash.clone(),
                created_at: now,
            }
        }
        Accepter::Existing(id) => {
            let member = m
                .members
                .get(id)
                .cloned()
                .ok_or_else(|| unknown("member", id))?;
            if m.position(&org_id, id).is_ok() {
                return Err(StoreError::Conflict(
                    "you are a member of this organization already".into(),
                ));
            }
            member
        }
    };
    let membership = Membership {
        org_id,
        member_id: member.id.clone(),
        grant,
        created_at: now,
        updated_at: now,
    };
    m.invitations[index].accepted_at = Some(now);
    m.members.insert(member.id.clone(), member.clone());
    m.memberships.push(membership.clone());
    Ok(Some((member, membership, m.invitations[index].clone())))
}

#[async_trait]
impl MemberStore for MemoryAccounts {
    async fn create_invitation(
        &self,
        invitation: &Invitation,
        audit: &Audit,
    ) -> Result<(), StoreError> {
        let mut st = self.lock();
        if !st.orgs.contains_key(&invitation.org_id) {
            return Err(unknown("organization", &invitation.org_id));
        }
        st.members.invitations.push(invitation.clone());
        self.audit
            .append([audit.invitation(Action::MemberInvite, invitation)]);
        Ok(())
    }

    async fn pending_invitations(&self, org: &OrgId) -> Result<Vec<Invitation>, StoreError> {
        let st = self.lock();
        let mut found: Vec<Invitation> = st
            .members
            .invitations
            .iter()
            .filter(|i| i.org_id == *org && i.accepted_at.is_none())
            .cloned()
            .collect();
        found.sort_by(|a, b| {
            b.created_at
                .cmp(&a.created_at)
                .then_with(|| b.id.cmp(&a.id))
        });
        Ok(found)
    }

    async fn find_invitation(
        &self,
        token_hash: &[u8; 32],
    ) -> Result<Option<Invitation>, StoreError> {
        let st = self.lock();
        Ok(st
            .members
            .invitations
            .iter()
            .find(|i| i.token_hash == *token_hash)
            .cloned())
    }

    async fn revoke_invitation(
        &self,
        org: &OrgId,
        id: &InvitationId,
        audit: &Audit,
    ) -> Result<(), StoreError> {
        let mut st = self.lock();
        let invitations = &mut st.members.invitations;
        let index = invitations
            .iter()
            .position(|i| i.org_id == *org && i.id == *id && i.accepted_at.is_none())
            .ok_or_else(|| unknown("invitation", id))?;
        let withdrawn = invitations.remove(index);
        self.audit
            .append([audit.invitation(Action::InvitationWithdraw, &withdrawn)]);
        Ok(())
    }

    async fn accept_invitation(
        &self,
        token_hash: &[u8; 32],
        accepter: &Accepter,
        now: DateTime<Utc>,
        audit: &Audit,
    ) -> Result<Option<(Member, Membership)>, StoreError> {
        let mut st = self.lock();
        let Some((member, membership, invitation)) = accept(&mut st, token_hash, accepter, now)?
        else {
            return Ok(None);
        };
        self.audit
            .append([audit.joined(&member, &membership, &invitation.id)]);
        Ok(Some((member, membership)))
    }

    async fn create_reset(
        &self,
        reset: &PasswordReset,
        org: &OrgId,
        audit: &Audit,
    ) -> Result<(), StoreError> {
        let mut st = self.lock();
        let member = st
            .members
            .members
            .get(&reset.member_id)
            .cloned()
            .ok_or_else(|| unknown("member", &reset.member_id))?;
        let expires = serde_json::json!({ "expiresAt": reset.expires_at });
        self.audit
            .append([audit.member(org, Action::PasswordResetIssue, &member, expires)]);
        let now = reset.created_at;
        for (earlier, used) in &mut st.members.resets {
            if earlier.member_id == reset.member_id && used.is_none() {
                *used = Some(now);
            }
        }
        st.members.resets.push((reset.clone(), None));
        Ok(())
    }

    async fn use_reset(
        &self,
        token_hash: &[u8; 32],
        password_hash: &str,
        now: DateTime<Utc>,
        audit: &Audit,
    ) -> Result<Option<MemberId>, StoreError> {
        let mut st = self.lock();
        let Some((reset, used)) =
            st.members.resets.iter_mut().find(|(r, used)| {
                r.token_hash == *token_hash && used.is_none() && now < r.expires_at
            })
        else {
            return Ok(None);
        };
        *used = Some(now);
        let id = reset.member_id.clone();
        if let Some(member) = st.members.members.get_mut(&id) {
            password_hash.clone_into(&mut member.password_hash);
            let member = member.clone();
            let actor = Actor::Member {
                id: member.id.clone(),
                login: member.login.clone(),
            };
            let entries = in_every_org(&st, &audit.as_actor(actor), Action::PasswordReset, &member);
            self.audit.append(entries);
        }
        Ok(Some(id))
    }

    async fn reset_member(
        &self,
        token_hash: &[u8; 32],
        now: DateTime<Utc>,
    ) -> Result<Option<(Member, Option<MemberId>)>, StoreError> {
        let st = self.lock();
        Ok(st
            .members
            .resets
            .iter()
            .find(|(r, used)| r.token_hash == *token_hash && used.is_none() && now < r.expires_at)
            .and_then(|(r, _)| {
                let member = st.members.members.get(&r.member_id).cloned()?;
                Some((member, r.made_by.clone()))
            }))
    }

    async fn get_member(&self, id: &MemberId) -> Result<Option<Member>, StoreError> {
        Ok(self.lock().members.members.get(id).cloned())
    }

    async fn find_member(&self, login: &str) -> Result<Option<Member>, StoreError> {
        let st = self.lock();
        Ok(st
            .members
            .members
            .values()
            .find(|m| m.login == login)
            .cloned())
    }

    async fn set_password(
        &self,
        id: &MemberId,
        password_hash: &str,
        action: Action,
        audit: &Audit,
    ) -> Result<(), StoreError> {
        let mut st = self.lock();
        let member = st
            .members
            .members
            .get_mut(id)
            .ok_or_else(|| unknown("member", id))?;
        password_hash.clone_into(&mut member.password_hash);
        let member = member.clone();
        let entries = in_every_org(&st, audit, action, &member);
        self.audit.append(entries);
        Ok(())
    }

    async fn memberships(&self, id: &MemberId) -> Result<Vec<Membership>, StoreError> {
        let st = self.lock();
        let mut found: Vec<(String, Membership)> = st
            .members
            .memberships
            .iter()
            .filter(|m| m.member_id == *id)
            .map(|m| {
                let name = st
                    .orgs
                    .get(&m.org_id)
                    .map(|o| o.name.clone())
                    .unwrap_or_default();
                (name, m.clone())
            })
            .collect();
        found.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.org_id.cmp(&b.1.org_id)));
        Ok(found.into_iter().map(|(_, m)| m).collect())
    }

    async fn member_context(
        &self,
        id: &MemberId,
        org: &OrgId,
    ) -> Result<Option<MemberContext>, StoreError> {
        let st = self.lock();
        let found = st.members.position(org, id).ok().and_then(|i| {
            Some(MemberContext {
                member: st.members.members.get(id)?.clone(),
                membership: st.members.memberships[i].clone(),
                org: st.orgs.get(org)?.clone(),
            })
        });
        Ok(found)
    }

    async fn list_members(&self, org: &OrgId) -> Result<Vec<(Member, Membership)>, StoreError> {
        let st = self.lock();
        let mut found: Vec<(Member, Membership)> = st
            .members
            .memberships
            .iter()
            .filter(|m| m.org_id == *org)
            .filter_map(|m| Some((st.members.members.get(&m.member_id)?.clone(), m.clone())))
            .collect();
        found.sort_by(|a, b| a.0.login.cmp(&b.0.login));
        Ok(found)
    }

    async fn set_grant(
        &self,
        org: &OrgId,
        id: &MemberId,
        grant: &Grant,
        audit: &Audit,
    ) -> Result<Membership, StoreError> {
        let mut st = self.lock();
        let index = st.members.position(org, id)?;
        if st.members.ends_last_owner(org, index, Some(grant.role)) {
            return Err(last_owner());
        }
        let member = st.members.members.get(id).cloned();
        let membership = &mut st.members.memberships[index];
        let before = std::mem::replace(&mut membership.grant, grant.clone());
        membership.updated_at = Utc::now();
        let membership = membership.clone();
        if let Some(member) = member.filter(|_| before != *grant) {
            let details = serde_json::json!({
                "from": grant_details(&before),
                "to": grant_details(grant),
            });
            self.audit
                .append([audit.member(org, Action::MemberChange, &member, details)]);
        }
        Ok(membership)
    }

    async fn remove_member(
        &self,
        org: &OrgId,
        id: &MemberId,
        audit: &Audit,
    ) -> Result<(), StoreError> {
        let mut st = self.lock();
        let index = st.members.position(org, id)?;
        if st.members.ends_last_owner(org, index, None) {
            return Err(last_owner());
        }
        let removed = st.members.memberships.remove(index);
        if let Some(member) = st.members.members.get(id) {
            let details = serde_json::json!({ "grant": grant_details(&removed.grant) });
            self.audit
                .append([audit.member(org, Action::MemberRemove, member, details)]);
        }
        Ok(())
    }

    async fn second_factor(&self, id: &MemberId) -> Result<Option<SecondFactor>, StoreError> {
        let st = self.lock();
        Ok(st
            .members
            .second_factors
            .get(id)
            .map(|(f, codes)| SecondFactor {
                recovery_left: codes.len(),
                ..f.clone()
            }))
    }

    async fn begin_second_factor(&self, id: &MemberId, sealed: &[u8]) -> Result<(), StoreError> {
        let mut st = self.lock();
        if !st.members.members.contains_key(id) {
            return Err(unknown("member", id));
        }
        let factors = &mut st.members.second_factors;
        if factors
            .get(id)
            .is_some_and(|(f, _)| f.confirmed_at.is_some())
        {
            return Err(StoreError::Conflict(SECOND_FACTOR_ON.into()));
        }
        let pending = SecondFactor {
            sealed_secret: sealed.to_vec(),
            confirmed_at: None,
            last_step: None,
            recovery_left: 0,
        };
        factors.insert(id.clone(), (pending, Vec::new()));
        Ok(())
    }

    async fn confirm_second_factor(
        &self,
        id: &MemberId,
        step: u64,
        recovery: &[[u8; 32]],
        audit: &Audit,
    ) -> Result<bool, StoreError> {
        let mut st = self.lock();
        let Some((f, codes)) = st.members.second_factors.get_mut(id) else {
            return Ok(false);
        };
        if f.confirmed_at.is_some() {
            return Ok(false);
        }
        f.confirmed_at = Some(Utc::now());
        f.last_step = Some(step);
        *codes = recovery.to_vec();
        let member = st.members.members.get(id).cloned();
        if let Some(member) = member {
            let entries = in_every_org(&st, audit, Action::SecondFactorEnable, &member);
            self.audit.append(entries);
        }
        Ok(true)
    }

    async fn use_step(&self, id: &MemberId, step: u64) -> Result<bool, StoreError> {
        let mut st = self.lock();
        match st.members.second_factors.get_mut(id) {
            Some((f, _))
                if f.confirmed_at.is_some() && f.last_step.is_none_or(|last| last < step) =>
            {
                f.last_step = Some(step);
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    async fn use_recovery_code(
        &self,
        id: &MemberId,
        hash: &[u8; 32],
        audit: &Audit,
    ) -> Result<bool, StoreError> {
        let mut st = self.lock();
        let Some((f, codes)) = st.members.second_factors.get_mut(id) else {
            return Ok(false);
        };
        let Some(index) = codes
            .iter()
            .position(|c| c == hash)
            .filter(|_| f.confirmed_at.is_some())
        else {
            return Ok(false);
        };
        codes.remove(index);
        let member = st.members.members.get(id).cloned();
        if let Some(member) = member {
            let entries = in_every_org(&st, audit, Action::RecoveryCodeUse, &member);
            self.audit.append(entries);
        }
        Ok(true)
    }

    async fn remove_second_factor(
        &self,
        id: &MemberId,
        action: Action,
        audit: &Audit,
    ) -> Result<bool, StoreError> {
        let mut st = self.lock();
        let Some((removed, _)) = st.members.second_factors.remove(id) else {
            return Ok(false);
        };
        // an unconfirmed one was never on: nothing to record
        let member = st.members.members.get(id).cloned();
        if let Some(member) = member.filter(|_| removed.confirmed_at.is_some()) {
            let entries = in_every_org(&st, audit, action, &member);
            self.audit.append(entries);
        }
        Ok(true)
    }
}
