//! The audit log: who changed what in an organization, when, from where, and through which door
//! (the API, the console or `stowctl`).
//!
//! A change that lives in a store is recorded by that store in the same step as the change (the
//! store methods that change something take an [`Audit`], the who and where of the request);
//! [`AuditStore::record`] is for what has no row of its own (cache purges) and for refused
//! attempts. Entries are never changed; they leave only when older than the retention
//! ([`retention_days`]).

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::error::StoreError;
use crate::ids::{KeyId, MemberId, OrgId};

/// Who acted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Actor {
    /// An API key (its name at the time).
    Key { id: KeyId, name: String },
    /// A member (their sign-in name at the time).
    Member { id: MemberId, login: String },
    /// Someone with a shell on the service's machine, through `stowctl` (the operating-system
    /// user, when known).
    Operator { user: String },
    /// The service itself, doing what a rule asked for (`task` names it: `lifecycle`).
    Service { task: String },
}

impl Actor {
    /// `key`, `member`, `operator` or `service`.
    pub fn kind(&self) -> &'static str {
        match self {
            Actor::Key { .. } => "key",
            Actor::Member { .. } => "member",
            Actor::Operator { .. } => "operator",
            Actor::Service { .. } => "service",
        }
    }

    /// The key's or member's id; the user name for an operator.
    pub fn id(&self) -> &str {
        match self {
            Actor::Key { id, .. } => id,
            Actor::Member { id, .. } => id,
            Actor::Operator { user } => user,
            Actor::Service { task } => task,
        }
    }

    /// What a person reads: the key's name, the member's sign-in name, the operator's user.
    pub fn label(&self) -> &str {
        match self {
            Actor::Key { name, .. } => name,
            Actor::Member { login, .. } => login,
            Actor::Operator { user } => user,
            Actor::Service { task } => task,
        }
    }

    /// Read back from the stored kind, id and label (`None` for a kind this build does not know).
    pub fn from_stored(kind: &str, id: String, label: String) -> Option<Self> {
        Some(match kind {
            "key" => Actor::Key {
                id: KeyId::new(id),
                name: label,
            },
            "member" => Actor::Member {
                id: MemberId::new(id),
                login: label,
            },
            "operator" => Actor::Operator { user: id },
            "service" => Actor::Service { task: id },
            _ => return None,
        })
    }
}

/// Through which door.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    Api,
    Console,
    Stowctl,
    /// The service's own background work (lifecycle expiry).
    Maintenance,
}

impl Via {
    pub fn as_str(self) -> &'static str {
        match self {
            Via::Api => "api",
            Via::Console => "console",
            Via::Stowctl => "stowctl",
            Via::Maintenance => "maintenance",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [Via::Api, Via::Console, Via::Stowctl, Via::Maintenance]
            .into_iter()
            .find(|v| v.as_str() == s)
    }
}

