//! Migration 14 fills `log_level_counts_15m` for the events stored before it: the same rows
//! ingestion keeps from then on.

use chrono::{Duration, SubsecRound, Utc};
use diesel::migration::MigrationSource;
use diesel::Connection;
use diesel_async::async_connection_wrapper::AsyncConnectionWrapper;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use diesel_migrations::MigrationHarness;
use logs_core::parse_batch;
use logs_core::store::{IngestOutcome, IngestTarget};
use serde_json::json;
use stow_db::logs::{PendingBatch, PgLogs};
use stow_db::{testing, Db, DbConfig};

#[derive(diesel::QueryableByName, Debug, PartialEq)]
struct Row {
    #[diesel(sql_type = diesel::sql_types::Text)]
    server_id: String,
    #[diesel(sql_type = diesel::sql_types::Timestamptz)]
    slot: chrono::DateTime<Utc>,
    #[diesel(sql_type = diesel::sql_types::Text)]
    level: String,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    n: i64,
}

async fn level_counts(db: &Db) -> Vec<Row> {
    diesel::sql_query("SELECT server_id, slot, level, n FROM log_level_counts_15m ORDER BY 1, 2, 3")
        .load(&mut db.conn().await.unwrap())
        .await
        .unwrap()
}

/// Reverts migration 14 (dropping the table) and runs it again (its backfill).
fn rerun_migration_14(url: &str) {
    let mut conn = AsyncConnectionWrapper::<AsyncPgConnection>::establish(url).unwrap();
    let migrations =
        MigrationSource::<diesel::pg::Pg>::migrations(&stow_db::migrate::MIGRATIONS).unwrap();
    let m = migrations
        .iter()
        .find(|m| m.name().to_string().ends_with("_log_level_counts"))
        .expect("migration 14");
    conn.revert_migration(&**m).unwrap();
    conn.run_migration(&**m).unwrap();
}

#[tokio::test]
async fn the_migrations_level_counts_are_ingestions() {
    let url = testing::fresh_database().await.expect("fresh database");
    let db = Db::connect(&DbConfig::new(url.clone())).expect("pool");
    let (org, (a, a_cfx), (b, b_cfx)) = super::org_with_two_servers(&db).await;
    let logs = PgLogs::new(db.clone());
    let now = Utc::now().trunc_subsecs(6);
    let levels = ["debug", "info", "warn", "error", "fatal"];
    let types = ["tick", "chat", "economy.transfer"];
    // 3 batches per server of 20 events, one every 5 minutes over the last 5 hours, two of each
    // level in a row: 3 events a slot, a level counting 1 or 2 in it
    let mut pending = Vec::new();
    for (server, cfx) in [(&a, &a_cfx), (&b, &b_cfx)] {
        for batch in 0..3 {
            let events: Vec<_> = (0..20)
                .map(|i| {
                    let k = batch * 20 + i;
                    // two events of each level, type and resource in a row
                    let j = k / 2;
                    json!({ "level": levels[j % 5], "event_type": types[j % 3],
                            "resource": if j % 4 == 0 { None } else { Some(format!("r{}", j % 2)) },
                            "message": "m",
                            "occurred_at": (now - Duration::minutes(5 * k as i64)).to_rfc3339() })
                })
                .collect();
            let body = json!({ "batch_id": format!("batch-level-{batch}"), "events": events });
            pending.push(PendingBatch {
                target: IngestTarget {
                    org_id: org.clone(),
                    server_id: server.clone(),
                    cfx_id: cfx.clone(),
                },
                batch: parse_batch(&serde_json::to_vec(&body).unwrap(), now).unwrap(),
                now,
            });
        }
    }
    for answer in logs.ingest_together(&pending).await {
        assert!(
            matches!(answer, Ok(IngestOutcome::Accepted { .. })),
            "{answer:?}"
        );
    }
    let kept = level_counts(&db).await;
    assert_eq!(kept.iter().map(|r| r.n).sum::<i64>(), 120);
    assert!(kept.len() >= 2 * 20, "{} rows", kept.len());
    assert!(kept.iter().any(|r| r.n == 2) && kept.iter().any(|r| r.n == 1));
    tokio::task::spawn_blocking(move || rerun_migration_14(&url))
        .await
        .unwrap();
    assert_eq!(level_counts(&db).await, kept);
}
