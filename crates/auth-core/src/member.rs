//! Members: people with their own sign-in, who belong to organizations with a [`Grant`] each,
//! and the invitations that bring them in.
//!
//! An invitation's token is shown once (in its link) and stored as its SHA-256 hash; it works
//! once and only before it expires. Passwords are stored as Argon2id PHC strings
//! ([`crate::password`]), never in any other form.

use crate::audit::{Action, AuditEntry};
use serde_json::Value;
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use crate::audit::Audit;
use crate::ids::{InvitationId, MemberId, OrgId};
use crate::model::Org;
use crate::roles::Grant;
use crate::store::StoreError;

mod reach;
pub use reach::*;

/// How long an invitation link works unless its maker says otherwise.
pub const INVITATION_LIFETIME: Duration = Duration::from_secs(72 * 3600);
/// The longest an invitation link may work.
pub const MAX_INVITATION_LIFETIME: Duration = Duration::from_secs(30 * 24 * 3600);

/// Most characters of an invitation's note.
pub const MAX_NOTE_CHARS: usize = 200;

/// An invitation's note as stored: trimmed, `None` when empty; at most [`MAX_NOTE_CHARS`]
/// characters and no control characters (the team's list shows it). The same rule for every way
/// an invitation is made (the API, `stowctl`).
pub fn normalize_note(raw: Option<&str>) -> Result<Option<String>, BadNote> {
    let Some(note) = raw.map(str::trim).filter(|n| !n.is_empty()) else {
        return Ok(None);
    };
    if note.chars().count() > MAX_NOTE_CHARS || note.chars().any(char::is_control) {
        return Err(BadNote);
    }
    Ok(Some(note.to_owned()))
}

/// Why a note is refused; its text names the field as the API calls it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("`note` has at most 200 characters and no control characters")]
pub struct BadNote;

/// Most characters of a sign-in name.
pub const MAX_LOGIN_CHARS: usize = 254;

/// A sign-in name as stored and compared: trimmed and lowercase, 3 to 254 characters with no
/// whitespace or control character (an email address or a user name).
pub fn normalize_login(raw: &str) -> Result<String, BadLogin> {
    let login = raw.trim().to_lowercase();
    let chars = login.chars().count();
    if chars < 3 {
        return Err(BadLogin::TooShort);
    }
    if chars > MAX_LOGIN_CHARS {
        return Err(BadLogin::TooLong);
    }
    if login.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(BadLogin::Spaces);
    }
    Ok(login)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum BadLogin {
    #[error("`login` has fewer than 3 characters")]
    TooShort,
    #[error("`login` has more than 254 characters")]
    TooLong,
    #[error("`login` may not contain spaces or control characters")]
    Spaces,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    pub id: MemberId,
    /// Normalized ([`normalize_login`]).
    pub login: String,
    pub display_name: Option<String>,
    /// Argon2id PHC string.
    pub password_hash: String,
    pub created_at: DateTime<Utc>,
}

/// A member's place in one organization.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Membership {
    pub org_id: OrgId,
    pub member_id: MemberId,
    pub grant: Grant,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invitation {
    pub id: InvitationId,
    pub org_id: OrgId,
    /// What the invited person will hold.
    pub grant: Grant,
    /// Who made it (`None`: `stowctl`).
    pub invited_by: Option<MemberId>,
    /// SHA-256 of the token in the link ([`crate::console_session::token_hash`]).
    pub token_hash: [u8; 32],
    /// A note for the team's list (who it is for); not checked at acceptance.
    pub note: Option<String>,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    pub accepted_at: Option<DateTime<Utc>>,
}

impl Invitation {
    /// Whether the link still works at `now`.
    pub fn open_at(&self, now: DateTime<Utc>) -> bool {
        self.accepted_at.is_none() && now < self.expires_at
    }
}

/// How long a password reset link works.
pub const RESET_LIFETIME: Duration = Duration::from_secs(24 * 3600);

/// A password reset an owner or admin made for a member: its token (in the link) is stored only
/// as its SHA-256 and works once, before it expires.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PasswordReset {
    pub member_id: MemberId,
    /// Who made it (`None`: `stowctl`).
    pub made_by: Option<MemberId>,
    pub token_hash: [u8; 32],
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
}

/// Who accepts an invitation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Accepter {
    /// A new member with this normalized login, name and password hash.
    New {
        login: String,
        display_name: Option<String>,
        password_hash: String,
    },
    /// A member already (their password checked by the caller), joining one more organization.
    Existing(MemberId),
}

/// A member's organization with their grant in it (what a session may act as).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberContext {
    pub member: Member,
    pub membership: Membership,
    pub org: Org,
}

