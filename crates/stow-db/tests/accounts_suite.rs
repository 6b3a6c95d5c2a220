#![allow(clippy::unwrap_used, clippy::expect_used)]
use stow_db::{testing, Db, DbConfig, PgAccounts};

/// An empty store on a fresh database.
async fn store() -> Box<dyn auth_core::AccountStore> {
    let url = testing::fresh_database().await.expect("fresh database");
    let db = Db::connect(&DbConfig::new(url)).expect("pool");
    Box::new(PgAccounts::new(db))
}

mod postgres_accounts {
    use super::*;
    auth_core::account_store_suite!(testing::run_case, store);
}

/// The signing secrets of a fresh, migrated database.
async fn secrets() -> Box<dyn auth_core::signing_secrets::SigningSecretStore> {
    let url = testing::fresh_database().await.expect("fresh database");
    let db = Db::connect(&DbConfig::new(url)).expect("pool");
    Box::new(stow_db::PgSigningSecrets::new(db))
}

mod postgres_signing_secrets {
    use super::*;
    auth_core::signing_secret_suite!(testing::run_case, secrets);
}

/// Console sessions and accounts of one fresh, migrated database.
async fn sessions() -> (
    Box<dyn auth_core::console_session::ConsoleSessionStore>,
    Box<dyn auth_core::testsuite::members::MemberFixture>,
) {
    let url = testing::fresh_database().await.expect("fresh database");
    let db = Db::connect(&DbConfig::new(url)).expect("pool");
    (
        Box::new(stow_db::PgConsoleSessions::new(db.clone())),
        Box::new(PgAccounts::new(db)),
    )
}

mod postgres_console_sessions {
    use super::*;
    auth_core::console_session_suite!(testing::run_case, sessions);
}

/// The token buckets of a fresh, migrated database.
async fn buckets() -> Box<dyn auth_core::rate::RateBucketStore> {
    let url = testing::fresh_database().await.expect("fresh database");
    let db = Db::connect(&DbConfig::new(url)).expect("pool");
    Box::new(stow_db::PgRateBuckets::new(db))
}

mod postgres_rate_buckets {
    use super::*;
    auth_core::rate_bucket_suite!(testing::run_case, buckets);
}

/// Decision 001: a shared limit never grants more than one bucket allows, whatever the
/// concurrency. 16 takers on their own connections, each taking one token at a time for a
/// second and a half, are granted at most the burst plus the rate times the time they took. With
/// the refill clocked by the transaction's start (`now()`), a take that waited for the row moved
/// the bucket's time back and the next one credited the same interval again: 2.5 to 4.6 times.
#[tokio::test]
async fn concurrent_takes_never_grant_more_than_the_bucket_allows() {
    use auth_core::rate::{Quota, RateBucketStore};
    use std::sync::Arc;
    use std::time::{Duration, Instant};
    let url = testing::fresh_database().await.expect("fresh database");
    let db = Db::connect(&DbConfig::new(url)).expect("pool");
    let store = Arc::new(stow_db::PgRateBuckets::new(db));
    let quota = Quota {
        per_second: 40.0,
        burst: 5,
    };
    let started = Instant::now();
    let takers: Vec<_> = (0..16)
        .map(|_| {
            let store = Arc::clone(&store);
            tokio::spawn(async move {
                let mut granted = 0u64;
                while started.elapsed() < Duration::from_millis(1500) {
                    granted += u64::from(store.take("shared", 1, quota).await.unwrap().granted);
                }
                granted
            })
        })
        .collect();
    let mut granted = 0;
    for t in takers {
        granted += t.await.unwrap();
    }
    let allowed = f64::from(quota.burst) + quota.per_second * started.elapsed().as_secs_f64();
    eprintln!("16 concurrent takers: granted {granted}, the bucket allows {allowed:.1}");
    assert!(
        granted as f64 <= allowed,
        "granted {granted}, the bucket allows {allowed:.1}"
    );
    assert!(
        granted as f64 >= 0.5 * allowed,
        "granted {granted} of {allowed:.1}: the takers were not refused for nothing"
    );
}

#[tokio::test]
async fn pooled_connections_plan_every_statement_for_its_values() {
    use diesel::sql_types::Text;
    use diesel_async::RunQueryDsl;
    #[derive(diesel::QueryableByName)]
    struct Settings {
        #[diesel(sql_type = Text)]
        plan_cache_mode: String,
        #[diesel(sql_type = Text)]
        statement_timeout: String,
    }
    let url = testing::fresh_database().await.expect("fresh database");
    let db = Db::connect(&DbConfig::new(url)).expect("pool");
    let mut conn = db.conn().await.unwrap();
    // cached prepared statements must never fall back to a generic plan (see Db::connect)
    let s: Settings = diesel::sql_query(
        "SELECT current_setting('plan_cache_mode') AS plan_cache_mode, \
         current_setting('statement_timeout') AS statement_timeout",
    )
    .get_result(&mut conn)
    .await
    .unwrap();
    assert_eq!(s.plan_cache_mode, "force_custom_plan");
    assert_eq!(s.statement_timeout, "10s");
}

