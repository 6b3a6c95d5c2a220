//! Alert rules and destinations ([`crate::alert_store::AlertStore`]): the references, names and
//! limits every adapter keeps, and the delivery log's test messages and "send again".

use auth_core::audit::Audit;
use chrono::{SubsecRound, Utc};
use serde_json::json;

use super::Fixture;
use crate::alert_store::{
    new_destination_id, new_rule_id, AlertPut, AlertRule, AlertStore, DeliveryQuery,
    DeliveryStatus, Destination, DestinationDelete, DestinationKind,
};
use crate::alerts::{RuleSpec, Trigger};
use crate::saved::{SavedPut, SavedSearch, SavedServers};

/// What the alert cases run on: the log fixture (its saved searches are what rules watch) and
/// the adapter's alert store and outbox on the same data.
pub struct AlertFixture {
    pub logs: Fixture,
    pub alerts: std::sync::Arc<dyn AlertStore>,
    pub queue: std::sync::Arc<dyn crate::alert_queue::AlertQueue>,
}

pub(super) fn destination(f: &Fixture, name: &str) -> Destination {
    let now = Utc::now().trunc_subsecs(6);
    Destination {
        id: new_destination_id(),
        org_id: f.org.clone(),
        name: name.into(),
        kind: DestinationKind::Webhook,
        url_hint: "https://hooks.example.com".into(),
        sealed: vec![1, 2, 3],
        created_by: "jay".into(),
        created_at: now,
        updated_at: now,
    }
}

fn rule(f: &Fixture, name: &str, search: &str, destinations: &[&str]) -> AlertRule {
    let now = Utc::now().trunc_subsecs(6);
    AlertRule {
        id: new_rule_id(),
        org_id: f.org.clone(),
        spec: RuleSpec {
            name: name.into(),
            saved_search_id: search.into(),
            trigger: Trigger::EveryMatch,
            group_by: None,
            destination_ids: destinations.iter().map(|d| (*d).to_owned()).collect(),
        },
        muted_until: None,
        last_fired_at: None,
        created_by: "jay".into(),
        created_at: now,
        updated_at: now,
    }
}

async fn saved_search(f: &Fixture, name: &str) -> String {
    let now = Utc::now().trunc_subsecs(6);
    let s = SavedSearch {
        id: crate::saved::new_id(),
        org_id: f.org.clone(),
        name: name.into(),
        servers: SavedServers::All,
        search: json!({ "eventType": "admin.ban" }),
        created_at: now,
        updated_at: now,
        created_by: "jay".into(),
    };
    let put = f.saved.create(&s, 10, &Audit::operator("test")).await;
    assert_eq!(put.unwrap(), SavedPut::Done);
    s.id
}

pub async fn destinations_are_made_renamed_and_deleted_within_names_and_limits(a: &AlertFixture) {
    let (f, store, who) = (&a.logs, a.alerts.as_ref(), Audit::operator("test"));
    let staff = destination(f, "Staff");
    assert_eq!(
        store.create_destination(&staff, 2, &who).await.unwrap(),
        AlertPut::Done
    );
    assert_eq!(
        store.destination(&f.org, &staff.id).await.unwrap().as_ref(),
        Some(&staff),
        "read back as stored"
    );
    assert_eq!(
        store
            .create_destination(&destination(f, "sTAFF"), 2, &who)
            .await
            .unwrap(),
        AlertPut::NameTaken,
        "names are unique in either case"
    );
    let siem = destination(f, "SIEM");
    assert_eq!(
        store.create_destination(&siem, 2, &who).await.unwrap(),
        AlertPut::Done,
        "N = the limit"
    );
    assert_eq!(
        store
            .create_destination(&destination(f, "Third"), 2, &who)
            .await
            .unwrap(),
        AlertPut::LimitReached,
        "N + 1"
    );
    let names: Vec<String> = store
        .destinations(&f.org)
        .await
        .unwrap()
        .into_iter()
        .map(|d| d.name)
        .collect();
    assert_eq!(names, ["SIEM", "Staff"], "by name, case-insensitively");
    let renamed = Destination {
        name: "Staff channel".into(),
        ..staff.clone()
    };
    assert_eq!(
        store
            .update_destination(&renamed, "renamed", &who)
            .await
            .unwrap(),
        AlertPut::Done
    );
    let clash = Destination {
        name: "siem".into(),
        ..staff.clone()
    };
    assert_eq!(
        store
            .update_destination(&clash, "renamed", &who)
            .await
            .unwrap(),
        AlertPut::NameTaken
    );
    let other_org = Destination {
        org_id: auth_core::OrgId::new("org_elsewhere"),
        ..staff.clone()
    };
    assert_eq!(
        store
            .destination(&other_org.org_id, &staff.id)
            .await
            .unwrap(),
        None,
        "another organization's id names nothing"
    );
    assert_eq!(
        store
            .delete_destination(&f.org, &siem.id, &who)
            .await
            .unwrap(),
        DestinationDelete::Done
    );
    assert_eq!(
        store
            .delete_destination(&f.org, &siem.id, &who)
            .await
            .unwrap(),
        DestinationDelete::Missing
    );
}