/// A member's second factor, as stored ([`crate::second_factor`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecondFactor {
    /// The TOTP secret, sealed with the operator's key for this member.
    pub sealed_secret: Vec<u8>,
    /// When the member proved their app has it; until then it is not asked for at sign-in.
    pub confirmed_at: Option<DateTime<Utc>>,
    /// The last TOTP step accepted (a code is never accepted twice).
    pub last_step: Option<u64>,
    /// Recovery codes not yet used.
    pub recovery_left: usize,
}

#[async_trait]
pub trait MemberStore: Send + Sync {
    async fn create_invitation(
        &self,
        invitation: &Invitation,
        audit: &Audit,
    ) -> Result<(), StoreError>;
    /// An organization's invitations not yet accepted (expired ones included), newest first.
    async fn pending_invitations(&self, org: &OrgId) -> Result<Vec<Invitation>, StoreError>;
    /// The invitation with this token hash, used or not (callers check [`Invitation::open_at`]).
    async fn find_invitation(
        &self,
        token_hash: &[u8; 32],
    ) -> Result<Option<Invitation>, StoreError>;
    /// Withdraws a pending invitation (`NotFound` when there is none with this id in `org`).
    async fn revoke_invitation(
        &self,
        org: &OrgId,
        id: &InvitationId,
        audit: &Audit,
    ) -> Result<(), StoreError>;
    /// Uses the invitation with this token hash, at most once and only while it is open at `now`:
    /// in one step, marks it accepted, makes the member (for [`Accepter::New`]) and gives them
    /// the invitation's grant. `None` when no open invitation has this hash. `Conflict` when a
    /// new member's login is taken or an existing member already belongs to the organization
    /// (and the invitation stays open).
    async fn accept_invitation(
        &self,
        token_hash: &[u8; 32],
        accepter: &Accepter,
        now: DateTime<Utc>,
        audit: &Audit,
    ) -> Result<Option<(Member, Membership)>, StoreError>;

    /// Stores a reset made in `org` (its audit entry goes there); an earlier unused reset of the
    /// same member stops working.
    async fn create_reset(
        &self,
        reset: &PasswordReset,
        org: &OrgId,
        audit: &Audit,
    ) -> Result<(), StoreError>;
    /// Uses the reset with this token hash, once and only before it expires at `now`: in one step
    /// marks it used and sets the member's password. The member, or `None` when no open reset has
    /// this hash.
    async fn use_reset(
        &self,
        token_hash: &[u8; 32],
        password_hash: &str,
        now: DateTime<Utc>,
        audit: &Audit,
    ) -> Result<Option<MemberId>, StoreError>;
    /// The member an open reset (at `now`) is for, and who made it (`None`: an operator), without
    /// using it.
    async fn reset_member(
        &self,
        token_hash: &[u8; 32],
        now: DateTime<Utc>,
    ) -> Result<Option<(Member, Option<MemberId>)>, StoreError>;

    async fn get_member(&self, id: &MemberId) -> Result<Option<Member>, StoreError>;
    /// By normalized login.
    async fn find_member(&self, login: &str) -> Result<Option<Member>, StoreError>;
    /// Sets a member's password; an audit entry (`action`: set by an operator, or changed by
    /// the member) in each of their organizations.
    async fn set_password(
        &self,
        id: &MemberId,
        password_hash: &str,
        action: crate::audit::Action,
        audit: &Audit,
    ) -> Result<(), StoreError>;
    /// The member's organizations, by organization name.
    async fn memberships(&self, id: &MemberId) -> Result<Vec<Membership>, StoreError>;
    /// The member in `org` with their grant and the organization (`None` when not a member).
    async fn member_context(
        &self,
        id: &MemberId,
        org: &OrgId,
    ) -> Result<Option<MemberContext>, StoreError>;
    /// An organization's members with their grants, by login.
    async fn list_members(&self, org: &OrgId) -> Result<Vec<(Member, Membership)>, StoreError>;
    /// Replaces a member's grant. `NotFound` when not a member; `Conflict` when it would leave
    /// the organization without an owner (checked in the same step, so two owners demoting each
    /// other at once leave one).
    async fn set_grant(
        &self,
        org: &OrgId,
        id: &MemberId,
        grant: &Grant,
        audit: &Audit,
    ) -> Result<Membership, StoreError>;
    /// Takes a member out of an organization (their account stays). `NotFound` and `Conflict` as
    /// for [`MemberStore::set_grant`].
    async fn remove_member(
        &self,
        org: &OrgId,
        id: &MemberId,
        audit: &Audit,
    ) -> Result<(), StoreError>;

