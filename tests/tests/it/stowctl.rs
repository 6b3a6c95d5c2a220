#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The `stowctl` binary, run as a process against a fresh database.

use std::process::Command;

use serde_json::Value;

fn stowctl(db: &str, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_stowctl_test_shim"))
        .env("DATABASE_URL", db)
        .args(args)
        .output()
        .expect("run stowctl");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn json_of(stdout: &str) -> Value {
    let lines: Vec<&str> = stdout.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "exactly one JSON object: {stdout}");
    serde_json::from_str(lines[0]).expect("JSON")
}

async fn empty_db() -> String {
    // a fresh, migrated database; `migrate` must then be a no-op
    stow_db::testing::fresh_database().await.unwrap()
}

#[tokio::test]
async fn provisioning_flow() {
    let db = empty_db().await;
    let (code, out, _) = stowctl(&db, &["--json", "migrate"]);
    assert_eq!(code, 0);
    assert_eq!(json_of(&out)["applied"], serde_json::json!([]));

    let (code, out, _) = stowctl(
        &db,
        &[
            "--json",
            "plan",
            "upsert",
            "--name",
            "gold",
            "--logs",
            "--retention-days",
            "14",
            "--max-file-size",
            "1000",
        ],
    );
    assert_eq!(code, 0, "{out}");
    assert_eq!(json_of(&out)["retentionDays"], 14);

    let (code, out, _) = stowctl(
        &db,
        &[
            "--json", "org", "create", "--name", "Acme RP", "--plan", "gold",
        ],
    );
    assert_eq!(code, 0);
    let org = json_of(&out);
    let org_id = org["id"].as_str().unwrap().to_owned();
    assert_eq!(org["slug"], "acme-rp");
    // the same name again, when asked for, gets a distinct workspace slug
    let (_, out, _) = stowctl(
        &db,
        &[
            "--json",
            "org",
            "create",
            "--name",
            "Acme RP",
            "--plan",
            "gold",
            "--allow-duplicate-name",
        ],
    );
    assert_ne!(json_of(&out)["slug"], "acme-rp");

    let (code, out, _) = stowctl(
        &db,
        &[
            "--json", "server", "register", "--org", &org_id, "--cfx-id", "Abc123", "--name",
            "Main",
        ],
    );
    assert_eq!(code, 0);
    let server = json_of(&out);
    assert_eq!(server["cfxId"], "Abc123");
    assert!(server["id"].as_str().unwrap().starts_with("srv_"));
    let (code, _, err) = stowctl(
        &db,
        &["server", "register", "--org", &org_id, "--cfx-id", "abc123"],
    );
    assert_eq!(code, 1);
    assert!(err.contains("already registered"), "{err}");

    let (code, out, _) = stowctl(
        &db,
        &["--json", "logs-source", "activate", "--cfx-id", "ABC123"],
    );
    assert_eq!(code, 0);
    assert_eq!(json_of(&out)["logsActive"], true);

    let (code, out, _) = stowctl(
        &db,
        &[
            "--json", "key", "create", "--org", &org_id, "--server", "abc123", "--type", "server",
        ],
    );
    assert_eq!(code, 0);
    let key = json_of(&out);
    let secret = key["secret"].as_str().unwrap();
    assert!(secret.starts_with("stw_srv_"));
    let perms: Vec<String> = serde_json::from_value(key["permissions"].clone()).unwrap();
    assert_eq!(perms, vec!["cdn:write", "logs:read", "logs:write"]);

    let (code, out, _) = stowctl(
        &db,
        &[
            "--json",
            "key",
            "create",
            "--org",
            &org_id,
            "--type",
            "developer",
            "--perm",
            "cdn:read",
            "--allow-path",
            "images/",
            "--deny-path",
            "images/private",
            "--mime",
            "image/*",
            "--expires-at",
            "2099-01-01T00:00:00Z",
            "--name",
            "ci",
        ],
    );
    assert_eq!(code, 0, "{out}");
    let dev = json_of(&out);
    assert!(dev["secret"].as_str().unwrap().starts_with("stw_dev_"));
    assert_eq!(dev["allowPaths"], serde_json::json!(["images"]));
    let dev_id = dev["keyId"].as_str().unwrap().to_owned();

    let (code, out, _) = stowctl(&db, &["--json", "key", "list", "--org", &org_id]);
    assert_eq!(code, 0);
    let listed = json_of(&out);
    assert_eq!(listed["keys"].as_array().unwrap().len(), 2);
    assert!(!out.contains(secret), "listing never shows secrets");

    assert_eq!(stowctl(&db, &["--json", "key", "disable", &dev_id]).0, 0);
    assert_eq!(stowctl(&db, &["--json", "key", "delete", &dev_id]).0, 0);
    let (code, _, err) = stowctl(&db, &["key", "delete", &dev_id]);
    assert_eq!(code, 1);
    assert!(err.contains("unknown key"), "{err}");

    let (code, out, _) = stowctl(&db, &["--json", "usage", "--org", &org_id]);
    assert_eq!(code, 0);
    assert_eq!(json_of(&out)["logEvents"], 0);

    let (code, out, _) = stowctl(
        &db,
        &[
            "--json", "org", "set-plan", "--org", &org_id, "--plan", "free",
        ],
    );
    assert_eq!(code, 0);
    assert_eq!(json_of(&out)["plan"], "free");

    let (code, out, _) = stowctl(&db, &["--json", "logs", "maintain"]);
    assert_eq!(code, 0);
    let first = json_of(&out);
    assert!(first["created"].as_array().is_some());
    assert_eq!(first["failed"], serde_json::json!([]));
    // nothing was ever inserted: no partition needs a vacuum
    assert_eq!(first["vacuumed"], serde_json::json!([]), "{first}");
    let (code, out, _) = stowctl(&db, &["--json", "logs", "maintain"]);
    assert_eq!(code, 0);
    let second = json_of(&out);
    assert_eq!(second["created"], serde_json::json!([]), "{second}");
    assert_eq!(second["vacuumed"], serde_json::json!([]), "{second}");
}

