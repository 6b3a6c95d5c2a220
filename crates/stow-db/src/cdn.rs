//! Postgres implementations of the CDN storage traits.

use async_trait::async_trait;
use auth_core::StoreError;
use cdn_core::idempotency::{Claim, IdemScope, IdempotencyStore, LEASE_SECS};
use cdn_core::metadata::Metadata;
use cdn_core::store::{ListQuery, ObjectRecord, ObjectRecordStore};
use cdn_core::upload_url::{Reservation, UploadUrlRecord, UploadUrlStore};
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, RunQueryDsl};
use serde_json::Value;

use crate::schema::{idempotency_records, objects, upload_urls};
use crate::{db_error, Db};

#[derive(Queryable, Selectable)]
#[diesel(table_name = objects)]
struct ObjectRow {
    key: String,
    size: i64,
    content_type: Option<String>,
    etag: String,
    metadata: Value,
    storage_path: String,
    updated_at: DateTime<Utc>,
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

    async fn list(&self, org_id: &str, q: &ListQuery) -> Result<Vec<ObjectRecord>, StoreError> {
        let mut conn = self.db.conn().await?;
        let mut query = objects::table
            .filter(objects::org_id.eq(org_id))
            .select(ObjectRow::as_select())
            .order(objects::key.asc())
            .limit(q.limit as i64)
            .into_boxed();
        if !q.folder.is_empty() {
            let lower = format!("{}/", q.folder);
            query = query.filter(
                objects::key.eq(q.folder.clone()).or(objects::key
                    .ge(lower)
                    .and(objects::key.lt(folder_upper_bound(&q.folder)))),
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

pub struct PgIdempotency {
    db: Db,
}

impl PgIdempotency {
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

fn idem_filter(s: &IdemScope) -> IdemRecord<'_> {
    idempotency_records::table.find((
        s.scope.as_str(),
        s.method.as_str(),
        s.route.as_str(),
        s.key.as_str(),
    ))
}

type IdemRecord<'a> =
    diesel::dsl::Find<idempotency_records::table, (&'a str, &'a str, &'a str, &'a str)>;
type InFlightUnder<'a> = diesel::dsl::And<
    diesel::dsl::Eq<idempotency_records::state, &'static str>,
    diesel::dsl::Eq<idempotency_records::owner, &'a str>,
>;

/// The record while it is in flight under `owner`.
fn owned_in_flight<'a>(
    s: &'a IdemScope,
    owner: &'a str,
) -> diesel::dsl::Filter<IdemRecord<'a>, InFlightUnder<'a>> {
    idem_filter(s).filter(
        idempotency_records::state
            .eq("in_flight")
            .and(idempotency_records::owner.eq(owner)),
    )
}

fn lease_until(now: DateTime<Utc>) -> DateTime<Utc> {
    now + chrono::Duration::seconds(LEASE_SECS)
}

#[async_trait]
impl IdempotencyStore for PgIdempotency {
    async fn claim(
        &self,
        s: &IdemScope,
        owner: &str,
        now: DateTime<Utc>,
    ) -> Result<Claim, StoreError> {
        let mut conn = self.db.conn().await?;
        // Insert, or take over an in-flight record whose lease ran out; either way we own it.
        use diesel::sql_types::{Text, Timestamptz};
        let claimed = diesel::sql_query(
            "INSERT INTO idempotency_records \
                 (scope, method, route, idem_key, state, owner, lease_expires_at, created_at) \
             VALUES ($1, $2, $3, $4, 'in_flight', $5, $7, $6) \
             ON CONFLICT (scope, method, route, idem_key) DO UPDATE \
                 SET owner = EXCLUDED.owner, lease_expires_at = EXCLUDED.lease_expires_at, \
                     created_at = EXCLUDED.created_at \
             WHERE idempotency_records.state = 'in_flight' \
               AND COALESCE(idempotency_records.lease_expires_at, \
                            idempotency_records.created_at + interval '300 seconds') < $6",
        )
        .bind::<Text, _>(&s.scope)
        .bind::<Text, _>(&s.method)
        .bind::<Text, _>(&s.route)
        .bind::<Text, _>(&s.key)
        .bind::<Text, _>(owner)
        .bind::<Timestamptz, _>(now)
        .bind::<Timestamptz, _>(lease_until(now))
        .execute(&mut conn)
        .await
        .map_err(db_error)?;
        if claimed == 1 {
            return Ok(Claim::Claimed);
        }
        type Row = (
            String,
            Option<Vec<u8>>,
            Option<i32>,
            Option<Vec<u8>>,
            Option<Value>,
        );
        let row: Option<Row> = idem_filter(s)
            .select((
                idempotency_records::state,
                idempotency_records::fingerprint,
                idempotency_records::status,
                idempotency_records::response_body,
                idempotency_records::response,
            ))
            .first(&mut conn)
            .await
            .optional()
            .map_err(db_error)?;
        Ok(match row {
            Some((state, fp, status, body, legacy)) if state == "done" => Claim::Done {
                fingerprint: fp.unwrap_or_default(),
                status: status.and_then(|s| u16::try_from(s).ok()).unwrap_or(200),
                // records completed before migration 6 hold the response as jsonb
                response: body
                    .or_else(|| legacy.and_then(|v| serde_json::to_vec(&v).ok()))
                    .unwrap_or_default(),
            },
            Some(_) => Claim::InFlight,
            // released between our insert attempt and the read: the caller may retry
            None => Claim::InFlight,
        })
    }

    async fn renew(
        &self,
        s: &IdemScope,
        owner: &str,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let mut conn = self.db.conn().await?;
        diesel::update(owned_in_flight(s, owner))
            .set(idempotency_records::lease_expires_at.eq(lease_until(now)))
            .execute(&mut conn)
            .await
            .map(|n| n == 1)
            .map_err(db_error)
    }

    async fn complete(
        &self,
        s: &IdemScope,
        owner: &str,
        fingerprint: &[u8],
        status: u16,
        response: &[u8],
    ) -> Result<(), StoreError> {
        let mut conn = self.db.conn().await?;
        diesel::update(owned_in_flight(s, owner))
            .set((
                idempotency_records::state.eq("done"),
                idempotency_records::fingerprint.eq(fingerprint),
                idempotency_records::status.eq(i32::from(status)),
                idempotency_records::response_body.eq(response),
                idempotency_records::owner.eq(None::<String>),
                idempotency_records::lease_expires_at.eq(None::<DateTime<Utc>>),
            ))
            .execute(&mut conn)
            .await
            .map(|_| ())
            .map_err(db_error)
    }

    async fn release(&self, s: &IdemScope, owner: &str) -> Result<(), StoreError> {
        let mut conn = self.db.conn().await?;
        diesel::delete(owned_in_flight(s, owner))
            .execute(&mut conn)
            .await
            .map(|_| ())
            .map_err(db_error)
    }

    async fn sweep(&self, before: DateTime<Utc>) -> Result<u64, StoreError> {
        let mut conn = self.db.conn().await?;
        diesel::delete(
            idempotency_records::table.filter(idempotency_records::created_at.lt(before)),
        )
        .execute(&mut conn)
        .await
        .map(|n| n as u64)
        .map_err(db_error)
    }
}

pub struct PgUploadUrls {
    db: Db,
}

impl PgUploadUrls {
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = upload_urls)]
struct UploadUrlRow {
    token_hash: Vec<u8>,
    org_id: String,
    key_id: String,
    path: String,
    max_files: i32,
    files_used: i32,
    max_file_size: i64,
    allowed_mime: Option<Vec<String>>,
    allow_custom_metadata: bool,
    randomize_name: bool,
    expires_at: DateTime<Utc>,
}

impl TryFrom<UploadUrlRow> for UploadUrlRecord {
    type Error = StoreError;
    fn try_from(r: UploadUrlRow) -> Result<Self, StoreError> {
        Ok(UploadUrlRecord {
            token_hash: r
                .token_hash
                .try_into()
                .map_err(|_| StoreError::Internal("bad token hash length".into()))?,
            org_id: r.org_id,
            key_id: r.key_id,
            path: r.path,
            max_files: r.max_files,
            files_used: r.files_used,
            max_file_size: r.max_file_size,
            allowed_mime: r.allowed_mime,
            allow_custom_metadata: r.allow_custom_metadata,
            randomize_name: r.randomize_name,
            expires_at: r.expires_at,
        })
    }
}

#[async_trait]
impl UploadUrlStore for PgUploadUrls {
    async fn create(&self, r: &UploadUrlRecord) -> Result<(), StoreError> {
        let mut conn = self.db.conn().await?;
        diesel::insert_into(upload_urls::table)
            .values((
                upload_urls::token_hash.eq(r.token_hash.as_slice()),
                upload_urls::org_id.eq(&r.org_id),
                upload_urls::key_id.eq(&r.key_id),
                upload_urls::path.eq(&r.path),
                upload_urls::max_files.eq(r.max_files),
                upload_urls::files_used.eq(r.files_used),
                upload_urls::max_file_size.eq(r.max_file_size),
                upload_urls::allowed_mime.eq(&r.allowed_mime),
                upload_urls::allow_custom_metadata.eq(r.allow_custom_metadata),
                upload_urls::randomize_name.eq(r.randomize_name),
                upload_urls::expires_at.eq(r.expires_at),
            ))
            .execute(&mut conn)
            .await
            .map(|_| ())
            .map_err(db_error)
    }

    async fn get(&self, token_hash: &[u8; 32]) -> Result<Option<UploadUrlRecord>, StoreError> {
        let mut conn = self.db.conn().await?;
        let row: Option<UploadUrlRow> = upload_urls::table
            .find(token_hash.as_slice())
            .select(UploadUrlRow::as_select())
            .first(&mut conn)
            .await
            .optional()
            .map_err(db_error)?;
        row.map(TryInto::try_into).transpose()
    }

    async fn reserve(
        &self,
        token_hash: &[u8; 32],
        n: i32,
        now: DateTime<Utc>,
    ) -> Result<Reservation, StoreError> {
        let mut conn = self.db.conn().await?;
        // One conditional UPDATE: concurrent reservations (any number of instances) can never
        // take more than max_files slots in total.
        let updated = diesel::update(
            upload_urls::table
                .find(token_hash.as_slice())
                .filter(upload_urls::expires_at.gt(now))
                .filter((upload_urls::files_used + n).le(upload_urls::max_files)),
        )
        .set(upload_urls::files_used.eq(upload_urls::files_used + n))
        .execute(&mut conn)
        .await
        .map_err(db_error)?;
        if updated == 1 {
            return Ok(Reservation::Reserved);
        }
        let row: Option<(i32, i32, DateTime<Utc>)> = upload_urls::table
            .find(token_hash.as_slice())
            .select((
                upload_urls::max_files,
                upload_urls::files_used,
                upload_urls::expires_at,
            ))
            .first(&mut conn)
            .await
            .optional()
            .map_err(db_error)?;
        Ok(match row {
            None => Reservation::NotFound,
            Some((_, _, exp)) if exp <= now => Reservation::Expired,
            Some((max, used, _)) if max - used <= 0 => Reservation::Exhausted,
            Some((max, used, _)) => Reservation::TooMany {
                remaining: max - used,
            },
        })
    }

    async fn release(&self, token_hash: &[u8; 32], n: i32) -> Result<(), StoreError> {
        let mut conn = self.db.conn().await?;
        diesel::update(
            upload_urls::table
                .find(token_hash.as_slice())
                .filter(upload_urls::files_used.ge(n)),
        )
        .set(upload_urls::files_used.eq(upload_urls::files_used - n))
        .execute(&mut conn)
        .await
        .map(|_| ())
        .map_err(db_error)
    }
}
