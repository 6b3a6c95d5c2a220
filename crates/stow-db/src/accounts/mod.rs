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

mod keys;
mod orgs;
mod rows;
pub(crate) use rows::OrgRow;
use rows::*;

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
        orgs::set_plan(self, id, plan, audit).await
    }

    async fn register_server(
        &self,
        org_id: &OrgId,
        cfx_id: &str,
        name: Option<&str>,
        audit: &Audit,
    ) -> Result<Server, StoreError> {
        orgs::register_server(self, org_id, cfx_id, name, audit).await
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
        orgs::set_logs_active(self, cfx_id, active, audit).await
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
        keys::create(self, key, audit).await
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
        keys::delete(self, id, audit).await
    }

    async fn find_auth_context(&self, hash: &[u8; 32]) -> Result<Option<AuthContext>, StoreError> {
        keys::find_auth_context(self, hash).await
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