#[tokio::test]
async fn errors_are_actionable_and_never_panics() {
    let db = empty_db().await;
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["org", "create", "--name", "X", "--plan", "platinum"],
            "unknown plan",
        ),
        (
            vec!["org", "set-plan", "--org", "org_missing", "--plan", "pro"],
            "unknown organization",
        ),
        (
            vec![
                "server",
                "register",
                "--org",
                "org_missing",
                "--cfx-id",
                "abc",
            ],
            "unknown organization",
        ),
        (
            vec![
                "server",
                "register",
                "--org",
                "org_missing",
                "--cfx-id",
                "bad code!",
            ],
            "join code",
        ),
        (
            vec!["logs-source", "activate", "--cfx-id", "nope"],
            "unknown server",
        ),
        (
            vec![
                "key",
                "create",
                "--org",
                "org_missing",
                "--type",
                "developer",
                "--perm",
                "cdn:read",
            ],
            "unknown organization",
        ),
        (
            vec!["usage", "--org", "org_missing"],
            "unknown organization",
        ),
    ];
    for (args, expected) in cases {
        let (code, out, err) = stowctl(&db, &args);
        assert_eq!(code, 1, "{args:?}: {out} {err}");
        assert!(err.contains(expected), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    let (_, out, _) = stowctl(
        &db,
        &["--json", "org", "create", "--name", "Acme", "--plan", "pro"],
    );
    let org = json_of(&out)["id"].as_str().unwrap().to_owned();
    for (args, expected) in [
        (
            vec!["key", "create", "--org", org.as_str(), "--type", "server"],
            "--server",
        ),
        (
            vec![
                "key",
                "create",
                "--org",
                org.as_str(),
                "--type",
                "developer",
            ],
            "--perm",
        ),
        (
            vec![
                "key",
                "create",
                "--org",
                org.as_str(),
                "--type",
                "developer",
                "--perm",
                "cdn:admin",
            ],
            "unknown permission",
        ),
        (
            vec![
                "key",
                "create",
                "--org",
                org.as_str(),
                "--type",
                "developer",
                "--perm",
                "cdn:read",
                "--allow-path",
                "../x",
            ],
            "--allow-path",
        ),
        (
            vec![
                "key",
                "create",
                "--org",
                org.as_str(),
                "--type",
                "developer",
                "--perm",
                "cdn:read",
                "--expires-at",
                "soon",
            ],
            "--expires-at",
        ),
        (
            vec![
                "key",
                "create",
                "--org",
                org.as_str(),
                "--type",
                "server",
                "--server",
                "nosuch",
            ],
            "no server",
        ),
    ] {
        let (code, _, err) = stowctl(&db, &args);
        assert_eq!(code, 1, "{args:?}");
        assert!(err.contains(expected), "{args:?}: {err}");
    }
    // --json errors are JSON on stderr, nothing on stdout
    let (code, out, err) = stowctl(
        &db,
        &[
            "--json", "org", "create", "--name", "X", "--plan", "platinum",
        ],
    );
    assert_eq!(code, 1);
    assert!(out.is_empty());
    let e: Value = serde_json::from_str(err.trim()).unwrap();
    assert!(e["error"].as_str().unwrap().contains("platinum"));
    // unreachable database: a message, not a panic
    let (code, _, err) = stowctl(
        "postgres://postgres@127.0.0.1:1/none",
        &["org", "create", "--name", "X", "--plan", "pro"],
    );
    assert_eq!(code, 1);
    assert!(err.contains("database unavailable"), "{err}");
}

#[tokio::test]
async fn migrate_is_safe_twice_and_concurrently() {
    let admin = stow_db::testing::admin_url();
    let name = format!(
        "stowage_test_{}",
        ulid::Ulid::new().to_string().to_lowercase()
    );
    let url = stow_db::testing::url_for(&admin, &name);
    let status = Command::new("psql")
        .args([
            "-h",
            "127.0.0.1",
            "-U",
            "postgres",
            "-d",
            "postgres",
            "-qc",
            &format!("CREATE DATABASE {name}"),
        ])
        .status()
        .unwrap();
    assert!(status.success());
    let a = std::thread::spawn({
        let url = url.clone();
        move || stowctl(&url, &["--json", "migrate"])
    });
    let b = std::thread::spawn({
        let url = url.clone();
        move || stowctl(&url, &["--json", "migrate"])
    });
    let (ra, rb) = (a.join().unwrap(), b.join().unwrap());
    assert_eq!((ra.0, rb.0), (0, 0), "{ra:?} {rb:?}");
    let applied = json_of(&ra.1)["applied"].as_array().unwrap().len()
        + json_of(&rb.1)["applied"].as_array().unwrap().len();
    let migrations = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../migrations"))
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().join("up.sql").exists())
        .count();
    assert!(migrations >= 4);
    assert_eq!(applied, migrations, "each migration applied exactly once");
    let (code, out, _) = stowctl(&url, &["--json", "migrate"]);
    assert_eq!(code, 0);
    assert_eq!(json_of(&out)["applied"], serde_json::json!([]));
}

