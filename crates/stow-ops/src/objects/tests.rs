#![allow(clippy::unwrap_used)]

use std::sync::Mutex;

use async_trait::async_trait;
use auth_core::audit::Action;
use auth_core::roles::{Grant, Role};
use auth_core::{AuthError, OrgId, Permission};
use cdn_core::metadata::Metadata;
use cdn_core::store::ObjectRecord;
use cdn_core::ObjectKey;
use chrono::Utc;
use futures::executor::block_on;

use super::{DeleteFolder, MoveConflict, MoveObjects, ObjectsHost, Purge};
use crate::testing::World;
use crate::OpError;

/// What the host was told: rows forgotten, bytes removed.
#[derive(Default)]
struct Host {
    forgotten: Mutex<Vec<String>>,
    removed: Mutex<Vec<String>>,
}

#[async_trait]
impl ObjectsHost for Host {
    fn forget_row(&self, _org: &OrgId, key: &ObjectKey) {
        self.forgotten.lock().unwrap().push(key.to_string());
    }
    async fn remove_bytes(&self, location: &str) {
        self.removed.lock().unwrap().push(location.to_owned());
    }
}

fn record(key: &str, location: &str) -> ObjectRecord {
    ObjectRecord {
        key: ObjectKey::new(key),
        size: 3,
        content_type: Some("image/png".into()),
        etag: "abc".into(),
        metadata: Metadata::new(),
        storage_path: location.into(),
        last_modified: Utc::now(),
        created_at: Utc::now(),
        keep: false,
    }
}

async fn store(w: &World, org: &OrgId, key: &str, location: &str) {
    assert!(w
        .stores
        .records
        .create(org, &record(key, location))
        .await
        .unwrap());
}

async fn keys(w: &World, org: &OrgId) -> Vec<String> {
    let q = cdn_core::store::ListQuery {
        folder: String::new(),
        after: None,
        denied: vec![],
        limit: 100,
    };
    let listed = w.stores.records.list(org, &q).await.unwrap();
    listed.into_iter().map(|r| r.key.to_string()).collect()
}

fn mv(from: &str, to: &str, folder: bool) -> MoveObjects {
    MoveObjects {
        from: from.into(),
        to: to.into(),
        replace: false,
        folder,
    }
}

#[test]
fn a_move_needs_write_and_delete_and_paths_on_both_sides() {
    block_on(async {
        let w = World::new().await;
        let viewer = w.member("viewer", Grant::everywhere(Role::Viewer)).await;
        let refused = mv("a.png", "b.png", false)
            .check(&w.api(&viewer))
            .unwrap_err();
        assert!(
            matches!(
                refused,
                OpError::Auth(AuthError::RoleLacks(Role::Viewer, Permission::CdnWrite))
            ),
            "{refused:?}"
        );
        // an admin limited to `staff/`: neither side may be outside it
        let narrow = w.narrow_admin().await;
        let ctx = w.api(&narrow);
        for (from, to, folder) in [
            ("staff/a.png", "public/a.png", false),
            ("public/a.png", "staff/a.png", false),
            ("staff/shots", "public", true),
        ] {
            let refused = mv(from, to, folder).check(&ctx).unwrap_err();
            let OpError::PathNotAllowed(text) = refused else {
                panic!("{from} → {to}: {refused:?}");
            };
            assert!(
                text.ends_with(
                    "is outside the paths your role (admin) may move; nothing was moved"
                ),
                "{text}"
            );
        }
        let checked = mv("staff/a.png", "staff/b.png", false).check(&ctx).unwrap();
        assert_eq!(
            (checked.from(), checked.to()),
            ("staff/a.png", "staff/b.png")
        );
    });
}

#[test]
fn keys_and_folders_are_normalized_and_bad_ones_named() {
    block_on(async {
        let w = World::new().await;
        let admin = w.member("admin", Grant::everywhere(Role::Admin)).await;
        let ctx = w.api(&admin);
        for (from, to, folder, starts) in [
            ("../etc/passwd", "b.png", false, "invalid from: "),
            ("a.png", "", false, "invalid to: "),
            ("a.png", "../y.png", false, "invalid to: "),
            ("shots", "shots/2026", true, ""),
            ("", "shots", true, "from must name a folder, not the root"),
        ] {
            let refused = mv(from, to, folder).check(&ctx).unwrap_err();
            let OpError::InvalidPath(text) = refused else {
                panic!("{from:?} → {to:?}: {refused:?}");
            };
            assert!(text.starts_with(starts), "{text}");
        }
        let checked = mv("shots/2026/", "archive/", true).check(&ctx).unwrap();
        assert_eq!((checked.from(), checked.to()), ("shots/2026", "archive"));
    });
}

