//! An organization's members and invitations: who may invite, change or remove whom, with which
//! grant, and what is recorded. Members whose role manages members (owners and admins) and the operator invite;
//! nobody gives a role, server or path beyond their own (`auth_core::roles::check_grant`).

mod change;
mod grant;
mod invite;

pub use change::{current, ChangeGrant, Changed, Remove};
pub use grant::GrantRequest;
pub use invite::{Invite, Invited};

use auth_core::roles::Refusal;

use crate::OpError;

/// A role rule's refusal: leaving no owner is a conflict with the team's state, the rest is
/// forbidden to the caller.
pub fn refusal(r: Refusal) -> OpError {
    match r {
        Refusal::LastOwner => OpError::Conflict(r.to_string()),
        _ => OpError::Forbidden(r.to_string()),
    }
}

#[cfg(test)]
mod tests;
