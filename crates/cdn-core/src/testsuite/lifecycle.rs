//! Lifecycle: rules put, replaced, listed and deleted within the limit; expiry selects by rule,
//! age, keep mark and deeper rules, in key order, in batches; keep marks survive replacement and
//! moves; usage per top-level folder follows every change.

use auth_core::audit::{Action, Audit, AuditEntry, AuditQuery};
use chrono::{DateTime, Duration, SubsecRound, Utc};

use super::{key, record, Fixture};
use crate::lifecycle::{plan, set, LifecycleError, LifecycleRule, NewRule, SetError};
use crate::placeholder::Put;
use crate::store::{FolderUsage, ObjectRecord, ObjectTotals, Renamed};

fn who() -> Audit {
    Audit::operator("test")
}

fn aged(k: &str, days: i64, now: DateTime<Utc>) -> ObjectRecord {
    let mut r = record(k, &format!("loc/{k}"));
    r.last_modified = now - Duration::days(days) - Duration::seconds(1);
    r
}

/// The first organization's audit entries, oldest first.
async fn entries(f: &Fixture) -> Vec<AuditEntry> {
    let all = AuditQuery {
        limit: 100,
        ..AuditQuery::default()
    };
    let page = f.audit.page(&f.org_a, &all).await.unwrap();
    page.into_iter().rev().map(|e| e.entry).collect()
}

pub async fn lifecycle_rules_are_set_listed_and_removed_within_the_limit(f: &Fixture) {
    let store = f.lifecycle.as_ref();
    let now = Utc::now().trunc_subsecs(6);
    let (first, created) = set(
        store,
        &f.org_a,
        &NewRule::parse("shots", 30).unwrap(),
        now,
        &who(),
    )
    .await
    .unwrap();
    assert!(created);
    let later = now + Duration::seconds(5);
    let (changed, created) = set(
        store,
        &f.org_a,
        &NewRule::parse("shots/", 7).unwrap(),
        later,
        &who(),
    )
    .await
    .unwrap();
    assert!(!created, "the same folder is one rule");
    assert_eq!(changed.created_at, first.created_at);
    assert_eq!((changed.days, changed.updated_at), (7, later));
    set(
        store,
        &f.org_a,
        &NewRule::parse("", 365).unwrap(),
        now,
        &who(),
    )
    .await
    .unwrap();
    set(
        store,
        &f.org_b,
        &NewRule::parse("b", 1).unwrap(),
        now,
        &who(),
    )
    .await
    .unwrap();
    let listed = store.list(&f.org_a).await.unwrap();
    assert_eq!(
        listed,
        [
            LifecycleRule {
                folder: String::new(),
                days: 365,
                created_at: now,
                updated_at: now
            },
            changed.clone()
        ]
    );
    let mut orgs = store.organizations().await.unwrap();
    orgs.sort();
    let mut both = vec![f.org_a.clone(), f.org_b.clone()];
    both.sort();
    assert_eq!(orgs, both);
    assert!(store.delete(&f.org_a, "shots", &who()).await.unwrap());
    assert!(!store.delete(&f.org_a, "shots", &who()).await.unwrap());
    assert!(
        !store.delete(&f.org_a, "b", &who()).await.unwrap(),
        "another organization's"
    );
    assert_eq!(store.list(&f.org_a).await.unwrap().len(), 1);
    let actions: Vec<(Action, String)> = entries(f)
        .await
        .into_iter()
        .filter(|e| e.action.as_str().starts_with("lifecycle."))
        .map(|e| (e.action, e.target))
        .collect();
    assert_eq!(
        actions,
        [
            (Action::LifecycleSet, "shots".to_owned()),
            (Action::LifecycleSet, "shots".to_owned()),
            (Action::LifecycleSet, String::new()),
            (Action::LifecycleRemove, "shots".to_owned()),
        ]
    );
    // the limit counts new folders only, also when puts race
    let puts = (0..8).map(|i| {
        let r = LifecycleRule {
            folder: format!("c{i}"),
            days: 1,
            created_at: now,
            updated_at: now,
        };
        async move { store.put(&f.org_b, &r, 3, &who()).await.unwrap() }
    });
    let outcomes = futures::future::join_all(puts).await;
    assert_eq!(
        outcomes.iter().filter(|o| **o == Put::Created).count(),
        2,
        "{outcomes:?}"
    );
    let at_limit = LifecycleRule {
        folder: "b".into(),
        days: 9,
        created_at: now,
        updated_at: now,
    };
    assert!(matches!(
        store.put(&f.org_b, &at_limit, 3, &who()).await.unwrap(),
        Put::Replaced { .. }
    ));
    let over = (0..crate::lifecycle::MAX_RULES)
        .map(|i| NewRule::parse(&format!("m{i}"), 1).unwrap())
        .collect::<Vec<_>>();
    let mut refused = None;
    for r in &over {
        if let Err(e) = set(store, &f.org_a, r, now, &who()).await {
            refused = Some(e);
            break;
        }
    }
    assert!(matches!(
        refused,
        Some(SetError::Refused(LifecycleError::Limit))
    ));
    assert_eq!(
        store.list(&f.org_a).await.unwrap().len(),
        crate::lifecycle::MAX_RULES
    );
}

