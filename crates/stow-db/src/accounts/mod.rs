//! Postgres [`AccountStore`].
//!
//! Kept whole, over 400 lines: it is one trait's adapter, one method after another in the trait's order.

use async_trait::async_trait;
use auth_core::audit::{Action, Audit};
use auth_core::key::{ApiKey, AuthContext, CredentialType};
use auth_core::model::{NewKey, Org, Plan, Server};
use auth_core::{AccountStore, Cause, PermissionSet, ServerScope, StoreError};
use auth_core::{KeyId, OrgId, ServerId};
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::result::Error as DieselError;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

use crate::schema::{api_keys, organizations, plans, servers};
use crate::{db_error, Db};

/// Postgres `text` cannot hold U+0000, so no stored row can match a lookup value containing it,
/// and sending one is an error ("invalid byte sequence"), not an empty result. Lookups by
/// caller-supplied names (URL paths, request bodies) answer "not found" for such values instead.
fn storable(value: &str) -> bool {
    !value.contains('\0')
}

pub struct PgAccounts {
    db: Db,
}

impl PgAccounts {
    pub fn new(db: Db) -> Self {
        Self { db }
    }

    pub(crate) fn db(&self) -> &Db {
        &self.db
    }
}

#[derive(Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(table_name = plans)]
struct PlanRow {
    name: String,
    logs_enabled: bool,
    retention_days: i32,
    max_file_size: i64,
    max_url_lifetime_secs: i32,
    concurrent_searches: i32,
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
    id: String,
    name: String,
    slug: String,
    plan: String,
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
struct ServerRow {
    id: String,
    org_id: String,
    cfx_id: String,
    name: Option<String>,
    logs_active: bool,
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
struct KeyRow {
    id: String,
    org_id: String,
    server_id: Option<String>,
    credential_type: String,
    name: Option<String>,
    secret_hint: String,
    permissions: Vec<String>,
    allowed_prefixes: Vec<String>,
    denied_prefixes: Vec<String>,
    allowed_mime: Option<Vec<String>>,
    created_at: DateTime<Utc>,
    expires_at: Option<DateTime<Utc>>,
    disabled_at: Option<DateTime<Utc>>,
    last_used_at: Option<DateTime<Utc>>,
    servers: Option<Vec<String>>,
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

fn not_found(what: &str, id: &str) -> StoreError {
    StoreError::NotFound(format!("unknown {what} \"{id}\""))
}

impl PgAccounts {
    async fn plan_exists(&self, conn: &mut crate::Conn, name: &str) -> Result<bool, StoreError> {
        let n: i64 = plans::table
            .filter(plans::name.eq(name))
            .count()
            .get_result(conn)
            .await
            .map_err(db_error)?;
        Ok(n > 0)
    }

