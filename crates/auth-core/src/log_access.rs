//! Which registered server a log call (ingestion or query) acts on, and whether it may.
//!
//! The rule is the same for ingestion (`logs-api`) and queries (`cdn-api`); each host maps a
//! [`Denied`] reason to its own error code, message and envelope.

use crate::{AccountStore, AuthContext, Server, StoreError};

/// Why a log call may not proceed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Denied {
    /// A global key named no server.
    NoServerNamed,
    /// A server-bound key named another server.
    OtherServer,
    /// No server with this join code in the caller's organization (another organization's server
    /// is indistinguishable from an unknown one).
    UnknownServer(String),
    /// The organization's plan has no Logs.
    PlanWithoutLogs,
    /// The server's Logs source is not active.
    SourceInactive,
    /// The key's bound server no longer exists.
    BoundServerGone(String),
    /// The server is the organization's, but the key's server scope does not name it; the join
    /// code as registered.
    OutOfScope(String),
    Store(StoreError),
}

impl From<StoreError> for Denied {
    fn from(e: StoreError) -> Self {
        Denied::Store(e)
    }
}

/// Resolves the target server (join codes compare case-insensitively) and checks the plan and the
/// Logs source. A bound key's server is re-read, since a cached context may hold a stale source
/// state; a named server is read once.
pub async fn resolve(
    accounts: &dyn AccountStore,
    ctx: &AuthContext,
    named: Option<&str>,
) -> Result<Server, Denied> {
    enum Target {
        /// Read just now.
        Fresh(Server),
        /// The key's bound server, by join code, to be re-read.
        Bound(String),
    }
    let target = match (named, &ctx.server) {
        (None, None) => return Err(Denied::NoServerNamed),
        (Some(code), Some(bound)) if !bound.cfx_id.eq_ignore_ascii_case(code) => {
            return Err(Denied::OtherServer)
        }
        (_, Some(bound)) => Target::Bound(bound.cfx_id.clone()),
        (Some(code), None) => Target::Fresh(
            accounts
                .find_server_by_cfx(code)
                .await?
                .filter(|s| s.org_id == ctx.org.id)
                .ok_or_else(|| Denied::UnknownServer(code.to_owned()))?,
        ),
    };
    if let Target::Fresh(server) = &target {
        if !ctx.log_scope().includes(&server.id) {
            return Err(Denied::OutOfScope(server.cfx_id.clone()));
        }
    }
    if !ctx.plan.logs_enabled {
        return Err(Denied::PlanWithoutLogs);
    }
    let server = match target {
        Target::Fresh(server) => server,
        Target::Bound(code) => accounts
            .find_server_by_cfx(&code)
            .await?
            .ok_or(Denied::BoundServerGone(code))?,
    };
    if !server.logs_active {
        return Err(Denied::SourceInactive);
    }
    Ok(server)
}

