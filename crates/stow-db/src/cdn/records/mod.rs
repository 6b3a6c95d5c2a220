//! Object rows ([`ObjectRecordStore`]): key → location, size, type, metadata.

use async_trait::async_trait;
use auth_core::audit::Audit;
use auth_core::{OrgId, StoreError};
use cdn_core::folder::{FolderEntry, FolderQuery};
use cdn_core::folder_move::{FolderMove, MoveBatch};
use cdn_core::lifecycle::{expired_entry, keep_entry, Expiry};
use cdn_core::metadata::Metadata;
use cdn_core::search::SearchQuery;
use cdn_core::store::{
    deleted_entry, moved_entry, FolderUsage, ListQuery, ObjectRecord, ObjectRecordStore,
    ObjectTotals, Renamed,
};
use cdn_core::ObjectKey;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{Array, BigInt, Text, Timestamptz};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::RunQueryDsl;
use diesel_async::{AsyncConnection, AsyncPgConnection};
use serde_json::Value;

use crate::schema::objects;
use crate::{db_error, Db};

mod expiry;
mod moves;
mod usage;

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
    keep: bool,
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
            key: ObjectKey::from(r.key),
            size: r.size,
            content_type: r.content_type,
            etag: r.etag,
            metadata,
            storage_path: r.storage_path,
            last_modified: r.updated_at,
            // rows stored before migration 7 have no creation time
            created_at: r.created_at.unwrap_or(r.updated_at),
            keep: r.keep,
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
pub(super) fn folder_upper_bound(folder: &str) -> String {
    format!("{folder}0")
}

/// `query` kept to the keys a listing of `folder` may show: inside it (or its own key), not
/// under a `denied` prefix, no dot-prefixed segment.
pub(super) fn visible_in<'a, ST>(
    mut query: objects::BoxedQuery<'a, diesel::pg::Pg, ST>,
    folder: &str,
    denied: &[String],
) -> objects::BoxedQuery<'a, diesel::pg::Pg, ST> {
    if !folder.is_empty() {
        // the folder's own key or a key inside it; the outer range (from the folder's key to
        // past its last key) is what the index scan is bounded by, the inner choice is checked
        // on the few keys in between (`shots-old`, `shots.png`)
        query = query
            .filter(objects::key.ge(folder.to_owned()))
            .filter(objects::key.lt(folder_upper_bound(folder)))
            .filter(
                objects::key
                    .eq(folder.to_owned())
                    .or(objects::key.ge(format!("{folder}/"))),
            );
    }
    for d in denied {
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
    query
        .filter(objects::key.not_like(".%"))
        .filter(objects::key.not_like("%/.%"))
}

/// Inserts the row unless its key has one; whether it did.
async fn insert_if_absent(
    conn: &mut AsyncPgConnection,
    org_id: &OrgId,
    r: &ObjectRecord,
    metadata: &Value,
) -> diesel::QueryResult<bool> {
    let inserted = diesel::insert_into(objects::table)
        .values((
            objects::org_id.eq(org_id.as_str()),
            objects::key.eq(r.key.as_str()),
            objects::size.eq(r.size),
            objects::content_type.eq(&r.content_type),
            objects::etag.eq(&r.etag),
            objects::metadata.eq(metadata),
            objects::storage_path.eq(&r.storage_path),
            objects::updated_at.eq(r.last_modified),
            objects::created_at.eq(r.created_at),
        ))
        .on_conflict_do_nothing()
        .execute(conn)
        .await?;
    Ok(inserted == 1)
}

#[async_trait]
impl ObjectRecordStore for PgObjectRecords {
    async fn upsert(&self, org_id: &OrgId, r: &ObjectRecord) -> Result<Option<String>, StoreError> {
        let mut conn = self.db.conn().await?;
        let metadata = serde_json::to_value(&r.metadata).unwrap_or(Value::Null);
        conn.transaction::<_, diesel::result::Error, _>(|conn| {
            async move {
                // Each statement sees what committed before it began (READ COMMITTED), so a
                // concurrent delete or move can take the row away between the insert that found
                // it and the lock that wants it; look again, a bounded number of times.
                for _ in 0..RACE_ATTEMPTS {
                    if insert_if_absent(conn, org_id, r, &metadata).await? {
                        return Ok(Some(None));
                    }
                    // Lock the current row so the replaced path we return is exactly the one this
                    // write replaces, even with concurrent writers to the same key.
                    let old: Option<String> = objects::table
                        .find((org_id.as_str(), r.key.as_str()))
                        .select(objects::storage_path)
                        .for_update()
                        .first(conn)
                        .await
                        .optional()?;
                    let Some(old) = old else { continue };
                    diesel::update(objects::table.find((org_id.as_str(), r.key.as_str())))
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
                    return Ok(Some(Some(old)));
                }
                Ok(None)
            }
            .scope_boxed()
        })
        .await
        .map_err(db_error)?
        .ok_or_else(|| StoreError::Conflict(KEY_CHANGED.to_owned()))
    }

    async fn create(&self, org_id: &OrgId, r: &ObjectRecord) -> Result<bool, StoreError> {
        let mut conn = self.db.conn().await?;
        let metadata = serde_json::to_value(&r.metadata).unwrap_or(Value::Null);
        // the primary key decides between racing creates: one inserts, the others find it taken
        insert_if_absent(&mut conn, org_id, r, &metadata)
            .await
            .map_err(db_error)
    }