    /// Sets a key's `disabled_at` to `to` (`Some`: kept when already disabled), with an audit
    /// entry only when that changed it, in one transaction.
    async fn change_key(
        &self,
        id: &KeyId,
        to: Option<DateTime<Utc>>,
        action: Action,
        audit: &Audit,
    ) -> Result<ApiKey, StoreError> {
        let row = self
            .db
            .audited(|conn| {
                async move {
                    let was: Option<Option<DateTime<Utc>>> = api_keys::table
                        .find(id.as_str())
                        .select(api_keys::disabled_at)
                        .for_no_key_update()
                        .first(conn)
                        .await
                        .optional()?;
                    let Some(was) = was else {
                        return Ok((None, vec![]));
                    };
                    if was.is_some() == to.is_some() {
                        let row: KeyRow = api_keys::table
                            .find(id.as_str())
                            .select(KeyRow::as_select())
                            .first(conn)
                            .await?;
                        return Ok((Some(row), vec![]));
                    }
                    let row: KeyRow = diesel::update(api_keys::table.find(id.as_str()))
                        .set(api_keys::disabled_at.eq(to))
                        .returning(KeyRow::as_returning())
                        .get_result(conn)
                        .await?;
                    let entry = audit.entry(
                        &OrgId::new(row.org_id.as_str()),
                        action,
                        id.as_str(),
                        serde_json::json!({ "name": row.name }),
                    );
                    Ok((Some(row), vec![entry]))
                }
                .scope_boxed()
            })
            .await?;
        row.ok_or_else(|| not_found("key", id))?.try_into()
    }
}

#[async_trait]
impl AccountStore for PgAccounts {
    async fn upsert_plan(&self, plan: &Plan) -> Result<Plan, StoreError> {
        let mut conn = self.db.conn().await?;
        let row = PlanRow {
            name: plan.name.clone(),
            logs_enabled: plan.logs_enabled,
            retention_days: plan.retention_days,
            max_file_size: plan.max_file_size,
            max_url_lifetime_secs: plan.max_url_lifetime_secs,
            concurrent_searches: plan.concurrent_searches,
        };
        let saved: PlanRow = diesel::insert_into(plans::table)
            .values(&row)
            .on_conflict(plans::name)
            .do_update()
            .set(&row)
            .returning(PlanRow::as_returning())
            .get_result(&mut conn)
            .await
            .map_err(db_error)?;
        Ok(saved.into())
    }

    async fn get_plan(&self, name: &str) -> Result<Option<Plan>, StoreError> {
        let mut conn = self.db.conn().await?;
        plans::table
            .filter(plans::name.eq(name))
            .select(PlanRow::as_select())
            .first(&mut conn)
            .await
            .optional()
            .map(|r| r.map(Into::into))
            .map_err(db_error)
    }

    async fn list_plans(&self) -> Result<Vec<Plan>, StoreError> {
        let mut conn = self.db.conn().await?;
        let rows: Vec<PlanRow> = plans::table
            .order(plans::name)
            .select(PlanRow::as_select())
            .load(&mut conn)
            .await
            .map_err(db_error)?;
        Ok(rows.into_iter().map(Into::into).collect())
    }

    async fn list_orgs(&self) -> Result<Vec<Org>, StoreError> {
        let mut conn = self.db.conn().await?;
        let rows: Vec<OrgRow> = organizations::table
            .order((organizations::name, organizations::id))
            .select(OrgRow::as_select())
            .load(&mut conn)
            .await
            .map_err(db_error)?;
        Ok(rows.into_iter().map(Into::into).collect())
    }

    async fn create_org(&self, name: &str, slug: &str, plan: &str) -> Result<Org, StoreError> {
        let mut conn = self.db.conn().await?;
        if !self.plan_exists(&mut conn, plan).await? {
            return Err(not_found("plan", plan));
        }
        diesel::insert_into(organizations::table)
            .values((
                organizations::id.eq(OrgId::generate().into_string()),
                organizations::name.eq(name),
                organizations::slug.eq(slug),
                organizations::plan.eq(plan),
            ))
            .returning(OrgRow::as_returning())
            .get_result(&mut conn)
            .await
            .map(Into::into)
            .map_err(|e| match db_error(e) {
                StoreError::Conflict(_) => {
                    StoreError::Conflict(format!("workspace slug \"{slug}\" is taken"))
                }
                other => other,
            })
    }

    async fn get_org(&self, id: &OrgId) -> Result<Option<Org>, StoreError> {
        let mut conn = self.db.conn().await?;
        organizations::table
            .find(id.as_str())
            .select(OrgRow::as_select())
            .first(&mut conn)
            .await
            .optional()
            .map(|r| r.map(Into::into))
            .map_err(db_error)
    }

    async fn find_org_by_slug(&self, slug: &str) -> Result<Option<Org>, StoreError> {
        if !storable(slug) {
            return Ok(None);
        }
        let mut conn = self.db.conn().await?;
        organizations::table
            .filter(organizations::slug.eq(slug))
            .select(OrgRow::as_select())
            .first(&mut conn)
            .await
            .optional()
            .map(|r| r.map(Into::into))
            .map_err(db_error)
    }