#[tokio::test]
async fn placeholders_are_set_listed_and_removed_with_the_apis_rules() {
    use cdn_core::ObjectRecordStore;
    let db = empty_db().await;
    let run = |args: &[&str]| stowctl(&db, args);
    let (code, out, err) = run(&["--json", "plan", "upsert", "--name", "gold"]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, _) = run(&[
        "--json", "org", "create", "--name", "Acme", "--plan", "gold",
    ]);
    assert_eq!(code, 0);
    let org = json_of(&out)["id"].as_str().unwrap().to_owned();

    let set = |fallback: &str| {
        stowctl(
            &db,
            &[
                "placeholder",
                "set",
                "--org",
                &org,
                "--pattern",
                "inventory/items/*",
                "--fallback",
                fallback,
            ],
        )
    };
    let (code, _, err) = set("inventory/missing.png");
    assert_eq!(code, 1);
    assert!(
        err.contains("`inventory/missing.png` is not an object of this workspace"),
        "{err}"
    );
    let (code, _, err) = set("../x.png");
    assert_eq!(code, 1);
    assert!(err.contains("invalid fallback"), "{err}");
    let (code, _, err) = run(&["placeholder", "list", "--org", "org_nope"]);
    assert_eq!(code, 1);
    assert!(err.contains("unknown organization \"org_nope\""), "{err}");

    let records = stow_db::PgObjectRecords::new(
        stow_db::Db::connect(&stow_db::DbConfig::new(db.clone())).unwrap(),
    );
    let now = chrono::Utc::now();
    records
        .upsert(
            &auth_core::OrgId::new(org.as_str()),
            &cdn_core::ObjectRecord {
                key: "inventory/missing.png".into(),
                size: 1,
                content_type: Some("image/png".into()),
                etag: "e".into(),
                metadata: Default::default(),
                storage_path: "o/x".into(),
                last_modified: now,
                created_at: now,
                keep: false,
            },
        )
        .await
        .unwrap();
    let (code, out, err) = set("inventory/missing.png");
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("placeholder set"), "{out}");
    let (code, out, _) = run(&["placeholder", "list", "--org", &org]);
    assert_eq!(code, 0);
    assert_eq!(out.trim(), "inventory/items/*  →  inventory/missing.png");
    let (code, out, _) = run(&["--json", "placeholder", "list", "--org", &org]);
    assert_eq!(code, 0);
    assert_eq!(
        json_of(&out)["placeholders"][0]["fallback"],
        "inventory/missing.png"
    );
    let (code, _, _) = run(&[
        "placeholder",
        "remove",
        "--org",
        &org,
        "--pattern",
        "inventory//items/*",
    ]);
    assert_eq!(code, 0);
    let (code, _, err) = run(&[
        "placeholder",
        "remove",
        "--org",
        &org,
        "--pattern",
        "inventory/items/*",
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains("no placeholder for the pattern inventory/items/*"),
        "{err}"
    );
}

#[tokio::test]
async fn dev_setup_reuses_its_saved_keys_and_never_piles_them_up() {
    use auth_core::AccountStore;
    let db = empty_db().await;
    let dir = std::env::temp_dir().join(format!("stowctl-dev-{}", ulid::Ulid::new()));
    let file = dir.join("dev-keys.json");
    let file = file.to_str().unwrap();
    let setup = |args: &[&str]| {
        let (code, out, err) = stowctl(&db, &[&["--json", "dev-setup"], args].concat());
        assert_eq!(code, 0, "{err}");
        let v = json_of(&out);
        (
            v["developerKey"].as_str().unwrap().to_owned(),
            v["serverKey"].as_str().unwrap().to_owned(),
        )
    };
    let accounts = stow_db::PgAccounts::new(
        stow_db::Db::connect(&stow_db::DbConfig::new(db.clone())).unwrap(),
    );
    let works = |secret: String| {
        let accounts = &accounts;
        async move {
            accounts
                .find_auth_context(&auth_core::secret::hash(&secret))
                .await
                .unwrap()
                .is_some()
        }
    };

    let first = setup(&["--keys-file", file]);
    let mode = std::fs::metadata(file).unwrap().permissions();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777,
        0o600
    );
    // while they work, the saved keys are printed again
    assert_eq!(setup(&["--keys-file", file]), first);
    // without the file (or once it is gone), new keys replace the earlier ones
    let second = setup(&[]);
    assert_ne!(second, first);
    assert!(!works(first.0.clone()).await && !works(first.1.clone()).await);
    assert!(works(second.0.clone()).await && works(second.1.clone()).await);
    // the saved keys no longer work: new ones, saved
    let third = setup(&["--keys-file", file]);
    assert!(third != first && third != second);
    assert!(!works(second.0).await);
    assert_eq!(setup(&["--keys-file", file]), third);
    let org = accounts.find_org_by_slug("dev").await.unwrap().unwrap();
    assert_eq!(accounts.list_keys(&org.id).await.unwrap().len(), 2);
    // what `just run` prints
    let (code, out, _) = stowctl(&db, &["dev-setup", "--keys-file", file]);
    assert_eq!(code, 0);
    assert_eq!(
        out.trim(),
        format!(
            "workspace: dev (organization {}, plan pro)\nserver join code: devsrv\ndeveloper key: {}\nserver key:    {}",
            org.id, third.0, third.1
        )
    );
    let (_, help, _) = stowctl(&db, &["--help"]);
    assert!(help.contains("dev-setup"), "{help}");
    std::fs::remove_dir_all(dir).unwrap();
}

