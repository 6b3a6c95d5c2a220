//! Placeholders ([`PlaceholderStore`]).

use async_trait::async_trait;
use auth_core::audit::Audit;
use auth_core::{OrgId, StoreError};
use cdn_core::placeholder::{removed_entry, set_entry, Placeholder, PlaceholderStore, Put};
use cdn_core::ObjectKey;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::RunQueryDsl;

use crate::schema::placeholders;
use crate::{db_error, Db};

pub struct PgPlaceholders {
    db: Db,
}

impl PgPlaceholders {
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = placeholders)]
struct PlaceholderRow {
    pattern: String,
    fallback_key: String,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl From<PlaceholderRow> for Placeholder {
    fn from(r: PlaceholderRow) -> Self {
        Placeholder {
            pattern: r.pattern,
            fallback: ObjectKey::from(r.fallback_key),
            created_at: r.created_at,
            updated_at: r.updated_at,
        }
    }
}

#[async_trait]
impl PlaceholderStore for PgPlaceholders {
    async fn put(
        &self,
        org_id: &OrgId,
        p: &Placeholder,
        max: usize,
        audit: &Audit,
    ) -> Result<Put, StoreError> {
        self.db
            .audited(|conn| {
                async move {
                    // concurrent puts of one organization take turns, so the count below holds
                    crate::lock_org(conn, org_id.as_str()).await?;
                    let existing: Option<DateTime<Utc>> = placeholders::table
                        .find((org_id.as_str(), p.pattern.as_str()))
                        .select(placeholders::created_at)
                        .first(conn)
                        .await
                        .optional()?;
                    if let Some(created_at) = existing {
                        diesel::update(
                            placeholders::table.find((org_id.as_str(), p.pattern.as_str())),
                        )
                        .set((
                            placeholders::fallback_key.eq(p.fallback.as_str()),
                            placeholders::updated_at.eq(p.updated_at),
                        ))
                        .execute(conn)
                        .await?;
                        let entry = set_entry(audit, org_id, p);
                        return Ok((Put::Replaced { created_at }, vec![entry]));
                    }
                    let count: i64 = placeholders::table
                        .filter(placeholders::org_id.eq(org_id.as_str()))
                        .count()
                        .get_result(conn)
                        .await?;
                    if count as usize >= max {
                        return Ok((Put::LimitReached, vec![]));
                    }
                    diesel::insert_into(placeholders::table)
                        .values((
                            placeholders::org_id.eq(org_id.as_str()),
                            placeholders::pattern.eq(&p.pattern),
                            placeholders::fallback_key.eq(p.fallback.as_str()),
                            placeholders::created_at.eq(p.created_at),
                            placeholders::updated_at.eq(p.updated_at),
                        ))
                        .execute(conn)
                        .await?;
                    Ok((Put::Created, vec![set_entry(audit, org_id, p)]))
                }
                .scope_boxed()
            })
            .await
    }

    async fn list(&self, org_id: &OrgId) -> Result<Vec<Placeholder>, StoreError> {
        let mut conn = self.db.conn().await?;
        let rows: Vec<PlaceholderRow> = placeholders::table
            .filter(placeholders::org_id.eq(org_id.as_str()))
            .order(placeholders::pattern)
            .select(PlaceholderRow::as_select())
            .load(&mut conn)
            .await
            .map_err(db_error)?;
        Ok(rows.into_iter().map(Into::into).collect())
    }

    async fn delete(
        &self,
        org_id: &OrgId,
        pattern: &str,
        audit: &Audit,
    ) -> Result<bool, StoreError> {
        self.db
            .audited(|conn| {
                async move {
                    let n = diesel::delete(placeholders::table.find((org_id.as_str(), pattern)))
                        .execute(conn)
                        .await?;
                    let entries = (n == 1)
                        .then(|| removed_entry(audit, org_id, pattern))
                        .into_iter()
                        .collect();
                    Ok((n == 1, entries))
                }
                .scope_boxed()
            })
            .await
    }
}