/// Every server whose logs the caller may read, in the order the organization lists them: the
/// bound server for a server key, else the organization's servers inside the key's server scope;
/// servers whose Logs source is inactive are left out (a read of one alone is refused).
pub async fn readable(
    accounts: &dyn AccountStore,
    ctx: &AuthContext,
) -> Result<Vec<Server>, Denied> {
    if !ctx.plan.logs_enabled {
        return Err(Denied::PlanWithoutLogs);
    }
    let scope = ctx.log_scope();
    Ok(accounts
        .list_servers(&ctx.org.id)
        .await?
        .into_iter()
        .filter(|s| s.logs_active && scope.includes(&s.id))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::OrgId;
    use crate::memory::MemoryAccounts;
    use crate::model::NewKey;
    use crate::{secret, CredentialType, PermissionSet};

    async fn ctx(store: &MemoryAccounts, org_id: &OrgId, server: Option<&Server>) -> AuthContext {
        key_ctx(store, org_id, server, crate::ServerScope::All).await
    }

    async fn key_ctx(
        store: &MemoryAccounts,
        org_id: &OrgId,
        server: Option<&Server>,
        servers: crate::ServerScope,
    ) -> AuthContext {
        let s = secret::generate(CredentialType::Developer);
        let key = match server {
            Some(bound) => NewKey {
                server_id: Some(bound.id.clone()),
                credential_type: CredentialType::Server,
                ..NewKey::developer(org_id.clone(), &s, PermissionSet::all())
            },
            None => NewKey {
                servers,
                ..NewKey::developer(org_id.clone(), &s, PermissionSet::all())
            },
        };
        store
            .create_key(&key, &crate::audit::Audit::operator("test"))
            .await
            .unwrap();
        store.find_auth_context(&s.hash).await.unwrap().unwrap()
    }

    /// A developer key whose logs scope is `server` alone.
    async fn scoped_ctx(store: &MemoryAccounts, org_id: &OrgId, server: &Server) -> AuthContext {
        let scope = crate::ServerScope::only([server.id.clone()]).unwrap();
        key_ctx(store, org_id, None, scope).await
    }

    #[test]
    fn every_outcome() {
        futures::executor::block_on(every_outcome_async());
    }

    async fn every_outcome_async() {
        let store = MemoryAccounts::new();
        let org = store.create_org("A", "a", "pro").await.unwrap();
        let other = store.create_org("B", "b", "pro").await.unwrap();
        let srv = store
            .register_server(
                &org.id,
                "Abc123",
                None,
                &crate::audit::Audit::operator("test"),
            )
            .await
            .unwrap();
        store
            .register_server(
                &other.id,
                "theirs",
                None,
                &crate::audit::Audit::operator("test"),
            )
            .await
            .unwrap();
        let global = ctx(&store, &org.id, None).await;
        let bound = ctx(&store, &org.id, Some(&srv)).await;

        assert_eq!(
            resolve(&store, &global, None).await,
            Err(Denied::NoServerNamed)
        );
        assert_eq!(
            resolve(&store, &global, Some("nope")).await,
            Err(Denied::UnknownServer("nope".into()))
        );
        assert_eq!(
            resolve(&store, &global, Some("theirs")).await,
            Err(Denied::UnknownServer("theirs".into()))
        );
        assert_eq!(
            resolve(&store, &bound, Some("theirs")).await,
            Err(Denied::OtherServer)
        );
        assert_eq!(
            resolve(&store, &global, Some("abc123")).await,
            Err(Denied::SourceInactive)
        );
        // the bound key's cached context says inactive; the fresh read sees the activation
        store
            .set_logs_active("abc123", true, &crate::audit::Audit::operator("test"))
            .await
            .unwrap();
        assert!(!bound.server.as_ref().unwrap().logs_active);
        assert_eq!(resolve(&store, &bound, None).await.unwrap().id, srv.id);
        assert_eq!(
            resolve(&store, &bound, Some("ABC123")).await.unwrap().id,
            srv.id
        );
        assert_eq!(
            resolve(&store, &global, Some("ABC123")).await.unwrap().id,
            srv.id
        );
        let second = store
            .register_server(
                &org.id,
                "Second",
                None,
                &crate::audit::Audit::operator("test"),
            )
            .await
            .unwrap();
        store
            .set_logs_active("second", true, &crate::audit::Audit::operator("test"))
            .await
            .unwrap();
        let scoped = scoped_ctx(&store, &org.id, &srv).await;
        assert_eq!(
            resolve(&store, &scoped, Some("abc123")).await.unwrap().id,
            srv.id
        );
        assert_eq!(
            resolve(&store, &scoped, Some("second")).await,
            Err(Denied::OutOfScope("Second".into())),
            "the organization's server, outside the key's scope"
        );
        assert_eq!(
            resolve(&store, &scoped, Some("theirs")).await,
            Err(Denied::UnknownServer("theirs".into())),
            "another organization's server stays unknown"
        );
        assert_eq!(
            resolve(&store, &global, Some("second")).await.unwrap().id,
            second.id
        );
        let ids = |v: Vec<Server>| v.into_iter().map(|s| s.cfx_id).collect::<Vec<_>>();
        assert_eq!(
            ids(readable(&store, &global).await.unwrap()),
            ["Abc123", "Second"]
        );
        assert_eq!(ids(readable(&store, &scoped).await.unwrap()), ["Abc123"]);
        assert_eq!(ids(readable(&store, &bound).await.unwrap()), ["Abc123"]);
        store
            .set_logs_active("second", false, &crate::audit::Audit::operator("test"))
            .await
            .unwrap();
        assert_eq!(
            ids(readable(&store, &global).await.unwrap()),
            ["Abc123"],
            "an inactive source is left out"
        );
        store
            .set_org_plan(&org.id, "free", &crate::audit::Audit::operator("test"))
            .await
            .unwrap();
        let free = ctx(&store, &org.id, None).await;
        assert_eq!(
            resolve(&store, &free, Some("abc123")).await,
            Err(Denied::PlanWithoutLogs)
        );
        assert_eq!(readable(&store, &free).await, Err(Denied::PlanWithoutLogs));
    }
}
