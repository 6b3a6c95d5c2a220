#![allow(clippy::unwrap_used)]

use std::sync::Mutex;

use async_trait::async_trait;
use auth_core::audit::{Action, Audit};
use auth_core::roles::{Grant, Role};
use auth_core::OrgId;
use cdn_core::lifecycle::{LifecycleRule, BATCH};
use cdn_core::path::ObjectKey;
use cdn_core::store::ObjectRecord;
use chrono::{Duration, SubsecRound, Utc};
use futures::executor::block_on;

use super::*;
use crate::testing::World;
use crate::{Caller, Ctx, OpError};

/// The host's side, recorded: which objects it was told to remove, in how many calls.
#[derive(Default)]
struct Recorded(Mutex<Vec<Vec<String>>>);

#[async_trait]
impl Removal for Recorded {
    async fn removed(&self, _org: &OrgId, gone: &[ObjectRecord]) {
        let keys = gone.iter().map(|r| r.key.to_string()).collect();
        self.0.lock().unwrap().push(keys);
    }
}

fn object(key: &str, age_days: i64, keep: bool) -> ObjectRecord {
    let at = Utc::now().trunc_subsecs(6) - Duration::days(age_days);
    ObjectRecord {
        key: ObjectKey::new(key),
        size: 10,
        content_type: Some("image/png".into()),
        etag: "e".into(),
        metadata: Default::default(),
        storage_path: format!("blobs/{key}"),
        last_modified: at,
        created_at: at,
        keep,
    }
}

async fn rule(w: &World, folder: &str, days: i64) {
    let now = Utc::now();
    let r = LifecycleRule {
        folder: folder.into(),
        days,
        created_at: now,
        updated_at: now,
    };
    let op = Audit::operator("test");
    w.stores
        .lifecycle
        .put(&w.org.id, &r, 10, &op)
        .await
        .unwrap();
}

fn job(w: &World) -> Ctx<'_> {
    Ctx::new(&w.stores, Caller::Operator, Audit::service("lifecycle"))
}

#[test]
fn expired_objects_go_with_an_audit_entry_and_the_rest_stay() {
    block_on(async {
        let w = World::new().await;
        rule(&w, "shots", 30).await;
        for (key, age, keep) in [
            ("shots/old.png", 40, false),
            ("shots/new.png", 1, false),
            ("shots/kept.png", 40, true),
            ("logs/old.png", 40, false),
        ] {
            w.stores
                .records
                .create(&w.org.id, &object(key, age, keep))
                .await
                .unwrap();
        }
        let removal = Recorded::default();
        let now = Utc::now();
        let pass = ExpireObjects { now }.run(&job(&w), &removal).await.unwrap();
        assert_eq!(
            pass,
            ExpiryPass {
                expired: 1,
                bytes: 10,
                failed: 0
            }
        );
        assert_eq!(
            *removal.0.lock().unwrap(),
            [vec!["shots/old.png".to_owned()]]
        );
        let expired: Vec<String> = w
            .audit(&w.org)
            .await
            .into_iter()
            .filter(|e| e.action == Action::ObjectExpire)
            .map(|e| e.target)
            .collect();
        assert_eq!(expired, ["shots/old.png"]);
        let again = ExpireObjects { now }.run(&job(&w), &removal).await.unwrap();
        assert_eq!(again.expired, 0, "nothing twice");
    });
}

#[test]
fn a_backlog_goes_in_batches() {
    block_on(async {
        let w = World::new().await;
        rule(&w, "", 7).await;
        for i in 0..=BATCH {
            let key = format!("old/{i:05}.png");
            w.stores
                .records
                .create(&w.org.id, &object(&key, 8, false))
                .await
                .unwrap();
        }
        let removal = Recorded::default();
        let pass = ExpireObjects { now: Utc::now() }
            .run(&job(&w), &removal)
            .await
            .unwrap();
        assert_eq!(pass.expired, BATCH as u64 + 1);
        let calls: Vec<usize> = removal.0.lock().unwrap().iter().map(Vec::len).collect();
        assert_eq!(calls, [BATCH, 1], "N, then N + 1's last one");
    });
}

#[test]
fn only_the_service_enforces_rules() {
    block_on(async {
        let w = World::new().await;
        let owner = w.member("jay", Grant::everywhere(Role::Owner)).await;
        let e = ExpireObjects { now: Utc::now() }
            .run(&w.api(&owner), &Recorded::default())
            .await
            .unwrap_err();
        assert!(matches!(e, OpError::Forbidden(_)), "{e:?}");
    });
}
