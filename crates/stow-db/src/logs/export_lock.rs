//! One log export at a time per organization, across every instance: a session advisory lock
//! held on a connection taken out of the pool for the export's length. Dropping the guard closes
//! that connection, which releases the lock however the export ended (finished, failed, or the
//! client went away mid-stream); a connection handed back to the pool would keep it.

use auth_core::StoreError;
use diesel::sql_types::{Bool, Text};
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use crate::{db_error, Db};

pub(super) struct ExportLock {
    _conn: AsyncPgConnection,
}

#[derive(diesel::QueryableByName)]
struct Locked {
    #[diesel(sql_type = Bool)]
    locked: bool,
}

#[async_trait::async_trait]
impl logs_core::ExportGuard for ExportLock {
    /// Releases the lock now, so the next export can have it as soon as this returns (dropping
    /// the lock releases it too, once Postgres notices the connection closed).
    async fn unlock(mut self: Box<Self>) {
        if let Err(e) = diesel::sql_query("SELECT pg_advisory_unlock_all()")
            .execute(&mut self._conn)
            .await
        {
            tracing::debug!(error = %e, "unlocking an export; closing its connection releases it");
        }
    }
}

/// The organization's export lock, or `None` while another export holds it.
pub(super) async fn try_export_lock(
    db: &Db,
    org_id: &str,
) -> Result<Option<ExportLock>, StoreError> {
    let mut conn = db.conn().await?;
    let row: Locked =
        diesel::sql_query("SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS locked")
            .bind::<Text, _>(format!("stowage:logs-export:{org_id}"))
            .get_result(&mut conn)
            .await
            .map_err(db_error)?;
    Ok(row.locked.then(|| ExportLock {
        _conn: diesel_async::pooled_connection::deadpool::Object::take(conn),
    }))
}
