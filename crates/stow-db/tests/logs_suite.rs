#![allow(clippy::unwrap_used, clippy::expect_used)]
use auth_core::AccountStore;
use stow_db::logs::PgLogs;
use stow_db::{testing, Db, DbConfig, PgAccounts};

/// A fresh database with its partitions, one organization and two registered servers.
async fn fixture() -> logs_core::testsuite::Fixture {
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
    logs_core::testsuite::Fixture {
        store: Box::new(PgLogs::new(db)),
        org: org.id,
        a: (a.id, "abc".into()),
        b: (b.id, "def".into()),
    }
}

mod postgres_logs {
    use super::*;
    logs_core::log_store_suite!(testing::run_case, fixture);
}

#[tokio::test]
async fn maintenance_vacuums_closed_partitions_that_received_events() {
    use diesel_async::SimpleAsyncConnection;
    let url = testing::fresh_database().await.expect("fresh database");
    let db = Db::connect(&DbConfig::new(url)).expect("pool");
    let first = stow_db::logs::maintain_partitions(&db).await.unwrap();
    assert!(!first.created.is_empty());
    assert!(first.vacuumed.is_empty(), "{first:?}");
    let today = chrono::Utc::now();
    let yesterday = format!(
        "log_events_p{}",
        (today - chrono::Duration::days(1)).format("%Y%m%d")
    );
    let mut conn = db.conn().await.unwrap();
    // one late event for yesterday and one for today; the flush makes the insert counts visible
    // to the maintenance session at once instead of within a second
    conn.batch_execute(
        "INSERT INTO log_events (org_id, server_id, cfx_id, batch_id, event_id, level, event_type, occurred_at, ingested_at, message) \
         VALUES ('o', 's', 'c', 'b', 'e1', 'info', 'log', now() - interval '1 day', now(), 'late'), \
                ('o', 's', 'c', 'b', 'e2', 'info', 'log', now(), now(), 'current'); \
         SELECT pg_stat_force_next_flush();",
    )
    .await
    .unwrap();
    conn.batch_execute("SELECT 1").await.unwrap();
    let second = stow_db::logs::maintain_partitions(&db).await.unwrap();
    assert_eq!(
        second.vacuumed,
        vec![yesterday],
        "today's partition is left to autovacuum"
    );
    let third = stow_db::logs::maintain_partitions(&db).await.unwrap();
    assert!(third.vacuumed.is_empty(), "{third:?}");
}
