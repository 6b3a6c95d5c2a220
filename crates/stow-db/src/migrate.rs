//! Embedded migrations. Safe to run twice and from two processes at once: a session advisory
//! lock serializes runners, and diesel skips migrations already applied.

use diesel::connection::SimpleConnection;
use diesel::Connection;
use diesel_async::async_connection_wrapper::AsyncConnectionWrapper;
use diesel_async::AsyncPgConnection;
use diesel_migrations::{embed_migrations, EmbeddedMigrations, MigrationHarness};

use auth_core::{Cause, StoreError};

pub const MIGRATIONS: EmbeddedMigrations = embed_migrations!("../../migrations");

/// An arbitrary constant identifying the migration lock.
const MIGRATION_LOCK: i64 = 0x5354_4f57_4d49_4752;

/// Applies pending migrations; returns the versions applied now.
pub async fn run(url: &str) -> Result<Vec<String>, StoreError> {
    let url = url.to_owned();
    tokio::task::spawn_blocking(move || run_blocking(&url))
        .await
        .map_err(|e| StoreError::Internal(Cause::context("migration task", e)))?
}

fn run_blocking(url: &str) -> Result<Vec<String>, StoreError> {
    let mut conn = AsyncConnectionWrapper::<AsyncPgConnection>::establish(url).map_err(|e| {
        StoreError::Unavailable(Cause::context(&format!("connecting to {}", redact(url)), e))
    })?;
    conn.batch_execute(&format!("SELECT pg_advisory_lock({MIGRATION_LOCK})"))
        .map_err(crate::db_error)?;
    let applied = conn
        .run_pending_migrations(MIGRATIONS)
        .map(|versions| versions.iter().map(|v| v.to_string()).collect())
        .map_err(|e| StoreError::Internal(Cause::context("running migrations", e)));
    let unlock = conn.batch_execute(&format!("SELECT pg_advisory_unlock({MIGRATION_LOCK})"));
    let applied = applied?;
    unlock.map_err(crate::db_error)?;
    Ok(applied)
}

/// A database URL without its password, for messages.
pub fn redact(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) if u.password().is_some() => {
            let _ = u.set_password(Some("***"));
            u.to_string()
        }
        Ok(u) => u.to_string(),
        Err(_) => "<unparseable database url>".to_owned(),
    }
}
