#![allow(clippy::unwrap_used, clippy::expect_used)]
use auth_core::{AccountStore, OrgId, ServerId};
use stow_db::logs::PgLogs;
use stow_db::{testing, Db, DbConfig, PgAccounts};

/// A fresh database with its partitions, one organization and two registered servers.
async fn fixture() -> logs_core::testsuite::Fixture {
    fixture_at(testing::fresh_database().await.expect("fresh database")).await
}

/// One organization on the `pro` plan with two registered servers, `abc` and `def`:
/// `(org id, (server id, join code) of each)`.
async fn org_with_two_servers(db: &Db) -> (OrgId, (ServerId, String), (ServerId, String)) {
    stow_db::logs::maintain_partitions(db).await.unwrap();
    let accounts = PgAccounts::new(db.clone());
    let org = accounts.create_org("A", "a", "pro").await.unwrap();
    let a = accounts
        .register_server(
            &org.id,
            "abc",
            None,
            &auth_core::audit::Audit::operator("test"),
        )
        .await
        .unwrap();
    let b = accounts
        .register_server(
            &org.id,
            "def",
            None,
            &auth_core::audit::Audit::operator("test"),
        )
        .await
        .unwrap();
    (org.id, (a.id, "abc".into()), (b.id, "def".into()))
}

async fn fixture_at(url: String) -> logs_core::testsuite::Fixture {
    let db = Db::connect(&DbConfig::new(url)).expect("pool");
    let (org, a, b) = org_with_two_servers(&db).await;
    logs_core::testsuite::Fixture {
        store: Box::new(PgLogs::new(db.clone())),
        slots: Box::new(stow_db::logs::PgReadSlots::new(db.clone())),
        saved: Box::new(stow_db::logs::PgSavedSearches::new(db.clone())),
        audit: Box::new(stow_db::PgAudit::new(db)),
        org,
        a,
        b,
    }
}

#[path = "logs_suite/group_commit.rs"]
mod group_commit;
#[path = "logs_suite/level_counts.rs"]
mod level_counts;
#[path = "logs_suite/message_runs.rs"]
mod message_runs;

mod postgres_logs {
    use super::*;
    logs_core::log_store_suite!(testing::run_case, fixture);
}

async fn alert_fixture() -> logs_core::testsuite::AlertFixture {
    let url = testing::fresh_database().await.expect("fresh database");
    let db = Db::connect(&DbConfig::new(url.clone())).expect("pool");
    logs_core::testsuite::AlertFixture {
        logs: fixture_at(url).await,
        alerts: std::sync::Arc::new(stow_db::logs::alerts::PgAlerts::new(db.clone())),
        queue: std::sync::Arc::new(stow_db::logs::alerts::PgAlerts::new(db)),
    }
}

mod postgres_alerts {
    use super::*;
    logs_core::alert_store_suite!(testing::run_case, alert_fixture);
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
        "today's partition waits until its day has closed"
    );
    let third = stow_db::logs::maintain_partitions(&db).await.unwrap();
    assert!(third.vacuumed.is_empty(), "{third:?}");
}

/// Every day partition, the ones the maintenance creates and the default one, is left alone by
/// autovacuum's insert-triggered vacuums (migration 23; docs/benchmarks.md, "Sustained
/// ingestion"): the maintenance vacuums a day once it has closed.
#[tokio::test]
async fn partitions_are_not_vacuumed_for_their_inserts() {
    use diesel::sql_types::{Nullable, Text};
    use diesel_async::RunQueryDsl;
    #[derive(diesel::QueryableByName)]
    struct Part {
        #[diesel(sql_type = Text)]
        name: String,
        #[diesel(sql_type = Nullable<Text>)]
        options: Option<String>,
    }
    let url = testing::fresh_database().await.expect("fresh database");
    let db = Db::connect(&DbConfig::new(url)).expect("pool");
    let report = stow_db::logs::maintain_partitions(&db).await.unwrap();
    assert!(!report.created.is_empty());
    let mut conn = db.conn().await.unwrap();
    let parts: Vec<Part> = diesel::sql_query(
        "SELECT c.relname AS name, array_to_string(c.reloptions, ',') AS options \
         FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid \
         WHERE i.inhparent = 'log_events'::regclass ORDER BY 1",
    )
    .load(&mut conn)
    .await
    .unwrap();
    assert_eq!(
        parts.len(),
        report.created.len() + 1,
        "the days and the default"
    );
    for part in parts {
        assert_eq!(
            part.options.as_deref(),
            Some(stow_db::logs::PARTITION_SETTINGS.replace(' ', "").as_str()),
            "{}",
            part.name
        );
    }
}