macro_rules! actions {
    ($($(#[$doc:meta])* $variant:ident = $name:literal,)*) => {
        /// What was done. The names are part of the API (docs/api.md, "Audit log").
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Action {
            $($(#[$doc])* $variant,)*
        }

        impl Action {
            /// Every action, in the order docs/api.md lists them.
            pub const ALL: &'static [Action] = &[$(Action::$variant,)*];

            pub fn as_str(self) -> &'static str {
                match self {
                    $(Action::$variant => $name,)*
                }
            }
        }
    };
}

actions! {
    /// An object deleted (one entry per object, also for bulk and folder deletes).
    ObjectDelete = "object.delete",
    /// An object given another key (one entry per object, also for folder moves).
    ObjectMove = "object.move",
    /// An object's cached copies purged (one entry per key asked for).
    ObjectPurge = "object.purge",
    /// An object deleted by a lifecycle rule (by the service's maintenance, one entry per object).
    ObjectExpire = "object.expire",
    /// An object marked to be kept whatever the lifecycle rules say, or unmarked.
    ObjectKeep = "object.keep",
    /// A lifecycle rule set (created, or its days changed); the target is its folder.
    LifecycleSet = "lifecycle.set",
    LifecycleRemove = "lifecycle.remove",
    PlaceholderSet = "placeholder.set",
    PlaceholderRemove = "placeholder.remove",
    KeyCreate = "key.create",
    KeyDisable = "key.disable",
    KeyEnable = "key.enable",
    KeyDelete = "key.delete",
    /// An invitation made (the first owner's by `stowctl member invite`).
    MemberInvite = "member.invite",
    InvitationWithdraw = "member.invitation_withdraw",
    /// An invitation accepted: the member joined.
    MemberJoin = "member.join",
    /// A member's role, servers or paths changed.
    MemberChange = "member.change",
    MemberRemove = "member.remove",
    /// A password reset link made for a member.
    PasswordResetIssue = "member.password_reset_issue",
    /// A member set a new password through a reset link.
    PasswordReset = "member.password_reset",
    /// An operator set a member's password (`stowctl member set-password`).
    PasswordSet = "member.password_set",
    /// A member changed their own password (their current one checked).
    PasswordChange = "member.password_change",
    /// A member turned on their second factor (one entry in each of their organizations).
    SecondFactorEnable = "member.second_factor_enable",
    /// A member turned off their own second factor.
    SecondFactorDisable = "member.second_factor_disable",
    /// An owner or admin (or `stowctl`) removed a member's second factor.
    SecondFactorReset = "member.second_factor_reset",
    /// A member signed in with a recovery code (it works once).
    RecoveryCodeUse = "member.recovery_code_use",
    /// A game server registered (`stowctl server register`); the target is its join code.
    ServerRegister = "server.register",
    /// A server's log ingestion turned on or off (`stowctl server activate`, `deactivate`).
    ServerLogs = "server.logs",
    /// The organization's plan changed.
    PlanChange = "org.plan_change",
    /// A saved log search made; the target is its id.
    SavedSearchCreate = "saved_search.create",
    /// A saved search renamed, or its servers or filters changed.
    SavedSearchChange = "saved_search.change",
    SavedSearchDelete = "saved_search.delete",
    /// An alert rule made; the target is its id.
    AlertRuleCreate = "alert_rule.create",
    /// An alert rule changed, muted or unmuted.
    AlertRuleChange = "alert_rule.change",
    AlertRuleDelete = "alert_rule.delete",
    /// An alert destination (Discord or generic webhook) made; the target is its id.
    DestinationCreate = "alert_destination.create",
    /// A destination renamed, its address changed or its signing secret rotated.
    DestinationChange = "alert_destination.change",
    DestinationDelete = "alert_destination.delete",
}

impl Action {
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|a| a.as_str() == s)
    }
}

/// Whether the change happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Done,
    /// Not done: the caller's role or key may not (the text is the refusal the caller got).
    Refused {
        reason: String,
    },
}

/// The who and where of one request, which a store turns into entries for what it changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Audit {
    pub actor: Actor,
    pub via: Via,
    /// The client's address, when the change came over the network.
    pub address: Option<String>,
    /// The request's id (`X-Request-Id`), which ties the entries of one request together.
    pub request_id: Option<String>,
}

impl Audit {
    /// `stowctl`, run by `user`.
    pub fn operator(user: impl Into<String>) -> Self {
        Self {
            actor: Actor::Operator { user: user.into() },
            via: Via::Stowctl,
            address: None,
            request_id: None,
        }
    }

    /// The service's maintenance doing `task` (`lifecycle`).
    pub fn service(task: impl Into<String>) -> Self {
        Self {
            actor: Actor::Service { task: task.into() },
            via: Via::Maintenance,
            address: None,
            request_id: None,
        }
    }

    /// The same request, acted by someone else (an invitation's accepter, once they exist).
    pub fn as_actor(&self, actor: Actor) -> Self {
        Self {
            actor,
            ..self.clone()
        }
    }

