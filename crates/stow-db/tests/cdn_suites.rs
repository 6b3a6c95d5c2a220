#![allow(clippy::unwrap_used, clippy::expect_used)]
use auth_core::model::NewKey;
use auth_core::{secret, AccountStore, CredentialType, PermissionSet};
use stow_db::{
    testing, Db, DbConfig, PgAccounts, PgIdempotency, PgLifecycle, PgObjectRecords, PgPlaceholders,
    PgUploadUrls,
};

async fn db() -> Db {
    let url = testing::fresh_database().await.expect("fresh database");
    Db::connect(&DbConfig::new(url)).expect("pool")
}

/// A fresh database with two organizations and a key of the first.
async fn fixture() -> cdn_core::testsuite::Fixture {
    let db = db().await;
    let accounts = PgAccounts::new(db.clone());
    let a = accounts.create_org("A", "a", "pro").await.unwrap();
    let b = accounts.create_org("B", "b", "pro").await.unwrap();
    let s = secret::generate(CredentialType::Developer);
    let key = accounts
        .create_key(
            &NewKey::developer(a.id.clone(), &s, PermissionSet::all()),
            &auth_core::audit::Audit::operator("test"),
        )
        .await
        .unwrap();
    cdn_core::testsuite::Fixture {
        records: Box::new(PgObjectRecords::new(db.clone())),
        idempotency: Box::new(PgIdempotency::new(db.clone())),
        upload_urls: Box::new(PgUploadUrls::new(db.clone())),
        placeholders: Box::new(PgPlaceholders::new(db.clone())),
        lifecycle: Box::new(PgLifecycle::new(db.clone())),
        audit: Box::new(stow_db::PgAudit::new(db)),
        org_a: a.id,
        org_b: b.id,
        key_id: key.id,
    }
}

mod postgres_cdn_stores {
    use super::*;
    cdn_core::cdn_store_suite!(testing::run_case, fixture);
}

/// Only btree indexes serve equality on `objects.key`: pg_trgm's operator class answers `=` too,
/// and a trigram index on the bare column once made the planner take it for `key = ANY($keys)`
/// (a 1,000-key delete took seconds). The trigram index is on an expression (migration 28).
#[tokio::test]
async fn no_gin_index_is_on_the_bare_key_column() {
    use diesel_async::RunQueryDsl;
    let db = db().await;
    let mut conn = db.conn().await.unwrap();
    #[derive(diesel::QueryableByName)]
    struct Name {
        #[diesel(sql_type = diesel::sql_types::Text)]
        name: String,
    }
    let on_key: Vec<Name> = diesel::sql_query(
        "SELECT c.relname::text AS name FROM pg_index i \
           JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam \
          WHERE i.indrelid = 'objects'::regclass AND a.amname <> 'btree' \
            AND (SELECT attnum FROM pg_attribute \
                  WHERE attrelid = 'objects'::regclass AND attname = 'key') = ANY (i.indkey::int2[])",
    )
    .load(&mut conn)
    .await
    .unwrap();
    let names: Vec<String> = on_key.into_iter().map(|n| n.name).collect();
    assert_eq!(names, Vec::<String>::new());
}

