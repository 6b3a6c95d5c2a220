//! One behavioural suite for every [`AccountStore`] implementation (memory and Postgres).
//! Each case gets an empty store (holding only the built-in plans) and is its own test, made by
//! [`account_store_suite!`]; a case that needs an earlier one's records runs it first.

#![allow(clippy::unwrap_used)]

pub mod members;

use crate::ids::{KeyId, OrgId, ServerId};
use chrono::Utc;

use crate::console_session::Subject;
use crate::key::CredentialType;
use crate::model::{new_id, NewKey, Plan};
use crate::permission::PermissionSet;
use crate::secret;
use crate::server_scope::ServerScope;
use crate::store::{AccountStore, StoreError};
use members::MemberFixture;

/// One `#[test]` per case, each on a fresh store. `$run` drives a future to completion;
/// `$store` is an `async fn() -> Box<dyn AccountStore>` giving an empty store.
#[macro_export]
macro_rules! account_store_suite {
    ($run:path, $store:path) => {
        $crate::account_store_suite!(@cases $run, $store;
            plans_are_built_in_and_upserted,
            organizations_need_a_known_plan_and_a_free_slug,
            servers_register_once_per_join_code,
            keys_authenticate_list_expire_and_disable,
            keys_keep_their_server_scope_within_the_organization,
            plans_organizations_and_servers_are_listed);
    };
    (@cases $run:path, $store:path; $($case:ident),*) => {
        $(
            #[test]
            fn $case() {
                $run(async {
                    let store = $store().await;
                    $crate::testsuite::$case(store.as_ref()).await;
                })
            }
        )*
    };
}

/// One `#[test]` per case of the signing-secret store suite, each on a fresh store that has its
/// initial current secret. `$store` is an `async fn() -> Box<dyn SigningSecretStore>`.
#[macro_export]
macro_rules! signing_secret_suite {
    ($run:path, $store:path) => {
        $crate::signing_secret_suite!(@cases $run, $store;
            signing_secrets_start_with_a_current_one,
            signing_secrets_rotate_with_a_grace_period);
    };
    (@cases $run:path, $store:path; $($case:ident),*) => {
        $(
            #[test]
            fn $case() {
                $run(async {
                    let store = $store().await;
                    $crate::testsuite::$case(store.as_ref()).await;
                })
            }
        )*
    };
}

pub async fn signing_secrets_start_with_a_current_one(
    store: &dyn crate::signing_secrets::SigningSecretStore,
) {
    let now = Utc::now();
    let keys = store.keys(now).await.unwrap();
    let token = keys.sign("ctx", b"p");
    // read again (another instance, after a restart): the same secret
    assert_eq!(
        store
            .keys(now)
            .await
            .unwrap()
            .verify("ctx", &token)
            .unwrap(),
        b"p"
    );
    let listed = store.list(now).await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].accepted_until, None);
}

pub async fn signing_secrets_rotate_with_a_grace_period(
    store: &dyn crate::signing_secrets::SigningSecretStore,
) {
    use chrono::Duration;
    let now = Utc::now();
    let first = store.keys(now).await.unwrap();
    let old_token = first.sign("ctx", b"p");
    store
        .rotate(
            b"second-secret-0123456789abcdef",
            now,
            now + Duration::hours(1),
        )
        .await
        .unwrap();
    let second = store.keys(now).await.unwrap();
    assert_eq!(
        second.verify("ctx", &old_token).unwrap(),
        b"p",
        "within grace"
    );
    let new_token = second.sign("ctx", b"p");
    assert!(
        first.verify("ctx", &new_token).is_err(),
        "signed with the new secret"
    );
    let listed = store.list(now).await.unwrap();
    assert_eq!(listed.len(), 2);
    assert_eq!(listed[0].accepted_until, None, "newest (current) first");
    assert!(listed[1].accepted_until.is_some());
    // past the grace period the old secret is no longer accepted
    let later = now + Duration::hours(2);
    let keys = store.keys(later).await.unwrap();
    assert!(keys.verify("ctx", &old_token).is_err());
    assert_eq!(keys.verify("ctx", &new_token).unwrap(), b"p");
    assert_eq!(store.list(later).await.unwrap().len(), 1);
    // a rotation drops what has expired; a grace period of nothing ends acceptance at once
    store
        .rotate(b"third-secret-0123456789abcdefgh", later, later)
        .await
        .unwrap();
    let keys = store.keys(later).await.unwrap();
    assert!(keys.verify("ctx", &new_token).is_err());
    assert_eq!(store.list(later).await.unwrap().len(), 1);
}