    /// An entry of a change that happened.
    pub fn entry(
        &self,
        org_id: &OrgId,
        action: Action,
        target: impl Into<String>,
        details: Value,
    ) -> AuditEntry {
        AuditEntry {
            org_id: org_id.clone(),
            actor: self.actor.clone(),
            via: self.via,
            address: self.address.clone(),
            request_id: self.request_id.clone(),
            action,
            target: target.into(),
            details,
            outcome: Outcome::Done,
        }
    }

    /// An entry of an attempt that was refused, with the refusal's text.
    pub fn refused(
        &self,
        org_id: &OrgId,
        action: Action,
        target: impl Into<String>,
        details: Value,
        reason: impl Into<String>,
    ) -> AuditEntry {
        AuditEntry {
            outcome: Outcome::Refused {
                reason: reason.into(),
            },
            ..self.entry(org_id, action, target, details)
        }
    }
}

/// One entry, as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditEntry {
    pub org_id: OrgId,
    pub actor: Actor,
    pub via: Via,
    pub address: Option<String>,
    pub request_id: Option<String>,
    pub action: Action,
    /// What was acted on: an object key, a key id, a member's sign-in name, a pattern, a plan.
    pub target: String,
    /// The request's meaningful fields (never a secret, a token or a password).
    pub details: Value,
    pub outcome: Outcome,
}

/// One entry, as stored: with its place in the log and its time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditEvent {
    /// Increasing in the order entries were written; the cursor of [`AuditQuery::before`].
    pub id: i64,
    pub at: DateTime<Utc>,
    pub entry: AuditEntry,
}

/// Entries wanted, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AuditQuery {
    /// Only this actor's (a key's or member's id, an operator's user name).
    pub actor: Option<String>,
    /// Only these actions (empty: all).
    pub actions: Vec<Action>,
    /// Only targets starting with this.
    pub target_prefix: Option<String>,
    /// Only refused attempts (`Some(true)`) or only changes made (`Some(false)`).
    pub refused: Option<bool>,
    /// At or after.
    pub since: Option<DateTime<Utc>>,
    /// Before.
    pub until: Option<DateTime<Utc>>,
    /// Entries with an id below this (the previous page's last).
    pub before: Option<i64>,
    pub limit: usize,
}

impl AuditQuery {
    /// Whether `e` is wanted (the memory adapter's filter, and the rule the SQL one follows).
    pub fn matches(&self, e: &AuditEvent) -> bool {
        self.actor
            .as_deref()
            .is_none_or(|a| e.entry.actor.id() == a)
            && (self.actions.is_empty() || self.actions.contains(&e.entry.action))
            && self
                .target_prefix
                .as_deref()
                .is_none_or(|p| e.entry.target.starts_with(p))
            && self
                .refused
                .is_none_or(|r| r == matches!(e.entry.outcome, Outcome::Refused { .. }))
            && self.since.is_none_or(|s| e.at >= s)
            && self.until.is_none_or(|u| e.at < u)
            && self.before.is_none_or(|b| e.id < b)
    }
}

/// The longest page of [`AuditStore::page`].
pub const MAX_PAGE: usize = 500;

/// Days an organization's entries are kept: the plan's log retention, and never fewer than
/// [`MIN_RETENTION_DAYS`] (a plan without logs still keeps a record of who deleted what).
pub fn retention_days(plan_retention_days: i32) -> i64 {
    i64::from(plan_retention_days).max(MIN_RETENTION_DAYS)
}

pub const MIN_RETENTION_DAYS: i64 = 30;

#[async_trait]
pub trait AuditStore: Send + Sync {
    /// Appends entries that no store change carries (a purge, a refused attempt).
    async fn record(&self, entries: &[AuditEntry]) -> Result<(), StoreError>;
    /// The organization's entries that `query` wants, newest first, at most `query.limit`.
    async fn page(&self, org: &OrgId, query: &AuditQuery) -> Result<Vec<AuditEvent>, StoreError>;
    /// Removes the organization's entries written before `before`; how many.
    async fn prune(&self, org: &OrgId, before: DateTime<Utc>) -> Result<u64, StoreError>;
}

