//! Audit entries: each change a store makes writes its entry in the same step, exactly once;
//! what changes nothing writes none.

use auth_core::audit::{Action, Audit, AuditQuery};
use auth_core::OrgId;

use super::{key, record, Fixture};
use crate::placeholder::Placeholder;
use crate::store::Renamed;

/// `(action, target, details["to"])` of the organization's entries, oldest first.
async fn entries(f: &Fixture, org: &OrgId) -> Vec<(Action, String, Option<String>)> {
    let all = AuditQuery {
        limit: 100,
        ..AuditQuery::default()
    };
    let mut found: Vec<_> = f
        .audit
        .page(org, &all)
        .await
        .unwrap()
        .into_iter()
        .map(|e| {
            let to = e.entry.details["to"].as_str().map(str::to_owned);
            (e.entry.action, e.entry.target, to)
        })
        .collect();
    found.reverse();
    found
}

pub async fn changes_write_one_audit_entry_each_and_no_change_none(f: &Fixture) {
    let who = Audit::operator("ann");
    let records = f.records.as_ref();
    // the fixture's set-up may have written entries (its key); count from here
    let before = entries(f, &f.org_a).await.len();
    for k in ["a.png", "b.png", "c.png", "d.png"] {
        records
            .upsert(&f.org_a, &record(k, &format!("loc/{k}")))
            .await
            .unwrap();
    }
    // uploads are not audit entries (docs/api.md "Audit log")
    assert_eq!(entries(f, &f.org_a).await.len(), before);

    assert!(records
        .delete(&f.org_a, &key("a.png"), &who)
        .await
        .unwrap()
        .is_some());
    assert!(records
        .delete(&f.org_a, &key("a.png"), &who)
        .await
        .unwrap()
        .is_none());
    let gone = records
        .delete_many(&f.org_a, &[key("b.png"), key("nope.png")], &who)
        .await
        .unwrap();
    assert_eq!(gone.len(), 1);
    let moved = records
        .rename(&f.org_a, &key("c.png"), &key("e.png"), false, &who)
        .await
        .unwrap();
    assert_eq!(moved, Renamed::Moved { replaced: None });
    for refused in [
        records.rename(&f.org_a, &key("zz.png"), &key("y.png"), false, &who),
        records.rename(&f.org_a, &key("d.png"), &key("e.png"), false, &who),
        records.rename(&f.org_a, &key("d.png"), &key("d.png"), false, &who),
    ] {
        assert!(!matches!(
            refused.await.unwrap(),
            Renamed::Moved { replaced: Some(_) }
        ));
    }
    let p = Placeholder {
        pattern: "items/*".into(),
        fallback: key("d.png"),
        created_at: chrono::Utc::now(),
        updated_at: chrono::Utc::now(),
    };
    f.placeholders.put(&f.org_a, &p, 10, &who).await.unwrap();
    assert!(f
        .placeholders
        .delete(&f.org_a, "items/*", &who)
        .await
        .unwrap());
    assert!(!f
        .placeholders
        .delete(&f.org_a, "items/*", &who)
        .await
        .unwrap());

    let s = |v: &str| v.to_owned();
    assert_eq!(
        entries(f, &f.org_a).await.split_off(before),
        [
            (Action::ObjectDelete, s("a.png"), None),
            (Action::ObjectDelete, s("b.png"), None),
            (Action::ObjectMove, s("c.png"), Some(s("e.png"))),
            (Action::PlaceholderSet, s("items/*"), None),
            (Action::PlaceholderRemove, s("items/*"), None),
        ]
    );
    // another organization's log is its own
    assert_eq!(entries(f, &f.org_b).await, []);
    let first = f
        .audit
        .page(
            &f.org_a,
            &AuditQuery {
                limit: 1,
                ..AuditQuery::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(first[0].entry.actor.label(), "ann");
}
