//! Console sessions ([`ConsoleSessionStore`]); migration 12.

use async_trait::async_trait;
use auth_core::console_session::{ConsoleSessionStore, Session};
use auth_core::KeyId;
use auth_core::StoreError;
use chrono::{DateTime, Utc};
use diesel::sql_types::{Bytea, Text, Timestamptz};
use diesel::OptionalExtension;
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;

use crate::{db_error, Db};

pub struct PgConsoleSessions {
    db: Db,
}

impl PgConsoleSessions {
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

#[derive(QueryableByName)]
struct Row {
    #[diesel(sql_type = Bytea)]
    id_hash: Vec<u8>,
    #[diesel(sql_type = Text)]
    key_id: String,
    #[diesel(sql_type = Bytea)]
    key_hash: Vec<u8>,
    #[diesel(sql_type = Text)]
    csrf_token: String,
    #[diesel(sql_type = Timestamptz)]
    created_at: DateTime<Utc>,
    #[diesel(sql_type = Timestamptz)]
    last_seen_at: DateTime<Utc>,
}

fn hash32(bytes: Vec<u8>, what: &str) -> Result<[u8; 32], StoreError> {
    bytes
        .try_into()
        .map_err(|_| StoreError::Internal(format!("console session {what} is not 32 bytes").into()))
}

#[async_trait]
impl ConsoleSessionStore for PgConsoleSessions {
    async fn create(&self, s: &Session) -> Result<(), StoreError> {
        let mut conn = self.db.conn().await?;
        diesel::sql_query(
            "INSERT INTO console_sessions \
             (id_hash, key_id, key_hash, csrf_token, created_at, last_seen_at) \
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind::<Bytea, _>(&s.id_hash[..])
        .bind::<Text, _>(s.key_id.as_str())
        .bind::<Bytea, _>(&s.key_hash[..])
        .bind::<Text, _>(&s.csrf_token)
        .bind::<Timestamptz, _>(s.created_at)
        .bind::<Timestamptz, _>(s.last_seen_at)
        .execute(&mut conn)
        .await
        .map_err(db_error)?;
        Ok(())
    }

    async fn get(&self, id_hash: &[u8; 32]) -> Result<Option<Session>, StoreError> {
        let mut conn = self.db.conn().await?;
        let row: Option<Row> = diesel::sql_query(
            "SELECT id_hash, key_id, key_hash, csrf_token, created_at, last_seen_at \
             FROM console_sessions WHERE id_hash = $1",
        )
        .bind::<Bytea, _>(&id_hash[..])
        .get_result(&mut conn)
        .await
        .optional()
        .map_err(db_error)?;
        row.map(|r| {
            Ok(Session {
                id_hash: hash32(r.id_hash, "token hash")?,
                key_id: KeyId::from(r.key_id),
                key_hash: hash32(r.key_hash, "key hash")?,
                csrf_token: r.csrf_token,
                created_at: r.created_at,
                last_seen_at: r.last_seen_at,
            })
        })
        .transpose()
    }

    async fn touch(&self, id_hash: &[u8; 32], at: DateTime<Utc>) -> Result<(), StoreError> {
        let mut conn = self.db.conn().await?;
        diesel::sql_query("UPDATE console_sessions SET last_seen_at = $2 WHERE id_hash = $1")
            .bind::<Bytea, _>(&id_hash[..])
            .bind::<Timestamptz, _>(at)
            .execute(&mut conn)
            .await
            .map_err(db_error)?;
        Ok(())
    }

    async fn end(&self, id_hash: &[u8; 32]) -> Result<(), StoreError> {
        let mut conn = self.db.conn().await?;
        diesel::sql_query("DELETE FROM console_sessions WHERE id_hash = $1")
            .bind::<Bytea, _>(&id_hash[..])
            .execute(&mut conn)
            .await
            .map_err(db_error)?;
        Ok(())
    }

    async fn end_for_key(&self, key_id: &KeyId) -> Result<u64, StoreError> {
        let mut conn = self.db.conn().await?;
        let n = diesel::sql_query("DELETE FROM console_sessions WHERE key_id = $1")
            .bind::<Text, _>(key_id.as_str())
            .execute(&mut conn)
            .await
            .map_err(db_error)?;
        Ok(n as u64)
    }

    async fn sweep(
        &self,
        idle_before: DateTime<Utc>,
        created_before: DateTime<Utc>,
    ) -> Result<u64, StoreError> {
        let mut conn = self.db.conn().await?;
        let n = diesel::sql_query(
            "DELETE FROM console_sessions WHERE last_seen_at < $1 OR created_at < $2",
        )
        .bind::<Timestamptz, _>(idle_before)
        .bind::<Timestamptz, _>(created_before)
        .execute(&mut conn)
        .await
        .map_err(db_error)?;
        Ok(n as u64)
    }
}