pub async fn plans_are_built_in_and_upserted(store: &dyn AccountStore) {
    // plans
    for p in Plan::builtin() {
        assert_eq!(store.get_plan(&p.name).await.unwrap(), Some(p));
    }
    assert_eq!(store.get_plan("gold").await.unwrap(), None);
    let mut gold = Plan::new("gold", true, 14);
    gold.max_file_size = 1234;
    assert_eq!(store.upsert_plan(&gold).await.unwrap(), gold);
    gold.retention_days = 21;
    store.upsert_plan(&gold).await.unwrap();
    assert_eq!(
        store
            .get_plan("gold")
            .await
            .unwrap()
            .unwrap()
            .retention_days,
        21
    );
}

pub async fn organizations_need_a_known_plan_and_a_free_slug(store: &dyn AccountStore) {
    organizations(store).await;
}

async fn organizations(store: &dyn AccountStore) -> crate::model::Org {
    plans_are_built_in_and_upserted(store).await;
    // organizations
    let err = store.create_org("X", "x", "nope").await.unwrap_err();
    assert!(
        matches!(err, StoreError::NotFound(ref m) if m.contains("nope")),
        "{err:?}"
    );
    let org = store.create_org("Acme RP", "acme-rp", "pro").await.unwrap();
    assert_eq!(store.get_org(&org.id).await.unwrap(), Some(org.clone()));
    assert_eq!(
        store.find_org_by_slug("acme-rp").await.unwrap(),
        Some(org.clone())
    );
    assert!(matches!(
        store.create_org("Other", "acme-rp", "pro").await,
        Err(StoreError::Conflict(_))
    ));
    assert_eq!(
        store
            .set_org_plan(&org.id, "growth", &crate::audit::Audit::operator("test"))
            .await
            .unwrap()
            .plan,
        "growth"
    );
    assert!(matches!(
        store
            .set_org_plan(&org.id, "nope", &crate::audit::Audit::operator("test"))
            .await,
        Err(StoreError::NotFound(_))
    ));
    assert!(matches!(
        store
            .set_org_plan(
                &OrgId::new("org_missing"),
                "pro",
                &crate::audit::Audit::operator("test")
            )
            .await,
        Err(StoreError::NotFound(_))
    ));
    assert_eq!(
        store.get_org(&OrgId::new("org_missing")).await.unwrap(),
        None
    );

    org
}

pub async fn plans_organizations_and_servers_are_listed(store: &dyn AccountStore) {
    let names: Vec<String> = store
        .list_plans()
        .await
        .unwrap()
        .into_iter()
        .map(|p| p.name)
        .collect();
    let mut builtin: Vec<String> = Plan::builtin().into_iter().map(|p| p.name).collect();
    builtin.sort();
    assert_eq!(names, builtin, "by name");
    assert_eq!(store.list_orgs().await.unwrap(), []);
    let (org, server) = servers(store).await;
    let second = store.create_org("Second", "second", "pro").await.unwrap();
    let ids = |orgs: Vec<crate::model::Org>| orgs.into_iter().map(|o| o.id).collect::<Vec<_>>();
    assert_eq!(
        ids(store.list_orgs().await.unwrap()),
        [org.id.clone(), second.id.clone()],
        "by name"
    );
    let other = store
        .register_server(
            &org.id,
            "def456",
            None,
            &crate::audit::Audit::operator("test"),
        )
        .await
        .unwrap();
    let codes: Vec<String> = store
        .list_servers(&org.id)
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.cfx_id)
        .collect();
    assert_eq!(codes, [server.cfx_id, other.cfx_id], "by join code");
    assert_eq!(store.list_servers(&second.id).await.unwrap(), []);
    assert!(matches!(
        store.list_servers(&OrgId::new("org_missing")).await,
        Err(StoreError::NotFound(_))
    ));
}

