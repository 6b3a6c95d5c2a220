//! Token-signing secrets ([`SigningSecretStore`]); migration 9 makes the first one.

use async_trait::async_trait;
use auth_core::signing::SigningKeys;
use auth_core::signing_secrets::{keys_from, SecretInfo, SigningSecretStore};
use auth_core::StoreError;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, RunQueryDsl};

use crate::schema::signing_secrets;
use crate::{db_error, Db};

pub struct PgSigningSecrets {
    db: Db,
}

impl PgSigningSecrets {
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

type Row = (i64, Vec<u8>, DateTime<Utc>, Option<DateTime<Utc>>);

impl PgSigningSecrets {
    /// The rows still accepted at `now`, newest first.
    async fn accepted(&self, now: DateTime<Utc>) -> Result<Vec<Row>, StoreError> {
        let mut conn = self.db.conn().await?;
        signing_secrets::table
            .filter(
                signing_secrets::accepted_until
                    .is_null()
                    .or(signing_secrets::accepted_until.gt(now)),
            )
            .order(signing_secrets::id.desc())
            .select((
                signing_secrets::id,
                signing_secrets::secret,
                signing_secrets::created_at,
                signing_secrets::accepted_until,
            ))
            .load(&mut conn)
            .await
            .map_err(db_error)
    }
}

#[async_trait]
impl SigningSecretStore for PgSigningSecrets {
    async fn keys(&self, now: DateTime<Utc>) -> Result<SigningKeys, StoreError> {
        let rows = self.accepted(now).await?;
        keys_from(rows.iter().map(|r| (r.1.as_slice(), r.3)), now)
    }

    async fn rotate(
        &self,
        secret: &[u8],
        now: DateTime<Utc>,
        previous_until: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let mut conn = self.db.conn().await?;
        conn.transaction::<_, diesel::result::Error, _>(|conn| {
            async move {
                diesel::update(
                    signing_secrets::table.filter(signing_secrets::accepted_until.is_null()),
                )
                .set(signing_secrets::accepted_until.eq(previous_until))
                .execute(conn)
                .await?;
                diesel::delete(
                    signing_secrets::table.filter(signing_secrets::accepted_until.lt(now)),
                )
                .execute(conn)
                .await?;
                diesel::insert_into(signing_secrets::table)
                    .values((
                        signing_secrets::secret.eq(secret),
                        signing_secrets::created_at.eq(now),
                    ))
                    .execute(conn)
                    .await?;
                Ok(())
            }
            .scope_boxed()
        })
        .await
        .map_err(db_error)
    }

    async fn list(&self, now: DateTime<Utc>) -> Result<Vec<SecretInfo>, StoreError> {
        Ok(self
            .accepted(now)
            .await?
            .into_iter()
            .map(|r| SecretInfo {
                id: r.0,
                created_at: r.2,
                accepted_until: r.3,
            })
            .collect())
    }
}
