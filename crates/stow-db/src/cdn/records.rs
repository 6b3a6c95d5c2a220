//! Object rows ([`ObjectRecordStore`]): key → location, size, type, metadata.

use async_trait::async_trait;
use auth_core::StoreError;
use cdn_core::folder::{FolderEntry, FolderQuery};
use cdn_core::metadata::Metadata;
use cdn_core::store::{ListQuery, ObjectRecord, ObjectRecordStore, Renamed};
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::AsyncConnection;
use diesel_async::RunQueryDsl;
use serde_json::Value;

use crate::schema::objects;
use crate::{db_error, Db};

#[derive(Queryable, Selectable)]
#[diesel(table_name = objects)]
pub(super) struct ObjectRow {
    key: String,
    size: i64,
    content_type: Option<String>,
    etag: String,
    metadata: Value,
    storage_path: String,
    updated_at: DateTime<Utc>,
    created_at: Option<DateTime<Utc>>,
}

impl From<ObjectRow> for ObjectRecord {
    fn from(r: ObjectRow) -> Self {
        let metadata: Metadata = match r.metadata {
            Value::Object(m) => m
                .into_iter()
                .filter_map(|(k, v)| v.as_str().map(|s| (k, s.to_owned())))
                .collect(),
            _ => Metadata::new(),
        };
        ObjectRecord {
            key: r.key,
            size: r.size,
            content_type: r.content_type,
            etag: r.etag,
            metadata,
            storage_path: r.storage_path,
            last_modified: r.updated_at,
            // rows stored before migration 7 have no creation time
            created_at: r.created_at.unwrap_or(r.updated_at),
        }
    }
}

pub struct PgObjectRecords {
    db: Db,
}

impl PgObjectRecords {
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

/// The smallest string greater than every string starting with `prefix/`: `prefix0`
/// (`'0'` follows `'/'` in byte order; keys use the "C" collation).
fn folder_upper_bound(folder: &str) -> String {
    format!("{folder}0")
}

#[async_trait]
impl ObjectRecordStore for PgObjectRecords {
    async fn upsert(&self, org_id: &str, r: &ObjectRecord) -> Result<Option<String>, StoreError> {
        let mut conn = self.db.conn().await?;
        let metadata = serde_json::to_value(&r.metadata).unwrap_or(Value::Null);
        conn.transaction::<_, diesel::result::Error, _>(|conn| {
            async move {
                // Lock the current row (if any) so the replaced path we return is exactly the one
                // this write replaces, even with concurrent writers to the same key.
                let inserted = diesel::insert_into(objects::table)
                    .values((
                        objects::org_id.eq(org_id),
                        objects::key.eq(&r.key),
                        objects::size.eq(r.size),
                        objects::content_type.eq(&r.content_type),
                        objects::etag.eq(&r.etag),
                        objects::metadata.eq(&metadata),
                        objects::storage_path.eq(&r.storage_path),
                        objects::updated_at.eq(r.last_modified),
                        objects::created_at.eq(r.created_at),
                    ))
                    .on_conflict_do_nothing()
                    .execute(conn)
                    .await?;
                if inserted == 1 {
                    return Ok(None);
                }
                let old: String = objects::table
                    .find((org_id, &r.key))
                    .select(objects::storage_path)
                    .for_update()
                    .first(conn)
                    .await?;
                diesel::update(objects::table.find((org_id, &r.key)))
                    .set((
                        objects::size.eq(r.size),
                        objects::content_type.eq(&r.content_type),
                        objects::etag.eq(&r.etag),
                        objects::metadata.eq(&metadata),
                        objects::storage_path.eq(&r.storage_path),
                        objects::updated_at.eq(r.last_modified),
                    ))
                    .execute(conn)
                    .await?;
                Ok(Some(old))
            }
            .scope_boxed()
        })
        .await
        .map_err(db_error)
    }

    async fn get(&self, org_id: &str, key: &str) -> Result<Option<ObjectRecord>, StoreError> {
        let mut conn = self.db.conn().await?;
        objects::table
            .find((org_id, key))
            .select(ObjectRow::as_select())
            .first(&mut conn)
            .await
            .optional()
            .map(|r| r.map(Into::into))
            .map_err(db_error)
    }

    async fn delete(&self, org_id: &str, key: &str) -> Result<Option<ObjectRecord>, StoreError> {
        let mut conn = self.db.conn().await?;
        diesel::delete(objects::table.find((org_id, key)))
            .returning(ObjectRow::as_returning())
            .get_result(&mut conn)
            .await
            .optional()
            .map(|r| r.map(Into::into))
            .map_err(db_error)
    }

