//! Console sessions ([`ConsoleSessionStore`]); migrations 12 and 18.

use async_trait::async_trait;
use auth_core::console_session::{ConsoleSessionStore, Session, Subject};
use auth_core::StoreError;
use auth_core::{KeyId, MemberId, OrgId};
use chrono::{DateTime, Utc};
use diesel::sql_types::{Bytea, Nullable, Text, Timestamptz};
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
    #[diesel(sql_type = Nullable<Text>)]
    key_id: Option<String>,
    #[diesel(sql_type = Nullable<Bytea>)]
    key_hash: Option<Vec<u8>>,
    #[diesel(sql_type = Nullable<Text>)]
    member_id: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    org_id: Option<String>,
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
        let (key_id, key_hash, member_id, org_id) = match &s.subject {
            Subject::Key { key_id, key_hash } => {
                (Some(key_id.as_str()), Some(&key_hash[..]), None, None)
            }
            Subject::Member { member_id, org_id } => {
                (None, None, Some(member_id.as_str()), Some(org_id.as_str()))
            }
        };
        diesel::sql_query(
            "INSERT INTO console_sessions \
             (id_hash, key_id, key_hash, member_id, org_id, csrf_token, created_at, last_seen_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind::<Bytea, _>(&s.id_hash[..])
        .bind::<Nullable<Text>, _>(key_id)
        .bind::<Nullable<Bytea>, _>(key_hash)
        .bind::<Nullable<Text>, _>(member_id)
        .bind::<Nullable<Text>, _>(org_id)
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
            "SELECT id_hash, key_id, key_hash, member_id, org_id, csrf_token, created_at, \
             last_seen_at FROM console_sessions WHERE id_hash = $1",
        )
        .bind::<Bytea, _>(&id_hash[..])
        .get_result(&mut conn)
        .await
        .optional()
        .map_err(db_error)?;
        row.map(|r| {
            let subject = match (r.key_id, r.key_hash, r.member_id, r.org_id) {
                (Some(key_id), Some(key_hash), _, _) => Subject::Key {
                    key_id: KeyId::from(key_id),
                    key_hash: hash32(key_hash, "key hash")?,
                },
                (_, _, Some(member_id), Some(org_id)) => Subject::Member {
                    member_id: MemberId::from(member_id),
                    org_id: OrgId::from(org_id),
                },
                _ => {
                    return Err(StoreError::Internal(
                        "console session without a subject".into(),
                    ))
                }
            };
            Ok(Session {
                id_hash: hash32(r.id_hash, "token hash")?,
                subject,
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

    async fn end_for_member(
        &self,
        member_id: &MemberId,
        org_id: Option<&OrgId>,
    ) -> Result<u64, StoreError> {
        let mut conn = self.db.conn().await?;
        let n = diesel::sql_query(
            "DELETE FROM console_sessions WHERE member_id = $1 AND ($2::text IS NULL OR org_id = $2)",
        )
        .bind::<Text, _>(member_id.as_str())
        .bind::<Nullable<Text>, _>(org_id.map(|o| o.as_str()))
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
