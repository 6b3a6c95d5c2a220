#![allow(clippy::unwrap_used)]

use auth_core::audit::Audit;
use auth_core::roles::{Grant, Role};
use chrono::{SubsecRound, Utc};
use futures::executor::block_on;
use logs_core::alert_store::{self, AlertPut, AlertRule, Destination, DestinationKind};
use logs_core::alerts::{RuleSpec, Trigger};
use logs_core::saved::{SavedSearch, SavedServers};

use super::*;
use crate::testing::World;

async fn search(w: &World, name: &str, servers: SavedServers) -> String {
    let now = Utc::now().trunc_subsecs(6);
    let s = SavedSearch {
        id: logs_core::saved::new_id(),
        org_id: w.org.id.clone(),
        name: name.into(),
        servers,
        search: serde_json::json!({ "eventType": "admin.ban" }),
        created_at: now,
        updated_at: now,
        created_by: "jay".into(),
    };
    let op = Audit::operator("test");
    w.stores.saved_searches.create(&s, 10, &op).await.unwrap();
    s.id
}

async fn destination(w: &World, name: &str) -> String {
    let now = Utc::now().trunc_subsecs(6);
    let d = Destination {
        id: alert_store::new_destination_id(),
        org_id: w.org.id.clone(),
        name: name.into(),
        kind: DestinationKind::Webhook,
        url_hint: "https://hooks.example.com".into(),
        sealed: vec![1],
        created_by: "jay".into(),
        created_at: now,
        updated_at: now,
    };
    let op = Audit::operator("test");
    w.stores
        .alerts
        .create_destination(&d, 10, &op)
        .await
        .unwrap();
    d.id
}

async fn rule(w: &World, name: &str, search: &str, to: &str) -> String {
    let now = Utc::now().trunc_subsecs(6);
    let r = AlertRule {
        id: alert_store::new_rule_id(),
        org_id: w.org.id.clone(),
        spec: RuleSpec {
            name: name.into(),
            saved_search_id: search.into(),
            trigger: Trigger::EveryMatch,
            group_by: None,
            destination_ids: vec![to.into()],
        },
        muted_until: None,
        last_fired_at: None,
        created_by: "jay".into(),
        created_at: now,
        updated_at: now,
    };
    let op = Audit::operator("test");
    assert_eq!(
        w.stores.alerts.create_rule(&r, 10, &op).await.unwrap(),
        AlertPut::Done
    );
    r.id
}

/// `abc`'s bans to one destination, `def`'s to another, and every server's to a third.
struct Alerts {
    on_abc: (String, String),
    on_def: (String, String),
    everywhere: (String, String),
}

async fn alerts(w: &World) -> Alerts {
    let mut made = Vec::new();
    for (name, servers) in [
        ("abc", SavedServers::Named(vec![w.abc.id.clone()])),
        ("def", SavedServers::Named(vec![w.def.id.clone()])),
        ("all", SavedServers::All),
    ] {
        let s = search(w, name, servers).await;
        let d = destination(w, name).await;
        made.push((rule(w, name, &s, &d).await, d));
    }
    let mut made = made.into_iter();
    Alerts {
        on_abc: made.next().unwrap(),
        on_def: made.next().unwrap(),
        everywhere: made.next().unwrap(),
    }
}

#[test]
fn a_server_scoped_member_sees_the_rules_of_what_they_read() {
    block_on(async {
        let w = World::new().await;
        let a = alerts(&w).await;
        let narrow = w.narrow_admin().await;
        let ctx = w.api(&narrow);
        let seen: Vec<String> = visible_rules(&ctx, &w.org.id)
            .await
            .unwrap()
            .into_iter()
            .map(|r| r.spec.name)
            .collect();
        assert_eq!(seen, ["abc", "all"], "not def's");
        assert!(find_rule(&ctx, &w.org.id, &a.on_abc.0).await.is_ok());
        let e = find_rule(&ctx, &w.org.id, &a.on_def.0).await.unwrap_err();
        assert!(matches!(e, OpError::NotFound(_)), "as unknown: {e:?}");
        let owner = w.member("jay", Grant::everywhere(Role::Owner)).await;
        let all = visible_rules(&w.api(&owner), &w.org.id).await.unwrap();
        assert_eq!(all.len(), 3);
        let elsewhere = visible_rules(&w.api(&owner), &w.other.id).await.unwrap();
        assert!(
            elsewhere.is_empty(),
            "another organization's rules are nobody's here"
        );
        let e = find_rule(&ctx, &w.org.id, "alr_\0").await.unwrap_err();
        assert!(matches!(e, OpError::NotFound(_)));
    });
}

