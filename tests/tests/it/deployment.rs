#![allow(clippy::unwrap_used, clippy::expect_used)]
//! What docs/operations.md tells an operator to do, done: services on a least-privilege database
//! role, and a backup restored into a fresh database and store.

use std::process::Command;

use auth_core::AccountStore;
use diesel_async::{AsyncConnection, AsyncPgConnection, SimpleAsyncConnection};
use stow_db::testing::{admin_url, url_for};
use stow_http::Config;
use stowage_tests::*;

/// Runs a tool of the documented procedure; it must succeed.
fn succeeds(cmd: &mut Command) {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

async fn admin(sql: &str) {
    let mut conn = AsyncPgConnection::establish(&admin_url()).await.unwrap();
    conn.batch_execute(sql).await.unwrap();
}

async fn run_as(url: &str, sql: &str) -> Result<(), String> {
    let mut conn = AsyncPgConnection::establish(url)
        .await
        .map_err(|e| e.to_string())?;
    conn.batch_execute(sql).await.map_err(|e| e.to_string())
}

fn with_user(url: &str, user: &str) -> String {
    let mut u = url::Url::parse(url).unwrap();
    u.set_username(user).unwrap();
    u.to_string()
}

/// The bytes `cdn` delivers for `shots/a.png` of workspace `lp`.
async fn delivered(client: &reqwest::Client, cdn: &str) -> Vec<u8> {
    let res = client
        .get(format!("{cdn}/cdn/lp/shots/a.png"))
        .send()
        .await
        .unwrap();
    res.bytes().await.unwrap().to_vec()
}

/// The keys `cdn` lists under `shots`.
async fn listed(client: &reqwest::Client, cdn: &str, dev_key: &str) -> Vec<String> {
    let res = client
        .get(format!("{cdn}/v1/objects?path=shots"))
        .bearer_auth(dev_key)
        .send()
        .await
        .unwrap();
    let body: Value = res.json().await.unwrap();
    body["objects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["key"].as_str().unwrap().to_owned())
        .collect()
}

/// How many events of server `lp123` in the last hour `cdn` finds.
async fn events_found(client: &reqwest::Client, cdn: &str, dev_key: &str) -> usize {
    let now = chrono::Utc::now();
    let res = client
        .post(format!("{cdn}/v1/logs/query"))
        .bearer_auth(dev_key)
        .json(&json!({
            "serverId": "lp123",
            "from": (now - chrono::Duration::hours(1)).to_rfc3339(),
            "to": (now + chrono::Duration::minutes(5)).to_rfc3339(),
        }))
        .send()
        .await
        .unwrap();
    let body: Value = res.json().await.unwrap();
    body["events"].as_array().map_or(0, Vec::len)
}

/// The workspace `lp` (see [`provision`]) used through `cdn` and `logs`: an upload, its listing and
/// delivery, an ingested batch and its query.
async fn exercise(client: &reqwest::Client, cdn: &str, logs: &str, dev_key: &str) {
    let form = reqwest::multipart::Form::new()
        .part(
            "file",
            reqwest::multipart::Part::bytes(png_bytes()).file_name("a.png"),
        )
        .text("path", "shots");
    let res = client
        .post(format!("{cdn}/v1/objects"))
        .bearer_auth(dev_key)
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200, "{}", res.text().await.unwrap());
    assert_eq!(listed(client, cdn, dev_key).await, ["shots/a.png"]);
    assert_eq!(delivered(client, cdn).await, png_bytes());
    let res = client
        .post(format!("{logs}/v1/servers/lp123/logs"))
        .bearer_auth(dev_key)
        .json(&json!({ "batch_id": "batch-0001", "events": [{ "level": "info", "message": "joined" }] }))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 202, "{}", res.text().await.unwrap());
    assert_eq!(events_found(client, cdn, dev_key).await, 1);
}

/// Provisions an organization `lp` with server `lp123` and a developer key; the key's secret.
async fn provision(db_url: &str) -> String {
    let db = stow_db::Db::connect(&stow_db::DbConfig::new(db_url)).unwrap();
    let accounts = stow_db::PgAccounts::new(db);
    let org = accounts.create_org("LP", "lp", "pro").await.unwrap();
    accounts
        .register_server(
            &org.id,
            "lp123",
            None,
            &auth_core::audit::Audit::operator("test"),
        )
        .await
        .unwrap();
    accounts
        .set_logs_active("lp123", true, &auth_core::audit::Audit::operator("test"))
        .await
        .unwrap();
    let s = auth_core::secret::generate(auth_core::CredentialType::Developer);
    accounts
        .create_key(
            &auth_core::model::NewKey::developer(org.id, &s, auth_core::PermissionSet::all()),
            &auth_core::audit::Audit::operator("test"),
        )
        .await
        .unwrap();
    s.secret
}

