#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The service binaries behave like commands: `--help` and `--version` print and exit.

use std::process::Command;

fn cdn_api(args: &[&str], dir: &std::path::Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_cdn_api_test_shim"))
        .args(args)
        .current_dir(dir)
        // nothing reachable: a binary that tried to start would fail or hang, not print help
        .env("DATABASE_URL", "postgres://nobody@127.0.0.1:1/none")
        .env_remove("OBJECT_STORE_URL")
        .output()
        .unwrap()
}

#[test]
fn help_and_version_print_and_exit_without_starting() {
    let dir = std::env::temp_dir().join(format!("stowage-help-{}", ulid::Ulid::new()));
    std::fs::create_dir_all(&dir).unwrap();
    let help = cdn_api(&["--help"], &dir);
    assert!(help.status.success(), "{help:?}");
    let text = String::from_utf8_lossy(&help.stdout);
    assert!(
        text.contains("Usage:") && text.contains("API host"),
        "{text}"
    );
    assert!(
        text.contains("DATABASE_URL") && text.contains("docs/operations.md"),
        "{text}"
    );
    let version = cdn_api(&["--version"], &dir);
    assert!(version.status.success());
    assert_eq!(
        String::from_utf8_lossy(&version.stdout).trim(),
        format!("cdn-api {}", env!("CARGO_PKG_VERSION"))
    );
    let unknown = cdn_api(&["--bogus"], &dir);
    assert_eq!(unknown.status.code(), Some(2), "{unknown:?}");
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("--bogus"));
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        0,
        "nothing was created (the default store is ./data/objects)"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
