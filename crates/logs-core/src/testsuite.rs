//! Shared behavioural suite for [`LogStore`] implementations.
//!
//! Kept whole, over 400 lines: it is one suite (one `pub async fn` per case), read top to bottom.

#![allow(clippy::unwrap_used)]

use chrono::{Duration, SubsecRound, Utc};
use serde_json::json;

use crate::event::{parse_batch, Level};
use crate::store::{
    EventQuery, IdentifierFilter, IngestOutcome, IngestTarget, LogStore, Owner, ServerId,
};

/// What each case runs on: a fresh, empty store, with organization `org` and two registered
/// servers `(id, join code)` that exist in the store's account data.
pub struct Fixture {
    pub store: Box<dyn LogStore>,
    pub org: String,
    pub a: (String, String),
    pub b: (String, String),
}

/// One `#[test]` per case of this suite, each on a fresh fixture, so a failure names its case.
/// `$run` drives a future to completion (`futures::executor::block_on`, or a Tokio runtime's);
/// `$fixture` is an `async fn() -> Fixture`.
#[macro_export]
macro_rules! log_store_suite {
    ($run:path, $fixture:path) => {
        $crate::log_store_suite!(@cases $run, $fixture;
            ingest_is_atomic_idempotent_and_counted,
            queries_are_newest_first_with_every_field,
            each_filter_narrows_the_search,
            keyset_pages_walk_every_event_once,
            servers_are_kept_apart,
            message_search_across_days);
    };
    (@cases $run:path, $fixture:path; $($case:ident),*) => {
        $(
            #[test]
            fn $case() {
                $run(async {
                    let fixture = $fixture().await;
                    $crate::testsuite::$case(&fixture).await;
                })
            }
        )*
    };
}

/// The first batch on server `a`, a changed batch under the same id on server `b`.
struct Seeded {
    now: chrono::DateTime<Utc>,
    ta: IngestTarget,
    base: EventQuery,
}

fn targets(f: &Fixture) -> (IngestTarget, IngestTarget) {
    let target = |(id, code): &(String, String)| IngestTarget {
        org_id: f.org.clone(),
        server_id: ServerId(id.clone()),
        cfx_id: code.clone(),
    };
    (target(&f.a), target(&f.b))
}

/// Ingests four events on each server and checks the ingestion outcomes on the way.
async fn seed(f: &Fixture) -> Seeded {
    let (store, org, a) = (
        f.store.as_ref(),
        f.org.as_str(),
        (f.a.0.as_str(), f.a.1.as_str()),
    );
    let (ta, tb) = targets(f);
    let now = Utc::now().trunc_subsecs(6);
    let t = |mins: i64| (now - Duration::minutes(mins)).to_rfc3339();
    let body = json!({ "batch_id": "batch-0001", "events": [
        { "level": "info", "message": "Player Joined the server", "event_type": "player.join", "occurred_at": t(10), "player_id": "p1",
          "player_identifiers": { "license": "license:aaa" }, "resource": "core" },
        { "level": "error", "message": "script error", "occurred_at": t(9), "resource": "es_extended", "event_id": "evt-00000002" },
        { "level": "info", "message": "chat: gg", "event_type": "chat", "occurred_at": t(8), "player_id": "p2", "target_player_id": "p1",
          "target_player_identifiers": { "license": "license:aaa" }, "data": { "channel": "ooc" } },
        { "level": "warn", "message": "100% discount_code", "occurred_at": t(8) },
    ]});
    let batch = parse_batch(&serde_json::to_vec(&body).unwrap(), now).unwrap();
    let first = store.ingest(&ta, &batch, now).await.unwrap();
    assert_eq!(
        first,
        IngestOutcome::Accepted {
            accepted_events: 4,
            ingested_at: now
        }
    );
    assert_eq!(
        store
            .ingest(&ta, &batch, now + Duration::seconds(5))
            .await
            .unwrap(),
        IngestOutcome::Replayed {
            accepted_events: 4,
            ingested_at: now
        },
        "identical retry is replayed with the original figures"
    );
    let mut changed = body.clone();
    changed["events"][0]["message"] = json!("different");
    let changed = parse_batch(&serde_json::to_vec(&changed).unwrap(), now).unwrap();
    assert_eq!(
        store.ingest(&ta, &changed, now).await.unwrap(),
        IngestOutcome::Conflict
    );
    assert!(
        matches!(
            store.ingest(&tb, &changed, now).await.unwrap(),
            IngestOutcome::Accepted { .. }
        ),
        "batch ids are per server"
    );
    assert_eq!(
        store.monthly_usage(org, now).await.unwrap(),
        8,
        "replays and conflicts add no usage"
    );

    let base = EventQuery {
        server_id: ServerId(a.0.into()),
        from: now - Duration::hours(1),
        to: now + Duration::minutes(1),
        levels: None,
        event_type: None,
        resource: None,
        message: None,
        player_id: None,
        identifier: None,
        after: None,
        limit: 100,
    };
    Seeded { now, ta, base }
}