pub async fn servers_register_once_per_join_code(store: &dyn AccountStore) {
    servers(store).await;
}

async fn servers(store: &dyn AccountStore) -> (crate::model::Org, crate::model::Server) {
    let org = organizations(store).await;
    // servers
    let server = store
        .register_server(
            &org.id,
            "AbC123",
            Some("Main"),
            &crate::audit::Audit::operator("test"),
        )
        .await
        .unwrap();
    assert!(!server.logs_active);
    assert_eq!(
        store.find_server_by_cfx("abc123").await.unwrap(),
        Some(server.clone())
    );
    assert_eq!(
        store.find_server_by_cfx("ABC123").await.unwrap(),
        Some(server.clone())
    );
    assert!(matches!(
        store
            .register_server(
                &org.id,
                "abc123",
                None,
                &crate::audit::Audit::operator("test")
            )
            .await,
        Err(StoreError::Conflict(_))
    ));
    assert!(matches!(
        store
            .register_server(
                &OrgId::new("org_missing"),
                "zzz999",
                None,
                &crate::audit::Audit::operator("test")
            )
            .await,
        Err(StoreError::NotFound(_))
    ));
    assert!(
        store
            .set_logs_active("ABC123", true, &crate::audit::Audit::operator("test"))
            .await
            .unwrap()
            .logs_active
    );
    assert!(
        store
            .find_server_by_cfx("abc123")
            .await
            .unwrap()
            .unwrap()
            .logs_active
    );
    assert!(matches!(
        store
            .set_logs_active("nope", true, &crate::audit::Audit::operator("test"))
            .await,
        Err(StoreError::NotFound(_))
    ));

    (org, server)
}

