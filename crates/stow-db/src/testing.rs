//! Fresh databases for tests: a migrated template is built once per migration set (under an
//! advisory lock, so parallel test processes agree), and every test clones its own database
//! from it. `TEST_DATABASE_URL` (default `postgres://postgres@127.0.0.1:5432/postgres`) names the
//! server and the maintenance database; test databases are called `stowage_test_*`.

use diesel_async::{AsyncConnection, AsyncPgConnection, SimpleAsyncConnection};

use auth_core::{Cause, StoreError};

/// Runs one shared-suite case to completion on a runtime of its own (the case's pool and its
/// connections live on it), for the suite macros' `#[test]` functions.
pub fn run_case<F: std::future::Future>(case: F) -> F::Output {
    #[allow(clippy::expect_used)]
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a Tokio runtime")
        .block_on(case)
}

const TEMPLATE_LOCK: i64 = 0x5354_4f57_5445_4d50;

pub fn admin_url() -> String {
    std::env::var("TEST_DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_owned())
}

/// The URL of database `name` on the same server as `admin`.
pub fn url_for(admin: &str, name: &str) -> String {
    match url::Url::parse(admin) {
        Ok(mut u) => {
            u.set_path(&format!("/{name}"));
            u.to_string()
        }
        Err(_) => format!("postgres://postgres@127.0.0.1:5432/{name}"),
    }
}

fn template_name() -> String {
    format!("stowage_tpl_{}", env!("STOWAGE_MIGRATIONS_HASH"))
}

async fn admin_conn() -> Result<AsyncPgConnection, StoreError> {
    AsyncPgConnection::establish(&admin_url())
        .await
        .map_err(|e| StoreError::Unavailable(Cause::context("test database server", e)))
}

async fn database_exists(conn: &mut AsyncPgConnection, name: &str) -> Result<bool, StoreError> {
    use diesel::sql_types::{Bool, Text};
    use diesel_async::RunQueryDsl;
    #[derive(diesel::QueryableByName)]
    struct Exists {
        #[diesel(sql_type = Bool)]
        exists: bool,
    }
    let row: Exists =
        diesel::sql_query("SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1) AS exists")
            .bind::<Text, _>(name)
            .get_result(conn)
            .await
            .map_err(crate::db_error)?;
    Ok(row.exists)
}

async fn ensure_template() -> Result<String, StoreError> {
    let name = template_name();
    let mut conn = admin_conn().await?;
    if database_exists(&mut conn, &name).await? {
        return Ok(name);
    }
    conn.batch_execute(&format!("SELECT pg_advisory_lock({TEMPLATE_LOCK})"))
        .await
        .map_err(crate::db_error)?;
    let result = async {
        if database_exists(&mut conn, &name).await? {
            return Ok(());
        }
        let building = format!("{name}_building");
        conn.batch_execute(&format!("DROP DATABASE IF EXISTS {building}"))
            .await
            .map_err(crate::db_error)?;
        conn.batch_execute(&format!("CREATE DATABASE {building}"))
            .await
            .map_err(crate::db_error)?;
        crate::migrate::run(&url_for(&admin_url(), &building)).await?;
        conn.batch_execute(&format!("ALTER DATABASE {building} RENAME TO {name}"))
            .await
            .map_err(crate::db_error)
    }
    .await;
    let _ = conn
        .batch_execute(&format!("SELECT pg_advisory_unlock({TEMPLATE_LOCK})"))
        .await;
    result.map(|_| name)
}

/// A freshly migrated database of its own; returns its URL.
pub async fn fresh_database() -> Result<String, StoreError> {
    let template = ensure_template().await?;
    let name = format!(
        "stowage_test_{}",
        ulid::Ulid::new().to_string().to_lowercase()
    );
    let mut conn = admin_conn().await?;
    let mut attempt = 0;
    loop {
        match conn
            .batch_execute(&format!("CREATE DATABASE {name} TEMPLATE {template}"))
            .await
        {
            Ok(()) => break,
            // another process may be cloning the same template at this instant
            Err(e) if attempt < 50 && e.to_string().contains("being accessed by other users") => {
                attempt += 1;
                tokio::time::sleep(std::time::Duration::from_millis(50 + 20 * attempt)).await;
            }
            Err(e) => return Err(crate::db_error(e)),
        }
    }
    Ok(url_for(&admin_url(), &name))
}

/// Drops every `stowage_test_*` database (run before a test session), stale templates, and the
/// roles the deployment tests make.
pub async fn drop_test_databases() -> Result<usize, StoreError> {
    use diesel::sql_types::Text;
    use diesel_async::RunQueryDsl;
    #[derive(diesel::QueryableByName)]
    struct Name {
        #[diesel(sql_type = Text)]
        datname: String,
    }
    let mut conn = admin_conn().await?;
    let names: Vec<Name> = diesel::sql_query(
        "SELECT datname FROM pg_database WHERE datname LIKE 'stowage\\_test\\_%' \
         OR (datname LIKE 'stowage\\_tpl\\_%' AND datname <> $1)",
    )
    .bind::<Text, _>(template_name())
    .load(&mut conn)
    .await
    .map_err(crate::db_error)?;
    for n in &names {
        conn.batch_execute(&format!(
            "DROP DATABASE IF EXISTS {} WITH (FORCE)",
            n.datname
        ))
        .await
        .map_err(crate::db_error)?;
    }
    // login roles the deployment tests make (they own nothing once their databases are gone)
    #[derive(diesel::QueryableByName)]
    struct Role {
        #[diesel(sql_type = Text)]
        rolname: String,
    }
    let roles: Vec<Role> = diesel::sql_query(
        "SELECT rolname FROM pg_roles WHERE rolname ~ '^stowage_(owner|app)_[0-9a-z]{26}$'",
    )
    .load(&mut conn)
    .await
    .map_err(crate::db_error)?;
    for r in &roles {
        conn.batch_execute(&format!("DROP ROLE IF EXISTS {}", r.rolname))
            .await
            .map_err(crate::db_error)?;
    }
    Ok(names.len())
}
