//! The outbox as the delivery worker drives it ([`crate::alert_queue::AlertQueue`]): leases, the
//! order of a queue, answers recorded, holds, and pruning — on test messages, which every
//! adapter queues the way a firing's deliveries are queued.

use chrono::{DateTime, Duration, SubsecRound, Utc};

use super::alerts::{destination, AlertFixture};
use crate::alert_queue::Attempt;
use crate::alert_store::{DeliveryQuery, DeliveryStatus};

/// The delivery log of the fixture's organization, newest first.
async fn log(a: &AlertFixture) -> Vec<crate::alert_store::Delivery> {
    let q = DeliveryQuery {
        org_id: a.logs.org.clone(),
        rule_id: None,
        only_rules: None,
        before: None,
        limit: 50,
    };
    a.alerts.deliveries(&q).await.unwrap()
}

/// A webhook destination, the time the case starts at, and the lease the worker takes.
async fn webhook(a: &AlertFixture) -> (crate::alert_store::Destination, DateTime<Utc>, Duration) {
    let hook = destination(&a.logs, "Hook");
    let who = auth_core::audit::Audit::operator("test");
    a.alerts.create_destination(&hook, 10, &who).await.unwrap();
    (hook, Utc::now().trunc_subsecs(6), Duration::seconds(6))
}

pub async fn the_outbox_leases_a_queue_in_order_and_records_answers(a: &AlertFixture) {
    let (store, queue) = (a.alerts.as_ref(), a.queue.as_ref());
    let (hook, now, lease) = webhook(a).await;
    let first = store
        .send_test(&a.logs.org, &hook.id, now)
        .await
        .unwrap()
        .unwrap();
    let second = store
        .send_test(&a.logs.org, &hook.id, now)
        .await
        .unwrap()
        .unwrap();

    let taken = queue.lease_due(10, now, lease).await.unwrap();
    assert_eq!(
        taken.len(),
        1,
        "the second waits behind the first in its queue"
    );
    let head = &taken[0];
    assert_eq!((head.id.as_str(), head.attempts), (first.as_str(), 1));
    assert_eq!(
        (head.kind.as_str(), head.sealed.as_slice()),
        ("webhook", &[1u8, 2, 3][..])
    );
    assert_eq!(head.body, None, "a test message has no firing");
    assert!(
        queue.lease_due(10, now, lease).await.unwrap().is_empty(),
        "leased"
    );
    queue.renew(&[head.seq], now + lease * 2).await.unwrap();
    let past_first_lease = now + lease + Duration::seconds(1);
    assert!(
        queue
            .lease_due(10, past_first_lease, lease)
            .await
            .unwrap()
            .is_empty(),
        "the renewed lease holds"
    );

    let delivered = Attempt::Delivered { code: 204 };
    queue
        .finish(&[head.seq], &hook.id, &delivered, now)
        .await
        .unwrap();
    let done = log(a).await.into_iter().find(|d| d.id == first).unwrap();
    assert_eq!(
        (done.status, done.last_code),
        (DeliveryStatus::Delivered, Some(204))
    );
    assert!(done.delivered_at.is_some());

    let next = queue.lease_next(head, now, lease).await.unwrap().unwrap();
    assert_eq!(next.id, second, "the queue goes on with its next delivery");
    let failed = Attempt::Failed {
        code: Some(500),
        error: "boom".into(),
        retry_at: now + Duration::seconds(60),
    };
    queue
        .finish(&[next.seq], &hook.id, &failed, now)
        .await
        .unwrap();
    let retried = log(a).await.into_iter().find(|d| d.id == second).unwrap();
    assert_eq!(retried.status, DeliveryStatus::Pending);
    assert_eq!(
        (retried.last_code, retried.last_error.as_deref()),
        (Some(500), Some("boom"))
    );
    let early = queue
        .lease_due(10, now + Duration::seconds(30), lease)
        .await
        .unwrap();
    assert!(early.is_empty(), "not before its retry time");
    let again = queue
        .lease_due(10, now + Duration::seconds(61), lease)
        .await
        .unwrap();
    assert_eq!(
        (again.len(), again[0].attempts),
        (1, 2),
        "the same delivery, tried again"
    );

    let too_late = Attempt::Failed {
        code: None,
        error: "refused".into(),
        retry_at: now + Duration::hours(25),
    };
    queue
        .finish(&[again[0].seq], &hook.id, &too_late, now)
        .await
        .unwrap();
    let gave_up = log(a).await.into_iter().find(|d| d.id == second).unwrap();
    assert_eq!(gave_up.status, DeliveryStatus::Failed, "past its 24 hours");
}

pub async fn held_destinations_wait_and_lost_leases_are_taken_again(a: &AlertFixture) {
    let (store, queue) = (a.alerts.as_ref(), a.queue.as_ref());
    let (hook, now, lease) = webhook(a).await;
    let secs = Duration::seconds;
    let first = store
        .send_test(&a.logs.org, &hook.id, now)
        .await
        .unwrap()
        .unwrap();

    let lost = queue.lease_due(10, now, lease).await.unwrap();
    let retaken = queue.lease_due(10, now + secs(7), lease).await.unwrap();
    assert_eq!(retaken.len(), 1, "a lease nobody recorded runs out");
    assert_eq!(
        (retaken[0].id.as_str(), retaken[0].attempts),
        (first.as_str(), 2)
    );
    assert_eq!(retaken[0].id, lost[0].id, "the same id as the lost attempt");

    let held = Attempt::Held {
        until: now + secs(60),
    };
    queue
        .finish(&[retaken[0].seq], &hook.id, &held, now + secs(7))
        .await
        .unwrap();
    let entry = log(a).await.into_iter().find(|d| d.id == first).unwrap();
    assert_eq!(
        (entry.attempts, entry.last_code),
        (1, Some(429)),
        "a hold is not an attempt"
    );
    assert!(
        queue
            .lease_due(10, now + secs(30), lease)
            .await
            .unwrap()
            .is_empty(),
        "held"
    );
    let after = queue.lease_due(10, now + secs(61), lease).await.unwrap();
    assert_eq!(after.len(), 1);
    let delivered = Attempt::Delivered { code: 200 };
    queue
        .finish(&[after[0].seq], &hook.id, &delivered, now + secs(61))
        .await
        .unwrap();

    let later = store
        .send_test(&a.logs.org, &hook.id, now)
        .await
        .unwrap()
        .unwrap();
    queue.hold(&hook.id, now + secs(120)).await.unwrap();
    queue.hold(&hook.id, now + secs(90)).await.unwrap();
    let early = queue.lease_due(10, now + secs(100), lease).await.unwrap();
    assert!(early.is_empty(), "the later hold stands");
    let taken = queue.lease_due(10, now + secs(121), lease).await.unwrap();
    assert_eq!(taken.len(), 1);
    assert_eq!(taken[0].id, later);

    queue
        .prune(now + Duration::days(8), Duration::days(7))
        .await
        .unwrap();
    let kept: Vec<String> = log(a).await.into_iter().map(|d| d.id).collect();
    assert_eq!(
        kept,
        [later],
        "finished ones past the keep time go, pending ones stay"
    );
}
