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
fn folder_upper_bound(folder: &str) -> String {
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
        let mut conn = self.db.conn().await?;
        for _ in 0..RACE_ATTEMPTS {
            match rename_once(&mut conn, org_id, from, to, replace, audit).await {
                // a row came to `to` after the check (an upload, another move): nothing moved;
                // look again, and this time it is seen (replaced, or a conflict)
                Err(diesel::result::Error::DatabaseError(
                    diesel::result::DatabaseErrorKind::UniqueViolation,
                    _,
                )) => continue,
                other => return other.map_err(db_error),
            }
        }
        Err(StoreError::Conflict(KEY_CHANGED.to_owned()))
    }

    async fn folder_move_batch(
        &self,
        org_id: &OrgId,
        m: &FolderMove,
    ) -> Result<MoveBatch, StoreError> {
        let (from, to, limit) = (m.from.as_str(), m.to.as_str(), m.limit);
        let mut conn = self.db.conn().await?;
        let keys = |destination: &str, limit: usize| {
            diesel::sql_query(format!(
                "{FOLDER_MOVE_KEYS} {destination} ORDER BY s.key LIMIT $6"
            ))
            .bind::<Text, _>(org_id.as_str())
            .bind::<Text, _>(format!("{from}/"))
            .bind::<Text, _>(folder_upper_bound(from))
            .bind::<Text, _>(from)
            .bind::<Text, _>(to)
            .bind::<BigInt, _>(limit as i64)
        };
        let mut batch = MoveBatch::default();
        let (movable, blocked) = if m.replace {
            (keys("AND $4 = $4 AND $5 = $5", limit + 1), None)
        } else {
            (
                keys(&format!("AND NOT {DESTINATION_TAKEN}"), limit + 1),
                Some(keys(&format!("AND {DESTINATION_TAKEN}"), limit)),
            )
        };
        let movable: Vec<KeyRow> = movable.load(&mut conn).await.map_err(db_error)?;
        batch.movable = movable.into_iter().map(|r| r.key.into()).collect();
        batch.more_movable = batch.movable.len() > limit;
        batch.movable.truncate(limit);
        if let Some(blocked) = blocked {
            let blocked: Vec<KeyRow> = blocked.load(&mut conn).await.map_err(db_error)?;
            batch.blocked = blocked.into_iter().map(|r| r.key.into()).collect();
        }
        Ok(batch)
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
        self.db
            .audited(|conn| {
                async move {
                    let keys: Vec<String> = diesel::sql_query(EXPIRED_KEYS)
                        .bind::<Text, _>(org_id.as_str())
                        .bind::<Timestamptz, _>(e.before)
                        .bind::<Text, _>(&e.folder)
                        .bind::<Array<Text>, _>(&e.except)
                        .bind::<BigInt, _>(limit as i64)
                        .load::<KeyRow>(conn)
                        .await?
                        .into_iter()
                        .map(|r| r.key)
                        .collect();
                    if keys.is_empty() {
                        return Ok((Vec::new(), vec![]));
                    }
                    let rows: Vec<ObjectRow> = diesel::delete(
                        objects::table
                            .filter(objects::org_id.eq(org_id.as_str()))
                            .filter(objects::key.eq_any(&keys)),
                    )
                    .returning(ObjectRow::as_returning())
                    .get_results(conn)
                    .await?;
                    let mut gone: Vec<ObjectRecord> = rows.into_iter().map(Into::into).collect();
                    gone.sort_by(|a, b| a.key.cmp(&b.key));
                    let entries: Vec<_> = gone
                        .iter()
                        .map(|r| expired_entry(audit, org_id, e, r))
                        .collect();
                    Ok((gone, entries))
                }
                .scope_boxed()
            })
            .await
    }

    async fn set_keep(
        &self,
        org_id: &OrgId,
        keys: &[ObjectKey],
        keep: bool,
        audit: &Audit,
    ) -> Result<Vec<ObjectKey>, StoreError> {
        let wanted: Vec<&str> = keys.iter().map(ObjectKey::as_str).collect();
        self.db
            .audited(|conn| {
                async move {
                    let changed: Vec<String> = diesel::update(
                        objects::table
                            .filter(objects::org_id.eq(org_id.as_str()))
                            .filter(objects::key.eq_any(&wanted))
                            .filter(objects::keep.ne(keep)),
                    )
                    .set(objects::keep.eq(keep))
                    .returning(objects::key)
                    .get_results(conn)
                    .await?;
                    let entries: Vec<_> = changed
                        .iter()
                        .map(|k| keep_entry(audit, org_id, &ObjectKey::from(k.clone()), keep))
                        .collect();
                    let found: Vec<String> = objects::table
                        .filter(objects::org_id.eq(org_id.as_str()))
                        .filter(objects::key.eq_any(&wanted))
                        .select(objects::key)
                        .load(conn)
                        .await?;
                    // in the order asked
                    let kept = keys
                        .iter()
                        .filter(|k| found.iter().any(|f| f == k.as_str()))
                        .cloned()
                        .collect();
                    Ok((kept, entries))
                }
                .scope_boxed()
            })
            .await
    }

    async fn folder_usage(&self, org_id: &OrgId) -> Result<Vec<FolderUsage>, StoreError> {
        let mut conn = self.db.conn().await?;
        #[derive(QueryableByName)]
        struct Row {
            #[diesel(sql_type = Text)]
            folder: String,
            #[diesel(sql_type = BigInt)]
            objects: i64,
            #[diesel(sql_type = BigInt)]
            bytes: i64,
        }
        // the rolled-up counts plus the changes not rolled up yet (migration 27)
        let rows: Vec<Row> = diesel::sql_query(
            "SELECT folder, sum(objects)::bigint AS objects, sum(bytes)::bigint AS bytes \
               FROM (SELECT folder, objects, bytes FROM object_usage WHERE org_id = $1 \
                     UNION ALL \
                     SELECT folder, objects, bytes FROM object_usage_deltas WHERE org_id = $1) u \
              GROUP BY folder HAVING sum(objects) > 0 ORDER BY folder",
        )
        .bind::<Text, _>(org_id.as_str())
        .load(&mut conn)
        .await
        .map_err(db_error)?;
        Ok(rows
            .into_iter()
            .map(|r| FolderUsage {
                folder: r.folder,
                totals: ObjectTotals {
                    objects: r.objects,
                    bytes: r.bytes,
                },
            })
            .collect())
    }

    async fn totals(&self, org_id: &OrgId) -> Result<ObjectTotals, StoreError> {
        let mut conn = self.db.conn().await?;
        #[derive(QueryableByName)]
        struct Totals {
            #[diesel(sql_type = BigInt)]
            objects: i64,
            #[diesel(sql_type = BigInt)]
            bytes: i64,
        }
        let t: Totals = diesel::sql_query(
            "SELECT count(*)::bigint AS objects, COALESCE(sum(size), 0)::bigint AS bytes \
             FROM objects WHERE org_id = $1",
        )
        .bind::<Text, _>(org_id.as_str())
        .get_result(&mut conn)
        .await
        .map_err(db_error)?;
        Ok(ObjectTotals {
            objects: t.objects,
            bytes: t.bytes,
        })
    }
}