/// Creates an organization; its id.
fn new_org(db: &str, name: &str, plan: &str) -> String {
    let out = succeeded(
        db,
        &["--json", "org", "create", "--name", name, "--plan", plan],
    );
    json_of(&out)["id"].as_str().unwrap().to_owned()
}

/// Runs a command that must succeed; its stdout.
fn succeeded(db: &str, args: &[&str]) -> String {
    let (code, out, err) = stowctl(db, args);
    assert_eq!(code, 0, "{args:?}: {err}");
    out
}

/// Runs a command that must fail; its stderr.
fn refused(db: &str, args: &[&str]) -> String {
    let (code, out, err) = stowctl(db, args);
    assert_eq!(code, 1, "{args:?} was not refused: {out}");
    err
}

#[tokio::test]
async fn list_commands_show_what_exists_in_readable_tables() {
    let db = empty_db().await;
    let ok = |args: &[&str]| succeeded(&db, args);
    let plans = ok(&["plan", "list"]);
    let lines: Vec<&str> = plans.lines().collect();
    assert_eq!(
        lines[0],
        "PLAN    LOGS  RETENTION  MAX FILE  URL LIFETIME  SEARCHES"
    );
    assert_eq!(
        lines[1],
        "free    no    0 days     100 MiB   3600 s        4"
    );
    assert_eq!(lines.len(), 4);
    assert_eq!(
        json_of(&ok(&["--json", "plan", "list"]))["plans"][2]["name"],
        "pro"
    );

    let org = new_org(&db, "Acme RP", "pro");
    ok(&["org", "create", "--name", "Bravo", "--plan", "free"]);
    let orgs = ok(&["org", "list"]);
    let lines: Vec<&str> = orgs.lines().collect();
    assert!(
        lines[0].starts_with("ID ") && lines[0].ends_with("NAME     WORKSPACE  PLAN"),
        "{orgs}"
    );
    assert!(
        lines[1].starts_with(&org) && lines[1].ends_with("Acme RP  acme-rp    pro"),
        "{orgs}"
    );
    assert!(lines[2].ends_with("Bravo    bravo      free"), "{orgs}");

    ok(&[
        "server", "register", "--org", &org, "--cfx-id", "zz9", "--name", "Second",
    ]);
    ok(&["server", "register", "--org", &org, "--cfx-id", "abc123"]);
    ok(&["logs-source", "activate", "--cfx-id", "abc123"]);
    let servers = ok(&["server", "list", "--org", &org]);
    let lines: Vec<&str> = servers.lines().collect();
    assert!(
        lines[0].starts_with("JOIN CODE  NAME    LOGS SOURCE  ID"),
        "{servers}"
    );
    assert!(
        lines[1].starts_with("abc123     -       active       srv_"),
        "{servers}"
    );
    assert!(
        lines[2].starts_with("zz9        Second  inactive     srv_"),
        "{servers}"
    );

    let dev = json_of(&ok(&[
        "--json",
        "key",
        "create",
        "--org",
        &org,
        "--type",
        "developer",
        "--perm",
        "cdn:read",
        "--perm",
        "cdn:write",
        "--allow-path",
        "shots",
        "--deny-path",
        "shots/private",
        "--expires-at",
        "2099-01-01T00:00:00Z",
        "--name",
        "uploader",
    ]))["keyId"]
        .as_str()
        .unwrap()
        .to_owned();
    ok(&[
        "key", "create", "--org", &org, "--type", "server", "--server", "abc123",
    ]);
    // an expired key (the CLI refuses to make one; it can become one)
    let accounts = stow_db::PgAccounts::new(
        stow_db::Db::connect(&stow_db::DbConfig::new(db.clone())).unwrap(),
    );
    let s = auth_core::secret::generate(auth_core::CredentialType::Developer);
    auth_core::AccountStore::create_key(
        &accounts,
        &auth_core::model::NewKey {
            name: Some("old".into()),
            expires_at: Some(chrono::Utc::now() - chrono::Duration::hours(1)),
            ..auth_core::model::NewKey::developer(
                auth_core::OrgId::from(org.clone()),
                &s,
                auth_core::PermissionSet::all(),
            )
        },
        &auth_core::audit::Audit::operator("test"),
    )
    .await
    .unwrap();
    ok(&["key", "disable", &dev]);
    let keys = ok(&["key", "list", "--org", &org]);
    let row = |name: &str| -> Vec<String> {
        keys.lines()
            .find(|l| l.split_whitespace().nth(1) == Some(name))
            .unwrap_or_else(|| panic!("no {name} in {keys}"))
            .split_whitespace()
            .map(str::to_owned)
            .collect()
    };
    assert!(keys.lines().next().unwrap().starts_with("ID "), "{keys}");
    let header = keys.lines().next().unwrap();
    assert_eq!(
        header
            .split("  ")
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .collect::<Vec<_>>(),
        [
            "ID",
            "NAME",
            "TYPE",
            "SERVER",
            "PERMISSIONS",
            "PATHS",
            "EXPIRES",
            "LAST USED",
            "STATE"
        ],
        "{keys}"
    );
    // every row's cells start under their column's header
    let at = |line: &str, col: &str| line.find(col).unwrap();
    let state_col = at(header, "STATE");
    for line in keys.lines().skip(1) {
        assert!(
            matches!(&line[state_col..], "active" | "disabled" | "expired"),
            "{keys}"
        );
    }
    let uploader = row("uploader");
    assert_eq!(
        uploader[2..],
        [
            "developer",
            "-",
            "cdn:read,cdn:write",
            "shots,!shots/private",
            "2099-01-01",
            "00:00",
            "-",
            "disabled"
        ]
    );
    let server = row("-");
    assert_eq!(server[2..4], ["server", "abc123"]);
    assert_eq!(server.last().unwrap(), "active");
    assert_eq!(row("old").last().unwrap(), "expired");
    assert_eq!(
        json_of(&ok(&["--json", "key", "list", "--org", &org]))["keys"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|k| k["state"] == "expired")
            .count(),
        1
    );
    let created = json_of(&ok(&[
        "--json", "org", "create", "--name", "Empty", "--plan", "pro",
    ]));
    let empty = ok(&["key", "list", "--org", created["id"].as_str().unwrap()]);
    assert!(empty.trim().ends_with("has no keys"), "{empty}");
}