#[test]
fn only_a_caller_who_reads_what_a_destination_carries_may_re_point_it() {
    block_on(async {
        let w = World::new().await;
        let a = alerts(&w).await;
        let narrow = w.narrow_admin().await;
        let ctx = w.api(&narrow);
        may_redirect(&ctx, &w.org.id, &a.on_abc.1).await.unwrap();
        for id in [&a.on_def.1, &a.everywhere.1] {
            let e = may_redirect(&ctx, &w.org.id, id).await.unwrap_err();
            assert!(
                matches!(&e, OpError::Forbidden(m) if m.contains("1 alert rule(s)")),
                "{e:?}"
            );
        }
        let owner = w.member("jay", Grant::everywhere(Role::Owner)).await;
        may_redirect(&w.api(&owner), &w.org.id, &a.everywhere.1)
            .await
            .unwrap();
        may_redirect(&w.operator(), &w.org.id, &a.on_def.1)
            .await
            .unwrap();
    });
}

#[test]
fn refused_changes_name_what_and_why() {
    let cases = [
        (AlertPut::NameTaken, "a destination named `Staff` exists"),
        (AlertPut::LimitReached, "has 50 destinations, the limit"),
        (AlertPut::Missing, "was deleted meanwhile"),
        (
            AlertPut::UnknownSavedSearch("ss_x".into()),
            "`savedSearchId`: no saved search `ss_x`",
        ),
        (
            AlertPut::UnknownDestination("dst_x".into()),
            "`destinationIds`: no destination `dst_x`",
        ),
    ];
    for (put, expected) in cases {
        let e = put_refusal(put, "destination", "Staff", 50).unwrap_err();
        assert!(e.to_string().contains(expected), "{e}");
    }
    assert!(put_refusal(AlertPut::Done, "destination", "Staff", 50).is_ok());
}

#[test]
fn a_delivery_is_sent_again_only_by_those_who_see_its_rule() {
    block_on(async {
        let w = World::new().await;
        let a = alerts(&w).await;
        let now = Utc::now();
        let fired = |(rule, to): &(String, String)| {
            w.alerts
                .queue_firing(&w.org.id, rule, to, serde_json::json!({}), now)
        };
        let (on_abc, on_def) = (fired(&a.on_abc), fired(&a.on_def));
        let narrow = w.narrow_admin().await;
        let ctx = w.api(&narrow);
        let again = |id: &str| SendAgain {
            org: w.org.id.clone(),
            delivery: id.to_owned(),
        };
        let e = again(&on_def).run(&ctx).await.unwrap_err();
        assert!(
            matches!(e, OpError::NotFound(_)),
            "def's, as unknown: {e:?}"
        );
        let e = again(&on_abc).run(&ctx).await.unwrap_err();
        assert!(matches!(e, OpError::Conflict(_)), "still pending: {e:?}");
        let e = again("msg_missing").run(&ctx).await.unwrap_err();
        assert!(matches!(e, OpError::NotFound(_)), "{e:?}");
        let owner = w.member("jay", Grant::everywhere(Role::Owner)).await;
        let theirs = SendAgain {
            org: w.other.id.clone(),
            delivery: on_abc.clone(),
        };
        let e = theirs.run(&w.api(&owner)).await.unwrap_err();
        assert!(
            matches!(e, OpError::NotFound(_)),
            "another organization: {e:?}"
        );
        // delivered, it may go again
        use logs_core::alert_queue::{AlertQueue, Attempt};
        let taken = w
            .alerts
            .lease_due(10, now, chrono::Duration::seconds(6))
            .await
            .unwrap();
        let seqs: Vec<i64> = taken.iter().map(|l| l.seq).collect();
        for l in &taken {
            let done = Attempt::Delivered { code: 200 };
            w.alerts
                .finish(&seqs, &l.destination_id, &done, now)
                .await
                .unwrap();
        }
        again(&on_abc).run(&ctx).await.unwrap();
        let e = again(&on_def).run(&ctx).await.unwrap_err();
        assert!(matches!(e, OpError::NotFound(_)), "still not theirs: {e:?}");
        again(&on_def).run(&w.api(&owner)).await.unwrap();
    });
}
