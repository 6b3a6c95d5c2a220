//! Postgres adapter: implements the core crates' storage traits with diesel-async over a deadpool
//! pool. No blocking call runs on an async worker: queries are async, and the one synchronous
//! piece (diesel's migration harness) runs on the blocking pool.
//!
//! Error policy: every diesel or pool error is mapped to a transport-neutral `StoreError`.
//! Connection loss and pool timeouts become `Unavailable` (the HTTP edge answers 503 with
//! `Retry-After`); unique violations become `Conflict`; the rest is `Internal`, logged with its
//! detail and shown to callers only as a generic message.

// no production function over 100 lines of code (test code is exempt)
#![cfg_attr(not(test), warn(clippy::too_many_lines))]

pub mod accounts;
pub mod audit;
pub mod cdn;
pub mod console_sessions;
pub mod logs;
pub mod members;
pub mod migrate;
pub mod rate_buckets;
pub mod schema;
pub mod sign_in_failures;
pub mod signing_secrets;
pub mod testing;

/// Every store on this pool, as the operations take them (the API host and `stowctl` alike).
pub fn stores(db: &Db) -> stow_ops::Stores {
    use std::sync::Arc;
    stow_ops::Stores {
        accounts: Arc::new(PgAccounts::new(db.clone())),
        members: Arc::new(PgAccounts::new(db.clone())),
        records: Arc::new(cdn::PgObjectRecords::new(db.clone())),
        idempotency: Arc::new(cdn::PgIdempotency::new(db.clone())),
        upload_urls: Arc::new(cdn::PgUploadUrls::new(db.clone())),
        placeholders: Arc::new(cdn::PgPlaceholders::new(db.clone())),
        lifecycle: Arc::new(PgLifecycle::new(db.clone())),
        signing_secrets: Arc::new(PgSigningSecrets::new(db.clone())),
        logs: Arc::new(logs::PgLogs::new(db.clone())),
        read_slots: Arc::new(logs::PgReadSlots::new(db.clone())),
        console_sessions: Arc::new(PgConsoleSessions::new(db.clone())),
        rate_buckets: Arc::new(PgRateBuckets::new(db.clone())),
        sign_in_failures: Arc::new(PgSignInFailures::new(db.clone())),
        audit: Arc::new(PgAudit::new(db.clone())),
        saved_searches: Arc::new(logs::PgSavedSearches::new(db.clone())),
        alerts: Arc::new(logs::alerts::PgAlerts::new(db.clone())),
    }
}

use std::time::Duration;

use auth_core::audit::AuditEntry;
use auth_core::{Cause, StoreError};
use deadpool::managed::QueueMode;
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use diesel::QueryResult;
use diesel_async::pooled_connection::deadpool::{Object, Pool, PoolError};
use diesel_async::pooled_connection::{AsyncDieselConnectionManager, ManagerConfig};
use diesel_async::scoped_futures::{ScopedBoxFuture, ScopedFutureExt};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};
use futures::FutureExt;
use secrecy::{ExposeSecret, SecretString};

pub use accounts::PgAccounts;
pub use audit::PgAudit;
pub use cdn::{
    roll_up_usage, PgIdempotency, PgLifecycle, PgObjectRecords, PgPlaceholders, PgUploadUrls,
};
pub use console_sessions::PgConsoleSessions;
pub use rate_buckets::PgRateBuckets;
pub use sign_in_failures::PgSignInFailures;
pub use signing_secrets::PgSigningSecrets;

pub type Conn = Object<AsyncPgConnection>;

/// Pool settings; every outbound call is bounded by these timeouts.
#[derive(Debug, Clone)]
pub struct DbConfig {
    /// The connection URL; it may carry a password, so it is kept out of `Debug` and logs.
    pub url: SecretString,
    pub max_connections: usize,
    /// How long a request waits for a free connection (or a new one) before giving up with 503.
    pub acquire_timeout: Duration,
    /// Server-side statement timeout set on every connection.
    pub statement_timeout: Duration,
}

impl DbConfig {
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: SecretString::from(url.into()),
            max_connections: 16,
            acquire_timeout: Duration::from_secs(5),
            statement_timeout: Duration::from_secs(10),
        }
    }
}

/// A cloneable handle on the connection pool.
#[derive(Clone)]
pub struct Db {
    pool: Pool<AsyncPgConnection>,
    config: DbConfig,
}

