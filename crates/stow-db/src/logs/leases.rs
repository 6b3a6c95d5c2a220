//! Leases on an organization's limited slots: open live tails (`log_tails`, migration 10) and
//! running searches (`log_searches`, migration 15). Each limit holds across instances, and the
//! leases of an instance that died expire.

use auth_core::StoreError;
use chrono::{DateTime, Utc};
use diesel::sql_types::{BigInt, Text, Timestamptz};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, RunQueryDsl};

use logs_core::slots::LeaseKind;

use crate::{db_error, Db};

#[derive(diesel::QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

/// The table of a kind's leases.
fn table(kind: LeaseKind) -> &'static str {
    match kind {
        LeaseKind::Tail => "log_tails",
        LeaseKind::Search => "log_searches",
    }
}

/// A lease of `kind` for `org_id` until `expires_at`, unless `limit` are held already.
pub(super) async fn acquire_lease(
    db: &Db,
    kind: LeaseKind,
    org_id: &str,
    limit: usize,
    expires_at: DateTime<Utc>,
) -> Result<Option<String>, StoreError> {
    let mut conn = db.conn().await?;
    let id = kind.new_id();
    let table = table(kind);
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
                diesel::sql_query(format!(
                    "DELETE FROM {table} WHERE org_id = $1 AND expires_at < now()"
                ))
                .bind::<Text, _>(&org)
                .execute(conn)
                .await?;
                let open: Count = diesel::sql_query(format!(
                    "SELECT count(*) AS n FROM {table} WHERE org_id = $1"
                ))
                .bind::<Text, _>(&org)
                .get_result(conn)
                .await?;
                if open.n >= limit as i64 {
                    return Ok(false);
                }
                diesel::sql_query(format!(
                    "INSERT INTO {table} (id, org_id, expires_at) VALUES ($1, $2, $3)"
                ))
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
pub(super) async fn renew_lease(
    db: &Db,
    kind: LeaseKind,
    id: &str,
    expires_at: DateTime<Utc>,
) -> Result<bool, StoreError> {
    let mut conn = db.conn().await?;
    let table = table(kind);
    let n = diesel::sql_query(format!("UPDATE {table} SET expires_at = $2 WHERE id = $1"))
        .bind::<Text, _>(id)
        .bind::<Timestamptz, _>(expires_at)
        .execute(&mut conn)
        .await
        .map_err(db_error)?;
    Ok(n == 1)
}

pub(super) async fn release_lease(db: &Db, kind: LeaseKind, id: &str) -> Result<(), StoreError> {
    let mut conn = db.conn().await?;
    diesel::sql_query(format!("DELETE FROM {} WHERE id = $1", table(kind)))
        .bind::<Text, _>(id)
        .execute(&mut conn)
        .await
        .map_err(db_error)?;
    Ok(())
}
