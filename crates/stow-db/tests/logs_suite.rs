#![allow(clippy::unwrap_used, clippy::expect_used)]
use auth_core::AccountStore;
use stow_db::logs::PgLogs;
use stow_db::{testing, Db, DbConfig, PgAccounts};

#[tokio::test]
async fn postgres_logs_pass_the_shared_suite() {
    let url = testing::fresh_database().await.expect("fresh database");
    let db = Db::connect(&DbConfig::new(url)).expect("pool");
    stow_db::logs::maintain_partitions(&db).await.unwrap();
    let accounts = PgAccounts::new(db.clone());
    let org = accounts.create_org("A", "a", "pro").await.unwrap();
    let a = accounts
        .register_server(&org.id, "abc", None)
        .await
        .unwrap();
    let b = accounts
        .register_server(&org.id, "def", None)
        .await
        .unwrap();
    logs_core::testsuite::log_store_suite(
        &PgLogs::new(db),
        &org.id,
        (&a.id, "abc"),
        (&b.id, "def"),
    )
    .await;
}