    async fn get(
        &self,
        org_id: &OrgId,
        key: &ObjectKey,
    ) -> Result<Option<ObjectRecord>, StoreError> {
        let mut conn = self.db.conn().await?;
        objects::table
            .find((org_id.as_str(), key.as_str()))
            .select(ObjectRow::as_select())
            .first(&mut conn)
            .await
            .optional()
            .map(|r| r.map(Into::into))
            .map_err(db_error)
    }

    async fn delete(
        &self,
        org_id: &OrgId,
        key: &ObjectKey,
        audit: &Audit,
    ) -> Result<Option<ObjectRecord>, StoreError> {
        self.db
            .audited(|conn| {
                async move {
                    let deleted: Option<ObjectRecord> =
                        diesel::delete(objects::table.find((org_id.as_str(), key.as_str())))
                            .returning(ObjectRow::as_returning())
                            .get_result(conn)
                            .await
                            .optional()?
                            .map(Into::into);
                    let entries = deleted
                        .iter()
                        .map(|r| deleted_entry(audit, org_id, r))
                        .collect();
                    Ok((deleted, entries))
                }
                .scope_boxed()
            })
            .await
    }

    async fn delete_many(
        &self,
        org_id: &OrgId,
        keys: &[ObjectKey],
        audit: &Audit,
    ) -> Result<Vec<ObjectRecord>, StoreError> {
        self.db
            .audited(|conn| {
                async move {
                    let rows: Vec<ObjectRow> = diesel::delete(
                        objects::table
                            .filter(objects::org_id.eq(org_id.as_str()))
                            .filter(
                                objects::key
                                    .eq_any(keys.iter().map(ObjectKey::as_str).collect::<Vec<_>>()),
                            ),
                    )
                    .returning(ObjectRow::as_returning())
                    .get_results(conn)
                    .await?;
                    let deleted: Vec<ObjectRecord> = rows.into_iter().map(Into::into).collect();
                    let entries: Vec<_> = deleted
                        .iter()
                        .map(|r| deleted_entry(audit, org_id, r))
                        .collect();
                    Ok((deleted, entries))
                }
                .scope_boxed()
            })
            .await
    }

    async fn list(&self, org_id: &OrgId, q: &ListQuery) -> Result<Vec<ObjectRecord>, StoreError> {
        let mut conn = self.db.conn().await?;
        let mut query = objects::table
            .filter(objects::org_id.eq(org_id.as_str()))
            .select(ObjectRow::as_select())
            .order(objects::key.asc())
            .limit(q.limit as i64)
            .into_boxed();
        query = visible_in(query, &q.folder, &q.denied);
        if let Some(after) = &q.after {
            query = query.filter(objects::key.gt(after.clone()));
        }
        let rows: Vec<ObjectRow> = query.load(&mut conn).await.map_err(db_error)?;
        Ok(rows.into_iter().map(Into::into).collect())
    }

    async fn search(
        &self,
        org_id: &OrgId,
        query: &SearchQuery,
    ) -> Result<Vec<ObjectRecord>, StoreError> {
        let mut conn = self.db.conn().await?;
        super::search::search(&mut conn, org_id, query).await
    }

    async fn list_folder(
        &self,
        org_id: &OrgId,
        q: &FolderQuery,
    ) -> Result<Vec<FolderEntry>, StoreError> {
        let mut conn = self.db.conn().await?;
        super::folder_view::list_folder(&mut conn, org_id, q)
            .await
            .map_err(db_error)
    }

    async fn rename(
        &self,
        org_id: &OrgId,
        from: &ObjectKey,
        to: &ObjectKey,
        replace: bool,
        audit: &Audit,
    ) -> Result<Renamed, StoreError> {
        moves::rename(self, org_id, from, to, replace, audit).await
    }

    async fn folder_move_batch(
        &self,
        org_id: &OrgId,
        m: &FolderMove,
    ) -> Result<MoveBatch, StoreError> {
        moves::folder_move_batch(self, org_id, m).await
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

    async fn expire(
        &self,
        org_id: &OrgId,
        e: &Expiry,
        limit: usize,
        audit: &Audit,
    ) -> Result<Vec<ObjectRecord>, StoreError> {
        expiry::expire(self, org_id, e, limit, audit).await
    }

    async fn set_keep(
        &self,
        org_id: &OrgId,
        keys: &[ObjectKey],
        keep: bool,
        audit: &Audit,
    ) -> Result<Vec<ObjectKey>, StoreError> {
        expiry::set_keep(self, org_id, keys, keep, audit).await
    }

    async fn folder_usage(&self, org_id: &OrgId) -> Result<Vec<FolderUsage>, StoreError> {
        usage::folder_usage(self, org_id).await
    }

    async fn totals(&self, org_id: &OrgId) -> Result<ObjectTotals, StoreError> {
        usage::totals(self, org_id).await
    }
}

#[derive(QueryableByName)]
pub(super) struct KeyRow {
    #[diesel(sql_type = Text)]
    pub(super) key: String,
}

/// How often a write looks again when a concurrent write changed its key between two statements.
pub(super) const RACE_ATTEMPTS: usize = 3;

/// The answer when that kept happening (only under a storm of writes to one key).
pub(super) const KEY_CHANGED: &str =
    "the object at this key kept changing while this request wrote it; try again";
