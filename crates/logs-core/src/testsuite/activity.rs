//! What the overview reads (usage, each server's last batch) and the read slots (leases and the
//! export lock).

use super::*;
use crate::slots::{LeaseKind, LeaseRequest};

/// The newest batch of each server by commit order, however its events are dated; servers with
/// no batch are absent.
pub async fn last_batches_name_each_servers_newest_batch(f: &Fixture) {
    let (ta, tb) = targets(f);
    let (a, b) = (ta.server_id.clone(), tb.server_id.clone());
    let unknown = ServerId::new("srv_unknown");
    let all = [a.clone(), b.clone(), unknown.clone()];
    assert!(f.store.last_batches(&all).await.unwrap().is_empty());
    let now = Utc::now().trunc_subsecs(6);
    let old_event = (now - Duration::days(2)).to_rfc3339();
    for (i, at) in [now - Duration::minutes(5), now].into_iter().enumerate() {
        let body = json!({ "batch_id": format!("batch-last-{i}"), "events": [
            { "level": "info", "message": "m", "occurred_at": old_event }]});
        let batch = parse_batch(&serde_json::to_vec(&body).unwrap(), at).unwrap();
        f.store.ingest(&ta, batch, at).await.unwrap();
    }
    let last = f.store.last_batches(&all).await.unwrap();
    assert_eq!(
        last.get(&a),
        Some(&now),
        "the newest batch, not the event's time"
    );
    assert_eq!(last.len(), 1, "{last:?}");
    assert!(f.store.last_batches(&[]).await.unwrap().is_empty());
    assert!(f.store.last_batches(&[b]).await.unwrap().is_empty());
}

fn ask(kind: LeaseKind, limit: usize, expires_at: chrono::DateTime<Utc>) -> LeaseRequest {
    LeaseRequest {
        kind,
        limit,
        expires_at,
    }
}

/// Each kind has its own limit per organization; a released lease frees its slot and cannot be
/// renewed; a held one can.
pub async fn read_slot_leases_hold_each_kinds_limit(f: &Fixture) {
    let (slots, org) = (f.slots.as_ref(), &f.org);
    let until = Utc::now() + Duration::seconds(30);
    let tails = ask(LeaseKind::Tail, 2, until);
    let first = slots.acquire(org, &tails).await.unwrap().unwrap();
    let second = slots.acquire(org, &tails).await.unwrap().unwrap();
    assert!(first.id.starts_with("tail_") && first != second);
    assert_eq!(first.kind, LeaseKind::Tail);
    assert_eq!(
        slots.acquire(org, &tails).await.unwrap(),
        None,
        "the limit holds"
    );
    let searches = ask(LeaseKind::Search, 1, until);
    let search = slots.acquire(org, &searches).await;
    assert!(
        search.unwrap().is_some_and(|l| l.id.starts_with("search_")),
        "kinds count apart"
    );
    assert!(slots.renew(&first, until).await.unwrap());
    slots.release(&first).await.unwrap();
    assert!(!slots.renew(&first, until).await.unwrap());
    slots.release(&first).await.unwrap(); // twice: nothing happens
    let third = slots.acquire(org, &tails).await.unwrap();
    assert!(third.is_some(), "a released lease frees its slot");
    assert!(slots.renew(&second, until).await.unwrap());
}

/// A lease past its `expires_at` (its holder died) is taken back by the next acquirer.
pub async fn expired_read_slot_leases_are_taken_back(f: &Fixture) {
    let (slots, org) = (f.slots.as_ref(), &f.org);
    let past = Utc::now() - Duration::seconds(1);
    let dead = slots.acquire(org, &ask(LeaseKind::Search, 1, past)).await;
    let dead = dead.unwrap().unwrap();
    let until = Utc::now() + Duration::seconds(30);
    let searches = ask(LeaseKind::Search, 1, until);
    let next = slots.acquire(org, &searches).await.unwrap();
    assert!(next.is_some(), "the expired lease's slot is free");
    assert!(
        !slots.renew(&dead, until).await.unwrap(),
        "a lease taken back is gone"
    );
    assert_eq!(slots.acquire(org, &searches).await.unwrap(), None);
}

/// One export at a time per organization; unlocking frees the lock at once.
pub async fn one_export_at_a_time_per_organization(f: &Fixture) {
    let (slots, org) = (f.slots.as_ref(), &f.org);
    let held = slots
        .try_export_lock(org)
        .await
        .unwrap()
        .expect("free at first");
    assert!(slots.try_export_lock(org).await.unwrap().is_none(), "held");
    held.unlock().await;
    let again = slots.try_export_lock(org).await.unwrap();
    assert!(again.is_some(), "free once unlocked");
}
