//! The account storage trait. Errors are transport-neutral; the HTTP edge maps them.

use async_trait::async_trait;

use crate::audit::Audit;
use chrono::{DateTime, Utc};

use crate::ids::{KeyId, OrgId};
use crate::key::{ApiKey, AuthContext};
use crate::model::{NewKey, Org, Plan, Server};

pub use crate::error::{Cause, StoreError};

#[async_trait]
pub trait AccountStore: Send + Sync {
    async fn upsert_plan(&self, plan: &Plan) -> Result<Plan, StoreError>;
    async fn get_plan(&self, name: &str) -> Result<Option<Plan>, StoreError>;
    /// Every plan, by name.
    async fn list_plans(&self) -> Result<Vec<Plan>, StoreError>;

    async fn create_org(&self, name: &str, slug: &str, plan: &str) -> Result<Org, StoreError>;
    async fn get_org(&self, id: &OrgId) -> Result<Option<Org>, StoreError>;
    /// Every organization, by name (then id).
    async fn list_orgs(&self) -> Result<Vec<Org>, StoreError>;
    async fn find_org_by_slug(&self, slug: &str) -> Result<Option<Org>, StoreError>;
    /// Changes the plan; an audit entry (`org.plan_change`) when it is another plan.
    async fn set_org_plan(&self, id: &OrgId, plan: &str, audit: &Audit) -> Result<Org, StoreError>;

    /// Registers a server, with its `server.register` audit entry.
    async fn register_server(
        &self,
        org_id: &OrgId,
        cfx_id: &str,
        name: Option<&str>,
        audit: &Audit,
    ) -> Result<Server, StoreError>;
    /// Case-insensitive lookup by join code.
    async fn find_server_by_cfx(&self, cfx_id: &str) -> Result<Option<Server>, StoreError>;
    /// Turns a server's log ingestion on or off; a `server.logs` audit entry when it changes.
    async fn set_logs_active(
        &self,
        cfx_id: &str,
        active: bool,
        audit: &Audit,
    ) -> Result<Server, StoreError>;
    /// An organization's servers, by join code ignoring case (`NotFound` for an unknown
    /// organization).
    async fn list_servers(&self, org_id: &OrgId) -> Result<Vec<Server>, StoreError>;

    /// Stores a key, with its `key.create` audit entry.
    async fn create_key(&self, key: &NewKey, audit: &Audit) -> Result<ApiKey, StoreError>;
    async fn list_keys(&self, org_id: &OrgId) -> Result<Vec<ApiKey>, StoreError>;
    async fn get_key(&self, id: &KeyId) -> Result<Option<ApiKey>, StoreError>;
    /// Disables a key (a disabled one keeps its time and gets no second audit entry).
    async fn disable_key(
        &self,
        id: &KeyId,
        at: DateTime<Utc>,
        audit: &Audit,
    ) -> Result<ApiKey, StoreError>;
    /// Makes a disabled key usable again (an expired one stays expired; an enabled one is left
    /// alone, without an audit entry).
    async fn enable_key(&self, id: &KeyId, audit: &Audit) -> Result<ApiKey, StoreError>;
    async fn delete_key(&self, id: &KeyId, audit: &Audit) -> Result<(), StoreError>;

    /// The key with this secret hash, with its organization, plan and bound server.
    async fn find_auth_context(&self, hash: &[u8; 32]) -> Result<Option<AuthContext>, StoreError>;
    async fn touch_key(&self, id: &KeyId, at: DateTime<Utc>) -> Result<(), StoreError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cause_keeps_the_error_it_came_from() {
        let io = std::io::Error::new(std::io::ErrorKind::TimedOut, "read timed out");
        let e = StoreError::Unavailable(Cause::context("connecting", io));
        assert_eq!(
            e.to_string(),
            "storage unavailable: connecting: read timed out"
        );
        let cause = std::error::Error::source(&e).expect("the cause");
        let io = cause.source().expect("the io error");
        assert_eq!(
            io.downcast_ref::<std::io::Error>().map(|e| e.kind()),
            Some(std::io::ErrorKind::TimedOut)
        );
        assert!(
            std::error::Error::source(&StoreError::Internal("plain".into()))
                .and_then(|c| c.source())
                .is_none()
        );
    }
}