    async fn set_org_plan(&self, id: &OrgId, plan: &str, audit: &Audit) -> Result<Org, StoreError> {
        let mut conn = self.db.conn().await?;
        if !self.plan_exists(&mut conn, plan).await? {
            return Err(not_found("plan", plan));
        }
        conn.transaction::<_, DieselError, _>(|conn| {
            async move {
                let from: Option<String> = organizations::table
                    .find(id.as_str())
                    .select(organizations::plan)
                    .for_no_key_update()
                    .first(conn)
                    .await
                    .optional()?;
                let Some(from) = from else { return Ok(None) };
                let org: OrgRow = diesel::update(organizations::table.find(id.as_str()))
                    .set(organizations::plan.eq(plan))
                    .returning(OrgRow::as_returning())
                    .get_result(conn)
                    .await?;
                if from != plan {
                    let entry = audit.entry(
                        id,
                        Action::PlanChange,
                        plan,
                        serde_json::json!({ "from": from }),
                    );
                    crate::audit::append(conn, &[entry]).await?;
                }
                Ok(Some(org))
            }
            .scope_boxed()
        })
        .await
        .map_err(db_error)?
        .map(Into::into)
        .ok_or_else(|| not_found("organization", id))
    }

    async fn register_server(
        &self,
        org_id: &OrgId,
        cfx_id: &str,
        name: Option<&str>,
        audit: &Audit,
    ) -> Result<Server, StoreError> {
        let mut conn = self.db.conn().await?;
        conn.transaction::<_, DieselError, _>(|conn| {
            async move {
                let server: Server = diesel::insert_into(servers::table)
                    .values((
                        servers::id.eq(ServerId::generate().into_string()),
                        servers::org_id.eq(org_id.as_str()),
                        servers::cfx_id.eq(cfx_id),
                        servers::name.eq(name),
                    ))
                    .returning(ServerRow::as_returning())
                    .get_result::<ServerRow>(conn)
                    .await?
                    .into();
                let entry = audit.server_registered(&server);
                crate::audit::append(conn, &[entry]).await?;
                Ok(server)
            }
            .scope_boxed()
        })
        .await
        .map_err(|e| match db_error(e) {
            StoreError::Conflict(_) => {
                StoreError::Conflict(format!("join code \"{cfx_id}\" is already registered"))
            }
            StoreError::NotFound(_) => not_found("organization", org_id),
            other => other,
        })
    }

    async fn find_server_by_cfx(&self, cfx_id: &str) -> Result<Option<Server>, StoreError> {
        if !storable(cfx_id) {
            return Ok(None);
        }
        let mut conn = self.db.conn().await?;
        servers::table
            .filter(lower(servers::cfx_id).eq(cfx_id.to_lowercase()))
            .select(ServerRow::as_select())
            .first(&mut conn)
            .await
            .optional()
            .map(|r| r.map(Into::into))
            .map_err(db_error)
    }

    async fn set_logs_active(
        &self,
        cfx_id: &str,
        active: bool,
        audit: &Audit,
    ) -> Result<Server, StoreError> {
        let mut conn = self.db.conn().await?;
        let code = cfx_id.to_lowercase();
        conn.transaction::<_, DieselError, _>(|conn| {
            async move {
                let was: Option<bool> = servers::table
                    .filter(lower(servers::cfx_id).eq(&code))
                    .select(servers::logs_active)
                    .for_no_key_update()
                    .first(conn)
                    .await
                    .optional()?;
                let Some(was) = was else { return Ok(None) };
                let server: Server =
                    diesel::update(servers::table.filter(lower(servers::cfx_id).eq(&code)))
                        .set(servers::logs_active.eq(active))
                        .returning(ServerRow::as_returning())
                        .get_result::<ServerRow>(conn)
                        .await?
                        .into();
                if was != active {
                    crate::audit::append(conn, &[audit.server_logs(&server)]).await?;
                }
                Ok(Some(server))
            }
            .scope_boxed()
        })
        .await
        .map_err(db_error)?
        .ok_or_else(|| not_found("server join code", cfx_id))
    }