#[test]
fn an_object_moves_once_is_audited_and_the_host_hears_of_it() {
    block_on(async {
        let w = World::new().await;
        let admin = w.member("admin", Grant::everywhere(Role::Admin)).await;
        let ctx = w.api(&admin);
        let host = Host::default();
        store(&w, &w.org.id, "a.png", "loc_a").await;
        store(&w, &w.org.id, "b.png", "loc_b").await;

        let taken = mv("a.png", "b.png", false).check(&ctx).unwrap();
        let refused = taken.run(&ctx, &w.org.id, &host).await.unwrap_err();
        assert!(
            matches!(&refused, OpError::Conflict(t) if t.contains("send \"replace\": true")),
            "{refused:?}"
        );

        let replacing = MoveObjects {
            replace: true,
            ..mv("a.png", "b.png", false)
        };
        let host = Host::default();
        let moved = replacing
            .check(&ctx)
            .unwrap()
            .run(&ctx, &w.org.id, &host)
            .await
            .unwrap();
        assert_eq!((moved.moved, moved.done), (1, true));
        assert_eq!(keys(&w, &w.org.id).await, ["b.png"]);
        // both keys' cached rows forgotten; the replaced object's bytes removed, the moved ones kept
        assert_eq!(*host.forgotten.lock().unwrap(), ["a.png", "b.png"]);
        assert_eq!(*host.removed.lock().unwrap(), ["loc_b"]);
        let audit = w.audit(&w.org).await;
        assert_eq!(
            audit
                .iter()
                .filter(|e| e.action == Action::ObjectMove)
                .count(),
            1,
            "{audit:?}"
        );

        let gone = mv("a.png", "c.png", false).check(&ctx).unwrap();
        let refused = gone.run(&ctx, &w.org.id, &host).await.unwrap_err();
        assert!(
            matches!(&refused, OpError::NotFound(t) if t == "no object has the key `a.png`"),
            "{refused:?}"
        );
    });
}

#[test]
fn a_folder_moves_what_it_can_and_names_the_conflicts() {
    block_on(async {
        let w = World::new().await;
        let admin = w.member("admin", Grant::everywhere(Role::Admin)).await;
        let ctx = w.api(&admin);
        let host = Host::default();
        for key in [
            "shots/1.png",
            "shots/2.png",
            "shots/deep/3.png",
            "archive/2.png",
            "shotsx.png",
        ] {
            store(&w, &w.org.id, key, &format!("loc_{key}")).await;
        }
        let moved = mv("shots", "archive", true)
            .check(&ctx)
            .unwrap()
            .run(&ctx, &w.org.id, &host)
            .await
            .unwrap();
        assert_eq!(moved.moved, 2);
        assert!(moved.done, "every object left under `shots` is a conflict");
        assert_eq!(
            moved.conflicts,
            [MoveConflict {
                from: "shots/2.png".into(),
                to: "archive/2.png".into()
            }]
        );
        assert_eq!(
            keys(&w, &w.org.id).await,
            [
                "archive/1.png",
                "archive/2.png",
                "archive/deep/3.png",
                "shots/2.png",
                "shotsx.png"
            ]
        );
        assert!(host.removed.lock().unwrap().is_empty());
    });
}

#[test]
fn only_the_callers_organization_and_the_operator_anywhere() {
    block_on(async {
        let w = World::new().await;
        let admin = w.member("admin", Grant::everywhere(Role::Admin)).await;
        let host = Host::default();
        store(&w, &w.other.id, "a.png", "loc_a").await;
        let ctx = w.api(&admin);
        let refused = mv("a.png", "b.png", false)
            .check(&ctx)
            .unwrap()
            .run(&ctx, &w.other.id, &host)
            .await
            .unwrap_err();
        assert!(matches!(refused, OpError::NotFound(_)), "{refused:?}");
        assert_eq!(keys(&w, &w.other.id).await, ["a.png"]);

        let op = w.operator();
        let moved = mv("a.png", "b.png", false)
            .check(&op)
            .unwrap()
            .run(&op, &w.other.id, &host)
            .await
            .unwrap();
        assert_eq!(moved.moved, 1);
        assert_eq!(keys(&w, &w.other.id).await, ["b.png"]);
    });
}

