#![allow(clippy::unwrap_used)]

use auth_core::audit::{Action, Outcome};
use auth_core::roles::{Grant, Role};
use auth_core::KeyId;
use futures::executor::block_on;

use super::*;
use crate::testing::World;

fn developer(w: &World, permissions: &[&str]) -> CreateKey {
    CreateKey {
        org: w.org.id.clone(),
        kind: None,
        name: Some("ci".into()),
        server: None,
        permissions: permissions.iter().map(|p| (*p).to_owned()).collect(),
        log_servers: None,
        allow_paths: vec![],
        deny_paths: vec![],
        mime: vec![],
        expires_at: None,
    }
}

/// The message of a refusal as the API spells field names.
fn api_text(e: &OpError) -> String {
    e.naming(|f| format!("`{f}`"))
}

#[test]
fn an_owner_makes_a_key_and_the_log_names_them() {
    block_on(async {
        let w = World::new().await;
        let owner = w.member("jay", Grant::everywhere(Role::Owner)).await;
        let made = developer(&w, &["cdn:read"])
            .run(&w.api(&owner))
            .await
            .unwrap();
        assert!(made.secret.starts_with("stw_dev_"));
        assert_eq!(made.key.name.as_deref(), Some("ci"));
        assert_eq!(
            made.servers.len(),
            2,
            "the organization's servers to show it with"
        );
        let log = w.audit(&w.org).await;
        let entry = log.last().unwrap();
        assert_eq!(entry.action, Action::KeyCreate);
        assert_eq!(entry.outcome, Outcome::Done);
        assert_eq!(entry.target, made.key.id.as_str());
    });
}

#[test]
fn a_key_beyond_the_members_reach_is_refused_and_recorded() {
    block_on(async {
        let w = World::new().await;
        let narrow = w.narrow_admin().await;
        let ctx = w.api(&narrow);
        // every server: beyond a member limited to `abc`
        let e = developer(&w, &["logs:read"]).run(&ctx).await.err().unwrap();
        assert!(matches!(e, OpError::Forbidden(_)), "{e:?}");
        let other_server = CreateKey {
            log_servers: Some(vec![w.def.cfx_id.clone()]),
            allow_paths: vec!["staff".into()],
            ..developer(&w, &["logs:read"])
        };
        let e = other_server.run(&ctx).await.err().unwrap();
        assert!(
            matches!(e, OpError::Forbidden(_)),
            "a server outside theirs: {e:?}"
        );
        // within: abc's logs, under staff/
        let within = CreateKey {
            log_servers: Some(vec!["ABC".into()]),
            allow_paths: vec!["staff/shots".into()],
            ..developer(&w, &["logs:read", "cdn:read"])
        };
        within.run(&ctx).await.unwrap();
        let log = w.audit(&w.org).await;
        let outcomes: Vec<_> = log
            .iter()
            .filter(|e| e.action == Action::KeyCreate)
            .map(|e| (e.action, matches!(e.outcome, Outcome::Refused { .. })))
            .collect();
        assert_eq!(
            outcomes,
            [
                (Action::KeyCreate, true),
                (Action::KeyCreate, true),
                (Action::KeyCreate, false)
            ],
            "the refusals are recorded, then the key made"
        );
    });
}

#[test]
fn roles_that_do_not_manage_keys_and_keys_themselves_are_refused() {
    block_on(async {
        let w = World::new().await;
        let moderator = w.member("mo", Grant::everywhere(Role::Moderator)).await;
        let e = developer(&w, &["cdn:read"])
            .run(&w.api(&moderator))
            .await
            .err()
            .unwrap();
        assert!(matches!(e, OpError::Auth(_)), "{e:?}");
        let owner = w.member("jay", Grant::everywhere(Role::Owner)).await;
        let made = developer(&w, &["cdn:read", "cdn:write"])
            .run(&w.api(&owner))
            .await
            .unwrap();
        let as_key = w
            .stores
            .accounts
            .find_auth_context(&auth_core::secret::hash(&made.secret))
            .await
            .unwrap()
            .unwrap();
        let e = developer(&w, &["cdn:read"])
            .run(&w.api(&as_key))
            .await
            .err()
            .unwrap();
        assert!(
            matches!(e, OpError::Auth(_)),
            "an API key makes no keys: {e:?}"
        );
    });
}