#[tokio::test]
async fn keys_are_enabled_and_rotated() {
    let db = empty_db().await;
    let ok = |args: &[&str]| succeeded(&db, args);
    let org = new_org(&db, "Acme", "pro");
    let key = json_of(&ok(&[
        "--json",
        "key",
        "create",
        "--org",
        &org,
        "--type",
        "developer",
        "--perm",
        "cdn:read",
        "--allow-path",
        "shots",
        "--name",
        "bot",
    ]));
    let id = key["keyId"].as_str().unwrap().to_owned();
    // a console session of the key ends when it is disabled, not at its next request
    let pool = stow_db::Db::connect(&stow_db::DbConfig::new(db.clone())).unwrap();
    let sessions = stow_db::PgConsoleSessions::new(pool);
    let now = chrono::Utc::now();
    let session = auth_core::console_session::Session {
        id_hash: auth_core::console_session::token_hash("cookie"),
        subject: auth_core::console_session::Subject::Key {
            key_id: auth_core::KeyId::from(id.clone()),
            key_hash: [1; 32],
        },
        csrf_token: "csrf".into(),
        created_at: now,
        last_seen_at: now,
    };
    use auth_core::console_session::ConsoleSessionStore;
    sessions.create(&session).await.unwrap();
    let out = ok(&["key", "disable", &id]);
    assert_eq!(
        out.trim(),
        format!("key {id} disabled; 1 console session(s) ended")
    );
    assert_eq!(sessions.get(&session.id_hash).await.unwrap(), None);
    let out = ok(&["key", "enable", &id]);
    assert_eq!(out.trim(), format!("key {id} enabled"));
    let state = |id: &str| {
        json_of(&ok(&["--json", "key", "list", "--org", &org]))["keys"]
            .as_array()
            .unwrap()
            .iter()
            .find(|k| k["keyId"] == id)
            .unwrap()["state"]
            .clone()
    };
    assert_eq!(state(&id), "active");

    let out = ok(&["key", "rotate", &id]);
    assert!(
        out.contains(&format!("keeps working until `stowctl key disable {id}`")),
        "{out}"
    );
    let rotated = json_of(&ok(&["--json", "key", "rotate", &id, "--disable-old"]));
    assert_eq!(rotated["replaces"], id.as_str());
    assert_eq!(rotated["oldDisabled"], true);
    assert!(rotated["secret"].as_str().unwrap().starts_with("stw_dev_"));
    for field in [
        "permissions",
        "allowPaths",
        "denyPaths",
        "name",
        "type",
        "expiresAt",
    ] {
        assert_eq!(rotated[field], key[field], "{field}");
    }
    assert_eq!(state(&id), "disabled");
    assert_eq!(state(rotated["keyId"].as_str().unwrap()), "active");
    let err = refused(&db, &["key", "rotate", "key_nope"]);
    assert!(err.contains("unknown key \"key_nope\""), "{err}");
    let err = refused(&db, &["key", "enable", "key_nope"]);
    assert!(err.contains("key_nope"), "{err}");
}