pub async fn keys_authenticate_list_expire_and_disable(store: &dyn AccountStore) {
    let (org, server) = servers(store).await;
    // keys
    let secret = secret::generate(CredentialType::Server);
    let new_key = NewKey {
        id: KeyId::generate(),
        org_id: org.id.clone(),
        server_id: Some(server.id.clone()),
        credential_type: CredentialType::Server,
        name: Some("game server".into()),
        secret_hash: secret.hash,
        hint: secret.hint.clone(),
        permissions: PermissionSet::server_key_baseline(),
        allowed_prefixes: vec!["images".into()],
        denied_prefixes: vec!["images/private".into()],
        allowed_mime: Some(vec!["image/*".into()]),
        servers: ServerScope::All,
        expires_at: None,
    };
    let key = store
        .create_key(&new_key, &crate::audit::Audit::operator("test"))
        .await
        .unwrap();
    assert_eq!(key.id, new_key.id);
    assert_eq!(key.allowed_prefixes, vec!["images".to_string()]);
    assert_eq!(key.allowed_mime, Some(vec!["image/*".to_string()]));
    assert_eq!(key.permissions, PermissionSet::server_key_baseline());

    let ctx = store
        .find_auth_context(&secret.hash)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(ctx.key.id, key.id);
    assert_eq!(ctx.org.id, org.id);
    assert_eq!(ctx.plan.name, "growth");
    assert_eq!(
        ctx.server.as_ref().map(|s| s.id.clone()),
        Some(server.id.clone())
    );
    assert_eq!(store.find_auth_context(&[0u8; 32]).await.unwrap(), None);

    let mut bad = new_key.clone();
    bad.id = KeyId::generate();
    bad.org_id = "org_missing".into();
    bad.secret_hash = [7u8; 32];
    assert!(matches!(
        store
            .create_key(&bad, &crate::audit::Audit::operator("test"))
            .await,
        Err(StoreError::NotFound(_))
    ));

    let other_org = store.create_org("Other", "other", "free").await.unwrap();
    let mut cross = new_key.clone();
    cross.id = KeyId::generate();
    cross.org_id = other_org.id.clone();
    cross.secret_hash = [8u8; 32];
    assert!(
        matches!(
            store
                .create_key(&cross, &crate::audit::Audit::operator("test"))
                .await,
            Err(StoreError::NotFound(_))
        ),
        "a key cannot be bound to another organization's server"
    );

    let dev_secret = secret::generate(CredentialType::Developer);
    let dev = NewKey {
        id: KeyId::generate(),
        server_id: None,
        credential_type: CredentialType::Developer,
        secret_hash: dev_secret.hash,
        hint: dev_secret.hint,
        permissions: PermissionSet::all(),
        allowed_prefixes: vec![],
        denied_prefixes: vec![],
        allowed_mime: None,
        servers: ServerScope::All,
        expires_at: Some(Utc::now() + chrono::Duration::days(1)),
        ..new_key.clone()
    };
    store
        .create_key(&dev, &crate::audit::Audit::operator("test"))
        .await
        .unwrap();
    let dev_ctx = store
        .find_auth_context(&dev_secret.hash)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(dev_ctx.server, None);
    assert_eq!(dev_ctx.key.allowed_mime, None);
    assert!(dev_ctx.key.expires_at.is_some());

    let listed = store.list_keys(&org.id).await.unwrap();
    assert_eq!(listed.len(), 2);
    assert!(store.list_keys(&other_org.id).await.unwrap().is_empty());
    assert!(matches!(
        store.list_keys(&OrgId::new("org_missing")).await,
        Err(StoreError::NotFound(_))
    ));

    let now = Utc::now();
    store.touch_key(&key.id, now).await.unwrap();
    assert!(store
        .get_key(&key.id)
        .await
        .unwrap()
        .unwrap()
        .last_used_at
        .is_some());
    let disabled = store
        .disable_key(&key.id, now, &crate::audit::Audit::operator("test"))
        .await
        .unwrap();
    assert!(disabled.disabled_at.is_some());
    let ctx = store
        .find_auth_context(&secret.hash)
        .await
        .unwrap()
        .unwrap();
    assert!(ctx.key.check_usable(Utc::now()).is_err());
    assert!(matches!(
        store
            .disable_key(
                &KeyId::new("key_missing"),
                now,
                &crate::audit::Audit::operator("test")
            )
            .await,
        Err(StoreError::NotFound(_))
    ));
    // enabled again: usable, and found with its secret
    let enabled = store
        .enable_key(&key.id, &crate::audit::Audit::operator("test"))
        .await
        .unwrap();
    assert_eq!(enabled.disabled_at, None);
    let ctx = store
        .find_auth_context(&secret.hash)
        .await
        .unwrap()
        .unwrap();
    assert!(ctx.key.check_usable(Utc::now()).is_ok());
    assert!(matches!(
        store
            .enable_key(
                &KeyId::new("key_missing"),
                &crate::audit::Audit::operator("test")
            )
            .await,
        Err(StoreError::NotFound(_))
    ));

    store
        .delete_key(&key.id, &crate::audit::Audit::operator("test"))
        .await
        .unwrap();
    assert_eq!(store.get_key(&key.id).await.unwrap(), None);
    assert_eq!(store.find_auth_context(&secret.hash).await.unwrap(), None);
    assert!(matches!(
        store
            .delete_key(&key.id, &crate::audit::Audit::operator("test"))
            .await,
        Err(StoreError::NotFound(_))
    ));
}