#[test]
fn every_field_is_checked_and_named() {
    block_on(async {
        let w = World::new().await;
        let ctx = w.operator();
        let long = "x".repeat(MAX_NAME_CHARS + 1);
        let past = (chrono::Utc::now() - chrono::Duration::minutes(1)).to_rfc3339();
        let server = |code: Option<&str>| CreateKey {
            kind: Some("server".into()),
            server: code.map(Into::into),
            ..developer(&w, &[])
        };
        let cases: Vec<(CreateKey, &str)> = vec![
            (
                developer(&w, &[]),
                "`permissions` names at least one permission",
            ),
            (
                developer(&w, &["cdn:admin"]),
                "`permissions`: unknown permission",
            ),
            (server(None), "`server` (a join code) is required"),
            (
                server(Some("xyz")),
                "`server`: no server with join code `xyz`",
            ),
            (
                CreateKey {
                    server: Some("abc".into()),
                    ..developer(&w, &["cdn:read"])
                },
                "`server` is for server keys",
            ),
            (
                CreateKey {
                    log_servers: Some(vec!["abc".into()]),
                    ..server(Some("abc"))
                },
                "`logServers` is for developer keys",
            ),
            (
                CreateKey {
                    log_servers: Some(vec!["xyz".into()]),
                    ..developer(&w, &["logs:read"])
                },
                "`logServers`: no server with join code `xyz`",
            ),
            (
                CreateKey {
                    name: Some(long),
                    ..developer(&w, &["cdn:read"])
                },
                "`name` has at most 100 characters",
            ),
            (
                CreateKey {
                    name: Some("a\u{7}b".into()),
                    ..developer(&w, &["cdn:read"])
                },
                "no control characters",
            ),
            (
                CreateKey {
                    allow_paths: vec!["../up".into()],
                    ..developer(&w, &["cdn:read"])
                },
                "`allowPaths` \"../up\"",
            ),
            (
                CreateKey {
                    deny_paths: vec!["".into()],
                    ..developer(&w, &["cdn:read"])
                },
                "`denyPaths`: an empty prefix",
            ),
            (
                CreateKey {
                    allow_paths: vec!["a".into(); 101],
                    ..developer(&w, &["cdn:read"])
                },
                "`allowPaths` has 101 entries; at most 100",
            ),
            (
                CreateKey {
                    expires_at: Some(past),
                    ..developer(&w, &["cdn:read"])
                },
                "is in the past; the key would never work",
            ),
            (
                CreateKey {
                    mime: vec!["image".into()],
                    ..developer(&w, &["cdn:read"])
                },
                "`mime` \"image\" is not a MIME type",
            ),
        ];
        for (request, expected) in cases {
            let e = request.run(&ctx).await.err().unwrap();
            assert!(matches!(e, OpError::Invalid { .. }), "{e:?}");
            assert!(
                api_text(&e).contains(expected),
                "{expected}: {}",
                api_text(&e)
            );
        }
        assert!(w
            .stores
            .accounts
            .list_keys(&w.org.id)
            .await
            .unwrap()
            .is_empty());
        // N: a name of exactly the limit, trimmed
        let name = format!("  {}  ", "n".repeat(MAX_NAME_CHARS));
        let made = CreateKey {
            name: Some(name),
            ..developer(&w, &["cdn:read"])
        }
        .run(&ctx)
        .await
        .unwrap();
        assert_eq!(made.key.name.unwrap().len(), MAX_NAME_CHARS);
        let server_key = server(Some("ABC")).run(&ctx).await.unwrap();
        assert_eq!(
            server_key.key.server_id.as_ref(),
            Some(&w.abc.id),
            "join codes in any case"
        );
    });
}

#[test]
fn another_organizations_keys_are_unknown_to_members_and_known_to_the_operator() {
    block_on(async {
        let w = World::new().await;
        let theirs = CreateKey {
            org: w.other.id.clone(),
            ..developer(&w, &["cdn:read"])
        }
        .run(&w.operator())
        .await
        .unwrap();
        let owner = w.member("jay", Grant::everywhere(Role::Owner)).await;
        let ctx = w.api(&owner);
        let id = theirs.key.id.clone();
        let e = Disable { key: id.clone() }.run(&ctx).await.err().unwrap();
        assert!(matches!(e, OpError::NotFound(_)), "{e:?}");
        let e = Rotate {
            key: id.clone(),
            disable_old: true,
        }
        .run(&ctx)
        .await
        .err()
        .unwrap();
        assert!(matches!(e, OpError::NotFound(_)), "{e:?}");
        let e = Delete { key: id.clone() }.run(&ctx).await.err().unwrap();
        assert!(matches!(e, OpError::NotFound(_)), "{e:?}");
        let e = CreateKey {
            org: w.other.id.clone(),
            ..developer(&w, &["cdn:read"])
        }
        .run(&ctx)
        .await
        .err()
        .unwrap();
        assert!(matches!(e, OpError::Forbidden(_)), "{e:?}");
        assert!(w
            .stores
            .accounts
            .get_key(&id)
            .await
            .unwrap()
            .unwrap()
            .disabled_at
            .is_none());
        let done = Disable { key: id }.run(&w.operator()).await.unwrap();
        assert!(done.key.disabled_at.is_some());
        let e = Disable {
            key: KeyId::new("key_missing"),
        }
        .run(&w.operator())
        .await
        .err()
        .unwrap();
        assert_eq!(e.to_string(), "unknown key \"key_missing\"");
    });
}

#[test]
fn rotating_keeps_the_settings_and_disabling_the_old_key_ends_its_sessions() {
    block_on(async {
        let w = World::new().await;
        let owner = w.member("jay", Grant::everywhere(Role::Owner)).await;
        let ctx = w.api(&owner);
        let old = CreateKey {
            allow_paths: vec!["shots".into()],
            ..developer(&w, &["cdn:read"])
        }
        .run(&ctx)
        .await
        .unwrap();
        let session = auth_core::console_session::Session {
            id_hash: [7; 32],
            subject: auth_core::console_session::Subject::Key {
                key_id: old.key.id.clone(),
                key_hash: [1; 32],
            },
            csrf_token: "csrf".into(),
            created_at: ctx.now,
            last_seen_at: ctx.now,
        };
        w.stores.console_sessions.create(&session).await.unwrap();
        let kept = Rotate {
            key: old.key.id.clone(),
            disable_old: false,
        }
        .run(&ctx)
        .await
        .unwrap();
        assert_eq!(kept.key.allowed_prefixes, ["shots"]);
        assert!(kept.old.disabled_at.is_none(), "the old key keeps working");
        let rotated = Rotate {
            key: old.key.id.clone(),
            disable_old: true,
        }
        .run(&ctx)
        .await
        .unwrap();
        assert!(rotated.old.disabled_at.is_some());
        assert_ne!(rotated.secret, kept.secret);
        let ended = w
            .stores
            .console_sessions
            .end_for_key(&old.key.id)
            .await
            .unwrap();
        assert_eq!(ended, 0, "its console session ended with it");
    });
}
