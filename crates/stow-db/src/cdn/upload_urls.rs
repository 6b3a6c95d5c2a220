//! Upload URLs and their file counts ([`UploadUrlStore`]).

use async_trait::async_trait;
use auth_core::{KeyId, OrgId, StoreError};
use cdn_core::upload_url::{Reservation, UploadUrlRecord, UploadUrlStore};
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

use crate::schema::upload_urls;
use crate::{db_error, Db};

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
            org_id: OrgId::from(r.org_id),
            key_id: KeyId::from(r.key_id),
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
                upload_urls::org_id.eq(r.org_id.as_str()),
                upload_urls::key_id.eq(r.key_id.as_str()),
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