impl Db {
    /// Builds the pool. Connections are made lazily, so this succeeds even while Postgres is down.
    pub fn connect(config: &DbConfig) -> Result<Self, StoreError> {
        let statement_ms = config.statement_timeout.as_millis();
        let mut manager_config = ManagerConfig::default();
        manager_config.custom_setup = Box::new(move |url| {
            let url = url.to_owned();
            async move {
                let mut conn = AsyncPgConnection::establish(&url).await?;
                // Statements are prepared and cached per connection. After five runs Postgres may
                // switch a prepared statement to a generic plan, which knows neither the time
                // window (no partition pruning at plan time) nor how selective a filter value is:
                // a rare-message search walked every partition's time index and took seconds.
                // Planning each run costs a little and keeps plans value-aware.
                conn.batch_execute(&format!(
                    "SET statement_timeout = {statement_ms}; SET plan_cache_mode = force_custom_plan"
                ))
                .await
                .map_err(diesel::ConnectionError::CouldntSetupConfiguration)?;
                Ok(conn)
            }
            .boxed()
        });
        let manager = AsyncDieselConnectionManager::<AsyncPgConnection>::new_with_config(
            config.url.expose_secret(),
            manager_config,
        );
        // Last in, first out: the connection handed out is the one used most recently, so
        // requests one after another run on one backend whose catalog caches are warm (a backend
        // that has not yet opened the partitioned log tables plans over them more slowly), and
        // connections beyond what concurrency needs stay idle instead of being cycled through.
        // First in, first out (deadpool's default) gave each statement of a request the least
        // recently used of all pooled connections. PgBouncer reuses server connections the same
        // way by default.
        let pool = Pool::builder(manager)
            .max_size(config.max_connections)
            .queue_mode(QueueMode::Lifo)
            .runtime(deadpool::Runtime::Tokio1)
            .wait_timeout(Some(config.acquire_timeout))
            .create_timeout(Some(config.acquire_timeout))
            .recycle_timeout(Some(config.acquire_timeout))
            .build()
            .map_err(|e| StoreError::Internal(Cause::context("building pool", e)))?;
        Ok(Self {
            pool,
            config: config.clone(),
        })
    }

    /// Another pool on the same database with the same settings but `max_connections`
    /// connections, each made by the task that first needs it: a pool used from one dedicated
    /// runtime has its connections driven there.
    pub fn sibling(&self, max_connections: usize) -> Result<Self, StoreError> {
        Self::connect(&DbConfig {
            max_connections,
            ..self.config.clone()
        })
    }

    pub async fn conn(&self) -> Result<Conn, StoreError> {
        let started = std::time::Instant::now();
        let conn = self.pool.get().await.map_err(pool_error);
        metrics::histogram!("db_pool_acquire_seconds").record(started.elapsed().as_secs_f64());
        if conn.is_err() {
            metrics::counter!("db_pool_acquire_errors_total").increment(1);
        }
        conn
    }

    /// Runs `change` in one transaction and writes the audit entries it returns in that same
    /// transaction (decisions/009: a change and its entry are one). `change` answers its value
    /// with the entries to write (none, when it changed nothing). The one way a store method makes
    /// an audited change.
    pub async fn audited<'a, R, F>(&self, change: F) -> Result<R, StoreError>
    where
        F: for<'r> FnOnce(
                &'r mut AsyncPgConnection,
            )
                -> ScopedBoxFuture<'a, 'r, QueryResult<(R, Vec<AuditEntry>)>>
            + Send
            + 'a,
        R: Send + 'a,
    {
        let mut conn = self.conn().await?;
        conn.transaction::<R, DieselError, _>(|conn| {
            async move {
                let (value, entries) = change(conn).await?;
                audit::append(conn, &entries).await?;
                Ok(value)
            }
            .scope_boxed()
        })
        .await
        .map_err(db_error)
    }

    /// `(size, available, waiting)` of the pool, for readiness and metrics.
    pub fn pool_status(&self) -> (usize, usize, usize) {
        let s = self.pool.status();
        (s.size, s.available, s.waiting)
    }

    /// Round trip to the database (for `/readyz`).
    pub async fn ping(&self) -> Result<(), StoreError> {
        let mut conn = self.conn().await?;
        diesel::sql_query("SELECT 1")
            .execute(&mut conn)
            .await
            .map(|_| ())
            .map_err(db_error)
    }
}

/// Why a service cannot start with this `DATABASE_URL`: the URL is invalid, the database does not
/// exist, or the server refused the credentials. `None` when a connection succeeds, and when the
/// server is down or slow: the service then starts not ready and waits for it. Refusals are told
/// apart by the server's (English) messages; a server with localized messages gets the not-ready
/// start for them too.
pub async fn startup_problem(url: &str) -> Option<String> {
    use diesel::ConnectionError;
    let attempt =
        tokio::time::timeout(Duration::from_secs(5), AsyncPgConnection::establish(url)).await;
    let e = match attempt {
        Ok(Err(e)) => e,
        Ok(Ok(_)) | Err(_) => return None,
    };
    let text = match &e {
        ConnectionError::InvalidConnectionUrl(m) => {
            return Some(format!("DATABASE_URL is not a valid Postgres URL: {m}"))
        }
        other => other.to_string(),
    };
    let lower = text.to_lowercase();
    if lower.contains("password authentication failed")
        || lower.contains("no pg_hba.conf entry")
        || (lower.contains("role") && lower.contains("does not exist"))
    {
        return Some(format!(
            "the database server refused the credentials in DATABASE_URL ({}); fix the user or password",
            text.trim()
        ));
    }
    if lower.contains("database") && lower.contains("does not exist") {
        return Some(format!(
            "{}; create it (e.g. `createdb`), then `stowctl migrate`, or fix DATABASE_URL",
            text.trim()
        ));
    }
    None
}

