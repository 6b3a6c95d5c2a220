//! Open live tails, leased (`log_tails`, migration 10): the per-organization limit holds across
//! instances, and the tails of an instance that died expire with their leases.

use auth_core::StoreError;
use chrono::{DateTime, Utc};
use diesel::sql_types::{BigInt, Text, Timestamptz};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, RunQueryDsl};

use crate::{db_error, Db};

#[derive(diesel::QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

/// A lease for a new tail of `org_id` until `expires_at`, unless `limit` are open already.
pub async fn acquire_tail(
    db: &Db,
    org_id: &str,
    limit: usize,
    expires_at: DateTime<Utc>,
) -> Result<Option<String>, StoreError> {
    let mut conn = db.conn().await?;
    let id = format!("tail_{}", ulid::Ulid::new().to_string().to_lowercase());
    let org = org_id.to_owned();
    let lease = id.clone();
    let granted = conn
        .transaction::<_, diesel::result::Error, _>(|conn| {
            async move {
                // one acquirer per organization at a time, so two cannot both take the last slot
                diesel::sql_query("SELECT 1 FROM organizations WHERE id = $1 FOR NO KEY UPDATE")
                    .bind::<Text, _>(&org)
                    .execute(conn)
                    .await?;
                diesel::sql_query("DELETE FROM log_tails WHERE org_id = $1 AND expires_at < now()")
                    .bind::<Text, _>(&org)
                    .execute(conn)
                    .await?;
                let open: Count =
                    diesel::sql_query("SELECT count(*) AS n FROM log_tails WHERE org_id = $1")
                        .bind::<Text, _>(&org)
                        .get_result(conn)
                        .await?;
                if open.n >= limit as i64 {
                    return Ok(false);
                }
                diesel::sql_query(
                    "INSERT INTO log_tails (id, org_id, expires_at) VALUES ($1, $2, $3)",
                )
                .bind::<Text, _>(&lease)
                .bind::<Text, _>(&org)
                .bind::<Timestamptz, _>(expires_at)
                .execute(conn)
                .await?;
                Ok(true)
            }
            .scope_boxed()
        })
        .await
        .map_err(db_error)?;
    Ok(granted.then_some(id))
}

/// Extends the lease; `false` when it is gone (expired and taken back).
pub async fn renew_tail(db: &Db, id: &str, expires_at: DateTime<Utc>) -> Result<bool, StoreError> {
    let mut conn = db.conn().await?;
    let n = diesel::sql_query("UPDATE log_tails SET expires_at = $2 WHERE id = $1")
        .bind::<Text, _>(id)
        .bind::<Timestamptz, _>(expires_at)
        .execute(&mut conn)
        .await
        .map_err(db_error)?;
    Ok(n == 1)
}

pub async fn release_tail(db: &Db, id: &str) -> Result<(), StoreError> {
    let mut conn = db.conn().await?;
    diesel::sql_query("DELETE FROM log_tails WHERE id = $1")
        .bind::<Text, _>(id)
        .execute(&mut conn)
        .await
        .map_err(db_error)?;
    Ok(())
}