/// Maintenance deletes the hourly counts (both tables) and the message-search runs of days past
/// the longest retention, with the partitions it drops, and keeps the rest.
#[tokio::test]
async fn maintenance_deletes_expired_hourly_counts_and_runs() {
    use diesel_async::SimpleAsyncConnection;
    let url = testing::fresh_database().await.expect("fresh database");
    let db = Db::connect(&DbConfig::new(url)).expect("pool");
    let mut conn = db.conn().await.unwrap();
    conn.batch_execute(
        "INSERT INTO log_runs (server_id, occurred_from, occurred_to, words) VALUES \
           ('s', '2020-01-01', '2020-01-01', ' old '), ('s', now(), now(), ' new '); \
         INSERT INTO log_counts_hourly (server_id, hour, level, event_type, resource, n) VALUES \
           ('s', '2020-01-01', 'info', 'log', '', 1), ('s', date_trunc('hour', now()), 'info', 'log', '', 1); \
         INSERT INTO log_level_counts_15m (server_id, slot, level, n) VALUES \
           ('s', '2020-01-01', 'info', 1), ('s', date_trunc('hour', now()), 'warn', 1)",
    )
    .await
    .unwrap();
    stow_db::logs::maintain_partitions(&db).await.unwrap();
    #[derive(diesel::QueryableByName)]
    struct Left {
        #[diesel(sql_type = diesel::sql_types::Text)]
        left: String,
    }
    let left: Vec<Left> = diesel_async::RunQueryDsl::load(
        diesel::sql_query(
            "SELECT words AS left FROM log_runs UNION ALL \
             SELECT to_char(hour, 'YYYY') FROM log_counts_hourly UNION ALL \
             SELECT level || to_char(slot, 'YYYY') FROM log_level_counts_15m ORDER BY 1",
        ),
        &mut conn,
    )
    .await
    .unwrap();
    let year = chrono::Utc::now().format("%Y").to_string();
    assert_eq!(
        left.iter().map(|l| l.left.as_str()).collect::<Vec<_>>(),
        [" new ", year.as_str(), &format!("warn{year}")]
    );
}

/// Transaction ids are handed out in start order, not commit order: a batch committed while an
/// older writing transaction is still open is held back until that one ends, so a tail that read
/// past it could never miss a batch the older transaction commits afterwards.
#[tokio::test]
async fn a_tail_waits_for_older_transactions_before_passing_a_batch() {
    use diesel_async::{AsyncConnection, AsyncPgConnection, SimpleAsyncConnection};
    use logs_core::store::{Filters, IngestTarget, TailQuery};
    let url = testing::fresh_database().await.expect("fresh database");
    let f = fixture_at(url.clone()).await;
    let store = f.store.as_ref();
    let server = f.a.0.clone();
    let start = store.tail_start(&server).await.unwrap();
    // an older transaction that has written (so it has an id), still open
    let mut older = AsyncPgConnection::establish(&url).await.unwrap();
    older
        .batch_execute("BEGIN; INSERT INTO log_tails VALUES ('held', (SELECT id FROM organizations LIMIT 1), now())")
        .await
        .unwrap();
    #[derive(diesel::QueryableByName)]
    struct Xid {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        xid: i64,
    }
    let older_xid = {
        use diesel_async::RunQueryDsl;
        diesel::sql_query("SELECT pg_current_xact_id()::text::bigint AS xid")
            .get_result::<Xid>(&mut older)
            .await
            .unwrap()
            .xid
    };
    let now = chrono::Utc::now();
    let body = serde_json::json!({ "batch_id": "batch-after", "events": [{ "level": "info", "message": "later" }] });
    let batch = logs_core::parse_batch(&serde_json::to_vec(&body).unwrap(), now).unwrap();
    let target = IngestTarget {
        org_id: f.org.clone(),
        server_id: server.clone(),
        cfx_id: f.a.1.clone(),
    };
    store.ingest(&target, batch, now).await.unwrap();
    let q = TailQuery {
        server_id: server.clone(),
        filters: Filters::default(),
        after: start,
        max_batches: 100,
    };
    let held = store.tail(&q).await.unwrap();
    assert!(
        held.events.is_empty(),
        "committed, but behind an open older transaction"
    );
    assert!(
        held.next.seq < older_xid,
        "the place does not move past the older transaction either: {:?} vs {older_xid}",
        held.next
    );
    older.batch_execute("COMMIT").await.unwrap();
    // the horizon is the cluster's: a transaction of another test's database may hold it a
    // moment longer, so this waits (bounded) instead of expecting the batch at the next read
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let page = loop {
        let page = store.tail(&q).await.unwrap();
        if !page.events.is_empty() || std::time::Instant::now() > deadline {
            break page;
        }
        tokio::task::yield_now().await;
    };
    assert_eq!(page.events.len(), 1);
    assert_eq!(page.events[0].1.message, "later");
}