/// `--log-server` limits a developer key's logs to named servers of its organization; the scope
/// is listed, kept by a rotation, and refused where it cannot mean anything.
#[tokio::test]
async fn developer_keys_are_limited_to_named_servers() {
    let db = empty_db().await;
    let ok = |args: &[&str]| succeeded(&db, args);
    let org = new_org(&db, "Acme", "pro");
    let other = new_org(&db, "Elsewhere", "pro");
    for (org, code) in [(&org, "srv1"), (&org, "srv2"), (&other, "theirs")] {
        ok(&["server", "register", "--org", org, "--cfx-id", code]);
    }
    let create = |extra: &[&str]| {
        let mut args = vec![
            "--json",
            "key",
            "create",
            "--org",
            &org,
            "--perm",
            "logs:read",
        ];
        args.extend_from_slice(extra);
        args.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    };
    let args = create(&[
        "--type",
        "developer",
        "--log-server",
        "srv2",
        "--log-server",
        "SRV1",
    ]);
    let key = json_of(&ok(&args.iter().map(String::as_str).collect::<Vec<_>>()));
    assert_eq!(key["logServers"].as_array().map(Vec::len), Some(2), "{key}");
    let listed = ok(&["key", "list", "--org", &org]);
    assert!(
        listed.contains("logs: srv1,srv2") || listed.contains("logs: srv2,srv1"),
        "{listed}"
    );
    let id = key["keyId"].as_str().unwrap();
    let rotated = json_of(&ok(&["--json", "key", "rotate", id]));
    assert_eq!(rotated["logServers"], key["logServers"]);
    let global = create(&["--type", "developer"]);
    let global = json_of(&ok(&global.iter().map(String::as_str).collect::<Vec<_>>()));
    assert_eq!(global["logServers"], Value::Null, "every server");

    for (extra, expected) in [
        (
            &["--type", "developer", "--log-server", "theirs"][..],
            "--log-server: no server with join code `theirs` in this organization",
        ),
        (
            &["--type", "developer", "--log-server", "nope"][..],
            "--log-server: no server with join code `nope`",
        ),
        (
            &[
                "--type",
                "server",
                "--server",
                "srv1",
                "--log-server",
                "srv2",
            ][..],
            "--log-server is for developer keys",
        ),
    ] {
        // without --json: the message as a person reads it
        let args = create(extra);
        let err = refused(
            &db,
            &args[1..].iter().map(String::as_str).collect::<Vec<_>>(),
        );
        assert!(err.contains(expected), "{extra:?}: {err}");
    }
}

#[tokio::test]
async fn input_that_can_only_break_later_is_refused_naming_what_is_valid() {
    let db = empty_db().await;
    let ok = |args: &[&str]| succeeded(&db, args);
    let err = refused(&db, &["org", "create", "--name", "Acme", "--plan", "gold"]);
    assert!(
        err.contains("unknown plan \"gold\"; the plans are: free, growth, pro"),
        "{err}"
    );
    let org = new_org(&db, "Acme", "free");
    let err = refused(
        &db,
        &["org", "set-plan", "--org", &org, "--plan", "platinum"],
    );
    assert!(err.contains("the plans are: free, growth, pro"), "{err}");
    let err = refused(&db, &["org", "create", "--name", " acme ", "--plan", "pro"]);
    assert!(
        err.contains(&format!("organization {org} is already named \"Acme\""))
            && err.contains("--allow-duplicate-name"),
        "{err}"
    );
    ok(&[
        "org",
        "create",
        "--name",
        "Acme",
        "--plan",
        "pro",
        "--allow-duplicate-name",
    ]);

    ok(&["server", "register", "--org", &org, "--cfx-id", "abc123"]);
    let err = refused(&db, &["logs-source", "activate", "--cfx-id", "abc123"]);
    assert!(
        err.contains("is on plan free, which has no Logs") && err.contains("growth, pro"),
        "{err}"
    );
    ok(&["org", "set-plan", "--org", &org, "--plan", "growth"]);
    ok(&["logs-source", "activate", "--cfx-id", "abc123"]);
    let err = refused(&db, &["logs-source", "activate", "--cfx-id", "nope99"]);
    assert!(err.contains("nope99"), "{err}");

    let create = |extra: &[&str]| {
        let mut args = vec![
            "key",
            "create",
            "--org",
            org.as_str(),
            "--type",
            "developer",
            "--perm",
            "cdn:write",
        ];
        args.extend_from_slice(extra);
        stowctl(&db, &args)
    };
    for bad in ["png", "image", "image/", "*/png", "image/png/x"] {
        let (code, _, err) = create(&["--mime", bad]);
        assert_eq!(code, 1, "{bad}");
        assert!(
            err.contains(&format!("--mime {bad:?} is not a MIME type")),
            "{bad}: {err}"
        );
    }
    for good in ["image/png", "image/*", "IMAGE/WEBP; q=1", "*/*"] {
        assert_eq!(create(&["--mime", good]).0, 0, "{good}");
    }
    let (code, _, err) = create(&["--expires-at", "2020-01-01T00:00:00Z"]);
    assert_eq!(code, 1);
    assert!(err.contains("is in the past"), "{err}");
    let (code, _, err) = create(&["--expires-at", "tomorrow"]);
    assert_eq!(code, 1);
    assert!(err.contains("not an RFC 3339 time"), "{err}");
}