pub async fn keys_keep_their_server_scope_within_the_organization(store: &dyn AccountStore) {
    let (org, server) = servers(store).await;
    let second = store
        .register_server(
            &org.id,
            "second",
            None,
            &crate::audit::Audit::operator("test"),
        )
        .await
        .unwrap();
    let developer = |servers: ServerScope| {
        let s = secret::generate(CredentialType::Developer);
        (
            NewKey {
                servers,
                ..NewKey::developer(org.id.clone(), &s, PermissionSet::all())
            },
            s.hash,
        )
    };
    let scope = ServerScope::only([second.id.clone(), server.id.clone()]).unwrap();
    let (scoped, hash) = developer(scope.clone());
    assert_eq!(
        store
            .create_key(&scoped, &crate::audit::Audit::operator("test"))
            .await
            .unwrap()
            .servers,
        scope
    );
    assert_eq!(
        store.get_key(&scoped.id).await.unwrap().unwrap().servers,
        scope
    );
    let ctx = store.find_auth_context(&hash).await.unwrap().unwrap();
    assert_eq!(ctx.key.servers, scope);
    assert_eq!(ctx.log_scope(), scope);
    let (global, hash) = developer(ServerScope::All);
    store
        .create_key(&global, &crate::audit::Audit::operator("test"))
        .await
        .unwrap();
    let ctx = store.find_auth_context(&hash).await.unwrap().unwrap();
    assert_eq!(ctx.log_scope(), ServerScope::All);

    let other = store
        .create_org("Elsewhere", "elsewhere", "growth")
        .await
        .unwrap();
    let theirs = store
        .register_server(
            &other.id,
            "theirs",
            None,
            &crate::audit::Audit::operator("test"),
        )
        .await
        .unwrap();
    let (cross, hash) = developer(ServerScope::only([server.id.clone(), theirs.id]).unwrap());
    assert!(
        matches!(
            store
                .create_key(&cross, &crate::audit::Audit::operator("test"))
                .await,
            Err(StoreError::NotFound(_))
        ),
        "a scope cannot name another organization's server"
    );
    assert_eq!(
        store.find_auth_context(&hash).await.unwrap(),
        None,
        "nothing stored"
    );
    let (unknown, _) = developer(ServerScope::only([ServerId::new("srv_missing")]).unwrap());
    assert!(matches!(
        store
            .create_key(&unknown, &crate::audit::Audit::operator("test"))
            .await,
        Err(StoreError::NotFound(_))
    ));
}

/// One `#[test]` per case of the console-session store suite. `$fixture` is an
/// `async fn() -> (Box<dyn ConsoleSessionStore>, Box<dyn MemberFixture>)` over the same
/// database.
#[macro_export]
macro_rules! console_session_suite {
    ($run:path, $fixture:path) => {
        $crate::console_session_suite!(@cases $run, $fixture;
            console_sessions_are_created_found_touched_and_ended,
            console_sessions_end_per_key_and_by_sweep,
            member_sessions_end_per_member_and_organization);
    };
    (@cases $run:path, $fixture:path; $($case:ident),*) => {
        $(
            #[test]
            fn $case() {
                $run(async {
                    let (sessions, accounts) = $fixture().await;
                    $crate::testsuite::$case(sessions.as_ref(), accounts.as_ref()).await;
                })
            }
        )*
    };
}

/// Two developer keys of a new organization, for sessions to belong to.
async fn two_keys(accounts: &dyn AccountStore) -> [(KeyId, [u8; 32]); 2] {
    let org = accounts
        .create_org("Sessions RP", &new_id("sess"), "free")
        .await
        .unwrap();
    let mut keys = Vec::new();
    for _ in 0..2 {
        let secret = secret::generate(CredentialType::Developer);
        let key = accounts
            .create_key(
                &NewKey::developer(org.id.clone(), &secret, PermissionSet::all()),
                &crate::audit::Audit::operator("test"),
            )
            .await
            .unwrap();
        keys.push((key.id, secret.hash));
    }
    [keys[0].clone(), keys[1].clone()]
}

fn session_for(
    key: &(KeyId, [u8; 32]),
    at: chrono::DateTime<Utc>,
) -> crate::console_session::Session {
    use crate::console_session::{new_token, token_hash};
    // whole microseconds: what Postgres keeps
    let at = chrono::DateTime::from_timestamp_micros(at.timestamp_micros()).unwrap();
    crate::console_session::Session {
        id_hash: token_hash(&new_token()),
        subject: Subject::Key {
            key_id: key.0.clone(),
            key_hash: key.1,
        },
        csrf_token: new_token(),
        created_at: at,
        last_seen_at: at,
    }
}

