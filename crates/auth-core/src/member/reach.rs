//! Who may change a person's password or second factor: the actor's reach over the person's
//! memberships.

use super::*;

/// Why someone may not change a person's password or second factor.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CredentialRefusal {
    /// Beyond the actor's reach in an organization they manage (for example an admin and an
    /// owner).
    #[error(transparent)]
    Beyond(crate::roles::Refusal),
    /// The person also belongs to an organization the actor does not manage, or manages with
    /// less reach than the person holds there.
    #[error(
        "this member also belongs to another organization that you do not manage; their password and second factor are theirs in every organization, so only they (on their Account page, or with a recovery code) or an operator (`stowctl member set-password`, `stowctl member reset-second-factor`) can change them"
    )]
    OtherOrganization,
}

/// Whether the person holding `actor` (their memberships) may change the credentials — password,
/// second factor, sessions everywhere — of the person holding `target`.
///
/// A password and a second factor belong to the person, not to one membership: whoever changes
/// them can sign in as that person in every organization they belong to. So the change is
/// allowed only to someone who could make it in **every** one of those organizations: for each
/// of the target's memberships the actor holds a membership in the same organization whose grant
/// reaches the target's there ([`crate::roles::check_grant`]: it manages members, and the
/// target's role, servers and paths lie within it). A person with no membership at all is
/// refused like one in another organization (nobody reaches them).
pub fn check_credential_reach(
    actor: &[Membership],
    target: &[Membership],
) -> Result<(), CredentialRefusal> {
    if target.is_empty() {
        return Err(CredentialRefusal::OtherOrganization);
    }
    // the organizations the actor manages are checked first, so a refusal in one of them (an
    // admin and an owner) names the role rather than "another organization"
    let mut other = false;
    for theirs in target {
        match actor.iter().find(|m| m.org_id == theirs.org_id) {
            Some(mine) => {
                crate::roles::check_grant(&mine.grant, Some(&theirs.grant), &theirs.grant)
                    .map_err(CredentialRefusal::Beyond)?
            }
            None => other = true,
        }
    }
    if other {
        return Err(CredentialRefusal::OtherOrganization);
    }
    Ok(())
}

/// [`check_credential_reach`] of the person `actor` over the person `target`, their
/// memberships as `store` has them now.
pub async fn credential_reach(
    store: &dyn MemberStore,
    actor: &MemberId,
    target: &MemberId,
) -> Result<Result<(), CredentialRefusal>, StoreError> {
    let mine = store.memberships(actor).await?;
    let theirs = store.memberships(target).await?;
    Ok(check_credential_reach(&mine, &theirs))
}