/// The usage per folder reads the same before and after the maintenance folds the appended
/// changes into the counts, and the changes of a deleted organization are dropped.
#[tokio::test]
async fn usage_reads_the_same_after_the_roll_up() {
    use cdn_core::store::ObjectRecordStore;
    use diesel_async::RunQueryDsl;
    let db = db().await;
    let accounts = PgAccounts::new(db.clone());
    let a = accounts.create_org("A", "a", "pro").await.unwrap();
    let gone = accounts.create_org("G", "g", "pro").await.unwrap();
    let records = PgObjectRecords::new(db.clone());
    let record = |k: &str, size: i64| cdn_core::ObjectRecord {
        key: cdn_core::ObjectKey::new(k),
        size,
        content_type: None,
        etag: "e".into(),
        metadata: Default::default(),
        storage_path: format!("loc/{k}"),
        last_modified: chrono::Utc::now(),
        created_at: chrono::Utc::now(),
        keep: false,
    };
    for (k, size) in [("shots/a", 10), ("shots/b", 5), ("voice/c", 7)] {
        records.upsert(&a.id, &record(k, size)).await.unwrap();
        records.upsert(&gone.id, &record(k, size)).await.unwrap();
    }
    let before = records.folder_usage(&a.id).await.unwrap();
    assert!(stow_db::roll_up_usage(&db).await.unwrap() > 0);
    assert_eq!(records.folder_usage(&a.id).await.unwrap(), before);
    records.upsert(&a.id, &record("shots/d", 1)).await.unwrap();
    let mut conn = db.conn().await.unwrap();
    diesel::sql_query("DELETE FROM organizations WHERE id = $1")
        .bind::<diesel::sql_types::Text, _>(gone.id.as_str())
        .execute(&mut conn)
        .await
        .unwrap();
    stow_db::roll_up_usage(&db).await.unwrap();
    let after = records.folder_usage(&a.id).await.unwrap();
    assert_eq!(after[0].folder, "shots");
    assert_eq!((after[0].totals.objects, after[0].totals.bytes), (3, 16));
    #[derive(diesel::QueryableByName)]
    struct N {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        n: i64,
    }
    let left: N = diesel::sql_query(
        "SELECT (SELECT count(*) FROM object_usage_deltas) + (SELECT count(*) FROM object_usage WHERE org_id = $1) AS n",
    )
    .bind::<diesel::sql_types::Text, _>(gone.id.as_str())
    .get_result(&mut conn)
    .await
    .unwrap();
    assert_eq!(left.n, 0, "nothing is left of the deleted organization");
}

/// Records written by the release before migration 6 (jsonb response, no lease) keep working
/// during a rollout: a completed one replays, an in-flight one lapses after 300 s.
#[tokio::test]
async fn idempotency_records_of_the_previous_release_are_read() {
    use cdn_core::idempotency::{Claim, IdemScope, IdempotencyStore};
    use diesel_async::SimpleAsyncConnection;
    let db = db().await;
    let mut conn = db.conn().await.unwrap();
    conn.batch_execute(
        "INSERT INTO idempotency_records (scope, method, route, idem_key, fingerprint, state, status, response, created_at) VALUES \
         ('key_1', 'POST', '/v1/objects', 'done-old', '\\x6670', 'done', 200, '{\"ok\": true}', now()), \
         ('key_1', 'POST', '/v1/objects', 'stale-old', NULL, 'in_flight', NULL, NULL, now() - interval '301 seconds'), \
         ('key_1', 'POST', '/v1/objects', 'live-old', NULL, 'in_flight', NULL, NULL, now() - interval '10 seconds')",
    )
    .await
    .unwrap();
    let repo = PgIdempotency::new(db.clone());
    let scope = |key: &str| IdemScope {
        scope: "key_1".into(),
        method: "POST".into(),
        route: "/v1/objects".into(),
        key: key.into(),
    };
    let now = chrono::Utc::now();
    assert_eq!(
        repo.claim(&scope("done-old"), "a", now).await.unwrap(),
        Claim::Done {
            fingerprint: b"fp".to_vec(),
            status: 200,
            response: br#"{"ok":true}"#.to_vec(),
        }
    );
    assert_eq!(
        repo.claim(&scope("stale-old"), "a", now).await.unwrap(),
        Claim::Claimed
    );
    assert_eq!(
        repo.claim(&scope("live-old"), "a", now).await.unwrap(),
        Claim::InFlight
    );
}

#[tokio::test]
async fn object_rows_of_the_previous_release_are_read() {
    use cdn_core::store::ObjectRecordStore;
    use diesel_async::SimpleAsyncConnection;
    let db = db().await;
    let org = PgAccounts::new(db.clone())
        .create_org("A", "a", "pro")
        .await
        .unwrap();
    let mut conn = db.conn().await.unwrap();
    // a row written by a release before migration 7: no created_at
    conn.batch_execute(&format!(
        "INSERT INTO objects (org_id, key, size, etag, storage_path, updated_at) \
         VALUES ('{}', 'old.png', 3, 'e', 'p', '2026-11-01T10:00:00Z')",
        org.id
    ))
    .await
    .unwrap();
    let row = PgObjectRecords::new(db)
        .get(&org.id, &cdn_core::ObjectKey::new("old.png"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        row.created_at, row.last_modified,
        "falls back to the update time"
    );
}