    /// The member's second factor, confirmed or not (`None`: none).
    async fn second_factor(&self, id: &MemberId) -> Result<Option<SecondFactor>, StoreError>;
    /// Starts setting up a second factor with this sealed secret, replacing an unconfirmed one.
    /// `Conflict` when the member has a confirmed one; `NotFound` for an unknown member.
    async fn begin_second_factor(&self, id: &MemberId, sealed: &[u8]) -> Result<(), StoreError>;
    /// Confirms the unconfirmed second factor (its code for `step` was right), keeps `step` as
    /// used and stores the recovery codes' hashes, replacing any; an audit entry in each of the
    /// member's organizations. `false` when there is no unconfirmed one.
    async fn confirm_second_factor(
        &self,
        id: &MemberId,
        step: u64,
        recovery: &[[u8; 32]],
        audit: &Audit,
    ) -> Result<bool, StoreError>;
    /// Takes `step` as used when it is after the last one used, in one step (two sign-ins with
    /// one code: one succeeds). `false` when it is not, or there is no confirmed factor.
    async fn use_step(&self, id: &MemberId, step: u64) -> Result<bool, StoreError>;
    /// Uses the recovery code with this hash, once; an audit entry in each organization.
    async fn use_recovery_code(
        &self,
        id: &MemberId,
        hash: &[u8; 32],
        audit: &Audit,
    ) -> Result<bool, StoreError>;
    /// Removes the second factor and its recovery codes; `action` (turned off by the member, or
    /// reset by someone else) in each organization's log. `false` when there was none.
    async fn remove_second_factor(
        &self,
        id: &MemberId,
        action: crate::audit::Action,
        audit: &Audit,
    ) -> Result<bool, StoreError>;
}

/// The conflict text when a member sets up a second factor while one is on.
pub const SECOND_FACTOR_ON: &str =
    "a second factor is on already; turn it off first to set up another";

/// The conflict text when a change would leave no owner.
pub const LAST_OWNER: &str = "an organization keeps at least one owner";

impl Audit {
    /// An entry about an invitation (its id as the target, what it grants, never its token).
    pub fn invitation(&self, action: Action, inv: &Invitation) -> AuditEntry {
        let mut details = crate::roles::grant_details(&inv.grant);
        details["note"] = serde_json::json!(inv.note);
        details["expiresAt"] = serde_json::json!(inv.expires_at);
        self.entry(&inv.org_id, action, inv.id.as_str(), details)
    }

    /// An entry about a member in `org` (their sign-in name as the target; `details`, an object,
    /// gains `memberId`).
    pub fn member(
        &self,
        org: &OrgId,
        action: Action,
        member: &Member,
        details: Value,
    ) -> AuditEntry {
        let mut details = match details {
            Value::Object(map) => Value::Object(map),
            _ => serde_json::json!({}),
        };
        details["memberId"] = serde_json::json!(member.id);
        self.entry(org, action, member.login.as_str(), details)
    }

    /// The entry of an accepted invitation: the new member acts.
    pub fn joined(
        &self,
        member: &Member,
        membership: &Membership,
        invitation: &crate::ids::InvitationId,
    ) -> AuditEntry {
        let actor = crate::audit::Actor::Member {
            id: member.id.clone(),
            login: member.login.clone(),
        };
        let mut details = crate::roles::grant_details(&membership.grant);
        details["invitationId"] = serde_json::json!(invitation);
        self.as_actor(actor)
            .member(&membership.org_id, Action::MemberJoin, member, details)
    }
}

#[cfg(test)]
mod note_tests {
    use super::*;

    #[test]
    fn a_note_is_trimmed_bounded_and_free_of_control_characters() {
        assert_eq!(normalize_note(None), Ok(None));
        assert_eq!(normalize_note(Some("   ")), Ok(None));
        assert_eq!(
            normalize_note(Some(" for Jay ")),
            Ok(Some("for Jay".into()))
        );
        let n = |k: usize| "é".repeat(k);
        assert_eq!(normalize_note(Some(&n(199))), Ok(Some(n(199))));
        assert_eq!(normalize_note(Some(&n(200))), Ok(Some(n(200))));
        assert_eq!(normalize_note(Some(&n(201))), Err(BadNote));
        assert_eq!(normalize_note(Some("bell\u{7}")), Err(BadNote));
        assert_eq!(normalize_note(Some("a\nb")), Err(BadNote));
        assert_eq!(
            BadNote.to_string(),
            format!("`note` has at most {MAX_NOTE_CHARS} characters and no control characters")
        );
    }
}

#[cfg(test)]
mod credential_tests {
    use super::*;
    use crate::roles::{Refusal, Role};
    use crate::server_scope::ServerScope;
    use crate::ServerId;

    fn ms(org: &str, who: &str, grant: Grant) -> Membership {
        let t = chrono::DateTime::UNIX_EPOCH;
        Membership {
            org_id: OrgId::from(org),
            member_id: MemberId::from(who),
            grant,
            created_at: t,
            updated_at: t,
        }
    }

    fn role(r: Role) -> Grant {
        Grant::everywhere(r)
    }