#[tokio::test]
async fn the_services_run_on_a_role_that_cannot_change_the_schema() {
    let tag = ulid::Ulid::new().to_string().to_lowercase();
    let (owner, app_role, name) = (
        format!("stowage_owner_{tag}"),
        format!("stowage_app_{tag}"),
        format!("stowage_test_lp_{tag}"),
    );
    admin(&format!("CREATE ROLE {owner} LOGIN")).await;
    admin(&format!("CREATE ROLE {app_role} LOGIN")).await;
    admin(&format!("CREATE DATABASE {name} OWNER {owner}")).await;
    let owner_url = with_user(&url_for(&admin_url(), &name), &owner);
    let app_url = with_user(&url_for(&admin_url(), &name), &app_role);
    // the operator's steps, as the owner: migrate, partitions, the documented grants
    stow_db::migrate::run(&owner_url).await.unwrap();
    let owner_db = stow_db::Db::connect(&stow_db::DbConfig::new(owner_url.clone())).unwrap();
    stow_db::logs::maintain_partitions(&owner_db).await.unwrap();
    let grants = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../scripts/db-roles.sql"
    ))
    .unwrap()
    .replace("stowage_app", &app_role);
    run_as(&owner_url, &grants).await.unwrap();
    let dev_key = provision(&owner_url).await;

    // the services, as the app role
    let dir = std::env::temp_dir().join(format!("stowage-lp-{tag}"));
    let config = Config::for_tests(app_url.clone(), format!("file://{}", dir.display()));
    let cdn = spawn_cdn(config.clone());
    let logs = spawn_logs(config);
    let client = reqwest::Client::new();
    exercise(&client, &cdn, &logs, &dev_key).await;

    // …which can change rows but not the schema
    for ddl in [
        "CREATE TABLE intruder (x int)",
        "ALTER TABLE objects ADD COLUMN intruder int",
        "DROP TABLE objects",
        "TRUNCATE objects",
        "CREATE INDEX intruder ON objects (size)",
    ] {
        let err = run_as(&app_url, ddl).await.expect_err(ddl);
        assert!(
            err.contains("permission denied") || err.contains("must be owner"),
            "{ddl}: {err}"
        );
    }
    run_as(
        &app_url,
        "UPDATE plans SET concurrent_searches = concurrent_searches",
    )
    .await
    .unwrap();
    // partition maintenance as the app role (what logs-api runs hourly) cannot drop an expired
    // partition; it reports it and goes on, and the owner's `stowctl logs maintain` drops it
    run_as(
        &owner_url,
        "CREATE TABLE log_events_p20200101 PARTITION OF log_events \
         FOR VALUES FROM ('2020-01-01') TO ('2020-01-02')",
    )
    .await
    .unwrap();
    let app_db = stow_db::Db::connect(&stow_db::DbConfig::new(app_url.clone())).unwrap();
    let report = stow_db::logs::maintain_partitions(&app_db).await.unwrap();
    assert_eq!(report.failed, ["log_events_p20200101"]);
    let report = stow_db::logs::maintain_partitions(&owner_db).await.unwrap();
    assert_eq!(report.dropped, ["log_events_p20200101"]);
    // the partitions the owner makes later are the app role's to write too
    let later = "CREATE TABLE log_events_lp_later (LIKE log_events); \
                 INSERT INTO log_events_lp_later SELECT * FROM log_events LIMIT 0";
    run_as(&owner_url, later).await.unwrap();
    run_as(&app_url, "SELECT count(*) FROM log_events_lp_later")
        .await
        .unwrap();
    std::fs::remove_dir_all(dir).ok();
}

#[tokio::test]
async fn a_backup_restores_into_a_fresh_database_and_store() {
    let app = spawn().await;
    let dev_key = provision(&app.db_url).await;
    exercise(&app.client, &app.cdn, &app.logs, &dev_key).await;
    let tag = ulid::Ulid::new().to_string().to_lowercase();
    let work = std::env::temp_dir().join(format!("stowage-backup-{tag}"));
    std::fs::create_dir_all(&work).unwrap();
    let dump = work.join("stowage.dump");
    let copy = work.join("objects");

    // docs/operations.md, "Production walkthrough", backups: the database first, then the store
    succeeds(
        Command::new("pg_dump")
            .args(["--format=custom", "--file"])
            .arg(&dump)
            .arg(&app.db_url),
    );
    succeeds(
        Command::new("cp")
            .arg("-a")
            .arg(&app.objects_dir)
            .arg(&copy),
    );

    // after the backup: the object is deleted (row and bytes) and another one uploaded
    let res = app
        .client
        .delete(format!("{}/v1/objects?path=shots/a.png", app.cdn))
        .bearer_auth(&dev_key)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(
        app.upload(&dev_key, "later.png", png_bytes(), Some("shots"))
            .await
            .status(),
        200
    );

    // restore into a fresh database and directory
    let name = format!("stowage_test_restore_{tag}");
    admin(&format!("CREATE DATABASE {name}")).await;
    let restored_url = url_for(&admin_url(), &name);
    succeeds(
        Command::new("pg_restore")
            .args(["--no-owner", "--dbname"])
            .arg(&restored_url)
            .arg(&dump),
    );
    let store = work.join("restored-objects");
    std::fs::rename(&copy, &store).unwrap();
    let config = Config::for_tests(restored_url.clone(), format!("file://{}", store.display()));
    let cdn = spawn_cdn(config.clone());
    let client = reqwest::Client::new();
    // the backup's state: a.png is there (with its bytes), later.png is not
    assert_eq!(listed(&client, &cdn, &dev_key).await, ["shots/a.png"]);
    assert_eq!(delivered(&client, &cdn).await, png_bytes());
    assert_eq!(events_found(&client, &cdn, &dev_key).await, 1);
    // the store holds nothing the database does not reference beyond what gc removes
    let restored_db = stow_db::Db::connect(&stow_db::DbConfig::new(restored_url)).unwrap();
    let objects =
        stow_objects::Objects::from_existing_url(&format!("file://{}", store.display())).unwrap();
    let (scanned, removed) = stow_admin::gc(&restored_db, &objects, chrono::Duration::zero())
        .await
        .unwrap();
    assert_eq!(
        (scanned, removed),
        (1, 0),
        "every copied byte is referenced"
    );
    std::fs::remove_dir_all(work).ok();
}