pub async fn ingest_is_atomic_idempotent_and_counted(f: &Fixture) {
    seed(f).await;
}

pub async fn queries_are_newest_first_with_every_field(f: &Fixture) {
    let Seeded { base, .. } = seed(f).await;
    let (store, a) = (f.store.as_ref(), (f.a.0.as_str(), f.a.1.as_str()));
    let all = store.query(&base).await.unwrap();
    assert_eq!(all.len(), 4);
    assert!(
        all.windows(2)
            .all(|w| (w[0].occurred_at, w[0].id) > (w[1].occurred_at, w[1].id)),
        "newest first, stable ties"
    );
    assert!(all
        .iter()
        .all(|r| r.cfx_id == a.1 && r.batch_id == "batch-0001"));
    assert!(all.iter().any(|r| r.event_id == "evt-00000002"));
    assert!(
        all.iter().all(|r| r.event_id.len() >= 8),
        "server-made ids for the rest"
    );
    assert_eq!(
        all.iter().find(|r| r.message == "chat: gg").unwrap().data,
        Some(json!({ "channel": "ooc" }))
    );
}

pub async fn each_filter_narrows_the_search(f: &Fixture) {
    let Seeded { base, .. } = seed(f).await;
    let store = f.store.as_ref();
    let q = |f: fn(&mut EventQuery)| {
        let mut q = base.clone();
        f(&mut q);
        q
    };
    let msgs =
        |rows: Vec<crate::store::EventRow>| rows.into_iter().map(|r| r.message).collect::<Vec<_>>();
    assert_eq!(
        msgs(
            store
                .query(&q(|q| q.levels = Some(vec![Level::Error])))
                .await
                .unwrap()
        ),
        vec!["script error"]
    );
    // several levels: any of them (warn and error, not the two infos)
    assert_eq!(
        msgs(
            store
                .query(&q(|q| q.levels = Some(vec![Level::Warn, Level::Error])))
                .await
                .unwrap()
        ),
        vec!["100% discount_code", "script error"]
    );
    assert_eq!(
        msgs(
            store
                .query(&q(|q| q.event_type = Some("chat".into())))
                .await
                .unwrap()
        ),
        vec!["chat: gg"]
    );
    assert_eq!(
        msgs(
            store
                .query(&q(|q| q.event_type = Some("log".into())))
                .await
                .unwrap()
        )
        .len(),
        2,
        "default event type"
    );
    assert_eq!(
        msgs(
            store
                .query(&q(|q| q.resource = Some("core".into())))
                .await
                .unwrap()
        ),
        vec!["Player Joined the server"]
    );
    assert_eq!(
        msgs(
            store
                .query(&q(|q| q.message = Some("JOINED".into())))
                .await
                .unwrap()
        ),
        vec!["Player Joined the server"]
    );
    assert_eq!(
        msgs(
            store
                .query(&q(|q| q.message = Some("100%".into())))
                .await
                .unwrap()
        ),
        vec!["100% discount_code"]
    );
    assert!(
        store
            .query(&q(|q| q.message = Some("1_0%".into())))
            .await
            .unwrap()
            .is_empty(),
        "`_` and `%` are literal"
    );
    assert_eq!(
        msgs(
            store
                .query(&q(|q| q.message = Some("t_c".into())))
                .await
                .unwrap()
        ),
        vec!["100% discount_code"]
    );
    assert_eq!(
        store
            .query(&q(|q| q.player_id = Some("p1".into())))
            .await
            .unwrap()
            .len(),
        2,
        "player or target"
    );
    let ident = |owner| IdentifierFilter {
        owner,
        key: "license".into(),
        value: "license:aaa".into(),
    };
    assert_eq!(
        msgs(
            store
                .query(&EventQuery {
                    identifier: Some(ident(Owner::Player)),
                    ..base.clone()
                })
                .await
                .unwrap()
        ),
        vec!["Player Joined the server"]
    );
    assert_eq!(
        msgs(
            store
                .query(&EventQuery {
                    identifier: Some(ident(Owner::Target)),
                    ..base.clone()
                })
                .await
                .unwrap()
        ),
        vec!["chat: gg"]
    );
    assert!(
        store
            .query(&q(|q| q.to = q.from + Duration::minutes(30)))
            .await
            .unwrap()
            .is_empty(),
        "window"
    );
}

