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
    // the same name again gets a distinct workspace slug
    let (_, out, _) = stowctl(
        &db,
        &[
            "--json", "org", "create", "--name", "Acme RP", "--plan", "gold",
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
    assert!(
        err.contains("no organization has the id \"org_nope\""),
        "{err}"
    );

    let records = stow_db::PgObjectRecords::new(
        stow_db::Db::connect(&stow_db::DbConfig::new(db.clone())).unwrap(),
    );
    let now = chrono::Utc::now();
    records
        .upsert(
            &org,
            &cdn_core::ObjectRecord {
                key: "inventory/missing.png".into(),
                size: 1,
                content_type: Some("image/png".into()),
                etag: "e".into(),
                metadata: Default::default(),
                storage_path: "o/x".into(),
                last_modified: now,
                created_at: now,
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
    std::fs::remove_dir_all(dir).unwrap();
}
