//! Saved searches ([`SavedSearchStore`], migration 26). Changes of one organization take turns on
//! its row (`FOR NO KEY UPDATE`, as placeholders do), so the count limit and the name check hold
//! under concurrent requests; the unique index on `(org_id, lower(name))` backs the name check.

use async_trait::async_trait;
use auth_core::audit::Audit;
use auth_core::{OrgId, ServerId, StoreError};
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use logs_core::saved::{self, SavedPut, SavedSearch, SavedSearchStore, SavedServers};
use serde_json::Value;

use crate::schema::saved_searches as t;
use crate::{db_error, Db};

pub struct PgSavedSearches {
    db: Db,
}

impl PgSavedSearches {
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = t)]
struct Row {
    id: String,
    org_id: String,
    name: String,
    server_ids: Option<Vec<String>>,
    search: Value,
    created_by: String,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl From<Row> for SavedSearch {
    fn from(r: Row) -> Self {
        SavedSearch {
            id: r.id,
            org_id: OrgId::new(r.org_id),
            name: r.name,
            servers: match r.server_ids {
                None => SavedServers::All,
                Some(ids) => SavedServers::Named(ids.into_iter().map(ServerId::new).collect()),
            },
            search: r.search,
            created_at: r.created_at,
            updated_at: r.updated_at,
            created_by: r.created_by,
        }
    }
}

fn row(s: &SavedSearch) -> Row {
    Row {
        id: s.id.clone(),
        org_id: s.org_id.to_string(),
        name: s.name.clone(),
        server_ids: match &s.servers {
            SavedServers::All => None,
            SavedServers::Named(ids) => Some(ids.iter().map(|i| i.to_string()).collect()),
        },
        search: s.search.clone(),
        created_by: s.created_by.clone(),
        created_at: s.created_at,
        updated_at: s.updated_at,
    }
}

/// Whether another saved search of `s`'s organization has its name, in any case.
async fn name_taken(conn: &mut AsyncPgConnection, s: &SavedSearch) -> QueryResult<bool> {
    let lower = diesel::dsl::sql::<diesel::sql_types::Text>("lower(name)");
    diesel::select(diesel::dsl::exists(
        t::table
            .filter(t::org_id.eq(s.org_id.as_str()))
            .filter(t::id.ne(&s.id))
            .filter(lower.eq(s.name.to_lowercase())),
    ))
    .get_result(conn)
    .await
}

#[async_trait]
impl SavedSearchStore for PgSavedSearches {
    async fn list(&self, org: &OrgId) -> Result<Vec<SavedSearch>, StoreError> {
        let mut conn = self.db.conn().await?;
        let mut rows: Vec<SavedSearch> = t::table
            .filter(t::org_id.eq(org.as_str()))
            .select(Row::as_select())
            .load::<Row>(&mut conn)
            .await
            .map_err(db_error)?
            .into_iter()
            .map(Into::into)
            .collect();
        saved::sort_by_name(&mut rows);
        Ok(rows)
    }

    async fn get(&self, org: &OrgId, id: &str) -> Result<Option<SavedSearch>, StoreError> {
        let mut conn = self.db.conn().await?;
        let row = t::table
            .filter(t::org_id.eq(org.as_str()))
            .filter(t::id.eq(id))
            .select(Row::as_select())
            .first::<Row>(&mut conn)
            .await
            .optional()
            .map_err(db_error)?;
        Ok(row.map(Into::into))
    }

    async fn create(
        &self,
        s: &SavedSearch,
        max: usize,
        audit: &Audit,
    ) -> Result<SavedPut, StoreError> {
        self.db
            .audited(|conn| {
                async move {
                    crate::lock_org(conn, &s.org_id).await?;
                    if name_taken(conn, s).await? {
                        return Ok((SavedPut::NameTaken, vec![]));
                    }
                    let count: i64 = t::table
                        .filter(t::org_id.eq(s.org_id.as_str()))
                        .count()
                        .get_result(conn)
                        .await?;
                    if count as usize >= max {
                        return Ok((SavedPut::LimitReached, vec![]));
                    }
                    diesel::insert_into(t::table)
                        .values(row(s))
                        .execute(conn)
                        .await?;
                    Ok((SavedPut::Done, vec![saved::created_entry(audit, s)]))
                }
                .scope_boxed()
            })
            .await
    }