#[test]
fn a_folder_delete_needs_the_whole_folder_and_takes_only_what_is_under_it() {
    block_on(async {
        let w = World::new().await;
        let narrow = w.narrow_admin().await;
        let ctx = w.api(&narrow);
        for (path, refusal) in [
            (
                "",
                "path must name a folder; the whole workspace cannot be deleted at once",
            ),
            ("../x", "invalid path: "),
        ] {
            let refused = DeleteFolder { path: path.into() }.check(&ctx).unwrap_err();
            let OpError::InvalidPath(text) = refused else {
                panic!("{path:?}: {refused:?}");
            };
            assert!(text.starts_with(refusal), "{text}");
        }
        // the admin may delete under `staff/` only
        let refused = DeleteFolder {
            path: "public".into(),
        }
        .check(&ctx)
        .unwrap_err();
        assert!(matches!(refused, OpError::PathNotAllowed(_)), "{refused:?}");

        let admin = w.member("admin", Grant::everywhere(Role::Admin)).await;
        let ctx = w.api(&admin);
        let host = Host::default();
        for key in ["shots/1.png", "shots/deep/2.png", "shots", "shotsx.png"] {
            store(&w, &w.org.id, key, &format!("loc_{key}")).await;
        }
        let deleted = DeleteFolder {
            path: "shots/".into(),
        }
        .check(&ctx)
        .unwrap()
        .run(&ctx, &w.org.id, &host)
        .await
        .unwrap();
        assert_eq!(
            (deleted.path.as_str(), deleted.deleted, deleted.done),
            ("shots", 2, true)
        );
        // the object named like the folder is its parent's, and stays
        assert_eq!(keys(&w, &w.org.id).await, ["shots", "shotsx.png"]);
        let mut removed = host.removed.lock().unwrap().clone();
        removed.sort();
        assert_eq!(removed, ["loc_shots/1.png", "loc_shots/deep/2.png"]);
        let audit = w.audit(&w.org).await;
        assert_eq!(
            audit
                .iter()
                .filter(|e| e.action == Action::ObjectDelete)
                .count(),
            2,
            "{audit:?}"
        );

        let viewer = w.member("viewer", Grant::everywhere(Role::Viewer)).await;
        let refused = DeleteFolder {
            path: "shots".into(),
        }
        .check(&w.api(&viewer))
        .unwrap_err();
        assert!(matches!(refused, OpError::Auth(_)), "{refused:?}");
    });
}

#[test]
fn a_purge_forgets_each_key_once_audits_it_and_counts_what_exists() {
    block_on(async {
        let w = World::new().await;
        let admin = w.member("admin", Grant::everywhere(Role::Admin)).await;
        let ctx = w.api(&admin);
        let host = Host::default();
        store(&w, &w.org.id, "shots/a.png", "loc_a").await;
        let purge = |paths: &[&str], max| Purge {
            paths: paths.iter().map(|p| p.to_string()).collect(),
            max,
        };
        let refused = purge(&["a", "b", "c"], 2).check(&ctx).unwrap_err();
        assert!(
            matches!(&refused, OpError::TooManyFiles(t) if t == "paths has 3 entries; the limit is 2"),
            "{refused:?}"
        );
        let refused = purge(&[], 2).check(&ctx).unwrap_err();
        assert!(
            matches!(&refused, OpError::BadRequest(t) if t == "paths must contain at least one object key"),
            "{refused:?}"
        );
        let refused = purge(&["ok.png", "../x"], 10).check(&ctx).unwrap_err();
        assert!(
            matches!(&refused, OpError::InvalidPath(t) if t.starts_with("invalid path paths[1]: ")),
            "{refused:?}"
        );

        let purged = purge(&["shots/a.png", "shots/a.png", "shots/gone.png"], 10)
            .check(&ctx)
            .unwrap()
            .run(&ctx, &w.org.id, &host)
            .await
            .unwrap();
        assert_eq!(
            purged.paths,
            ["shots/a.png", "shots/a.png", "shots/gone.png"]
        );
        assert_eq!(purged.purged, 1);
        assert_eq!(
            *host.forgotten.lock().unwrap(),
            ["shots/a.png", "shots/gone.png"]
        );
        let audit = w.audit(&w.org).await;
        let targets: Vec<&str> = audit
            .iter()
            .filter(|e| e.action == Action::ObjectPurge)
            .map(|e| e.target.as_str())
            .collect();
        assert_eq!(targets, ["shots/a.png", "shots/gone.png"]);
    });
}

#[test]
fn a_purge_needs_the_permission_and_every_path() {
    block_on(async {
        let w = World::new().await;
        let viewer = w.member("viewer", Grant::everywhere(Role::Viewer)).await;
        let refused = Purge {
            paths: vec!["a.png".into()],
            max: 10,
        }
        .check(&w.api(&viewer))
        .unwrap_err();
        assert!(
            matches!(
                refused,
                OpError::Auth(AuthError::RoleLacks(Role::Viewer, Permission::CdnPurge))
            ),
            "{refused:?}"
        );
        let narrow = w.narrow_admin().await;
        let refused = Purge {
            paths: vec!["staff/a.png".into(), "public/b.png".into()],
            max: 10,
        }
        .check(&w.api(&narrow))
        .unwrap_err();
        assert!(
            matches!(&refused, OpError::PathNotAllowed(t)
                if t == "`public/b.png` is outside the paths your role (admin) may purge; nothing was purged"),
            "{refused:?}"
        );
    });
}