/// A shared log is the log (memory adapters share one).
#[async_trait]
impl<T: AuditStore + ?Sized> AuditStore for std::sync::Arc<T> {
    async fn record(&self, entries: &[AuditEntry]) -> Result<(), StoreError> {
        (**self).record(entries).await
    }

    async fn page(&self, org: &OrgId, query: &AuditQuery) -> Result<Vec<AuditEvent>, StoreError> {
        (**self).page(org, query).await
    }

    async fn prune(&self, org: &OrgId, before: DateTime<Utc>) -> Result<u64, StoreError> {
        (**self).prune(org, before).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn action_names_are_unique_and_read_back() {
        let mut names: Vec<&str> = Action::ALL.iter().map(|a| a.as_str()).collect();
        for a in Action::ALL {
            assert_eq!(Action::parse(a.as_str()), Some(*a));
        }
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Action::ALL.len());
        assert_eq!(Action::parse("object.Delete"), None);
        assert_eq!(Action::parse(""), None);
    }

    #[test]
    fn actors_read_back_from_what_is_stored() {
        let actors = [
            Actor::Key {
                id: KeyId::new("key_1"),
                name: "ci".into(),
            },
            Actor::Member {
                id: MemberId::new("mem_1"),
                login: "ann@example.com".into(),
            },
            Actor::Operator {
                user: "root".into(),
            },
        ];
        for a in actors {
            let back = Actor::from_stored(a.kind(), a.id().into(), a.label().into());
            assert_eq!(back, Some(a));
        }
        assert_eq!(Actor::from_stored("robot", "x".into(), "y".into()), None);
    }

    #[test]
    fn retention_has_a_floor() {
        assert_eq!(retention_days(0), MIN_RETENTION_DAYS);
        assert_eq!(retention_days(29), MIN_RETENTION_DAYS);
        assert_eq!(retention_days(90), 90);
    }

    #[test]
    fn a_query_filters_on_every_field() {
        let audit = Audit::operator("root");
        let org = OrgId::new("org_a");
        let at = Utc::now();
        let event = |id, action, target: &str| AuditEvent {
            id,
            at,
            entry: audit.entry(&org, action, target, Value::Null),
        };
        let del = event(5, Action::ObjectDelete, "shots/a.png");
        let all = AuditQuery::default();
        assert!(all.matches(&del));
        let q = |f: &dyn Fn(&mut AuditQuery)| {
            let mut q = AuditQuery::default();
            f(&mut q);
            q
        };
        assert!(q(&|q| q.actor = Some("root".into())).matches(&del));
        assert!(!q(&|q| q.actor = Some("rooted".into())).matches(&del));
        assert!(q(&|q| q.actions = vec![Action::KeyCreate, Action::ObjectDelete]).matches(&del));
        assert!(!q(&|q| q.actions = vec![Action::ObjectMove]).matches(&del));
        assert!(q(&|q| q.target_prefix = Some("shots/".into())).matches(&del));
        assert!(!q(&|q| q.target_prefix = Some("shots/b".into())).matches(&del));
        assert!(q(&|q| q.refused = Some(false)).matches(&del));
        assert!(!q(&|q| q.refused = Some(true)).matches(&del));
        assert!(q(&|q| q.since = Some(at)).matches(&del));
        assert!(!q(&|q| q.until = Some(at)).matches(&del));
        assert!(!q(&|q| q.before = Some(5)).matches(&del));
        assert!(q(&|q| q.before = Some(6)).matches(&del));
        let refused = AuditEvent {
            id: 6,
            at,
            entry: audit.refused(&org, Action::MemberChange, "x", Value::Null, "no"),
        };
        assert!(q(&|q| q.refused = Some(true)).matches(&refused));
    }
}
