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

/// `cdn-api` started with `env`, in an empty directory; its exit status and stderr once it stops
/// by itself.
fn start_refused(env: &[(&str, &str)]) -> (Option<i32>, String, usize) {
    let dir = std::env::temp_dir().join(format!("stowage-start-{}", ulid::Ulid::new()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cdn_api_test_shim"));
    cmd.current_dir(&dir)
        .env_remove("OBJECT_STORE_URL")
        .env("CDN_API_ADDR", "127.0.0.1:0")
        .env("CONSOLE_ADDR", "off");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let created = std::fs::read_dir(&dir).unwrap().count();
    std::fs::remove_dir_all(&dir).unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        created,
    )
}

#[test]
fn start_up_stops_with_the_fix_when_the_configuration_cannot_work() {
    let store = format!(
        "file://{}/stowage-store-{}",
        std::env::temp_dir().display(),
        ulid::Ulid::new()
    );
    let missing_db = format!(
        "postgres://postgres@127.0.0.1:5432/stowage_missing_{}",
        ulid::Ulid::new().to_string().to_lowercase()
    );
    let (code, err, created) =
        start_refused(&[("DATABASE_URL", &missing_db), ("OBJECT_STORE_URL", &store)]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("does not exist") && err.contains("stowctl migrate"),
        "{err}"
    );
    assert_eq!(created, 0);
    let (code, err, _) = start_refused(&[
        (
            "DATABASE_URL",
            "postgres://no_such_role_here@127.0.0.1:5432/postgres",
        ),
        ("OBJECT_STORE_URL", &store),
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("refused the credentials"), "{err}");
    // no object store configured: nothing is guessed (or created in the working directory)
    let (code, err, created) = start_refused(&[(
        "DATABASE_URL",
        "postgres://postgres@127.0.0.1:5432/postgres",
    )]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("OBJECT_STORE_URL is not set"), "{err}");
    assert_eq!(created, 0);
    // a public base URL that is not an http(s) URL would become every publicUrl and the console's
    // "Open" links: refused before anything starts
    for bad in ["javascript:alert(1)", "/cdn", "ftp://cdn.example.com/cdn"] {
        let (code, err, _) = start_refused(&[
            (
                "DATABASE_URL",
                "postgres://postgres@127.0.0.1:5432/postgres",
            ),
            ("OBJECT_STORE_URL", &store),
            ("PUBLIC_BASE_URL", bad),
        ]);
        assert_eq!(code, Some(2), "{bad}: {err}");
        assert!(
            err.contains("PUBLIC_BASE_URL must be an absolute http"),
            "{bad}: {err}"
        );
    }
}