pub async fn console_sessions_are_created_found_touched_and_ended(
    sessions: &dyn crate::console_session::ConsoleSessionStore,
    accounts: &dyn AccountStore,
) {
    let keys = two_keys(accounts).await;
    let now = Utc::now();
    let s = session_for(&keys[0], now);
    sessions.create(&s).await.unwrap();
    assert_eq!(sessions.get(&s.id_hash).await.unwrap(), Some(s.clone()));
    assert!(matches!(
        sessions.create(&s).await,
        Err(StoreError::Conflict(_))
    ));
    let later = s.created_at + chrono::Duration::minutes(5);
    sessions.touch(&s.id_hash, later).await.unwrap();
    let got = sessions.get(&s.id_hash).await.unwrap().unwrap();
    assert_eq!(got.last_seen_at, later);
    assert_eq!(got.created_at, s.created_at);
    sessions.end(&s.id_hash).await.unwrap();
    assert_eq!(sessions.get(&s.id_hash).await.unwrap(), None);
    sessions.end(&s.id_hash).await.unwrap();
    assert_eq!(
        sessions
            .get(&crate::console_session::token_hash("unknown"))
            .await
            .unwrap(),
        None
    );
}

pub async fn console_sessions_end_per_key_and_by_sweep(
    sessions: &dyn crate::console_session::ConsoleSessionStore,
    accounts: &dyn AccountStore,
) {
    let keys = two_keys(accounts).await;
    let now = Utc::now();
    let a1 = session_for(&keys[0], now);
    let a2 = session_for(&keys[0], now);
    let b = session_for(&keys[1], now);
    for s in [&a1, &a2, &b] {
        sessions.create(s).await.unwrap();
    }
    assert_eq!(sessions.end_for_key(&keys[0].0).await.unwrap(), 2);
    assert_eq!(sessions.get(&a1.id_hash).await.unwrap(), None);
    assert_eq!(sessions.get(&a2.id_hash).await.unwrap(), None);
    assert!(sessions.get(&b.id_hash).await.unwrap().is_some());

    let old = session_for(&keys[0], now - chrono::Duration::hours(13));
    let idle = session_for(&keys[0], now - chrono::Duration::hours(1));
    sessions.create(&old).await.unwrap();
    sessions.create(&idle).await.unwrap();
    sessions
        .touch(&old.id_hash, now - chrono::Duration::seconds(5))
        .await
        .unwrap();
    let swept = sessions
        .sweep(
            now - chrono::Duration::minutes(30),
            now - chrono::Duration::hours(12),
        )
        .await
        .unwrap();
    assert_eq!(swept, 2, "the idle one and the one past its absolute limit");
    assert!(sessions.get(&b.id_hash).await.unwrap().is_some());
}

/// One `#[test]` per case of the rate-bucket store suite, each on a fresh store. `$store` is an
/// `async fn() -> Box<dyn RateBucketStore>`.
#[macro_export]
macro_rules! rate_bucket_suite {
    ($run:path, $store:path) => {
        $crate::rate_bucket_suite!(@cases $run, $store;
            rate_buckets_start_full_and_give_no_more_than_they_hold,
            rate_buckets_refill_at_their_rate,
            rate_buckets_never_give_more_than_they_hold_to_concurrent_takes);
    };
    (@cases $run:path, $store:path; $($case:ident),*) => {
        $(
            #[test]
            fn $case() {
                $run(async {
                    let store = $store().await;
                    $crate::testsuite::$case(store.as_ref()).await;
                })
            }
        )*
    };
}

/// A quota that refills nothing within a test.
const FROZEN: crate::rate::Quota = crate::rate::Quota {
    per_second: 1e-9,
    burst: 5,
};

pub async fn rate_buckets_start_full_and_give_no_more_than_they_hold(
    store: &dyn crate::rate::RateBucketStore,
) {
    let first = store.take("key:a", 3, FROZEN).await.unwrap();
    assert_eq!(first.granted, 3);
    assert!((first.left - 2.0).abs() < 1e-3, "{first:?}");
    assert_eq!(store.take("key:a", 5, FROZEN).await.unwrap().granted, 2);
    let empty = store.take("key:a", 1, FROZEN).await.unwrap();
    assert_eq!(empty.granted, 0);
    assert!(empty.left < 1.0, "{empty:?}");
    // buckets are apart by name
    assert_eq!(store.take("key:b", 9, FROZEN).await.unwrap().granted, 5);
    assert_eq!(
        store
            .take("signin:127.0.0.1", 1, FROZEN)
            .await
            .unwrap()
            .granted,
        1
    );
}