#[tokio::test]
async fn gc_refuses_a_store_that_does_not_exist() {
    let db = empty_db().await;
    let missing = std::env::temp_dir().join(format!("stowage-gc-{}", ulid::Ulid::new()));
    let url = format!("file://{}", missing.display());
    let err = refused(&db, &["gc", "--object-store-url", &url]);
    assert!(
        err.contains("does not exist") && err.contains("OBJECT_STORE_URL"),
        "{err}"
    );
    assert!(!missing.exists(), "gc created the directory");
    let out = Command::new(env!("CARGO_BIN_EXE_stowctl_test_shim"))
        .env("DATABASE_URL", &db)
        .env_remove("OBJECT_STORE_URL")
        .arg("gc")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("set OBJECT_STORE_URL or pass --object-store-url"));
    std::fs::create_dir_all(&missing).unwrap();
    let (code, out, _) = stowctl(&db, &["gc", "--object-store-url", &url]);
    assert_eq!(code, 0);
    assert_eq!(
        out.trim(),
        "scanned 0 stored objects, removed 0 unreferenced"
    );
    std::fs::remove_dir_all(&missing).unwrap();
}

#[tokio::test]
async fn signing_secrets_are_rotated_with_a_grace_period_and_listed() {
    let db = empty_db().await;
    let ok = |args: &[&str]| succeeded(&db, args);
    let list = ok(&["signing-secret", "list"]);
    let lines: Vec<&str> = list.lines().collect();
    assert_eq!(lines.len(), 2, "{list}");
    assert!(
        lines[0].starts_with("ID  CREATED") && lines[0].ends_with("STATE"),
        "{list}"
    );
    assert!(lines[1].ends_with("current"), "{list}");
    let out = ok(&["signing-secret", "rotate"]);
    assert!(
        out.contains("tokens of the previous one are accepted until"),
        "{out}"
    );
    let list = json_of(&ok(&["--json", "signing-secret", "list"]));
    let secrets = list["secrets"].as_array().unwrap();
    assert_eq!(secrets.len(), 2);
    assert!(secrets[0]["acceptedUntil"].is_null(), "current first");
    let until = chrono::DateTime::parse_from_rfc3339(secrets[1]["acceptedUntil"].as_str().unwrap())
        .unwrap();
    let hours = (until.with_timezone(&chrono::Utc) - chrono::Utc::now()).num_minutes();
    assert!(
        (23 * 60..=24 * 60).contains(&hours),
        "24 h grace by default: {hours} min"
    );
    ok(&["signing-secret", "rotate", "--grace-hours", "0"]);
    let list = ok(&["signing-secret", "list"]);
    assert_eq!(
        list.lines().count(),
        3,
        "the secret ended at once is gone: {list}"
    );
}

