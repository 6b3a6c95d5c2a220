//! Lifecycle rules ([`LifecycleStore`]) and the roll-up of the usage counts per top-level folder
//! (migration 27).

use async_trait::async_trait;
use auth_core::audit::Audit;
use auth_core::{OrgId, StoreError};
use cdn_core::lifecycle::{removed_entry, set_entry, LifecycleRule, LifecycleStore};
use cdn_core::placeholder::Put;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::RunQueryDsl;

use crate::schema::lifecycle_rules;
use crate::{db_error, Db};

pub struct PgLifecycle {
    db: Db,
}

impl PgLifecycle {
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = lifecycle_rules)]
struct RuleRow {
    folder: String,
    days: i32,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl From<RuleRow> for LifecycleRule {
    fn from(r: RuleRow) -> Self {
        LifecycleRule {
            folder: r.folder,
            days: i64::from(r.days),
            created_at: r.created_at,
            updated_at: r.updated_at,
        }
    }
}

#[async_trait]
impl LifecycleStore for PgLifecycle {
    async fn put(
        &self,
        org_id: &OrgId,
        r: &LifecycleRule,
        max: usize,
        audit: &Audit,
    ) -> Result<Put, StoreError> {
        let days = i32::try_from(r.days).map_err(|_| StoreError::Conflict("days".into()))?;
        self.db
            .audited(|conn| {
                async move {
                    // concurrent puts of one organization take turns, so the count below holds
                    crate::lock_org(conn, org_id.as_str()).await?;
                    let row = lifecycle_rules::table.find((org_id.as_str(), r.folder.as_str()));
                    let existing: Option<DateTime<Utc>> = row
                        .select(lifecycle_rules::created_at)
                        .first(conn)
                        .await
                        .optional()?;
                    if let Some(created_at) = existing {
                        diesel::update(row)
                            .set((
                                lifecycle_rules::days.eq(days),
                                lifecycle_rules::updated_at.eq(r.updated_at),
                            ))
                            .execute(conn)
                            .await?;
                        return Ok((
                            Put::Replaced { created_at },
                            vec![set_entry(audit, org_id, r)],
                        ));
                    }
                    let count: i64 = lifecycle_rules::table
                        .filter(lifecycle_rules::org_id.eq(org_id.as_str()))
                        .count()
                        .get_result(conn)
                        .await?;
                    if count as usize >= max {
                        return Ok((Put::LimitReached, vec![]));
                    }
                    diesel::insert_into(lifecycle_rules::table)
                        .values((
                            lifecycle_rules::org_id.eq(org_id.as_str()),
                            lifecycle_rules::folder.eq(&r.folder),
                            lifecycle_rules::days.eq(days),
                            lifecycle_rules::created_at.eq(r.created_at),
                            lifecycle_rules::updated_at.eq(r.updated_at),
                        ))
                        .execute(conn)
                        .await?;
                    Ok((Put::Created, vec![set_entry(audit, org_id, r)]))
                }
                .scope_boxed()
            })
            .await
    }

    async fn list(&self, org_id: &OrgId) -> Result<Vec<LifecycleRule>, StoreError> {
        let mut conn = self.db.conn().await?;
        let rows: Vec<RuleRow> = lifecycle_rules::table
            .filter(lifecycle_rules::org_id.eq(org_id.as_str()))
            .order(lifecycle_rules::folder)
            .select(RuleRow::as_select())
            .load(&mut conn)
            .await
            .map_err(db_error)?;
        Ok(rows.into_iter().map(Into::into).collect())
    }

    async fn delete(
        &self,
        org_id: &OrgId,
        folder: &str,
        audit: &Audit,
    ) -> Result<bool, StoreError> {
        self.db
            .audited(|conn| {
                async move {
                    let n = diesel::delete(lifecycle_rules::table.find((org_id.as_str(), folder)))
                        .execute(conn)
                        .await?;
                    let entries = (n == 1)
                        .then(|| removed_entry(audit, org_id, folder))
                        .into_iter()
                        .collect();
                    Ok((n == 1, entries))
                }
                .scope_boxed()
            })
            .await
    }

    async fn organizations(&self) -> Result<Vec<OrgId>, StoreError> {
        let mut conn = self.db.conn().await?;
        let orgs: Vec<String> = lifecycle_rules::table
            .select(lifecycle_rules::org_id)
            .distinct()
            .order(lifecycle_rules::org_id)
            .load(&mut conn)
            .await
            .map_err(db_error)?;
        Ok(orgs.into_iter().map(OrgId::from).collect())
    }
}

/// Folds the usage changes appended since the last roll-up into the per-folder counts, in one
/// statement (a reader sees the changes in one place or the other, never both or neither);
/// returns how many change rows it folded. Changes of organizations that are gone are dropped.
/// Any number of instances may run it at once.
pub async fn roll_up_usage(db: &Db) -> Result<usize, StoreError> {
    let mut conn = db.conn().await?;
    let folded = diesel::sql_query(
        r#"WITH moved AS (DELETE FROM object_usage_deltas RETURNING org_id, folder, objects, bytes),
                sums AS (SELECT org_id, folder, sum(objects) AS objects, sum(bytes) AS bytes, count(*) AS n
                           FROM moved GROUP BY org_id, folder),
                kept AS (INSERT INTO object_usage AS u (org_id, folder, objects, bytes)
                         SELECT org_id, folder, objects, bytes FROM sums
                          WHERE EXISTS (SELECT 1 FROM organizations o WHERE o.id = sums.org_id)
                         ON CONFLICT (org_id, folder) DO UPDATE
                            SET objects = u.objects + excluded.objects,
                                bytes = u.bytes + excluded.bytes)
           SELECT 1 FROM sums"#,
    )
    .execute(&mut conn)
    .await
    .map_err(db_error)?;
    // folders emptied for good (a read leaves them out either way)
    diesel::sql_query("DELETE FROM object_usage WHERE objects = 0 AND bytes = 0")
        .execute(&mut conn)
        .await
        .map_err(db_error)?;
    Ok(folded)
}
