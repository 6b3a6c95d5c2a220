//! Placeholders: put, replace, list, delete, the per-organization limit, and [`set`]'s rules.

use chrono::{Duration, SubsecRound, Utc};

use super::{record, Fixture};
use crate::placeholder::{set, NewPlaceholder, Placeholder, PlaceholderError, Put, SetError};

fn placeholder(pattern: &str, fallback: &str) -> Placeholder {
    let now = Utc::now().trunc_subsecs(6); // Postgres keeps microseconds
    Placeholder {
        pattern: pattern.into(),
        fallback: fallback.into(),
        created_at: now,
        updated_at: now,
    }
}

pub async fn placeholders_are_put_replaced_listed_and_deleted(f: &Fixture) {
    let store = f.placeholders.as_ref();
    let first = placeholder("items/*", "items/missing.png");
    assert_eq!(
        store
            .put(
                &f.org_a,
                &first,
                10,
                &auth_core::audit::Audit::operator("test")
            )
            .await
            .unwrap(),
        Put::Created
    );
    store
        .put(
            &f.org_a,
            &placeholder("a/**", "a.png"),
            10,
            &auth_core::audit::Audit::operator("test"),
        )
        .await
        .unwrap();
    store
        .put(
            &f.org_b,
            &placeholder("b/*", "b.png"),
            10,
            &auth_core::audit::Audit::operator("test"),
        )
        .await
        .unwrap();
    let mut later = placeholder("items/*", "items/other.png");
    later.created_at += Duration::seconds(5);
    later.updated_at += Duration::seconds(5);
    assert_eq!(
        store
            .put(
                &f.org_a,
                &later,
                10,
                &auth_core::audit::Audit::operator("test")
            )
            .await
            .unwrap(),
        Put::Replaced {
            created_at: first.created_at
        }
    );
    let listed = store.list(&f.org_a).await.unwrap();
    assert_eq!(
        listed
            .iter()
            .map(|p| (p.pattern.as_str(), p.fallback.as_str()))
            .collect::<Vec<_>>(),
        [("a/**", "a.png"), ("items/*", "items/other.png")]
    );
    // a replacement keeps when the pattern was first set
    assert_eq!(listed[1].created_at, first.created_at);
    assert_eq!(listed[1].updated_at, later.updated_at);
    assert!(store
        .delete(
            &f.org_a,
            "items/*",
            &auth_core::audit::Audit::operator("test")
        )
        .await
        .unwrap());
    assert!(!store
        .delete(
            &f.org_a,
            "items/*",
            &auth_core::audit::Audit::operator("test")
        )
        .await
        .unwrap());
    assert!(!store
        .delete(&f.org_a, "b/*", &auth_core::audit::Audit::operator("test"))
        .await
        .unwrap());
    assert_eq!(store.list(&f.org_a).await.unwrap().len(), 1);
    assert_eq!(store.list(&f.org_b).await.unwrap().len(), 1);
}

pub async fn placeholders_stop_at_the_limit_for_new_patterns_only(f: &Fixture) {
    let store = f.placeholders.as_ref();
    for i in 0..3 {
        let p = placeholder(&format!("p{i}/*"), "x.png");
        assert_eq!(
            store
                .put(&f.org_a, &p, 3, &auth_core::audit::Audit::operator("test"))
                .await
                .unwrap(),
            Put::Created
        );
    }
    // N + 1 is refused; replacing one of the N is not; another organization has its own count
    let extra = placeholder("p3/*", "x.png");
    assert_eq!(
        store
            .put(
                &f.org_a,
                &extra,
                3,
                &auth_core::audit::Audit::operator("test")
            )
            .await
            .unwrap(),
        Put::LimitReached
    );
    assert!(matches!(
        store
            .put(
                &f.org_a,
                &placeholder("p1/*", "y.png"),
                3,
                &auth_core::audit::Audit::operator("test")
            )
            .await
            .unwrap(),
        Put::Replaced { .. }
    ));
    assert_eq!(
        store
            .put(
                &f.org_b,
                &extra,
                3,
                &auth_core::audit::Audit::operator("test")
            )
            .await
            .unwrap(),
        Put::Created
    );
    assert_eq!(store.list(&f.org_a).await.unwrap().len(), 3);
    store
        .delete(&f.org_a, "p0/*", &auth_core::audit::Audit::operator("test"))
        .await
        .unwrap();
    assert_eq!(
        store
            .put(
                &f.org_a,
                &extra,
                3,
                &auth_core::audit::Audit::operator("test")
            )
            .await
            .unwrap(),
        Put::Created
    );
}

pub async fn placeholders_limit_holds_under_concurrent_puts(f: &Fixture) {
    let store = f.placeholders.as_ref();
    let puts = (0..8).map(|i| {
        let p = placeholder(&format!("c{i}/*"), "x.png");
        async move {
            store
                .put(&f.org_a, &p, 3, &auth_core::audit::Audit::operator("test"))
                .await
                .unwrap()
        }
    });
    let outcomes = futures::future::join_all(puts).await;
    let created = outcomes.iter().filter(|o| **o == Put::Created).count();
    assert_eq!(created, 3, "{outcomes:?}");
    assert_eq!(store.list(&f.org_a).await.unwrap().len(), 3);
}

pub async fn placeholders_set_needs_an_existing_fallback(f: &Fixture) {
    let new = NewPlaceholder::parse("items/*", "items/missing.png").unwrap();
    let now = Utc::now().trunc_subsecs(6);
    let refused = set(
        f.records.as_ref(),
        f.placeholders.as_ref(),
        &f.org_a,
        &new,
        now,
        &auth_core::audit::Audit::operator("test"),
    )
    .await;
    assert!(matches!(
        refused,
        Err(SetError::Refused(PlaceholderError::FallbackMissing(k))) if k == "items/missing.png"
    ));
    f.records
        .upsert(&f.org_a, &record("items/missing.png", "loc/1"))
        .await
        .unwrap();
    let (p, created) = set(
        f.records.as_ref(),
        f.placeholders.as_ref(),
        &f.org_a,
        &new,
        now,
        &auth_core::audit::Audit::operator("test"),
    )
    .await
    .unwrap();
    assert!(created);
    assert_eq!((p.pattern.as_str(), p.created_at), ("items/*", now));
    let (again, created) = set(
        f.records.as_ref(),
        f.placeholders.as_ref(),
        &f.org_a,
        &new,
        now + Duration::seconds(1),
        &auth_core::audit::Audit::operator("test"),
    )
    .await
    .unwrap();
    assert!(!created);
    assert_eq!(again.created_at, now);
    // the other organization has no such object
    assert!(set(
        f.records.as_ref(),
        f.placeholders.as_ref(),
        &f.org_b,
        &new,
        now,
        &auth_core::audit::Audit::operator("test")
    )
    .await
    .is_err());
}