    fn on(r: Role, servers: &[&str]) -> Grant {
        Grant {
            servers: ServerScope::Only(servers.iter().map(|s| ServerId::from(*s)).collect()),
            ..Grant::everywhere(r)
        }
    }

    #[test]
    fn one_organization_follows_the_grant_rule() {
        use Role::*;
        for (actor, target, ok) in [
            (Owner, Owner, true),
            (Owner, Admin, true),
            (Owner, Viewer, true),
            (Admin, Admin, true),
            (Admin, Moderator, true),
            (Admin, Owner, false),
            (Moderator, Viewer, false),
            (Viewer, Viewer, false),
        ] {
            let got = check_credential_reach(
                &[ms("org_a", "mem_actor", role(actor))],
                &[ms("org_a", "mem_t", role(target))],
            );
            assert_eq!(got.is_ok(), ok, "{actor:?} on {target:?}: {got:?}");
            if !ok {
                assert!(matches!(got, Err(CredentialRefusal::Beyond(_))), "{got:?}");
            }
        }
    }

    #[test]
    fn a_person_in_another_organization_is_out_of_reach() {
        // the reported takeover: an admin of A on an owner of A and B
        let actor = [ms("org_a", "mem_actor", role(Role::Admin))];
        let target = [
            ms("org_a", "mem_t", role(Role::Viewer)),
            ms("org_b", "mem_t", role(Role::Owner)),
        ];
        assert_eq!(
            check_credential_reach(&actor, &target),
            Err(CredentialRefusal::OtherOrganization)
        );
        // even an owner of A, and even when the person is a viewer in B
        let actor = [ms("org_a", "mem_actor", role(Role::Owner))];
        let target = [
            ms("org_a", "mem_t", role(Role::Viewer)),
            ms("org_b", "mem_t", role(Role::Viewer)),
        ];
        assert_eq!(
            check_credential_reach(&actor, &target),
            Err(CredentialRefusal::OtherOrganization)
        );
    }

    #[test]
    fn reach_in_every_organization_allows_it() {
        let actor = [
            ms("org_a", "mem_actor", role(Role::Owner)),
            ms("org_b", "mem_actor", role(Role::Admin)),
            ms("org_c", "mem_actor", role(Role::Viewer)),
        ];
        let target = [
            ms("org_a", "mem_t", role(Role::Admin)),
            ms("org_b", "mem_t", role(Role::Moderator)),
        ];
        assert_eq!(check_credential_reach(&actor, &target), Ok(()));
    }

    #[test]
    fn less_reach_in_one_shared_organization_refuses() {
        // owner in A, but only an admin in B where the person is an owner
        let actor = [
            ms("org_a", "mem_actor", role(Role::Owner)),
            ms("org_b", "mem_actor", role(Role::Admin)),
        ];
        let target = [
            ms("org_a", "mem_t", role(Role::Viewer)),
            ms("org_b", "mem_t", role(Role::Owner)),
        ];
        assert_eq!(
            check_credential_reach(&actor, &target),
            Err(CredentialRefusal::Beyond(Refusal::OwnerOnly))
        );
        // a viewer in B manages nobody there
        let actor = [
            ms("org_a", "mem_actor", role(Role::Owner)),
            ms("org_b", "mem_actor", role(Role::Viewer)),
        ];
        let target = [
            ms("org_a", "mem_t", role(Role::Viewer)),
            ms("org_b", "mem_t", role(Role::Viewer)),
        ];
        assert_eq!(
            check_credential_reach(&actor, &target),
            Err(CredentialRefusal::Beyond(Refusal::CannotManageMembers))
        );
    }

    #[test]
    fn server_scope_counts_in_each_organization() {
        // an admin of one server of B does not reach a moderator of every server of B
        let actor = [
            ms("org_a", "mem_actor", role(Role::Owner)),
            ms("org_b", "mem_actor", on(Role::Admin, &["srv_1"])),
        ];
        let target = [
            ms("org_a", "mem_t", role(Role::Viewer)),
            ms("org_b", "mem_t", role(Role::Moderator)),
        ];
        assert_eq!(
            check_credential_reach(&actor, &target),
            Err(CredentialRefusal::Beyond(Refusal::ServersBeyondOwn))
        );
        let target = [
            ms("org_a", "mem_t", role(Role::Viewer)),
            ms("org_b", "mem_t", on(Role::Moderator, &["srv_1"])),
        ];
        assert_eq!(check_credential_reach(&actor, &target), Ok(()));
    }

    #[test]
    fn nobody_reaches_a_person_without_memberships() {
        let actor = [ms("org_a", "mem_actor", role(Role::Owner))];
        assert_eq!(
            check_credential_reach(&actor, &[]),
            Err(CredentialRefusal::OtherOrganization)
        );
    }
}
