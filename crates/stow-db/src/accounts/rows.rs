//! The rows of the plans, organizations, servers and keys tables, and their conversions.

use super::*;

#[derive(Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(table_name = plans)]
pub(super) struct PlanRow {
    pub(super) name: String,
    pub(super) logs_enabled: bool,
    pub(super) retention_days: i32,
    pub(super) max_file_size: i64,
    pub(super) max_url_lifetime_secs: i32,
    pub(super) concurrent_searches: i32,
}

impl From<PlanRow> for Plan {
    fn from(r: PlanRow) -> Self {
        Plan {
            name: r.name,
            logs_enabled: r.logs_enabled,
            retention_days: r.retention_days,
            max_file_size: r.max_file_size,
            max_url_lifetime_secs: r.max_url_lifetime_secs,
            concurrent_searches: r.concurrent_searches,
        }
    }
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = organizations)]
pub(crate) struct OrgRow {
    pub(super) id: String,
    pub(super) name: String,
    pub(super) slug: String,
    pub(super) plan: String,
}

impl From<OrgRow> for Org {
    fn from(r: OrgRow) -> Self {
        Org {
            id: OrgId::from(r.id),
            name: r.name,
            slug: r.slug,
            plan: r.plan,
        }
    }
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = servers)]
pub(super) struct ServerRow {
    pub(super) id: String,
    pub(super) org_id: String,
    pub(super) cfx_id: String,
    pub(super) name: Option<String>,
    pub(super) logs_active: bool,
}

impl From<ServerRow> for Server {
    fn from(r: ServerRow) -> Self {
        Server {
            id: ServerId::from(r.id),
            org_id: OrgId::from(r.org_id),
            cfx_id: r.cfx_id,
            name: r.name,
            logs_active: r.logs_active,
        }
    }
}

#[derive(Queryable, Selectable, Clone)]
#[diesel(table_name = api_keys)]
pub(super) struct KeyRow {
    pub(super) id: String,
    pub(super) org_id: String,
    pub(super) server_id: Option<String>,
    pub(super) credential_type: String,
    pub(super) name: Option<String>,
    pub(super) secret_hint: String,
    pub(super) permissions: Vec<String>,
    pub(super) allowed_prefixes: Vec<String>,
    pub(super) denied_prefixes: Vec<String>,
    pub(super) allowed_mime: Option<Vec<String>>,
    pub(super) created_at: DateTime<Utc>,
    pub(super) expires_at: Option<DateTime<Utc>>,
    pub(super) disabled_at: Option<DateTime<Utc>>,
    pub(super) last_used_at: Option<DateTime<Utc>>,
    pub(super) servers: Option<Vec<String>>,
}

impl TryFrom<KeyRow> for ApiKey {
    type Error = StoreError;
    fn try_from(r: KeyRow) -> Result<Self, StoreError> {
        Ok(ApiKey {
            credential_type: CredentialType::parse(&r.credential_type)
                .ok_or_else(|| StoreError::Internal("bad credential type".into()))?,
            permissions: PermissionSet::from_names(&r.permissions)
                .map_err(|e| StoreError::Internal(Cause::from_error(e)))?,
            id: KeyId::from(r.id),
            org_id: OrgId::from(r.org_id),
            server_id: r.server_id.map(ServerId::from),
            name: r.name,
            hint: r.secret_hint,
            allowed_prefixes: r.allowed_prefixes,
            denied_prefixes: r.denied_prefixes,
            allowed_mime: r.allowed_mime,
            servers: ServerScope::from_stored(r.servers),
            created_at: r.created_at,
            expires_at: r.expires_at,
            disabled_at: r.disabled_at,
            last_used_at: r.last_used_at,
        })
    }
}