pub async fn records_expire_by_rule_age_and_keep_in_key_order(f: &Fixture) {
    let repo = f.records.as_ref();
    let now = Utc::now().trunc_subsecs(6);
    for (k, days) in [
        ("shots/a.png", 40),
        ("shots/b.png", 31),
        ("shots/c.png", 29),
        ("shots/2026/d.png", 50),
        ("shots/evidence/e.png", 400),
        ("shots/.thumbs/f.png", 400),
        ("shots", 400),
        ("shotsx/g.png", 400),
        ("shots/kept.png", 400),
        ("top.png", 400),
    ] {
        repo.upsert(&f.org_a, &aged(k, days, now)).await.unwrap();
    }
    repo.upsert(&f.org_b, &aged("shots/other-org.png", 400, now))
        .await
        .unwrap();
    let found = repo
        .set_keep(
            &f.org_a,
            &[key("shots/kept.png"), key("shots/none.png")],
            true,
            &who(),
        )
        .await
        .unwrap();
    assert_eq!(found, [key("shots/kept.png")], "only what exists");
    let rules = [
        LifecycleRule {
            folder: "shots".into(),
            days: 30,
            created_at: now,
            updated_at: now,
        },
        LifecycleRule {
            folder: "shots/evidence".into(),
            days: 3000,
            created_at: now,
            updated_at: now,
        },
    ];
    let expiry = plan(&rules, now)
        .into_iter()
        .find(|e| e.folder == "shots")
        .unwrap();
    let first = repo.expire(&f.org_a, &expiry, 2, &who()).await.unwrap();
    let keys_of = |v: &[ObjectRecord]| v.iter().map(|r| r.key.to_string()).collect::<Vec<_>>();
    assert_eq!(
        keys_of(&first),
        ["shots/2026/d.png", "shots/a.png"],
        "in key order, a batch at most"
    );
    assert_eq!(first[0].storage_path, "loc/shots/2026/d.png");
    let rest = repo.expire(&f.org_a, &expiry, 100, &who()).await.unwrap();
    assert_eq!(keys_of(&rest), ["shots/b.png"]);
    assert!(repo
        .expire(&f.org_a, &expiry, 100, &who())
        .await
        .unwrap()
        .is_empty());
    for stays in [
        "shots/c.png",
        "shots/evidence/e.png",
        "shots/.thumbs/f.png",
        "shots",
        "shotsx/g.png",
        "shots/kept.png",
        "top.png",
    ] {
        assert!(
            repo.get(&f.org_a, &key(stays)).await.unwrap().is_some(),
            "{stays}"
        );
    }
    assert!(repo
        .get(&f.org_b, &key("shots/other-org.png"))
        .await
        .unwrap()
        .is_some());
    let expired: Vec<(String, serde_json::Value)> = entries(f)
        .await
        .into_iter()
        .filter(|e| e.action == Action::ObjectExpire)
        .map(|e| (e.target, e.details))
        .collect();
    assert_eq!(expired.len(), 3, "one entry per object expired");
    assert_eq!(expired[0].0, "shots/2026/d.png");
    assert_eq!(expired[0].1["rule"], "shots");
    assert_eq!(expired[0].1["days"], 30);
    assert_eq!(expired[0].1["size"], 3);
    // unkept, it goes at the next pass
    repo.set_keep(&f.org_a, &[key("shots/kept.png")], false, &who())
        .await
        .unwrap();
    let unkept = repo.expire(&f.org_a, &expiry, 100, &who()).await.unwrap();
    assert_eq!(keys_of(&unkept), ["shots/kept.png"]);
}