#[tokio::test]
async fn the_pool_hands_out_the_connection_used_last() {
    use diesel::sql_types::Integer;
    use diesel_async::RunQueryDsl;
    #[derive(diesel::QueryableByName)]
    struct Backend {
        #[diesel(sql_type = Integer)]
        pid: i32,
    }
    async fn backend(conn: &mut stow_db::Conn) -> i32 {
        let b: Backend = diesel::sql_query("SELECT pg_backend_pid() AS pid")
            .get_result(conn)
            .await
            .unwrap();
        b.pid
    }
    let url = testing::fresh_database().await.expect("fresh database");
    let db = Db::connect(&DbConfig::new(url)).expect("pool");
    // three connections in the pool, given back first, second, third
    let mut held = Vec::new();
    for _ in 0..3 {
        held.push(db.conn().await.unwrap());
    }
    let mut pids = Vec::new();
    for conn in held.iter_mut() {
        pids.push(backend(conn).await);
    }
    drop(held);
    // statements one after another run on the backend given back last (its caches warm), never
    // cycling through the idle ones
    for _ in 0..4 {
        let mut conn = db.conn().await.unwrap();
        assert_eq!(backend(&mut conn).await, pids[2]);
    }
}

/// Accounts and members of one fresh, migrated database.
async fn members() -> Box<dyn auth_core::testsuite::members::MemberFixture> {
    let url = testing::fresh_database().await.expect("fresh database");
    let db = Db::connect(&DbConfig::new(url)).expect("pool");
    Box::new(PgAccounts::new(db))
}

mod postgres_members {
    use super::*;
    auth_core::member_store_suite!(testing::run_case, members);
}

#[test]
fn postgres_sign_in_failures_block_with_growing_waits_and_clear() {
    testing::run_case(async {
        let url = testing::fresh_database().await.expect("fresh database");
        let db = Db::connect(&DbConfig::new(url)).expect("pool");
        auth_core::backoff::suite::failures_block_with_growing_waits_and_clear(
            &stow_db::PgSignInFailures::new(db),
        )
        .await;
    });
}

/// The audit log keeps each organization's entries for its plan's retention (at least 30 days)
/// and refuses changes to them.
#[tokio::test]
async fn audit_entries_outlive_nothing_but_their_retention_and_never_change() {
    use auth_core::AccountStore;
    use diesel_async::RunQueryDsl;
    let url = testing::fresh_database().await.expect("fresh database");
    let db = Db::connect(&DbConfig::new(url)).expect("pool");
    let accounts = PgAccounts::new(db.clone());
    // `free` keeps logs 0 days here (at least 30 for the audit log), `pro` longer
    let free = accounts
        .create_org("Free", "free-org", "free")
        .await
        .unwrap();
    let pro = accounts.create_org("Pro", "pro-org", "pro").await.unwrap();
    let pro_days = accounts
        .get_plan("pro")
        .await
        .unwrap()
        .unwrap()
        .retention_days;
    assert!(
        pro_days > 31,
        "the test needs a plan keeping more than 31 days"
    );
    let mut conn = db.conn().await.unwrap();
    for (org, days) in [(&free, 31), (&free, 29), (&pro, 31), (&pro, pro_days + 1)] {
        diesel::sql_query(
            "INSERT INTO audit_events (org_id, at, actor_kind, actor_id, actor_label, via, action, target) \
             VALUES ($1, now() - make_interval(days => $2), 'operator', 'root', 'root', 'stowctl', 'key.delete', 'k')",
        )
        .bind::<diesel::sql_types::Text, _>(org.id.as_str())
        .bind::<diesel::sql_types::Integer, _>(days)
        .execute(&mut conn)
        .await
        .unwrap();
    }
    assert_eq!(stow_db::audit::prune_expired(&db).await, 2);
    #[derive(diesel::QueryableByName)]
    struct Left {
        #[diesel(sql_type = diesel::sql_types::Text)]
        org_id: String,
        #[diesel(sql_type = diesel::sql_types::Integer)]
        days: i32,
    }
    let mut left: Vec<(String, i32)> = diesel::sql_query(
        "SELECT org_id, round(extract(epoch FROM now() - at) / 86400)::int AS days FROM audit_events",
    )
    .load::<Left>(&mut conn)
    .await
    .unwrap()
    .into_iter()
    .map(|l| (l.org_id, l.days))
    .collect();
    left.sort();
    let mut want = vec![(free.id.to_string(), 29), (pro.id.to_string(), 31)];
    want.sort();
    assert_eq!(left, want);
    // append-only
    let changed = diesel::sql_query("UPDATE audit_events SET target = 'x'")
        .execute(&mut conn)
        .await;
    assert!(changed.is_err(), "entries are never changed");
}