pub async fn rate_buckets_refill_at_their_rate(store: &dyn crate::rate::RateBucketStore) {
    let quota = crate::rate::Quota {
        per_second: 100.0,
        burst: 4,
    };
    assert_eq!(store.take("key:r", 4, quota).await.unwrap().granted, 4);
    // 100 ms at 100 a second is 10 tokens, of which the bucket holds 4
    std::thread::sleep(std::time::Duration::from_millis(100));
    assert_eq!(store.take("key:r", 10, quota).await.unwrap().granted, 4);
}

pub async fn rate_buckets_never_give_more_than_they_hold_to_concurrent_takes(
    store: &dyn crate::rate::RateBucketStore,
) {
    let takes = (0..12).map(|_| store.take("key:c", 1, FROZEN));
    let granted: u32 = futures::future::join_all(takes)
        .await
        .into_iter()
        .map(|t| t.unwrap().granted)
        .sum();
    assert_eq!(granted, FROZEN.burst);
}

pub async fn member_sessions_end_per_member_and_organization(
    sessions: &dyn crate::console_session::ConsoleSessionStore,
    accounts: &dyn MemberFixture,
) {
    use crate::member::{Accepter, Invitation};
    use crate::roles::{Grant, Role};
    let keys = two_keys(accounts).await;
    let (a, b) = (
        accounts.create_org("A", &new_id("a"), "pro").await.unwrap(),
        accounts.create_org("B", &new_id("b"), "pro").await.unwrap(),
    );
    let now = Utc::now();
    let mut ana = None;
    for org in [&a, &b] {
        let token = crate::console_session::new_token();
        let invitation = Invitation {
            id: crate::InvitationId::generate(),
            org_id: org.id.clone(),
            grant: Grant::everywhere(Role::Viewer),
            invited_by: None,
            token_hash: crate::console_session::token_hash(&token),
            note: None,
            created_at: now,
            expires_at: now + chrono::Duration::hours(1),
            accepted_at: None,
        };
        accounts
            .create_invitation(&invitation, &crate::audit::Audit::operator("test"))
            .await
            .unwrap();
        let accepter = match &ana {
            None => Accepter::New {
                login: "ana".into(),
                display_name: None,
                password_hash: "$argon2id$stand-in".into(),
            },
            Some(id) => Accepter::Existing(crate::MemberId::clone(id)),
        };
        let (m, _) = accounts
            .accept_invitation(
                &invitation.token_hash,
                &accepter,
                now,
                &crate::audit::Audit::operator("test"),
            )
            .await
            .unwrap()
            .unwrap();
        ana = Some(m.id);
    }
    let ana = ana.unwrap();
    let as_member = |org: &OrgId| crate::console_session::Session {
        subject: Subject::Member {
            member_id: ana.clone(),
            org_id: org.clone(),
        },
        ..session_for(&keys[0], now)
    };
    let (a1, a2, b1) = (as_member(&a.id), as_member(&a.id), as_member(&b.id));
    let key = session_for(&keys[0], now);
    for s in [&a1, &a2, &b1, &key] {
        sessions.create(s).await.unwrap();
    }
    assert_eq!(sessions.get(&a1.id_hash).await.unwrap(), Some(a1.clone()));
    assert_eq!(sessions.end_for_member(&ana, Some(&a.id)).await.unwrap(), 2);
    assert_eq!(sessions.get(&a2.id_hash).await.unwrap(), None);
    assert!(
        sessions.get(&b1.id_hash).await.unwrap().is_some(),
        "another organization"
    );
    assert_eq!(sessions.end_for_member(&ana, None).await.unwrap(), 1);
    assert_eq!(sessions.get(&b1.id_hash).await.unwrap(), None);
    assert!(
        sessions.get(&key.id_hash).await.unwrap().is_some(),
        "a key's session"
    );
}