pub fn pool_error(e: PoolError) -> StoreError {
    match e {
        PoolError::Backend(diesel_async::pooled_connection::PoolError::QueryError(q)) => {
            db_error(q)
        }
        other => StoreError::Unavailable(Cause::from_error(other)),
    }
}

/// Takes the organization's turn for changes until the transaction ends: concurrent changes of
/// one organization that count or check its rows (a limit, a unique name) take turns. `NO KEY
/// UPDATE` leaves the organization's other writes (its rows' foreign keys) unblocked.
pub(crate) async fn lock_org(conn: &mut AsyncPgConnection, org: &str) -> diesel::QueryResult<()> {
    use diesel::QueryDsl;
    schema::organizations::table
        .find(org)
        .select(schema::organizations::id)
        .for_no_key_update()
        .first::<String>(conn)
        .await
        .map(drop)
}

/// What a unique violation that no check before it caught answers: a change stored at the same
/// time (the database's message names tables and constraints; it is logged, never answered).
pub const RACED_CONFLICT: &str =
    "this conflicts with a change stored at the same time; read the current state and retry";
/// What a foreign-key violation that no check before it caught answers.
pub const RACED_MISSING: &str =
    "something this request names was removed at the same time; read the current state and retry";

/// Maps a diesel error to the transport-neutral store error.
pub fn db_error(e: DieselError) -> StoreError {
    match &e {
        DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, info) => {
            tracing::info!(
                constraint = info.constraint_name(),
                "a unique violation answered as a conflict"
            );
            StoreError::Conflict(RACED_CONFLICT.to_owned())
        }
        DieselError::DatabaseError(DatabaseErrorKind::ForeignKeyViolation, info) => {
            tracing::info!(
                constraint = info.constraint_name(),
                "a foreign-key violation answered as not found"
            );
            StoreError::NotFound(RACED_MISSING.to_owned())
        }
        DieselError::DatabaseError(DatabaseErrorKind::ClosedConnection, _)
        | DieselError::DatabaseError(DatabaseErrorKind::SerializationFailure, _) => {
            StoreError::Unavailable(Cause::from_error(e))
        }
        DieselError::DatabaseError(_, info) if is_transient_message(info.message()) => {
            StoreError::Unavailable(Cause::from_error(e))
        }
        _ => StoreError::Internal(Cause::from_error(e)),
    }
}

/// Statement and lock timeouts, cancellations and shutdowns: retryable, so 503 rather than 500.
fn is_transient_message(msg: &str) -> bool {
    let msg = msg.to_ascii_lowercase();
    msg.contains("statement timeout")
        || msg.contains("lock timeout")
        || msg.contains("canceling statement")
        || msg.contains("terminating connection")
        || msg.contains("connection")
        || msg.contains("shutting down")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A constraint violation as Postgres reports it.
    struct Violation(&'static str);

    impl diesel::result::DatabaseErrorInformation for Violation {
        fn message(&self) -> &str {
            self.0
        }
        fn details(&self) -> Option<&str> {
            None
        }
        fn hint(&self) -> Option<&str> {
            None
        }
        fn table_name(&self) -> Option<&str> {
            Some("alert_rules")
        }
        fn column_name(&self) -> Option<&str> {
            None
        }
        fn constraint_name(&self) -> Option<&str> {
            Some("alert_rules_saved_search_id_fkey")
        }
        fn statement_position(&self) -> Option<i32> {
            None
        }
    }

    #[test]
    fn constraint_violations_answer_in_api_words_not_the_databases() {
        let unique = DieselError::DatabaseError(
            DatabaseErrorKind::UniqueViolation,
            Box::new(Violation(
                "duplicate key value violates unique constraint \"alert_rules_pkey\"",
            )),
        );
        assert!(matches!(db_error(unique), StoreError::Conflict(m) if m == RACED_CONFLICT));
        let foreign = DieselError::DatabaseError(
            DatabaseErrorKind::ForeignKeyViolation,
            Box::new(Violation(
                "insert or update on table \"alert_rules\" violates foreign key constraint",
            )),
        );
        assert!(matches!(db_error(foreign), StoreError::NotFound(m) if m == RACED_MISSING));
    }
}
