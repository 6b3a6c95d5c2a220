#![allow(clippy::unwrap_used, clippy::expect_used)]
use stow_db::{testing, Db, DbConfig, PgAccounts};

#[tokio::test]
async fn postgres_accounts_pass_the_shared_suite() {
    let url = testing::fresh_database().await.expect("fresh database");
    let db = Db::connect(&DbConfig::new(url)).expect("pool");
    let store = PgAccounts::new(db);
    auth_core::testsuite::account_store_suite(&store).await;
}