pub async fn records_keep_marks_survive_replacement_and_moves(f: &Fixture) {
    let repo = f.records.as_ref();
    let now = Utc::now().trunc_subsecs(6);
    repo.upsert(&f.org_a, &aged("a.png", 40, now))
        .await
        .unwrap();
    repo.set_keep(&f.org_a, &[key("a.png")], true, &who())
        .await
        .unwrap();
    // setting the same mark again changes nothing and writes no entry
    repo.set_keep(&f.org_a, &[key("a.png")], true, &who())
        .await
        .unwrap();
    let mut replacement = aged("a.png", 0, now);
    replacement.keep = false;
    repo.upsert(&f.org_a, &replacement).await.unwrap();
    assert!(
        repo.get(&f.org_a, &key("a.png"))
            .await
            .unwrap()
            .unwrap()
            .keep
    );
    assert_eq!(
        repo.rename(&f.org_a, &key("a.png"), &key("b/a.png"), false, &who())
            .await
            .unwrap(),
        Renamed::Moved { replaced: None }
    );
    assert!(
        repo.get(&f.org_a, &key("b/a.png"))
            .await
            .unwrap()
            .unwrap()
            .keep
    );
    repo.upsert(&f.org_a, &aged("new.png", 1, now))
        .await
        .unwrap();
    assert!(
        !repo
            .get(&f.org_a, &key("new.png"))
            .await
            .unwrap()
            .unwrap()
            .keep
    );
    let marks = entries(f)
        .await
        .iter()
        .filter(|e| e.action == Action::ObjectKeep)
        .count();
    assert_eq!(marks, 1, "one entry per mark that changed");
}

pub async fn records_usage_per_top_folder_follows_every_change(f: &Fixture) {
    let repo = f.records.as_ref();
    let usage = |objects: i64, bytes: i64| ObjectTotals { objects, bytes };
    let mut big = record("shots/2026/a.png", "l1");
    big.size = 100;
    repo.upsert(&f.org_a, &big).await.unwrap();
    for k in ["shots/b.png", "top.png", "voice/c.ogg", "voice/d.ogg"] {
        repo.upsert(&f.org_a, &record(k, &format!("l-{k}")))
            .await
            .unwrap();
    }
    repo.upsert(&f.org_b, &record("shots/x.png", "lx"))
        .await
        .unwrap();
    // a replacement counts its new size once
    big.size = 50;
    repo.upsert(&f.org_a, &big).await.unwrap();
    repo.delete(&f.org_a, &key("voice/c.ogg"), &who())
        .await
        .unwrap();
    repo.delete_many(&f.org_a, &[key("voice/d.ogg")], &who())
        .await
        .unwrap();
    repo.rename(
        &f.org_a,
        &key("top.png"),
        &key("mugs/top.png"),
        false,
        &who(),
    )
    .await
    .unwrap();
    assert!(repo
        .create(&f.org_a, &record("mugs/n.png", "ln"))
        .await
        .unwrap());
    let got = repo.folder_usage(&f.org_a).await.unwrap();
    assert_eq!(
        got,
        [
            FolderUsage {
                folder: "mugs".into(),
                totals: usage(2, 6)
            },
            FolderUsage {
                folder: "shots".into(),
                totals: usage(2, 53)
            },
        ],
        "voice, now empty, is left out; top.png moved into mugs"
    );
    repo.upsert(&f.org_a, &record("top2.png", "lt"))
        .await
        .unwrap();
    let got = repo.folder_usage(&f.org_a).await.unwrap();
    assert_eq!(got[0].folder, "", "the top level first");
    assert_eq!(got[0].totals, usage(1, 3));
    let sum = got
        .iter()
        .fold(ObjectTotals::default(), |t, u| ObjectTotals {
            objects: t.objects + u.totals.objects,
            bytes: t.bytes + u.totals.bytes,
        });
    assert_eq!(sum, repo.totals(&f.org_a).await.unwrap());
    assert_eq!(
        repo.folder_usage(&f.org_b).await.unwrap(),
        [FolderUsage {
            folder: "shots".into(),
            totals: usage(1, 3)
        }]
    );
}
