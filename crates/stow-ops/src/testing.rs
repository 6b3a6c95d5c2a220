//! What the operations' unit tests run on: the memory stores with two organizations, two servers
//! in the first, and callers of every kind.

#![allow(clippy::unwrap_used)]

use auth_core::audit::{Audit, AuditEntry, AuditQuery, AuditStore, Via};
use auth_core::member::{Member, MemberContext, Membership};
use auth_core::roles::{Grant, Role};
use auth_core::{AuthContext, MemberId, Org, PathScope, Server, ServerScope};
use chrono::Utc;

use crate::{Caller, Ctx, Stores};

pub(crate) struct World {
    pub stores: Stores,
    /// The alerts adapter of `stores`, to queue firings on.
    pub alerts: std::sync::Arc<logs_core::memory::MemoryAlerts>,
    pub org: Org,
    /// Another organization, with a server of its own (`xyz`).
    pub other: Org,
    /// `abc` and `def`, of `org`.
    pub abc: Server,
    pub def: Server,
}

impl World {
    pub async fn new() -> Self {
        let (stores, alerts) = Stores::memory_with_alerts();
        let op = Audit::operator("test");
        let org = stores
            .accounts
            .create_org("Acme", "acme", "pro")
            .await
            .unwrap();
        let other = stores
            .accounts
            .create_org("Other", "other", "pro")
            .await
            .unwrap();
        let abc = stores
            .accounts
            .register_server(&org.id, "abc", None, &op)
            .await
            .unwrap();
        let def = stores
            .accounts
            .register_server(&org.id, "def", None, &op)
            .await
            .unwrap();
        stores
            .accounts
            .register_server(&other.id, "xyz", None, &op)
            .await
            .unwrap();
        Self {
            stores,
            alerts,
            org,
            other,
            abc,
            def,
        }
    }

    /// A member of `org` holding `grant`, as the API host authenticates them.
    pub async fn member(&self, login: &str, grant: Grant) -> AuthContext {
        let now = Utc::now();
        let id = MemberId::new(format!("mem_{login}"));
        let plan = self.stores.accounts.get_plan("pro").await.unwrap().unwrap();
        AuthContext::for_member(
            MemberContext {
                member: Member {
                    id: id.clone(),
                    login: login.into(),
                    display_name: None,
                    password_hash: String::new(),
                    created_at: now,
                },
                membership: Membership {
                    org_id: self.org.id.clone(),
                    member_id: id,
                    grant,
                    created_at: now,
                    updated_at: now,
                },
                org: self.org.clone(),
            },
            plan,
        )
    }

    /// A stored member of `org` named `login` with `role` everywhere (invited by the operator,
    /// accepted).
    pub async fn join(&self, login: &str, role: &str) -> MemberId {
        let invited = crate::members::Invite {
            org: self.org.id.clone(),
            grant: crate::members::GrantRequest {
                role: role.into(),
                ..Default::default()
            },
            note: None,
            expires_in_hours: None,
        }
        .run(&self.operator())
        .await
        .ok()
        .unwrap();
        let accepter = auth_core::member::Accepter::New {
            login: login.into(),
            display_name: None,
            password_hash: String::new(),
        };
        let hash = auth_core::console_session::token_hash(&invited.token);
        let op = Audit::operator("test");
        let (member, _) = self
            .stores
            .members
            .accept_invitation(&hash, &accepter, Utc::now(), &op)
            .await
            .unwrap()
            .unwrap();
        member.id
    }

    /// An admin of `org` limited to server `abc` and the paths under `staff/`.
    pub async fn narrow_admin(&self) -> AuthContext {
        let grant = Grant {
            role: Role::Admin,
            servers: ServerScope::only([self.abc.id.clone()]).unwrap(),
            paths: PathScope::new(vec!["staff".into()], vec![]),
        };
        self.member("narrow", grant).await
    }

    pub fn api<'a>(&'a self, auth: &'a AuthContext) -> Ctx<'a> {
        Ctx::new(
            &self.stores,
            Caller::Api(auth),
            Audit::of(auth, Via::Api, None, None),
        )
    }

    pub fn operator(&self) -> Ctx<'_> {
        Ctx::new(&self.stores, Caller::Operator, Audit::operator("ops"))
    }

    /// `org`'s audit log, oldest first.
    pub async fn audit(&self, org: &Org) -> Vec<AuditEntry> {
        let q = AuditQuery {
            limit: 500,
            ..AuditQuery::default()
        };
        let mut page = self.stores.audit.page(&org.id, &q).await.unwrap();
        page.reverse();
        page.into_iter().map(|e| e.entry).collect()
    }
}