    async fn update(&self, s: &SavedSearch, audit: &Audit) -> Result<SavedPut, StoreError> {
        self.db
            .audited(|conn| {
                async move {
                    crate::lock_org(conn, &s.org_id).await?;
                    let before: Option<SavedSearch> = t::table
                        .filter(t::org_id.eq(s.org_id.as_str()))
                        .filter(t::id.eq(&s.id))
                        .select(Row::as_select())
                        .first::<Row>(conn)
                        .await
                        .optional()?
                        .map(Into::into);
                    if name_taken(conn, s).await? {
                        return Ok((SavedPut::NameTaken, vec![]));
                    }
                    let Some(before) = before else {
                        return Ok((SavedPut::Missing, vec![]));
                    };
                    if saved::same_content(&before, s) {
                        return Ok((SavedPut::Done, vec![]));
                    }
                    let after = row(s);
                    diesel::update(t::table.find(&s.id))
                        .set((
                            t::name.eq(&after.name),
                            t::server_ids.eq(&after.server_ids),
                            t::search.eq(&after.search),
                            t::updated_at.eq(after.updated_at),
                        ))
                        .execute(conn)
                        .await?;
                    // alert rules watching it evaluate its new filters from the next commit on
                    super::alerts::bump_version(conn).await?;
                    let after = SavedSearch {
                        created_at: before.created_at,
                        created_by: before.created_by.clone(),
                        ..s.clone()
                    };
                    Ok((
                        SavedPut::Done,
                        vec![saved::changed_entry(audit, &before, &after)],
                    ))
                }
                .scope_boxed()
            })
            .await
    }

    async fn delete(&self, org: &OrgId, id: &str, audit: &Audit) -> Result<bool, StoreError> {
        let watched = self
            .db
            .audited(|conn| {
                async move {
                    // its row first: a rule being made on it waits (or is waited for), so
                    // either this sees the rule or the rule's reference check sees it gone
                    let here: Option<String> = t::table
                        .filter(t::org_id.eq(org.as_str()))
                        .filter(t::id.eq(id))
                        .select(t::id)
                        .for_update()
                        .first(conn)
                        .await
                        .optional()?;
                    if here.is_none() {
                        return Ok((Ok(false), vec![]));
                    }
                    let rules = watching_rules(conn, id).await?;
                    if !rules.is_empty() {
                        return Ok((Err(rules), vec![]));
                    }
                    let gone: Option<Row> = diesel::delete(
                        t::table
                            .filter(t::org_id.eq(org.as_str()))
                            .filter(t::id.eq(id)),
                    )
                    .returning(Row::as_returning())
                    .get_result(conn)
                    .await
                    .optional()?;
                    let Some(gone) = gone else {
                        return Ok((Ok(false), vec![]));
                    };
                    Ok((Ok(true), vec![saved::deleted_entry(audit, &gone.into())]))
                }
                .scope_boxed()
            })
            .await?;
        watched.map_err(|rules| {
            StoreError::Conflict(format!(
                "alert rules watch this saved search ({}); delete them or point them at another search first",
                rules.iter().map(|r| format!("`{r}`")).collect::<Vec<_>>().join(", ")
            ))
        })
    }
}

/// The names of the alert rules watching saved search `id`.
async fn watching_rules(conn: &mut AsyncPgConnection, id: &str) -> QueryResult<Vec<String>> {
    #[derive(diesel::QueryableByName)]
    struct Name {
        #[diesel(sql_type = diesel::sql_types::Text)]
        name: String,
    }
    let names: Vec<Name> = diesel::sql_query(
        "SELECT name FROM alert_rules WHERE saved_search_id = $1 ORDER BY lower(name)",
    )
    .bind::<diesel::sql_types::Text, _>(id)
    .load(conn)
    .await?;
    Ok(names.into_iter().map(|n| n.name).collect())
}