/// `--org` takes what people see: the id, the workspace or the name (any case); a name two
/// organizations share is refused with their ids. `usage` says "1 object", not "1 objects".
#[tokio::test]
async fn organizations_are_named_by_id_workspace_or_name() {
    let db = empty_db().await;
    let id = new_org(&db, "Los Santos RP", "pro");
    let slug = json_of(&succeeded(&db, &["--json", "org", "list"]))["organizations"][0]["slug"]
        .as_str()
        .map(str::to_owned);
    let mut names = vec![
        id.clone(),
        "Los Santos RP".to_owned(),
        "los santos rp".to_owned(),
    ];
    names.extend(slug);
    for named in &names {
        let out = succeeded(&db, &["--json", "usage", "--org", named]);
        assert_eq!(json_of(&out)["orgId"], id.as_str(), "{named}");
        let out = succeeded(&db, &["--json", "server", "list", "--org", named]);
        assert!(
            json_of(&out).is_object() || json_of(&out).is_array(),
            "{named}"
        );
    }
    let human = succeeded(&db, &["usage", "--org", "Los Santos RP"]);
    assert!(
        human.contains("0 log events, 0 objects, 0 bytes stored"),
        "{human}"
    );

    let twin = json_of(&succeeded(
        &db,
        &[
            "--json",
            "org",
            "create",
            "--name",
            "los santos rp",
            "--plan",
            "free",
            "--allow-duplicate-name",
        ],
    ))["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let err = refused(&db, &["usage", "--org", "Los Santos RP"]);
    assert!(err.contains("2 organizations are named"), "{err}");
    assert!(err.contains(&id) && err.contains(&twin), "{err}");
    // the id still names exactly one
    succeeded(&db, &["usage", "--org", &twin]);
    let err = refused(&db, &["usage", "--org", "Vinewood"]);
    assert!(err.contains("unknown organization"), "{err}");
}

/// Runs `stowctl` with `input` on standard input.
fn stowctl_with_input(db: &str, args: &[&str], input: &str) -> (i32, String, String) {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_stowctl_test_shim"))
        .env("DATABASE_URL", db)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run stowctl");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The first owner's invitation, the team's list, and a new password for a locked-out owner.
#[tokio::test]
async fn the_first_owner_is_invited_listed_and_recovered() {
    use auth_core::member::{Accepter, MemberStore};
    let db = empty_db().await;
    let ok = |args: &[&str]| succeeded(&db, args);
    let org = new_org(&db, "Acme", "pro");
    ok(&["server", "register", "--org", &org, "--cfx-id", "srv1"]);
    let long_note = "x".repeat(5000);
    let made = json_of(&ok(&[
        "--json",
        "member",
        "invite",
        "--org",
        &org,
        "--role",
        "owner",
        "--note",
        "Olga",
        "--console-url",
        "https://console.example.com/",
    ]));
    let token = made["token"].as_str().unwrap();
    assert_eq!(
        made["link"],
        format!("https://console.example.com/invite#{token}")
    );
    assert_eq!(made["role"], "owner");
    let human = ok(&[
        "member", "invite", "--org", &org, "--role", "viewer", "--server", "SRV1",
    ]);
    assert!(human.contains("to Acme as viewer"), "{human}");
    assert!(human.contains("<console address>/invite#"), "{human}");
    for (args, expected) in [
        (vec!["--role", "root"], "--role: unknown role `root`"),
        (
            vec!["--role", "viewer", "--server", "nope"],
            "--server: no server with join code `nope`",
        ),
        (
            vec!["--role", "viewer", "--hours", "0"],
            "--hours is 0; use 1 to 720",
        ),
        // the note rule of `POST /v1/members/invitations` (it stored 5,005 characters with a
        // control character)
        (
            vec!["--role", "viewer", "--note", &long_note],
            "--note has at most 200 characters and no control characters",
        ),
        (
            vec!["--role", "viewer", "--note", "ring\u{7}"],
            "--note has at most 200 characters",
        ),
    ] {
        let mut all = vec!["member", "invite", "--org", org.as_str()];
        all.extend(args);
        let err = refused(&db, &all);
        assert!(err.contains(expected), "{all:?}: {err}");
    }

    // accepted (as the console does), listed, then recovered from the command line
    let accounts = stow_db::PgAccounts::new(
        stow_db::Db::connect(&stow_db::DbConfig::new(db.clone())).unwrap(),
    );
    let hash = auth_core::console_session::token_hash(token);
    let accepter = Accepter::New {
        login: "olga".into(),
        display_name: None,
        password_hash: auth_core::password::hash("an old forgotten passphrase"),
    };
    accounts
        .accept_invitation(
            &hash,
            &accepter,
            chrono::Utc::now(),
            &auth_core::audit::Audit::operator("test"),
        )
        .await
        .unwrap()
        .unwrap();
    let listed = ok(&["member", "list", "--org", &org]);
    assert!(listed.starts_with("LOGIN"), "{listed}");
    assert!(
        listed.contains("olga") && listed.contains("(invited)"),
        "{listed}"
    );
    let (code, _, err) = stowctl_with_input(
        &db,
        &["member", "set-password", "--login", "olga"],
        "short\n",
    );
    assert_eq!(code, 1);
    assert!(err.contains("use at least 10"), "{err}");
    let (code, out, err) = stowctl_with_input(
        &db,
        &["member", "set-password", "--login", "OLGA"],
        "tangerine Kettle orbit 77\n",
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("olga has a new password"), "{out}");
    let stored = accounts.find_member("olga").await.unwrap().unwrap();
    assert!(auth_core::password::verify(
        "tangerine Kettle orbit 77",
        &stored.password_hash
    ));
    let err = refused(&db, &["member", "set-password", "--login", "nobody"]);
    assert!(err.contains("no member signs in as \"nobody\""), "{err}");

    // a locked-out owner's second factor, taken away; the audit log names the operator
    let err = refused(&db, &["member", "reset-second-factor", "--login", "olga"]);
    assert!(err.contains("olga has no second factor"), "{err}");
    accounts
        .begin_second_factor(&stored.id, b"sealed")
        .await
        .unwrap();
    accounts
        .confirm_second_factor(
            &stored.id,
            1,
            &[],
            &auth_core::audit::Audit::operator("test"),
        )
        .await
        .unwrap();
    let out = ok(&["member", "reset-second-factor", "--login", "olga"]);
    assert!(out.contains("olga's second factor is off"), "{out}");
    assert_eq!(accounts.second_factor(&stored.id).await.unwrap(), None);
    let org_id = auth_core::OrgId::new(org.as_str());
    let last = auth_core::audit::AuditStore::page(
        &accounts,
        &org_id,
        &auth_core::audit::AuditQuery {
            limit: 1,
            ..Default::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(
        last[0].entry.action,
        auth_core::audit::Action::SecondFactorReset
    );
    assert_eq!(last[0].entry.via, auth_core::audit::Via::Stowctl);
}
