//! The account storage trait. Errors are transport-neutral; the HTTP edge maps them.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use crate::key::{ApiKey, AuthContext};
use crate::model::{NewKey, Org, Plan, Server};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// A referenced record does not exist; the text names it (`unknown plan "gold"`).
    #[error("{0}")]
    NotFound(String),
    /// A uniqueness rule was violated; the text names it.
    #[error("{0}")]
    Conflict(String),
    /// The backing store cannot be reached or timed out; retrying later may succeed.
    #[error("storage unavailable: {0}")]
    Unavailable(String),
    /// Anything else; the text is for logs, never for responses.
    #[error("storage error: {0}")]
    Internal(String),
}

#[async_trait]
pub trait AccountStore: Send + Sync {
    async fn upsert_plan(&self, plan: &Plan) -> Result<Plan, StoreError>;
    async fn get_plan(&self, name: &str) -> Result<Option<Plan>, StoreError>;

    async fn create_org(&self, name: &str, slug: &str, plan: &str) -> Result<Org, StoreError>;
    async fn get_org(&self, id: &str) -> Result<Option<Org>, StoreError>;
    async fn find_org_by_slug(&self, slug: &str) -> Result<Option<Org>, StoreError>;
    async fn set_org_plan(&self, id: &str, plan: &str) -> Result<Org, StoreError>;

    async fn register_server(
        &self,
        org_id: &str,
        cfx_id: &str,
        name: Option<&str>,
    ) -> Result<Server, StoreError>;
    /// Case-insensitive lookup by join code.
    async fn find_server_by_cfx(&self, cfx_id: &str) -> Result<Option<Server>, StoreError>;
    async fn set_logs_active(&self, cfx_id: &str, active: bool) -> Result<Server, StoreError>;

    async fn create_key(&self, key: &NewKey) -> Result<ApiKey, StoreError>;
    async fn list_keys(&self, org_id: &str) -> Result<Vec<ApiKey>, StoreError>;
    async fn get_key(&self, id: &str) -> Result<Option<ApiKey>, StoreError>;
    async fn disable_key(&self, id: &str, at: DateTime<Utc>) -> Result<ApiKey, StoreError>;
    async fn delete_key(&self, id: &str) -> Result<(), StoreError>;

    /// The key with this secret hash, with its organization, plan and bound server.
    async fn find_auth_context(&self, hash: &[u8; 32]) -> Result<Option<AuthContext>, StoreError>;
    async fn touch_key(&self, id: &str, at: DateTime<Utc>) -> Result<(), StoreError>;
}
