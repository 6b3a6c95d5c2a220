#![allow(clippy::unwrap_used, clippy::expect_used)]
use auth_core::model::{new_id, NewKey};
use auth_core::{secret, AccountStore, CredentialType, PermissionSet};
use stow_db::{testing, Db, DbConfig, PgAccounts, PgIdempotency, PgObjects, PgUploadUrls};

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
    cdn_core::testsuite::object_repo_suite(&PgObjects::new(db), &a.id, &b.id).await;
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