    async fn delete_many(
        &self,
        org_id: &str,
        keys: &[String],
    ) -> Result<Vec<ObjectRecord>, StoreError> {
        let mut conn = self.db.conn().await?;
        diesel::delete(
            objects::table
                .filter(objects::org_id.eq(org_id))
                .filter(objects::key.eq_any(keys)),
        )
        .returning(ObjectRow::as_returning())
        .get_results(&mut conn)
        .await
        .map(|rows: Vec<ObjectRow>| rows.into_iter().map(Into::into).collect())
        .map_err(db_error)
    }

    async fn list(&self, org_id: &str, q: &ListQuery) -> Result<Vec<ObjectRecord>, StoreError> {
        let mut conn = self.db.conn().await?;
        let mut query = objects::table
            .filter(objects::org_id.eq(org_id))
            .select(ObjectRow::as_select())
            .order(objects::key.asc())
            .limit(q.limit as i64)
            .into_boxed();
        if !q.folder.is_empty() {
            // the folder's own key or a key inside it; the outer range (from the folder's key to
            // past its last key) is what the index scan is bounded by, the inner choice is
            // checked on the few keys in between (`shots-old`, `shots.png`)
            query = query
                .filter(objects::key.ge(q.folder.clone()))
                .filter(objects::key.lt(folder_upper_bound(&q.folder)))
                .filter(
                    objects::key
                        .eq(q.folder.clone())
                        .or(objects::key.ge(format!("{}/", q.folder))),
                );
        }
        if let Some(after) = &q.after {
            query = query.filter(objects::key.gt(after.clone()));
        }
        for d in &q.denied {
            let d = d.trim_matches('/');
            if d.is_empty() {
                continue;
            }
            query = query.filter(
                objects::key.ne(d.to_owned()).and(
                    objects::key
                        .lt(format!("{d}/"))
                        .or(objects::key.ge(folder_upper_bound(d))),
                ),
            );
        }
        // dot-prefixed segments are refused on upload; this keeps any such row out of listings
        query = query
            .filter(objects::key.not_like(".%"))
            .filter(objects::key.not_like("%/.%"));
        let rows: Vec<ObjectRow> = query.load(&mut conn).await.map_err(db_error)?;
        Ok(rows.into_iter().map(Into::into).collect())
    }

    async fn list_folder(
        &self,
        org_id: &str,
        q: &FolderQuery,
    ) -> Result<Vec<FolderEntry>, StoreError> {
        let mut conn = self.db.conn().await?;
        super::folder_view::list_folder(&mut conn, org_id, q)
            .await
            .map_err(db_error)
    }

    async fn rename(
        &self,
        org_id: &str,
        from: &str,
        to: &str,
        replace: bool,
    ) -> Result<Renamed, StoreError> {
        let mut conn = self.db.conn().await?;
        conn.transaction::<_, diesel::result::Error, _>(|conn| {
            async move {
                let source: Option<String> = objects::table
                    .find((org_id, from))
                    .select(objects::key)
                    .for_update()
                    .first(conn)
                    .await
                    .optional()?;
                if source.is_none() {
                    return Ok(Renamed::SourceMissing);
                }
                if from == to {
                    return Ok(Renamed::Moved { replaced: None });
                }
                let existing: Option<String> = objects::table
                    .find((org_id, to))
                    .select(objects::storage_path)
                    .for_update()
                    .first(conn)
                    .await
                    .optional()?;
                if existing.is_some() && !replace {
                    return Ok(Renamed::DestinationExists);
                }
                if existing.is_some() {
                    diesel::delete(objects::table.find((org_id, to)))
                        .execute(conn)
                        .await?;
                }
                // a row inserted at `to` after the check makes this a unique violation: the
                // transaction fails as a conflict and nothing moved
                diesel::update(objects::table.find((org_id, from)))
                    .set(objects::key.eq(to))
                    .execute(conn)
                    .await?;
                Ok(Renamed::Moved { replaced: existing })
            }
            .scope_boxed()
        })
        .await
        .map_err(db_error)
    }

    async fn is_referenced(&self, storage_path: &str) -> Result<bool, StoreError> {
        let mut conn = self.db.conn().await?;
        diesel::select(diesel::dsl::exists(
            objects::table.filter(objects::storage_path.eq(storage_path)),
        ))
        .get_result(&mut conn)
        .await
        .map_err(db_error)
    }
}