    async fn list_servers(&self, org_id: &OrgId) -> Result<Vec<Server>, StoreError> {
        if self.get_org(org_id).await?.is_none() {
            return Err(not_found("organization", org_id));
        }
        let mut conn = self.db.conn().await?;
        let rows: Vec<ServerRow> = servers::table
            .filter(servers::org_id.eq(org_id.as_str()))
            .order(lower(servers::cfx_id))
            .select(ServerRow::as_select())
            .load(&mut conn)
            .await
            .map_err(db_error)?;
        Ok(rows.into_iter().map(Into::into).collect())
    }

    async fn create_key(&self, key: &NewKey, audit: &Audit) -> Result<ApiKey, StoreError> {
        let mut conn = self.db.conn().await?;
        // the bound server and every scoped one must be the organization's own
        let named: Vec<&str> = key
            .server_id
            .iter()
            .chain(key.servers.named().unwrap_or_default())
            .map(|id| id.as_str())
            .collect();
        if !named.is_empty() {
            let owned: Vec<String> = servers::table
                .filter(servers::id.eq_any(&named))
                .filter(servers::org_id.eq(key.org_id.as_str()))
                .select(servers::id)
                .load(&mut conn)
                .await
                .map_err(db_error)?;
            if let Some(missing) = named.iter().find(|id| !owned.iter().any(|o| o == *id)) {
                return Err(not_found("server", missing));
            }
        }
        let row = conn
            .transaction::<_, DieselError, _>(|conn| {
                async move {
                    let row = insert_key(conn, key).await?;
                    let stored: ApiKey = row
                        .clone()
                        .try_into()
                        .map_err(|e: StoreError| DieselError::DeserializationError(Box::new(e)))?;
                    let entry = audit.entry(
                        &stored.org_id,
                        Action::KeyCreate,
                        stored.id.as_str(),
                        auth_core::key::key_details(&stored),
                    );
                    crate::audit::append(conn, &[entry]).await?;
                    Ok(row)
                }
                .scope_boxed()
            })
            .await
            .map_err(|e| match db_error(e) {
                StoreError::NotFound(_) => not_found("organization", &key.org_id),
                other => other,
            })?;
        row.try_into()
    }

    async fn list_keys(&self, org_id: &OrgId) -> Result<Vec<ApiKey>, StoreError> {
        if self.get_org(org_id).await?.is_none() {
            return Err(not_found("organization", org_id));
        }
        let mut conn = self.db.conn().await?;
        let rows: Vec<KeyRow> = api_keys::table
            .filter(api_keys::org_id.eq(org_id.as_str()))
            .order(api_keys::id)
            .select(KeyRow::as_select())
            .load(&mut conn)
            .await
            .map_err(db_error)?;
        rows.into_iter().map(TryInto::try_into).collect()
    }

    async fn get_key(&self, id: &KeyId) -> Result<Option<ApiKey>, StoreError> {
        let mut conn = self.db.conn().await?;
        let row: Option<KeyRow> = api_keys::table
            .find(id.as_str())
            .select(KeyRow::as_select())
            .first(&mut conn)
            .await
            .optional()
            .map_err(db_error)?;
        row.map(TryInto::try_into).transpose()
    }

    async fn disable_key(
        &self,
        id: &KeyId,
        at: DateTime<Utc>,
        audit: &Audit,
    ) -> Result<ApiKey, StoreError> {
        self.change_key(id, Some(at), Action::KeyDisable, audit)
            .await
    }

    async fn enable_key(&self, id: &KeyId, audit: &Audit) -> Result<ApiKey, StoreError> {
        self.change_key(id, None, Action::KeyEnable, audit).await
    }