pub async fn keyset_pages_walk_every_event_once(f: &Fixture) {
    let Seeded { base, .. } = seed(f).await;
    let store = f.store.as_ref();
    let all = store.query(&base).await.unwrap();
    // keyset pagination walks every event exactly once
    let mut seen = Vec::new();
    let mut after = None;
    loop {
        let page = store
            .query(&EventQuery {
                limit: 1,
                after,
                ..base.clone()
            })
            .await
            .unwrap();
        let Some(last) = page.last() else { break };
        after = Some((last.occurred_at, last.id));
        seen.extend(page.into_iter().map(|r| r.id));
    }
    assert_eq!(seen, all.iter().map(|r| r.id).collect::<Vec<_>>());
}

pub async fn servers_are_kept_apart(f: &Fixture) {
    let Seeded { base, .. } = seed(f).await;
    let (store, b) = (f.store.as_ref(), (f.b.0.as_str(), f.b.1.as_str()));
    let other = store
        .query(&EventQuery {
            server_id: ServerId(b.0.into()),
            ..base.clone()
        })
        .await
        .unwrap();
    assert_eq!(other.len(), 4);
    assert!(other.iter().all(|r| r.cfx_id == b.1));
}

/// A message search over a week: matches on several days come newest first, pages that span days
/// are complete, and a cursor walk sees each match once (an adapter may search day by day).
pub async fn message_search_across_days(f: &Fixture) {
    let Seeded { now, ta, .. } = seed(f).await;
    let (store, target) = (f.store.as_ref(), &ta);
    let ago = |hours: i64| (now - Duration::hours(hours)).to_rfc3339();
    let hit = |n: i64, hours: i64| json!({ "level": "warn", "message": format!("SpeedHack #{n} detected"), "occurred_at": ago(hours) });
    let miss = |hours: i64| json!({ "level": "info", "message": "speed limit", "occurred_at": ago(hours) });
    let body = json!({ "batch_id": "batch-days", "events": [
        hit(5, 150), miss(3), hit(1, 2), hit(3, 54), miss(31), hit(2, 30), hit(4, 78), miss(100),
    ]});
    let batch = parse_batch(&serde_json::to_vec(&body).unwrap(), now).unwrap();
    assert!(matches!(
        store.ingest(target, &batch, now).await.unwrap(),
        IngestOutcome::Accepted { .. }
    ));
    let week = EventQuery {
        server_id: target.server_id.clone(),
        from: now - Duration::days(7),
        to: now + Duration::minutes(1),
        levels: None,
        event_type: None,
        resource: None,
        message: Some("speedhack".into()),
        player_id: None,
        identifier: None,
        after: None,
        limit: 100,
    };
    let numbers = |rows: &[crate::store::EventRow]| {
        rows.iter()
            .map(|r| r.message.split(' ').nth(1).unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    let all = store.query(&week).await.unwrap();
    assert_eq!(
        numbers(&all),
        ["#1", "#2", "#3", "#4", "#5"],
        "newest first"
    );
    let three = store
        .query(&EventQuery {
            limit: 3,
            ..week.clone()
        })
        .await
        .unwrap();
    assert_eq!(numbers(&three), ["#1", "#2", "#3"], "a page spanning days");
    let middle = store
        .query(&EventQuery {
            from: now - Duration::hours(60),
            to: now - Duration::hours(20),
            ..week.clone()
        })
        .await
        .unwrap();
    assert_eq!(numbers(&middle), ["#2", "#3"], "window bounds inside days");
    for limit in [1, 2, 4] {
        let mut walked = Vec::new();
        let mut after = None;
        loop {
            let page = store
                .query(&EventQuery {
                    limit,
                    after,
                    ..week.clone()
                })
                .await
                .unwrap();
            assert!(page.len() <= limit);
            let Some(last) = page.last() else { break };
            after = Some((last.occurred_at, last.id));
            walked.extend(page.into_iter().map(|r| r.id));
        }
        assert_eq!(
            walked,
            all.iter().map(|r| r.id).collect::<Vec<_>>(),
            "cursor walk with limit {limit}"
        );
    }
}
