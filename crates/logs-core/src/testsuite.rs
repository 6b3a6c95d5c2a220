//! Shared behavioural suite for [`LogStore`] implementations.
//!
//! Kept whole, over 400 lines: it is one suite (one `pub async fn` per case), read top to bottom.

#![allow(clippy::unwrap_used)]

use chrono::{Duration, SubsecRound, Utc};
use serde_json::json;

use crate::event::{parse_batch, Level};
use crate::store::{
    bucket_start, BucketCount, CountQuery, EventQuery, FacetQuery, Filters, IdentifierFilter,
    IngestOutcome, IngestTarget, LogStore, Owner, SearchError, ServerId, TailPosition, TailQuery,
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
            message_search_across_days,
            message_search_matches_every_substring_across_runs,
            data_filters_are_containment_within_a_scan_limit,
            counts_fall_in_epoch_aligned_buckets_inside_the_window,
            counts_in_whole_slot_buckets_match_the_events_of_the_window,
            facets_count_the_newest_events_of_the_search,
            a_tail_reads_batches_in_commit_order_and_resumes_from_any_position);
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
    let first = store.ingest(&ta, batch.clone(), now).await.unwrap();
    assert_eq!(
        first,
        IngestOutcome::Accepted {
            accepted_events: 4,
            ingested_at: now
        }
    );
    assert_eq!(
        store
            .ingest(&ta, batch.clone(), now + Duration::seconds(5))
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
        store.ingest(&ta, changed.clone(), now).await.unwrap(),
        IngestOutcome::Conflict
    );
    assert!(
        matches!(
            store.ingest(&tb, changed, now).await.unwrap(),
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
        filters: Filters::default(),
        after: None,
        limit: 100,
        scan_limit: Some(1_000),
        enough: 100,
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
                .query(&q(|q| q.filters.levels = Some(vec![Level::Error])))
                .await
                .unwrap()
        ),
        vec!["script error"]
    );
    // several levels: any of them (warn and error, not the two infos)
    assert_eq!(
        msgs(
            store
                .query(&q(
                    |q| q.filters.levels = Some(vec![Level::Warn, Level::Error])
                ))
                .await
                .unwrap()
        ),
        vec!["100% discount_code", "script error"]
    );
    assert_eq!(
        msgs(
            store
                .query(&q(|q| q.filters.event_type = Some("chat".into())))
                .await
                .unwrap()
        ),
        vec!["chat: gg"]
    );
    assert_eq!(
        msgs(
            store
                .query(&q(|q| q.filters.event_type = Some("log".into())))
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
                .query(&q(|q| q.filters.resource = Some("core".into())))
                .await
                .unwrap()
        ),
        vec!["Player Joined the server"]
    );
    assert_eq!(
        msgs(
            store
                .query(&q(|q| q.filters.message = Some("JOINED".into())))
                .await
                .unwrap()
        ),
        vec!["Player Joined the server"]
    );
    assert_eq!(
        msgs(
            store
                .query(&q(|q| q.filters.message = Some("100%".into())))
                .await
                .unwrap()
        ),
        vec!["100% discount_code"]
    );
    assert!(
        store
            .query(&q(|q| q.filters.message = Some("1_0%".into())))
            .await
            .unwrap()
            .is_empty(),
        "`_` and `%` are literal"
    );
    assert_eq!(
        msgs(
            store
                .query(&q(|q| q.filters.message = Some("t_c".into())))
                .await
                .unwrap()
        ),
        vec!["100% discount_code"]
    );
    assert_eq!(
        store
            .query(&q(|q| q.filters.player_id = Some("p1".into())))
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
                    filters: Filters {
                        identifier: Some(ident(Owner::Player)),
                        ..Filters::default()
                    },
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
                    filters: Filters {
                        identifier: Some(ident(Owner::Target)),
                        ..Filters::default()
                    },
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
        store.ingest(target, batch, now).await.unwrap(),
        IngestOutcome::Accepted { .. }
    ));
    let week = EventQuery {
        server_id: target.server_id.clone(),
        from: now - Duration::days(7),
        to: now + Duration::minutes(1),
        filters: Filters {
            message: Some("speedhack".into()),
            ..Filters::default()
        },
        after: None,
        limit: 100,
        scan_limit: Some(1_000),
        enough: 100,
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

/// A message term is a case-insensitive substring, whatever its shape: inside a word, at a
/// word's start or end, across separators, of non-ASCII text, of separators only, or too short
/// to index. Pages, counts and facets find exactly the events whose message contains it, in a
/// batch of several runs of events over two UTC days (an adapter may index runs of a batch's
/// events, `crate::words`, and must lose no match by it).
pub async fn message_search_matches_every_substring_across_runs(f: &Fixture) {
    let (a, _) = targets(f);
    let now = Utc::now().trunc_subsecs(6);
    let messages = [
        "bank transfer of 4242 completed",
        "bank transfer of 42420 completed",
        "transfer of 14242 done",
        "player 4242 joined the server",
        "[OOC] anyone selling a car near légion-square?",
        "SpeedHack detected on player_7",
        "100% discount_code",
        "日本語のメッセージ",
        "tab\tseparated",
    ];
    let events: Vec<_> = (0..130i64)
        .map(|i| {
            let at = now - Duration::minutes(17 * i + 1);
            json!({ "level": "info", "message": messages[i as usize % messages.len()], "occurred_at": at.to_rfc3339() })
        })
        .collect();
    ingest_json(
        f,
        &a,
        json!({ "batch_id": "batch-words", "events": events }),
    )
    .await;
    let window = (now - Duration::days(2), now + Duration::minutes(1));
    for term in [
        "transfer of 4242",
        "ransfer of 424",
        "of 4242",
        "4242 ",
        " 4242",
        "LÉGION-SQUARE",
        "gion-squ",
        "speedhack",
        "HACK DET",
        "_7",
        "0% d",
        "本語",
        "of",
        "-",
        "? ",
        "zzz",
        "r 4242 j",
        "\tsep",
        "r of 1",
    ] {
        let expected = events
            .iter()
            .filter(|e| {
                let m = e["message"].as_str().unwrap();
                m.to_lowercase().contains(&term.to_lowercase())
            })
            .count();
        let filters = Filters {
            message: Some(term.into()),
            ..Filters::default()
        };
        let page = f
            .store
            .query(&EventQuery {
                server_id: a.server_id.clone(),
                from: window.0,
                to: window.1,
                filters: filters.clone(),
                after: None,
                limit: 1_000,
                scan_limit: None,
                enough: 1_000,
            })
            .await
            .unwrap();
        assert_eq!(page.len(), expected, "page of {term:?}");
        assert!(page.windows(2).all(|w| w[0].occurred_at > w[1].occurred_at));
        let counts = f
            .store
            .counts(&CountQuery {
                server_id: a.server_id.clone(),
                from: window.0,
                to: window.1,
                filters: filters.clone(),
                bucket: Duration::hours(1),
                scan_limit: 1_000,
            })
            .await
            .unwrap();
        let counted: i64 = counts.iter().map(|c| c.count).sum();
        assert_eq!(counted, expected as i64, "counts of {term:?}");
        let facets = f
            .store
            .facets(&FacetQuery {
                server_id: a.server_id.clone(),
                from: window.0,
                to: window.1,
                filters,
                sample: 1_000,
                top: 10,
            })
            .await
            .unwrap();
        assert_eq!(facets.examined, expected as i64, "facets of {term:?}");
    }
}

async fn ingest_json(f: &Fixture, target: &IngestTarget, body: serde_json::Value) {
    let now = Utc::now();
    let batch = parse_batch(&serde_json::to_vec(&body).unwrap(), now).unwrap();
    assert!(matches!(
        f.store.ingest(target, batch, now).await.unwrap(),
        IngestOutcome::Accepted { .. }
    ));
}

/// `data` is `jsonb @>`; a page may examine `scan_limit` events matching the other filters
/// (from its cursor down) before it must be full, and answers `TooBroad` past that.
pub async fn data_filters_are_containment_within_a_scan_limit(f: &Fixture) {
    let Seeded { now, ta, base } = seed(f).await;
    let store = f.store.as_ref();
    // ten events, 100 to 91 minutes ago; only the oldest of them is a hit; one more, older
    let mut events: Vec<_> = (0..10)
        .map(|i| {
            json!({
                "level": "info", "event_type": "inventory", "message": format!("item {i}"),
                "occurred_at": (now - Duration::minutes(100 - i)).to_rfc3339(),
                "data": { "hit": i == 0, "item": "WEAPON_PISTOL", "count": 1,
                          "meta": { "shop": "ammunation", "tags": ["legal", "gun"] } },
            })
        })
        .collect();
    events.push(
        json!({ "level": "info", "event_type": "inventory", "message": "older",
        "occurred_at": (now - Duration::minutes(101)).to_rfc3339(), "data": { "hit": false } }),
    );
    ingest_json(
        f,
        &ta,
        json!({ "batch_id": "batch-data", "events": events }),
    )
    .await;
    let window = EventQuery {
        from: now - Duration::minutes(120),
        to: now - Duration::minutes(60),
        ..base.clone()
    };
    let search = |data: serde_json::Value, limit: usize, scan_limit: usize| EventQuery {
        scan_limit: Some(scan_limit),
        enough: limit,
        filters: Filters {
            data: Some(data),
            ..Filters::default()
        },
        limit,
        ..window.clone()
    };
    let messages = |r: Result<Vec<crate::store::EventRow>, SearchError>| {
        r.map(|rows| rows.into_iter().map(|r| r.message).collect::<Vec<_>>())
    };
    for (data, n) in [
        (json!({ "item": "WEAPON_PISTOL" }), 10),
        (json!({ "hit": false }), 10),
        (json!({ "meta": { "shop": "ammunation" } }), 10),
        (json!({ "meta": { "tags": ["gun"] } }), 10),
        (json!({ "count": 1.0 }), 10),
        (json!({ "count": "1" }), 0),
        (json!({ "item": "weapon_pistol" }), 0),
        (json!({ "meta": { "tags": "gun" } }), 0),
        (json!({ "channel": "ooc" }), 0),
    ] {
        assert_eq!(
            store
                .query(&search(data.clone(), 100, 1_000))
                .await
                .unwrap()
                .len(),
            n,
            "{data}"
        );
    }
    let chat = store
        .query(&EventQuery {
            filters: Filters {
                data: Some(json!({ "channel": "ooc" })),
                ..Filters::default()
            },
            ..base.clone()
        })
        .await
        .unwrap();
    assert_eq!(chat.len(), 1, "the seeded chat event");
    // newest first, the hit is candidate 10 of 11: limits N - 1, N (the floor is the hit), N + 1
    let hit = json!({ "hit": true });
    assert!(matches!(
        store.query(&search(hit.clone(), 1, 9)).await,
        Err(SearchError::TooBroad { limit: 9 })
    ));
    assert_eq!(
        messages(store.query(&search(hit.clone(), 1, 10)).await).unwrap(),
        ["item 0"]
    );
    assert_eq!(
        messages(store.query(&search(hit.clone(), 1, 11)).await).unwrap(),
        ["item 0"]
    );
    // a caller that fetches one more than it shows: the hit answers a page cut at the limit
    let probe = EventQuery {
        limit: 2,
        enough: 1,
        ..search(hit.clone(), 1, 10)
    };
    assert_eq!(messages(store.query(&probe).await).unwrap(), ["item 0"]);
    let short = EventQuery {
        limit: 3,
        enough: 2,
        ..search(hit.clone(), 2, 10)
    };
    assert!(matches!(
        store.query(&short).await,
        Err(SearchError::TooBroad { limit: 10 })
    ));
    // no match: fine when every candidate was examined, too broad otherwise
    let none = json!({ "hit": "never" });
    assert!(store
        .query(&search(none.clone(), 1, 11))
        .await
        .unwrap()
        .is_empty());
    assert!(matches!(
        store.query(&search(none, 1, 10)).await,
        Err(SearchError::TooBroad { .. })
    ));
    // a full page within the limit
    assert_eq!(
        messages(store.query(&search(json!({ "hit": false }), 2, 2)).await).unwrap(),
        ["item 9", "item 8"]
    );
    // the other filters narrow what is examined
    let narrowed = EventQuery {
        filters: Filters {
            message: Some("item 0".into()),
            data: Some(hit.clone()),
            ..Filters::default()
        },
        limit: 1,
        scan_limit: Some(1),
        enough: 1,
        ..window.clone()
    };
    assert_eq!(messages(store.query(&narrowed).await).unwrap(), ["item 0"]);
    // counted from the cursor down: six candidates below the fifth newest, the hit the fifth
    let fifth = store
        .query(&EventQuery {
            limit: 5,
            ..window.clone()
        })
        .await
        .unwrap()
        .pop()
        .unwrap();
    let after = Some((fifth.occurred_at, fifth.id));
    let paged = |scan_limit| EventQuery {
        after,
        ..search(hit.clone(), 1, scan_limit)
    };
    assert_eq!(messages(store.query(&paged(5)).await).unwrap(), ["item 0"]);
    assert!(matches!(
        store.query(&paged(4)).await,
        Err(SearchError::TooBroad { limit: 4 })
    ));
}

/// Buckets start at multiples of their length since the epoch; an event at a bucket's start is
/// in it, one a microsecond earlier is in the one before; a window not aligned to buckets counts
/// only its own events in its first and last buckets.
pub async fn counts_fall_in_epoch_aligned_buckets_inside_the_window(f: &Fixture) {
    let Seeded { now, ta, base } = seed(f).await;
    let store = f.store.as_ref();
    let ten = Duration::minutes(10);
    let b = bucket_start(now - Duration::hours(3), ten);
    let at = |t: chrono::DateTime<Utc>| t.to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
    let us = Duration::microseconds(1);
    let event = |t, level: &str| json!({ "level": level, "message": "m", "event_type": "tick", "occurred_at": at(t) });
    ingest_json(
        f,
        &ta,
        json!({ "batch_id": "batch-buckets", "events": [
            event(b - ten - us, "info"),        // before the window
            event(b - Duration::minutes(4), "info"),
            event(b - us, "warn"),
            event(b, "info"),
            event(b, "error"),
            event(b + ten - us, "info"),
            event(b + ten, "info"),
            event(b + ten + Duration::minutes(5), "info"), // at `to`: outside
        ]}),
    )
    .await;
    let q = CountQuery {
        server_id: base.server_id.clone(),
        from: b - Duration::minutes(5),
        to: b + ten + Duration::minutes(5),
        filters: Filters {
            event_type: Some("tick".into()),
            ..Filters::default()
        },
        bucket: ten,
        scan_limit: 1_000,
    };
    let count = |start, level, count| BucketCount {
        start,
        level,
        count,
    };
    assert_eq!(
        store.counts(&q).await.unwrap(),
        [
            count(b - ten, Level::Info, 1),
            count(b - ten, Level::Warn, 1),
            count(b, Level::Info, 2),
            count(b, Level::Error, 1),
            count(b + ten, Level::Info, 1),
        ]
    );
    let warn_up = CountQuery {
        filters: Filters {
            event_type: Some("tick".into()),
            levels: Some(vec![Level::Warn, Level::Error, Level::Fatal]),
            ..Filters::default()
        },
        ..q.clone()
    };
    assert_eq!(
        store.counts(&warn_up).await.unwrap(),
        [count(b - ten, Level::Warn, 1), count(b, Level::Error, 1)]
    );
    // a data filter counts within its scan limit: 6 candidates in the window
    let data = |scan_limit| CountQuery {
        filters: Filters {
            event_type: Some("tick".into()),
            data: Some(json!({ "none": 1 })),
            ..Filters::default()
        },
        scan_limit,
        ..q.clone()
    };
    assert_eq!(store.counts(&data(6)).await.unwrap(), []);
    assert!(matches!(
        store.counts(&data(5)).await,
        Err(SearchError::TooBroad { limit: 5 })
    ));
    // the seeded events are elsewhere in time; a one-day bucket holds them all
    let day = CountQuery {
        filters: Filters::default(),
        from: base.from,
        to: base.to,
        bucket: Duration::days(1),
        ..q.clone()
    };
    let total: i64 = store
        .counts(&day)
        .await
        .unwrap()
        .iter()
        .map(|c| c.count)
        .sum();
    assert_eq!(total, 4);
}

/// Facets are the most frequent values of the search's newest `sample` events.
pub async fn facets_count_the_newest_events_of_the_search(f: &Fixture) {
    let Seeded { base, .. } = seed(f).await;
    let store = f.store.as_ref();
    let q = FacetQuery {
        server_id: base.server_id.clone(),
        from: base.from,
        to: base.to,
        filters: Filters::default(),
        sample: 100,
        top: 10,
    };
    let all = store.facets(&q).await.unwrap();
    assert_eq!(all.examined, 4);
    assert!(!all.sampled);
    let pairs = |v: &[(&str, i64)]| {
        v.iter()
            .map(|(s, n)| (s.to_string(), *n))
            .collect::<Vec<_>>()
    };
    assert_eq!(all.levels, pairs(&[("info", 2), ("error", 1), ("warn", 1)]));
    assert_eq!(
        all.event_types,
        pairs(&[("log", 2), ("chat", 1), ("player.join", 1)])
    );
    assert_eq!(all.resources, pairs(&[("core", 1), ("es_extended", 1)]));
    // the newest three: chat and warn (8 minutes ago), the script error (9)
    let newest = store
        .facets(&FacetQuery {
            sample: 3,
            top: 1,
            ..q.clone()
        })
        .await
        .unwrap();
    assert_eq!(newest.examined, 3);
    assert!(newest.sampled);
    let exactly = store
        .facets(&FacetQuery {
            sample: 4,
            ..q.clone()
        })
        .await
        .unwrap();
    assert!(!exactly.sampled, "four events, a sample of four");
    assert_eq!(newest.levels, pairs(&[("error", 1)]), "ties by value");
    assert_eq!(newest.event_types, pairs(&[("log", 2)]));
    let filtered = store
        .facets(&FacetQuery {
            filters: Filters {
                levels: Some(vec![Level::Info]),
                ..Filters::default()
            },
            ..q.clone()
        })
        .await
        .unwrap();
    assert_eq!(filtered.levels, pairs(&[("info", 2)]));
    // with `data`, the sample is of the events matching the other filters
    let data = store
        .facets(&FacetQuery {
            filters: Filters {
                data: Some(json!({ "channel": "ooc" })),
                ..Filters::default()
            },
            sample: 2,
            ..q.clone()
        })
        .await
        .unwrap();
    assert_eq!(
        (data.examined, data.sampled),
        (1, true),
        "the two newest are the warning and the chat"
    );
}

/// A tail starts at "now", reads later batches in the order they became visible (events by id
/// within a batch), skips other servers' batches and non-matching events without losing its
/// place, and resumes from any position it handed out: every later event once.
pub async fn a_tail_reads_batches_in_commit_order_and_resumes_from_any_position(f: &Fixture) {
    let store = f.store.as_ref();
    let (ta, tb) = targets(f);
    let q = |after, filters: Filters| TailQuery {
        server_id: ta.server_id.clone(),
        filters,
        after,
        max_batches: 100,
    };
    // a start taken while an older transaction (Postgres: anywhere in the cluster, where other
    // tests run) holds the horizon below the seed would rightly deliver the seed: start once a
    // tail from before the seed has all of it (bounded wait)
    let before_seed = store.tail_start(&ta.server_id).await.unwrap();
    seed(f).await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while store
        .tail(&q(before_seed, Filters::default()))
        .await
        .unwrap()
        .events
        .len()
        < 4
        && std::time::Instant::now() < deadline
    {}
    let start = store.tail_start(&ta.server_id).await.unwrap();
    let empty = store.tail(&q(start, Filters::default())).await.unwrap();
    assert!(empty.events.is_empty(), "the seed is before the start");
    assert!(empty.next >= start);
    let ev = |m: &str, level: &str| json!({ "level": level, "message": m });
    ingest_json(f, &ta, json!({ "batch_id": "batch-tail-1", "events": [ev("a1", "info"), ev("a2", "warn"), ev("a3", "info")] })).await;
    ingest_json(
        f,
        &tb,
        json!({ "batch_id": "batch-tail-x", "events": [ev("other server", "warn")] }),
    )
    .await;
    ingest_json(
        f,
        &ta,
        json!({ "batch_id": "batch-tail-2", "events": [ev("b1", "error")] }),
    )
    .await;
    // an adapter may show a committed batch only once older transactions ended (Postgres: of
    // the whole cluster, where other tests run): wait for it, bounded, once; later reads are
    // below that point
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let page = loop {
        let page = store.tail(&q(start, Filters::default())).await.unwrap();
        if page.events.len() >= 4 || std::time::Instant::now() > deadline {
            break page;
        }
    };
    let messages = |events: &[(TailPosition, crate::store::EventRow)]| {
        events
            .iter()
            .map(|(_, r)| r.message.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(messages(&page.events), ["a1", "a2", "a3", "b1"]);
    let positions: Vec<TailPosition> = page.events.iter().map(|(p, _)| *p).collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{positions:?}");
    assert!(page.next >= positions[3]);
    // resuming from each position gives exactly the rest
    for (i, p) in positions.iter().enumerate() {
        let rest = store.tail(&q(*p, Filters::default())).await.unwrap();
        assert_eq!(
            messages(&rest.events),
            messages(&page.events)[i + 1..],
            "after {p:?}"
        );
    }
    // nothing new: an empty page that keeps its place
    let again = store.tail(&q(page.next, Filters::default())).await.unwrap();
    assert!(again.events.is_empty());
    assert!(again.next >= page.next);
    // filters apply; the place still moves past the batches read
    let warn_up = Filters {
        levels: Some(vec![Level::Warn, Level::Error, Level::Fatal]),
        ..Filters::default()
    };
    let severe = store.tail(&q(start, warn_up)).await.unwrap();
    assert_eq!(messages(&severe.events), ["a2", "b1"]);
    // (an adapter may move further: past other servers' batches, or everything settled)
    assert!(severe.next > positions[3], "past the batches read");
    // a batch at a time
    let one = store
        .tail(&TailQuery {
            max_batches: 1,
            ..q(start, Filters::default())
        })
        .await
        .unwrap();
    assert_eq!(messages(&one.events), ["a1", "a2", "a3"]);
    let two = store.tail(&q(one.next, Filters::default())).await.unwrap();
    assert_eq!(messages(&two.events), ["b1"]);
    // batch times: known for the server's own batches only
    let seq = positions[0].seq;
    assert!(store
        .tail_batch_time(&ta.server_id, seq)
        .await
        .unwrap()
        .is_some());
    assert!(store
        .tail_batch_time(&tb.server_id, seq)
        .await
        .unwrap()
        .is_none());
    assert!(store
        .tail_batch_time(&ta.server_id, -5)
        .await
        .unwrap()
        .is_none());
}

/// Buckets of whole 15-minute slots and hours (an adapter may keep counts for them) count
/// exactly what the events say: for a window that starts and ends mid-slot, buckets of 5, 10,
/// 15, 30 and 45 minutes and of 1, 2 and 3 hours, with each filter such counts can have, with
/// one they cannot (message), and with no filter.
pub async fn counts_in_whole_slot_buckets_match_the_events_of_the_window(f: &Fixture) {
    let Seeded { now, ta, base } = seed(f).await;
    let store = f.store.as_ref();
    let hour = Duration::hours(1);
    let h = bucket_start(now - Duration::hours(7), hour);
    let us = Duration::microseconds(1);
    // (offset from h, level, event type, resource)
    let events: Vec<(Duration, Level, &str, Option<&str>)> = vec![
        (-Duration::hours(2), Level::Info, "tick", Some("a")), // before the window
        (-Duration::minutes(52), Level::Debug, "tick", None),  // at `from`
        (-Duration::minutes(45), Level::Info, "tick", Some("a")),
        (-Duration::minutes(30), Level::Warn, "tick", None),
        (Duration::zero(), Level::Error, "tick", Some("a")),
        (hour - us, Level::Info, "tick", None),
        (hour, Level::Warn, "chat", Some("b")),
        (Duration::minutes(15) - us, Level::Info, "tick", None),
        (Duration::minutes(15), Level::Info, "chat", Some("a")),
        (Duration::minutes(31), Level::Warn, "tick", Some("a")),
        (Duration::minutes(256), Level::Debug, "tick", None), // the last partial slot
        (Duration::minutes(150), Level::Info, "tick", Some("a")),
        (Duration::minutes(5), Level::Error, "tick", Some("a")), // the hour of the first batch's error
        (Duration::minutes(179), Level::Fatal, "chat", Some("a")),
        (Duration::minutes(200), Level::Info, "tick", Some("a")),
        (Duration::minutes(260), Level::Info, "tick", Some("a")), // at `to`: outside
    ];
    let body: Vec<_> = events
        .iter()
        .map(|(at, level, t, r)| {
            json!({ "level": level.as_str(), "event_type": t, "resource": r, "message": "m",
            "occurred_at": (h + *at).to_rfc3339_opts(chrono::SecondsFormat::Micros, true) })
        })
        .collect();
    // two batches: the hours they share are counted across both
    let (first, second) = body.split_at(5);
    for (id, events) in [("batch-hourly-1", first), ("batch-hourly-2", second)] {
        ingest_json(f, &ta, json!({ "batch_id": id, "events": events })).await;
    }
    let (from, to) = (h - Duration::minutes(52), h + Duration::minutes(260));
    let filters = [
        Filters::default(),
        Filters {
            event_type: Some("tick".into()),
            ..Filters::default()
        },
        Filters {
            resource: Some("a".into()),
            ..Filters::default()
        },
        Filters {
            levels: Some(vec![Level::Warn, Level::Error, Level::Fatal]),
            ..Filters::default()
        },
        Filters {
            levels: Some(vec![Level::Info]),
            event_type: Some("tick".into()),
            resource: Some("a".into()),
            ..Filters::default()
        },
        Filters {
            message: Some("m".into()),
            ..Filters::default()
        },
    ];
    let buckets = [5, 10, 15, 30, 45, 60, 120, 180].map(Duration::minutes);
    for bucket in buckets {
        for filter in &filters {
            let mut want = std::collections::BTreeMap::new();
            for (at, level, t, r) in &events {
                let at = h + *at;
                let keep = at >= from
                    && at < to
                    && filter.levels.as_ref().is_none_or(|ls| ls.contains(level))
                    && filter.event_type.as_deref().is_none_or(|x| x == *t)
                    && filter.resource.as_deref().is_none_or(|x| Some(x) == *r);
                if keep {
                    *want.entry((bucket_start(at, bucket), *level)).or_insert(0) += 1;
                }
            }
            let want: Vec<BucketCount> = want
                .into_iter()
                .map(|((start, level), count)| BucketCount {
                    start,
                    level,
                    count,
                })
                .collect();
            let got = store
                .counts(&CountQuery {
                    server_id: base.server_id.clone(),
                    from,
                    to,
                    filters: filter.clone(),
                    bucket,
                    scan_limit: 1_000,
                })
                .await
                .unwrap();
            assert_eq!(got, want, "{bucket} buckets, {filter:?}");
        }
    }
}