    async fn delete_key(&self, id: &KeyId, audit: &Audit) -> Result<(), StoreError> {
        let mut conn = self.db.conn().await?;
        let deleted = conn
            .transaction::<_, DieselError, _>(|conn| {
                async move {
                    let gone: Option<(String, Option<String>)> =
                        diesel::delete(api_keys::table.find(id.as_str()))
                            .returning((api_keys::org_id, api_keys::name))
                            .get_result(conn)
                            .await
                            .optional()?;
                    if let Some((org_id, name)) = &gone {
                        let entry = audit.entry(
                            &OrgId::new(org_id.as_str()),
                            Action::KeyDelete,
                            id.as_str(),
                            serde_json::json!({ "name": name }),
                        );
                        crate::audit::append(conn, &[entry]).await?;
                    }
                    Ok(gone.is_some())
                }
                .scope_boxed()
            })
            .await
            .map_err(db_error)?;
        if !deleted {
            return Err(not_found("key", id));
        }
        Ok(())
    }

    async fn find_auth_context(&self, hash: &[u8; 32]) -> Result<Option<AuthContext>, StoreError> {
        let mut conn = self.db.conn().await?;
        let row: Option<(KeyRow, OrgRow, PlanRow)> = api_keys::table
            .inner_join(
                organizations::table
                    .inner_join(plans::table.on(plans::name.eq(organizations::plan))),
            )
            .filter(api_keys::secret_hash.eq(hash.as_slice()))
            .select((
                KeyRow::as_select(),
                OrgRow::as_select(),
                PlanRow::as_select(),
            ))
            .first(&mut conn)
            .await
            .optional()
            .map_err(db_error)?;
        let Some((key, org, plan)) = row else {
            return Ok(None);
        };
        let server = match &key.server_id {
            Some(id) => servers::table
                .find(id.as_str())
                .select(ServerRow::as_select())
                .first(&mut conn)
                .await
                .optional()
                .map_err(db_error)?
                .map(Into::into),
            None => None,
        };
        Ok(Some(AuthContext {
            key: key.try_into()?,
            org: org.into(),
            plan: plan.into(),
            server,
            member: None,
        }))
    }

    async fn touch_key(&self, id: &KeyId, at: DateTime<Utc>) -> Result<(), StoreError> {
        let mut conn = self.db.conn().await?;
        diesel::update(api_keys::table.find(id.as_str()))
            .set(api_keys::last_used_at.eq(at))
            .execute(&mut conn)
            .await
            .map(|_| ())
            .map_err(db_error)
    }
}

diesel::define_sql_function!(fn lower(x: diesel::sql_types::Text) -> diesel::sql_types::Text);

/// Inserts a key's row (in the caller's transaction).
async fn insert_key(conn: &mut AsyncPgConnection, key: &NewKey) -> diesel::QueryResult<KeyRow> {
    diesel::insert_into(api_keys::table)
        .values((
            api_keys::id.eq(key.id.as_str()),
            api_keys::org_id.eq(key.org_id.as_str()),
            api_keys::server_id.eq(key.server_id.as_deref()),
            api_keys::credential_type.eq(key.credential_type.as_str()),
            api_keys::name.eq(&key.name),
            api_keys::secret_hash.eq(key.secret_hash.as_slice()),
            api_keys::secret_hint.eq(&key.hint),
            api_keys::permissions.eq(key.permissions.names()),
            api_keys::allowed_prefixes.eq(&key.allowed_prefixes),
            api_keys::denied_prefixes.eq(&key.denied_prefixes),
            api_keys::allowed_mime.eq(&key.allowed_mime),
            api_keys::servers.eq(key.servers.to_stored()),
            api_keys::expires_at.eq(key.expires_at),
        ))
        .returning(KeyRow::as_returning())
        .get_result(conn)
        .await
}
