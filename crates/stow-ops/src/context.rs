//! [`Ctx`]: what an operation runs with — the stores, who is calling, how the audit log names
//! them, and the time.

use auth_core::audit::{Action, Audit};
use auth_core::key::MemberAct;
use auth_core::roles::Capability;
use auth_core::{AuthContext, AuthError, OrgId, PathScope, Permission};
use chrono::{DateTime, Utc};

use crate::{OpError, Stores};

/// Who runs an operation.
#[derive(Clone, Copy)]
pub enum Caller<'a> {
    /// A member or key, authenticated by the API host (or the console acting for them): bound
    /// to their organization and limited by their role, servers and paths.
    Api(&'a AuthContext),
    /// The person running `stowctl` or a job on the operator's behalf: every organization, no
    /// limits (they hold the database).
    Operator,
}

pub struct Ctx<'a> {
    pub stores: &'a Stores,
    pub caller: Caller<'a>,
    /// The caller as the audit log names them, with where the request came from.
    pub audit: Audit,
    pub now: DateTime<Utc>,
}

impl<'a> Ctx<'a> {
    pub fn new(stores: &'a Stores, caller: Caller<'a>, audit: Audit) -> Self {
        Self {
            stores,
            caller,
            audit,
            now: Utc::now(),
        }
    }

    /// The organization the caller is bound to (`None`: the operator, bound to none).
    pub fn bound_org(&self) -> Option<&OrgId> {
        match self.caller {
            Caller::Api(auth) => Some(&auth.org.id),
            Caller::Operator => None,
        }
    }

    /// The servers whose logs the caller reads (the operator: every server).
    pub fn log_scope(&self) -> auth_core::ServerScope {
        match self.caller {
            Caller::Api(auth) => auth.log_scope(),
            Caller::Operator => auth_core::ServerScope::All,
        }
    }

    /// Whether the caller may act in `org`: the operator anywhere, anyone else in their own.
    pub fn acts_in(&self, org: &OrgId) -> bool {
        self.bound_org().is_none_or(|own| own == org)
    }

    /// [`Ctx::acts_in`], or the refusal: another organization does not exist for the caller.
    pub fn within(&self, org: &OrgId) -> Result<(), OpError> {
        match self.acts_in(org) {
            true => Ok(()),
            false => Err(OpError::NotFound(format!("no organization `{org}`"))),
        }
    }

    /// The member acting, when their role has `capability` (`None`: the operator, who has every
    /// capability). API keys are refused: these are a member's decisions.
    pub fn member_with(&self, capability: Capability) -> Result<Option<&'a MemberAct>, OpError> {
        match self.caller {
            Caller::Operator => Ok(None),
            Caller::Api(auth) => {
                auth.require_capability(capability)?;
                auth.member
                    .as_ref()
                    .map(Some)
                    .ok_or(OpError::Auth(AuthError::MembersOnly))
            }
        }
    }

    /// Refuses a caller without permission `p` (the operator has every permission).
    pub fn require(&self, p: Permission) -> Result<(), OpError> {
        match self.caller {
            Caller::Api(auth) => Ok(auth.require(p)?),
            Caller::Operator => Ok(()),
        }
    }

    /// The object paths the caller may touch (the operator: every path).
    pub fn path_scope(&self) -> PathScope {
        match self.caller {
            Caller::Api(auth) => auth.key.path_scope(),
            Caller::Operator => PathScope::new(Vec::new(), Vec::new()),
        }
    }

    /// The refusal of a path outside the caller's: `` `part` is outside the paths this key may
    /// move; nothing was moved `` (a member's limits are their role's).
    pub fn outside_paths(&self, part: &str, verb: &str) -> OpError {
        let holder = match self.caller {
            Caller::Api(auth) => auth.holder(),
            Caller::Operator => "the operator".to_owned(),
        };
        OpError::PathNotAllowed(outside_paths_text(&holder, part, verb))
    }

    /// Records an attempt the role rules refused (refusals of member and key changes are in the
    /// audit log) and returns the refusal to answer with. A failure to record is logged, never
    /// put in place of the refusal.
    pub async fn refused(
        &self,
        org: &OrgId,
        action: Action,
        target: &str,
        details: serde_json::Value,
        error: OpError,
    ) -> OpError {
        let entry = self
            .audit
            .refused(org, action, target, details, error.to_string());
        if let Err(e) = self.stores.audit.record(&[entry]).await {
            tracing::warn!(error = %e, "recording a refused attempt in the audit log failed");
        }
        error
    }
}

/// The words of a refusal of a path outside the caller's (`holder`: `this key`, `your role
/// (admin)`) for a request that changed nothing: the operations' and the API host's own checks
/// (lifecycle rules) answer in the same words.
pub fn outside_paths_text(holder: &str, part: &str, verb: &str) -> String {
    format!("`{part}` is outside the paths {holder} may {verb}; nothing was {verb}d")
}