#[derive(QueryableByName)]
struct KeyRow {
    #[diesel(sql_type = Text)]
    key: String,
}

/// The keys of one lifecycle rule's next batch (`cdn_core::lifecycle::Expiry::expires`): under
/// `$3` (every key for the root), last modified before `$2`, not kept, not hidden, not under a
/// deeper rule's folder (`$4`), in key order: the planner then walks the folder's primary-key range
/// when many are old, or the last-modified index when few are (ordered by age, a rule on a small
/// folder walked every old object of the organization; decision 014). Rows another instance's
/// batch holds are skipped; a row changed since the snapshot is
/// judged again as it now is (a replaced or kept one stays).
const EXPIRED_KEYS: &str = r#"
SELECT key FROM objects
 WHERE org_id = $1 AND updated_at < $2 AND NOT keep
   AND key NOT LIKE '.%' AND key NOT LIKE '%/.%'
   AND ($3 = '' OR (key >= ($3 || '/') AND key < ($3 || '0')))
   AND NOT EXISTS (SELECT 1 FROM unnest($4::text[]) AS inner_rule(folder)
                    WHERE key >= (inner_rule.folder || '/') AND key < (inner_rule.folder || '0'))
 ORDER BY key
 LIMIT $5
 FOR UPDATE SKIP LOCKED"#;

/// Keys under a folder (`$2` = `folder/` ≤ key < `$3`), never dot-named ones, with a condition on
/// the destination appended. A destination is `$5` (the new folder) followed by the
/// key's part after `$4` (the old folder).
const FOLDER_MOVE_KEYS: &str = r#"
SELECT s.key FROM objects s
 WHERE s.org_id = $1 AND s.key >= $2 AND s.key < $3
   AND s.key NOT LIKE '.%' AND s.key NOT LIKE '%/.%'"#;
/// The key's destination has an object (`AND NOT …` for a free one).
const DESTINATION_TAKEN: &str = r#"EXISTS (SELECT 1 FROM objects d
     WHERE d.org_id = $1 AND d.key = $5 || substr(s.key, char_length($4) + 1))"#;

/// How often a write looks again when a concurrent write changed its key between two statements.
const RACE_ATTEMPTS: usize = 3;

/// The answer when that kept happening (only under a storm of writes to one key).
const KEY_CHANGED: &str =
    "the object at this key kept changing while this request wrote it; try again";

async fn rename_once(
    conn: &mut AsyncPgConnection,
    org: &OrgId,
    from_key: &ObjectKey,
    to_key: &ObjectKey,
    replace: bool,
    audit: &Audit,
) -> Result<Renamed, diesel::result::Error> {
    let (org_id, from, to) = (org.as_str(), from_key.as_str(), to_key.as_str());
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
            // transaction rolls back, nothing moved, and the caller looks again
            diesel::update(objects::table.find((org_id, from)))
                .set(objects::key.eq(to))
                .execute(conn)
                .await?;
            let entry = moved_entry(audit, org, from_key, to_key, existing.is_some());
            crate::audit::append(conn, &[entry]).await?;
            Ok(Renamed::Moved { replaced: existing })
        }
        .scope_boxed()
    })
    .await
}
