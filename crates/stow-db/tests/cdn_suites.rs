#![allow(clippy::unwrap_used, clippy::expect_used)]
use auth_core::model::{new_id, NewKey};
use auth_core::{secret, AccountStore, CredentialType, PermissionSet};
use stow_db::{testing, Db, DbConfig, PgAccounts, PgIdempotency, PgObjectRecords, PgUploadUrls};

async fn db() -> Db {
    let url = testing::fresh_database().await.expect("fresh database");
    Db::connect(&DbConfig::new(url)).expect("pool")
}

#[tokio::test]
async fn postgres_objects_pass_the_shared_suite() {
    let db = db().await;
    let accounts = PgAccounts::new(db.clone());
    let a = accounts.create_org("A", "a", "pro").await.unwrap();
    let b = accounts.create_org("B", "b", "pro").await.unwrap();
    cdn_core::testsuite::object_repo_suite(&PgObjectRecords::new(db), &a.id, &b.id).await;
}

#[tokio::test]
async fn postgres_idempotency_passes_the_shared_suite() {
    cdn_core::testsuite::idempotency_suite(&PgIdempotency::new(db().await)).await;
}

#[tokio::test]
async fn postgres_upload_urls_pass_the_shared_suite() {
    let db = db().await;
    let accounts = PgAccounts::new(db.clone());
    let org = accounts.create_org("A", "a", "pro").await.unwrap();
    let s = secret::generate(CredentialType::Developer);
    let key = accounts
        .create_key(&NewKey {
            id: new_id("key"),
            org_id: org.id.clone(),
            server_id: None,
            credential_type: CredentialType::Developer,
            name: None,
            secret_hash: s.hash,
            hint: s.hint,
            permissions: PermissionSet::all(),
            allowed_prefixes: vec![],
            denied_prefixes: vec![],
            allowed_mime: None,
            expires_at: None,
        })
        .await
        .unwrap();
    cdn_core::testsuite::upload_url_suite(&PgUploadUrls::new(db), &org.id, &key.id).await;
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