pub async fn rules_refuse_what_they_cannot_name_and_keep_what_they_use(a: &AlertFixture) {
    let (f, store, who) = (&a.logs, a.alerts.as_ref(), Audit::operator("test"));
    let search = saved_search(f, "Bans").await;
    let hook = destination(f, "Hook");
    store.create_destination(&hook, 10, &who).await.unwrap();
    assert_eq!(
        store
            .create_rule(&rule(f, "Bans", "ss_missing", &[&hook.id]), 10, &who)
            .await
            .unwrap(),
        AlertPut::UnknownSavedSearch("ss_missing".into())
    );
    assert_eq!(
        store
            .create_rule(
                &rule(f, "Bans", &search, &[&hook.id, "dst_missing"]),
                10,
                &who
            )
            .await
            .unwrap(),
        AlertPut::UnknownDestination("dst_missing".into())
    );
    let bans = rule(f, "Bans", &search, &[&hook.id]);
    assert_eq!(
        store.create_rule(&bans, 1, &who).await.unwrap(),
        AlertPut::Done
    );
    let stored = store.rule(&f.org, &bans.id).await.unwrap().unwrap();
    assert_eq!(stored.spec, bans.spec);
    assert_eq!(
        store
            .create_rule(&rule(f, "Kicks", &search, &[&hook.id]), 1, &who)
            .await
            .unwrap(),
        AlertPut::LimitReached
    );
    assert_eq!(
        store
            .create_rule(&rule(f, "BANS", &search, &[&hook.id]), 10, &who)
            .await
            .unwrap(),
        AlertPut::NameTaken
    );
    assert_eq!(
        store
            .delete_destination(&f.org, &hook.id, &who)
            .await
            .unwrap(),
        DestinationDelete::InUse(vec!["Bans".into()]),
        "a destination a rule sends to stays"
    );

    let muted = AlertRule {
        muted_until: Some(Utc::now().trunc_subsecs(6) + chrono::Duration::hours(1)),
        ..bans.clone()
    };
    assert_eq!(
        store.update_rule(&muted, &who).await.unwrap(),
        AlertPut::Done
    );
    assert_eq!(
        store
            .rule(&f.org, &bans.id)
            .await
            .unwrap()
            .unwrap()
            .muted_until,
        muted.muted_until
    );
    assert!(store.delete_rule(&f.org, &bans.id, &who).await.unwrap());
    assert!(!store.delete_rule(&f.org, &bans.id, &who).await.unwrap());
    assert_eq!(
        store.update_rule(&bans, &who).await.unwrap(),
        AlertPut::Missing
    );
    assert_eq!(
        store
            .delete_destination(&f.org, &hook.id, &who)
            .await
            .unwrap(),
        DestinationDelete::Done,
        "free once its rule is gone"
    );
}

pub async fn test_messages_are_logged_and_sent_again_only_when_finished(a: &AlertFixture) {
    let (f, store, who) = (&a.logs, a.alerts.as_ref(), Audit::operator("test"));
    let hook = destination(f, "Hook");
    store.create_destination(&hook, 10, &who).await.unwrap();
    let now = Utc::now();
    assert_eq!(
        store.send_test(&f.org, "dst_missing", now).await.unwrap(),
        None
    );
    let id = store
        .send_test(&f.org, &hook.id, now)
        .await
        .unwrap()
        .unwrap();
    let log = store
        .deliveries(&DeliveryQuery {
            org_id: f.org.clone(),
            rule_id: None,
            before: None,
            only_rules: None,
            limit: 10,
        })
        .await
        .unwrap();
    assert_eq!(log.len(), 1);
    assert_eq!(log[0].id, id);
    assert_eq!(log[0].rule_id, None, "a test message belongs to no rule");
    assert_eq!(log[0].status, DeliveryStatus::Pending);
    assert_eq!(
        store.delivery(&f.org, &id).await.unwrap().as_ref(),
        Some(&log[0]),
        "read back by id"
    );
    let elsewhere = auth_core::OrgId::new("org_elsewhere");
    assert_eq!(store.delivery(&elsewhere, &id).await.unwrap(), None);
    assert_eq!(store.delivery(&f.org, "msg_missing").await.unwrap(), None);
    assert_eq!(
        store.send_again(&f.org, &id, now).await.unwrap(),
        Some(false),
        "a pending delivery is not sent again"
    );
    assert_eq!(
        store.send_again(&f.org, "msg_missing", now).await.unwrap(),
        None
    );
    let one_rule = store
        .deliveries(&DeliveryQuery {
            org_id: f.org.clone(),
            rule_id: Some("alr_other".into()),
            before: None,
            only_rules: None,
            limit: 10,
        })
        .await
        .unwrap();
    assert!(one_rule.is_empty(), "filtered by rule");
    let seen_rules = store
        .deliveries(&DeliveryQuery {
            org_id: f.org.clone(),
            rule_id: None,
            before: None,
            only_rules: Some(vec!["alr_other".into()]),
            limit: 10,
        })
        .await
        .unwrap();
    assert_eq!(
        seen_rules.len(),
        1,
        "test messages stay listed for a caller limited to some rules"
    );
}
